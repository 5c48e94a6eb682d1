"""``pooled_fork_coherence``: fork-departure coherence pooled over policies, as the source counts it.

The source reports coherence per policy (9/9, 3/3, 9/9, 13/13 on 20 seeds each) and concludes once
for all of them ("all fork-departures stayed coherent"). No single policy's count can bound an
incoherent rate below 10% (13 departures bound it at 0.21 at best), but the pooled 34 can (0.084),
so a claim of that conclusion reads every policy's fork departures as one sample. The departures are
those of ``route_hazard`` (methods D), drawn under matched seeds; each policy's own count stays in
the artifacts.
"""

from __future__ import annotations

from typing import Sequence

from claimcheck.api import Output, ProbeContext, ProbeError, probe
from .curve_cache import whole_on_first_look
from .curve_text import DEFAULT_MODEL
from .route_hazard import route_hazard

ROUTE_POLICIES = ("default", "temp0.8", "curve-id", "curve-router")

_OUTPUTS = {
    "incoherent": Output("0/1", description="per fork departure of any listed policy: mean log-prob from the departure on "
                                            "more than coherence_nats below the reference's"),
    "coherence_gap": Output("nats/token", description="per fork departure of any listed policy: reference mean log-prob minus the sample's"),
}


def pooled_counts(per_policy: dict[str, list[float]]) -> dict[str, str]:
    """Each policy's coherent count as the source prints it (``coherent/departures``)."""
    return {name: f"{sum(1 for x in flags if x == 0.0)}/{len(flags)}" for name, flags in per_policy.items()}


@probe("pooled_fork_coherence", outputs=_OUTPUTS, reads_text=True)
@whole_on_first_look(_OUTPUTS)
def pooled_fork_coherence(
    ctx: ProbeContext,
    *,
    model: str = DEFAULT_MODEL,
    variant: str | None = "fp32",
    prompts: str | Sequence[str] = "creative",
    policies: Sequence[str] = ROUTE_POLICIES,
    seeds: int = 20,
    coherence_seeds: int = 20,
    coherence_nats: float = 1.0,
) -> dict[str, list[float]]:
    """Every listed policy's fork departures on the first ``coherence_seeds`` seeds, as one sample.

    Args:
        model: model id: a registered one, a project alias, an mlx-lm folder or a cached Hugging Face repo.
        variant: which weights of the model to load, one it offers (``fp32``, ``4bit``); ``None``: its
            default (``fp32`` on the CPU, ``4bit`` on a GPU).
        prompts: prompts of ``probes/data/curve-prompts.yaml``: ``all`` (the creative, advice and factual
            poles), a pole, a prompt id, or a list of those (the ``copy`` pole only by name).
        policies: distinct policies whose fork departures are pooled into one sample, by name
            (``greedy``, ``default``, ``temp<T>``, ``curve-id``, ``curve-router``).
        seeds: matched seeds per prompt and policy (0 to ``seeds - 1``), drawn and cached as
            ``route_hazard``'s; only the first ``coherence_seeds`` are read here.
        coherence_seeds: fork departures of the first this many seeds are continued and scored for
            coherence (at most ``seeds``).
        coherence_nats: a fork departure is incoherent when the sample's mean log-prob per token from the
            departure on is more than this many nats below the reference's.
    """
    names = list(policies)
    if not names or len(set(names)) != len(names):
        raise ProbeError(f"`policies` must list distinct policies, got {names}")
    out: dict[str, list[float]] = {"incoherent": [], "coherence_gap": []}
    flags: dict[str, list[float]] = {}
    for name in names:
        values = route_hazard(ctx, model=model, variant=variant, prompts=prompts, policy=name, reference_policy=name,
                              seeds=seeds, coherence_seeds=coherence_seeds, coherence_nats=coherence_nats)
        flags[name] = list(values["incoherent"])
        out["incoherent"] += values["incoherent"]
        out["coherence_gap"] += values["coherence_gap"]
    ctx.artifacts["coherent_by_policy"] = pooled_counts(flags)
    ctx.artifacts["pooled"] = pooled_counts({"pooled": out["incoherent"]})["pooled"]
    return out
