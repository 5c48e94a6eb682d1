"""The temperature search with every sample generated in full vs stopped once it cannot match.

Runs methods E (pure temperature over the T grid x seeds against one router-curve target) twice on
the embedded SmolLM2 model: full fixed-length samples, and ``stop_at_miss`` (a sample stops when
its text can no longer equal the target's). Prints wall time, generated tokens and the counts the
claims read (exact matches, fork crossings, total shared prefix), which must agree. Asserts nothing.

    .venv/bin/python benchmarks/temperature_search.py --seeds 8
"""

from __future__ import annotations

import time

from _common import curve_parser


def main() -> None:
    parser = curve_parser(__doc__)
    parser.add_argument("--seeds", type=int, default=8, help="seeds per temperature")
    parser.add_argument("--tokens", type=int, default=48, help="tokens per sample")
    args = parser.parse_args()

    from claimcheck.harness.blas import ensure_fast_blas

    blas = ensure_fast_blas()
    from claimcheck.models import load
    from claimcheck.probing.sampling import get_policy
    from claimcheck.probing.sampling.runs import temperature_search
    from probes.curves.curve_prompts import select_prompts
    from probes.curves.curve_text import chat_ids, stop_token_ids
    from probes.curves.temperature_search import TEMPERATURE_GRID

    lm = load(args.model, variant=args.variant, needs_text=True)
    prompt = chat_ids(lm.tokenizer, select_prompts(args.prompt)[0].text)
    print(f"model {lm.model_id} ({lm.variant}), BLAS {blas.describe()}, {len(TEMPERATURE_GRID)} temperatures x {args.seeds} seeds x {args.tokens} tokens")
    counts = {}
    for stop in (False, True):
        started = time.perf_counter()
        result = temperature_search(
            lm.model, lm.tokenizer.decode, prompt, target_policy=get_policy("curve-router"), target_seed=102,
            temperatures=TEMPERATURE_GRID, seeds=list(range(args.seeds)), max_tokens=args.tokens,
            ban_ids=stop_token_ids(lm.tokenizer), stop_at_miss=stop,
        )
        seconds = time.perf_counter() - started
        rows = result["samples"]
        counts[stop] = (sum(r["exact_match"] for r in rows), sum(r["crossed_fork"] for r in rows), sum(r["shared_prefix"] for r in rows))
        print(f"{'stop_at_miss' if stop else 'full samples':>13}: {seconds:6.1f} s, {result['work']['generated_tokens']:6d} tokens, "
              f"exact {counts[stop][0]}, crossed fork {counts[stop][1]}, shared prefix {counts[stop][2]}")
    print(f"same counts: {counts[False] == counts[True]}")


if __name__ == "__main__":
    main()
