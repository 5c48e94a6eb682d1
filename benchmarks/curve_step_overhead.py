"""Per-step host overhead of the curve probes' generation: model time against everything else.

Runs one prompt's fork map (its genuine branches) under ``cProfile`` and splits the wall time into
the time spent waiting for the model's step (``numpy.array`` of the logits, where MLX evaluates)
and the rest: Python bookkeeping, numpy sampling, cache merging and filtering. Divided by the
generated tokens and the steps, that is the per-token and per-step overhead a faster device cannot
remove. Prints numbers; asserts nothing.

    python benchmarks/curve_step_overhead.py --prompts lighthouse,paris
"""

from __future__ import annotations

import cProfile
import io
import pstats
import time

from _common import curve_parser


def main() -> None:
    parser = curve_parser(__doc__)
    parser.add_argument("--prompts", default="lighthouse,weights-advice,paris")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()

    from claimcheck.harness.blas import ensure_fast_blas

    blas = ensure_fast_blas()
    from claimcheck.models import load
    from claimcheck.probing.sampling import TraceRules
    from claimcheck.probing.sampling.runs import bisector_traces
    from probes.curves.curve_prompts import select_prompts
    from probes.curves.curve_text import chat_ids, stop_token_ids

    lm = load(args.model, variant=args.variant, needs_text=True)
    ids = [chat_ids(lm.tokenizer, p.text) for p in select_prompts(args.prompts.split(","))]
    stops = stop_token_ids(lm.tokenizer)
    bisector_traces(lm.model, ids[:1], rules=TraceRules(), stop_ids=stops, branches="genuine", max_ref_tokens=16)  # warm-up
    profile = cProfile.Profile()
    started = time.perf_counter()
    profile.enable()
    records = bisector_traces(lm.model, ids, rules=TraceRules(), stop_ids=stops, branches="genuine")
    profile.disable()
    wall = time.perf_counter() - started
    stats = pstats.Stats(profile)
    waited = sum(v[2] for k, v in stats.stats.items() if k[2] == "<built-in method numpy.array>")  # type: ignore[attr-defined]
    work = records[0]["work"]
    tokens, steps = work["generated_tokens"], work["steps"]
    print(f"model {lm.model_id} ({lm.variant}), BLAS {blas.describe()}, {len(ids)} prompt(s)")
    print(f"wall {wall:.2f} s, {steps} steps, {tokens} generated tokens; waiting for the model {waited:.2f} s; "
          f"the rest {wall - waited:.2f} s = {1e3 * (wall - waited) / max(1, steps):.2f} ms/step, "
          f"{1e3 * (wall - waited) / max(1, tokens):.3f} ms/token")
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(args.top)
    print(text.getvalue())


if __name__ == "__main__":
    main()
