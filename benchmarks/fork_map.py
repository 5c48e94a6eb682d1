"""Tokens computed and wall time of the fork map and route hazards, each reader prefilling its own reference vs one shared pass.

What the route-hazard claims compute from empty caches, as when the fork-map claims run first: the
genuine-only fork map of the prompts, then the route hazard probe, which completes it into a full
fork map, reads every seed's first departure and the coherence continuations, and the exact
hazards. Each of those three reads the teacher-forced pass over prompt + reference. *before*:
every reader prefills its own pass (``ReferencePasses(keep=False)``, the former computation);
*after*: one pass per reference, shared. Both arms run in this process, on the same prompts and
seeds, each from its own empty cache, in the order given (a warm-up pass first). The tokens are
counted at the model's call (batch rows x sequence length, padding rows included), a noise-free
measure; the script also says whether every output, label, count and hazard is identical between
the arms. Prints numbers; asserts nothing.

    .venv/bin/python benchmarks/fork_map.py --prompts creative --seeds 200
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from typing import Any

from _common import curve_parser


class CountingModel:
    """The model, counting the tokens each call computes (rows x sequence length)."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self.tokens = 0

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        self.tokens += int(inputs.shape[0]) * int(inputs.shape[1])
        return self._model(inputs, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


def run_arm(lm: Any, keep: bool, prompts: Any, chosen: Any, seeds: int, coherence_seeds: int, batch_size: int) -> dict[str, Any]:
    """The fork-map and route-hazard probes from an empty cache; outputs, artifacts, tokens and seconds."""
    import claimcheck.models
    import claimcheck.probing.sampling.reference as reference
    import claimcheck.probing.sampling.runs  # noqa: F401 - bound before the patch below: only the route probe's passes change
    from claimcheck.probing.registry import ProbeContext
    from probes.curves import fork_map, route_hazard

    counting = CountingModel(lm.model)
    loaded = dataclasses.replace(lm, model=counting)
    reference_tokens = [0]
    original_load, original_passes, original_pass = claimcheck.models.load, reference.ReferencePasses, reference.reference_pass

    def passes(model: Any) -> Any:
        return original_passes(model, keep=keep)

    def counted_pass(model: Any, prompt: Any, ref: Any) -> Any:
        reference_tokens[0] += len(prompt) + len(ref)
        return original_pass(model, prompt, ref)

    claimcheck.models.load = lambda *a, **k: loaded  # type: ignore[assignment]
    reference.ReferencePasses = passes  # type: ignore[assignment, misc]
    reference.reference_pass = counted_pass
    try:
        with tempfile.TemporaryDirectory() as folder:
            started = time.perf_counter()
            fork_map.bisector_trace(ProbeContext(cache_dir=folder), prompts=prompts, batch_size=batch_size)
            traced = time.perf_counter()
            ctx = ProbeContext(cache_dir=folder)
            out = route_hazard.route_hazard(ctx, prompts=prompts, seeds=seeds, coherence_seeds=coherence_seeds, batch_size=batch_size)
            finished = time.perf_counter()
            records = fork_map.traces(ProbeContext(cache_dir=folder), loaded, chosen, batch_size=batch_size)
    finally:
        claimcheck.models.load, reference.ReferencePasses = original_load, original_passes  # type: ignore[misc]
        reference.reference_pass = original_pass
    return {
        "out": out, "artifacts": {k: ctx.artifacts[k] for k in ("route_table", "labels", "estimates", "fork_departures")},
        "labels": {name: (r["labels"], r["nodes"], r["summary"]) for name, r in records.items()},
        "tokens": counting.tokens, "reference_tokens": reference_tokens[0],
        "trace_seconds": traced - started, "route_seconds": finished - traced, "seconds": finished - started,
    }


def main() -> None:
    parser = curve_parser(__doc__)
    parser.add_argument("--prompts", default="creative", help="`all`, a pole, or comma-separated prompt ids")
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--coherence-seeds", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--order", default="before,after", help="arms to run, in this order")
    args = parser.parse_args()

    from claimcheck.harness.blas import ensure_fast_blas

    blas = ensure_fast_blas()
    from claimcheck.models import load
    from claimcheck.probing.sampling.reference import reference_pass
    from probes.curves.curve_prompts import select_prompts
    from probes.curves.curve_text import chat_ids

    lm = load(args.model, variant=args.variant, needs_text=True)
    prompts = args.prompts.split(",") if "," in args.prompts else args.prompts
    chosen = select_prompts(prompts)
    print(f"model {lm.model_id} ({lm.variant}), BLAS {blas.describe()}, {len(chosen)} prompt(s), {args.seeds} seeds, "
          f"{args.coherence_seeds} coherence seeds, batch {args.batch_size}")
    reference_pass(lm.model, chat_ids(lm.tokenizer, chosen[0].text), [])  # warm-up: first-call costs go to neither arm
    arms = {}
    for arm in args.order.split(","):
        if arm not in ("before", "after"):
            raise SystemExit(f"--order: unknown arm {arm!r} (expected before, after)")
        arms[arm] = result = run_arm(lm, arm == "after", prompts, chosen, args.seeds, args.coherence_seeds, args.batch_size)
        print(f"{arm:6s} tokens computed {result['tokens']:7d} (reference passes {result['reference_tokens']:6d}), "
              f"{result['seconds']:7.1f} s (genuine fork map {result['trace_seconds']:.1f} s, route hazard {result['route_seconds']:.1f} s)")
    if {"before", "after"} <= set(arms):
        before, after = arms["before"], arms["after"]
        print(f"after/before: tokens {after['tokens'] / before['tokens']:.3f}, reference-pass tokens "
              f"{after['reference_tokens'] / before['reference_tokens']:.3f}, seconds {after['seconds'] / before['seconds']:.3f} "
              f"(route hazard {after['route_seconds'] / before['route_seconds']:.3f})")
        same = {name: before[name] == after[name] for name in ("out", "artifacts", "labels")}
        print(f"identical between arms: outputs {same['out']}, route table/labels/estimates {same['artifacts']}, "
              f"fork-map labels/nodes/summaries {same['labels']}")


if __name__ == "__main__":
    main()
