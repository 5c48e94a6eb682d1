"""Tokens per second of the curve probes' generation, batched vs one sequence at a time.

Two workloads on the embedded SmolLM2 model:

- trace: the rank-2 branches of one prompt's fork map (greedy continuations from shared prefixes);
- route: continuations of first departures under the four route policies (seeded sampling).

Each runs the same requests through ``generate_batch`` with ``batch_size`` = the whole set and with
``batch_size=1``; the tokens must come out identical (greedy) or nearly so (seeded; padding can
change the last bits of a logit), which is printed too. Prints numbers; asserts nothing.

    .venv/bin/python benchmarks/curve_probes.py --prompt lighthouse --branches 16 --seeds 8
"""

from __future__ import annotations

import time

from _common import curve_parser


def main() -> None:
    parser = curve_parser(__doc__)
    parser.add_argument("--branches", type=int, default=16, help="trace branches to generate (of the prompt's up to 52)")
    parser.add_argument("--seeds", type=int, default=8, help="route seeds per policy")
    parser.add_argument("--tokens", type=int, default=24, help="tokens per route continuation")
    args = parser.parse_args()

    from claimcheck.harness.blas import ensure_fast_blas

    blas = ensure_fast_blas()
    from claimcheck.models import load
    from claimcheck.probing.sampling import ROUTE_POLICIES, GenerationRequest, GenerationStats, generate_batch, get_policy
    from claimcheck.probing.sampling.forkmap import traced_positions
    from claimcheck.probing.sampling.runs import greedy_references, position_features, reference_pass
    from probes.curves.curve_prompts import select_prompts
    from probes.curves.curve_text import chat_ids, stop_token_ids

    lm = load(args.model, variant=args.variant, needs_text=True)
    (prompt,) = select_prompts(args.prompt)
    ids = chat_ids(lm.tokenizer, prompt.text)
    stops = stop_token_ids(lm.tokenizer)
    print(f"model {lm.model_id} ({lm.variant}), BLAS {blas.describe()}, prompt `{prompt.id}`")

    (ref,) = greedy_references(lm.model, [ids], stop_ids=stops)
    root, rows = reference_pass(lm.model, ids, ref)
    features = position_features(rows, ref)
    positions = traced_positions(len(ref))[: args.branches]
    greedy = get_policy("greedy")
    trace = [
        GenerationRequest(prompt=ids + ref[:i] + [features[i]["rank2"]], policy=greedy, max_tokens=len(ref) - 1 - i + 8)
        for i in positions
    ]
    route = [
        GenerationRequest(prompt=ids + ref[: 2 * k % max(1, len(ref) // 2)], policy=get_policy(name), seed=k, max_tokens=args.tokens)
        for name in ROUTE_POLICIES
        for k in range(args.seeds)
    ]
    for label, requests in (("trace", trace), ("route", route)):
        results = {}
        for mode, batch in (("batched", len(requests)), ("one-at-a-time", 1)):
            stats = GenerationStats()
            started = time.perf_counter()
            out = generate_batch(lm.model, requests, stop_ids=stops, batch_size=batch, roots=[root], stats=stats)
            wall = time.perf_counter() - started
            results[mode] = out
            print(f"{label:6s} {mode:14s} {len(requests):4d} sequences {stats.generated_tokens:6d} tokens "
                  f"{wall:7.1f} s  {stats.generated_tokens / wall:7.1f} tok/s")
        a, b = results["batched"], results["one-at-a-time"]
        same = sum(x == y for g, h in zip(a, b) for x, y in zip(g.tokens, h.tokens))
        total = sum(max(len(g.tokens), len(h.tokens)) for g, h in zip(a, b))
        print(f"{label:6s} token agreement batched vs alone: {same}/{total}")


if __name__ == "__main__":
    main()
