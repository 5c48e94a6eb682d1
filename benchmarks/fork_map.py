"""Tokens computed and wall time of the fork map, branches settled by outcome vs by label, same prompts.

The fork map forces the rank-2 token at each traced position and greedy-continues the branch. A
branch can stop once it is decided: by *outcome* (reconverged / partial / diverged, the older rule)
or by *label* (diverged or not, which is all that fork shares, funnels and route labels read). Both
run here, in one process, on the same prompts and the same prefilled references, and the script
prints for each: the tokens the model computed (prefill + generated, a noise-free measure), the
wall time, and whether every node's label agrees between the two. It also prints what the
straightforward procedure would compute (every branch prefilled from scratch and run to its full
length), counted from the same traces. Prints numbers; asserts nothing.

    .venv/bin/python benchmarks/fork_map.py --prompts all --branches genuine
    .venv/bin/python benchmarks/fork_map.py --prompts creative --branches all
"""

from __future__ import annotations

import time

from _common import curve_parser


def main() -> None:
    parser = curve_parser(__doc__)
    parser.add_argument("--prompts", default="all", help="`all`, a pole, or comma-separated prompt ids")
    parser.add_argument("--branches", default="genuine", choices=("genuine", "all"))
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--order", default="outcome,label", help="settle levels to run, in this order")
    args = parser.parse_args()

    from claimcheck.harness.blas import ensure_fast_blas

    blas = ensure_fast_blas()
    from claimcheck.models import load
    from claimcheck.sampling import TraceRules
    from claimcheck.sampling.forkmap import traced_positions
    from claimcheck.sampling.runs import bisector_traces
    from probes.curve_prompts import select_prompts
    from probes.curve_text import chat_ids, stop_token_ids

    lm = load(args.model, variant=args.variant, needs_text=True)
    chosen = select_prompts(args.prompts.split(",") if "," in args.prompts else args.prompts)
    ids = [chat_ids(lm.tokenizer, p.text) for p in chosen]
    stops = stop_token_ids(lm.tokenizer)
    rules = TraceRules()
    print(f"model {lm.model_id} ({lm.variant}), BLAS {blas.describe()}, {len(chosen)} prompt(s), branches {args.branches}")

    results = {}
    for level in args.order.split(","):
        started = time.perf_counter()
        records = bisector_traces(lm.model, ids, rules=rules, stop_ids=stops, settle=level, branches=args.branches,
                                  batch_size=args.batch_size)
        wall = time.perf_counter() - started
        work = records[0]["work"]
        computed = work["prefill_tokens"] + work["generated_tokens"] + sum(len(i) + len(r["ref"]) for i, r in zip(ids, records))
        results[level] = records
        print(f"settle by {level:8s} tokens computed {computed:7d} (prefill {work['prefill_tokens']} + reference passes "
              f"{sum(len(i) + len(r['ref']) for i, r in zip(ids, records))} + generated {work['generated_tokens']}), "
              f"{work['steps']} steps, {wall:7.1f} s")

    first = next(iter(results.values()))
    naive = 0
    for prompt, record in zip(ids, first):
        ref = record["ref"]
        for node in record["nodes"]:
            i = node["position"]
            naive += len(prompt) + i + 1 + len(ref) - 1 - i + rules.extra_tokens
        naive += len(prompt) + len(ref)  # the greedy reference
    print(f"straightforward (every branch prefilled alone, run to full length) tokens computed {naive:7d}")
    levels = list(results)
    for a, b in zip(levels, levels[1:]):
        pairs = [(x["label"], y["label"]) for ra, rb in zip(results[a], results[b]) for x, y in zip(ra["nodes"], rb["nodes"])]
        same = sum(x == y for x, y in pairs)
        shares = [(ra["summary"]["fork_share"], rb["summary"]["fork_share"]) for ra, rb in zip(results[a], results[b])]
        print(f"labels {a} vs {b}: {same}/{len(pairs)} identical; fork shares identical: {all(x == y for x, y in shares)}")
    print(f"traced positions per prompt: {[len(traced_positions(len(r['ref']), rules)) for r in first]}")


if __name__ == "__main__":
    main()
