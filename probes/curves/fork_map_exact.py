"""``bisector_trace_exact``: the fork map of named prompts as the deterministic fact it is.

The trace (methods C) is greedy throughout: the reference, every forced rank-2 branch and its
greedy continuation. On one prompt it gives one value per output and no sampling noise, so a claim
about the source's own prompts (one per pole: lighthouse, weights-advice, paris) is decided
exactly from those values (``deterministic=True``), as arithmetic is, instead of by a sampled rule
that one value per pole cannot decide. The values are those of ``bisector_trace`` on the same
prompts; only the way a run decides them differs. A named prompt whose fork share or funnel is
undefined (a reference too short to trace, no genuine alternative) leaves the fact undefined, so the
item is inconclusive with that prompt's reason, never decided on the other prompts alone.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from claimcheck.api import ProbeContext, Undecidable, probe
from .curve_text import DEFAULT_MODEL
from .fork_map import _TRACE_OUTPUTS, bisector_trace

SOURCE_PROMPTS = ("lighthouse", "weights-advice", "paris")


@probe("bisector_trace_exact", outputs=_TRACE_OUTPUTS, reads_text=True, deterministic=True)
def bisector_trace_exact(
    ctx: ProbeContext,
    *,
    model: str = DEFAULT_MODEL,
    variant: str | None = "fp32",
    prompts: str | Sequence[str] = SOURCE_PROMPTS,
    genuine_p2: float = 0.05,
    max_ref_tokens: int = 80,
    batch_size: int = 64,
) -> dict[str, list[float]]:
    """Greedy fork map of the named prompts, one exact value per prompt (no seeds, no repeats).

    Args:
        model: model id: a registered one, a project alias, an mlx-lm folder or a cached Hugging Face repo.
        variant: which weights of the model to load, one it offers (``fp32``, ``4bit``); ``None``: its
            default (``fp32`` on the CPU, ``4bit`` on a GPU).
        prompts: prompts of ``probes/data/curve-prompts.yaml`` by id (the source's one per pole by
            default), or a pole, ``all``, or a list of those; one whose value is undefined makes the
            item inconclusive.
        genuine_p2: rank-2 probability from which a greedy position's runner-up is a genuine alternative
            (0.05, the original experiment's cut).
        max_ref_tokens: length cap of each prompt's greedy reference, in tokens; a position is traced
            while 12 tokens follow it, the first 52 at most.
        batch_size: sequences generated at once (speed and memory); not part of the cache key, so a
            stored trace is reused at any value.
    """
    out = bisector_trace(ctx, model=model, variant=variant, prompts=prompts if isinstance(prompts, str) else list(prompts),
                         genuine_p2=genuine_p2, max_ref_tokens=max_ref_tokens, batch_size=batch_size)
    raise_if_undefined(ctx.artifacts.get("fork_map", []), ctx.artifacts.get("undefined", []))
    return {name: list(values) for name, values in out.items()}


def raise_if_undefined(fork_map: Sequence[Mapping[str, Any]], undefined: Sequence[Mapping[str, Any]]) -> None:
    """Undecidable, naming each prompt, when any named prompt has no funnel or no fork share."""
    reasons = [f"{entry['prompt']}: reference of {entry['reference_tokens']} tokens, too short to trace"
               for entry in fork_map if not entry["summary"].get("traced")]
    untraced = {entry["prompt"] for entry in fork_map if not entry["summary"].get("traced")}
    reasons += [f"{entry['prompt']}: {entry['reason']}" for entry in undefined if entry["prompt"] not in untraced]
    if reasons:
        raise Undecidable("the fact of these named prompts is undefined: " + "; ".join(reasons))
