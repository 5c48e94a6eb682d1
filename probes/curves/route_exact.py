"""Exact, seedless route hazards from teacher-forced probabilities.

The sampled hazard counts, over seeds, departures at L-positions and seeds still on the greedy
path there. Its expectation needs no seeds: with ``q_i`` the probability that a policy draws
the reference token at position ``i`` (teacher-forced) and ``S_i = q_0 ... q_{i-1}`` the chance
of still being on the path at ``i``, one seed departs at ``i`` with probability ``S_i (1 - q_i)``.
So ``hazard(L) = sum_{i in L} S_i (1 - q_i) / sum_{i in L} S_i`` exactly. It stays defined where
every sampled seed has already departed before the first L-position (nothing at risk), and it
has no seed-to-seed noise, so a selectivity near 1 is a property of the model, not of the draw.

Pooled over prompts (expected departures and at-risk mass summed, as the sampled estimator sums
counts), the exact hazard is the limit the sampled pooled hazard tends to as seeds grow, so
``route_exact`` is the seedless, deterministic twin of the route hazard probe's selectivities.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from claimcheck.api import NotApplicable, Output, ProbeContext, probe
from .curve_text import DEFAULT_MODEL

LABELS = ("FORK", "REMERGE")


@dataclass(frozen=True)
class ExactCounts:
    """Expected departures and expected seeds at risk per label, for one seed."""

    departures: Mapping[str, float]
    at_risk: Mapping[str, float]

    def __add__(self, other: "ExactCounts") -> "ExactCounts":
        return ExactCounts({k: self.departures[k] + other.departures[k] for k in LABELS},
                           {k: self.at_risk[k] + other.at_risk[k] for k in LABELS})

    def hazard(self, label: str) -> float | None:
        """Expected departures over expected seeds at risk; None when nothing is at risk at all."""
        return self.departures[label] / self.at_risk[label] if self.at_risk[label] > 0 else None

    def selectivity(self) -> float | None:
        """hazard(FORK) / hazard(REMERGE); None when either is undefined or the re-merge hazard is 0."""
        fork, remerge = self.hazard("FORK"), self.hazard("REMERGE")
        return fork / remerge if fork is not None and remerge else None

    def to_json(self) -> dict[str, Any]:
        return {"departures": dict(self.departures), "at_risk": dict(self.at_risk),
                "fork_hazard": self.hazard("FORK"), "remerge_hazard": self.hazard("REMERGE"), "selectivity": self.selectivity()}


def exact_counts(rows: np.ndarray, ref: Sequence[int], labels: Sequence[str], policy: Any) -> ExactCounts:
    """Expected per-seed departures and at-risk mass at FORK and REMERGE positions of one prompt.

    ``rows[i]`` is the teacher-forced log-prob row of ``ref[i]``; the policy reshapes it exactly as
    it does when drawing (:meth:`Policy.log_weights`).
    """
    from claimcheck.api.sampling import log_softmax

    n = min(len(ref), len(labels), len(rows))
    if n == 0:
        return ExactCounts({k: 0.0 for k in LABELS}, {k: 0.0 for k in LABELS})
    weights = log_softmax(np.asarray(policy.log_weights(np.asarray(rows[:n])), dtype=np.float32)).astype(np.float64)
    log_q = weights[np.arange(n), np.asarray(list(ref[:n]), dtype=np.int64)]
    log_survive = np.concatenate([[0.0], np.cumsum(log_q)[:-1]])
    survive = np.exp(log_survive)
    depart = survive * -np.expm1(log_q)
    departures = {k: float(sum(depart[i] for i in range(n) if labels[i] == k)) for k in LABELS}
    at_risk = {k: float(sum(survive[i] for i in range(n) if labels[i] == k)) for k in LABELS}
    return ExactCounts(departures, at_risk)


def log_or_none(value: float | None) -> float | None:
    """The natural log of a positive value, else None (a zero or undefined ratio has no log)."""
    return math.log(value) if value is not None and value > 0 else None


def pooled(counts: Sequence[ExactCounts]) -> ExactCounts:
    """Expected departures and at-risk mass summed over prompts (the sampled estimator pools counts the same way)."""
    total = ExactCounts({k: 0.0 for k in LABELS}, {k: 0.0 for k in LABELS})
    for c in counts:
        total = total + c
    return total


def exact_outputs(mine: ExactCounts, theirs: ExactCounts) -> tuple[dict[str, list[float]], dict[str, str]]:
    """The pooled exact figures of ``policy`` (mine) and ``reference_policy`` (theirs), one value each.

    An undefined figure (nothing at risk, a zero hazard in a ratio) has no value; its reason is
    returned instead, never a substitute number.
    """
    def fork_factor() -> float | None:
        a, b = mine.hazard("FORK"), theirs.hazard("FORK")
        return a / b if a is not None and b else None

    def remerge_factor() -> float | None:
        a, b = mine.hazard("REMERGE"), theirs.hazard("REMERGE")
        return a / b if a is not None and b else None

    figures = {
        "selectivity": mine.selectivity(),
        "reference_selectivity": theirs.selectivity(),
        "log_selectivity": log_or_none(mine.selectivity()),
        "reference_log_selectivity": log_or_none(theirs.selectivity()),
        "fork_hazard": mine.hazard("FORK"),
        "remerge_hazard": mine.hazard("REMERGE"),
        "log_fork_factor": log_or_none(fork_factor()),
        "log_remerge_factor": log_or_none(remerge_factor()),
    }
    values = {name: [] if value is None else [float(value)] for name, value in figures.items()}
    undefined = {name: "no probability mass at risk at a FORK or REMERGE position, or a zero hazard in a ratio"
                 for name, value in figures.items() if value is None}
    return values, undefined


_EXACT_OUTPUTS = {
    "selectivity": Output("ratio", description="exact hazard(FORK)/hazard(REMERGE) of `policy`, pooled over prompts (no seeds)"),
    "reference_selectivity": Output("ratio", description="the same for `reference_policy`"),
    "log_selectivity": Output("log ratio", description="ln of `policy`'s exact pooled selectivity"),
    "reference_log_selectivity": Output("log ratio", description="the same for `reference_policy`"),
    "fork_hazard": Output("fraction", description="exact hazard(FORK) of `policy`, pooled over prompts"),
    "remerge_hazard": Output("fraction", description="exact hazard(REMERGE) of `policy`, pooled over prompts"),
    "log_fork_factor": Output("log ratio", description="ln(exact hazard(FORK) of `policy` / that of `reference_policy`)"),
    "log_remerge_factor": Output("log ratio", description="ln(exact hazard(REMERGE) of `policy` / that of `reference_policy`)"),
}


@probe("route_exact", outputs=_EXACT_OUTPUTS, reads_text=True, deterministic=True)
def route_exact(
    ctx: ProbeContext,
    *,
    model: str = DEFAULT_MODEL,
    variant: str | None = "fp32",
    prompts: str | Sequence[str] = "creative",
    policy: str = "curve-router",
    reference_policy: str = "curve-id",
    genuine_p2: float = 0.05,
    max_ref_tokens: int = 80,
    batch_size: int = 64,
) -> dict[str, list[float]]:
    """Exact route hazards and selectivities of two policies, pooled over prompts, from teacher-forced passes.

    The fork map is the route hazard probe's (same trace, same labels, same cache); where the
    sampled estimator's seeds leave nothing at risk, this one stays defined. Raises
    :class:`NotApplicable` when either policy's selectivity is undefined even so.

    Args:
        model: model id: a registered one, a project alias, an mlx-lm folder or a cached Hugging Face repo.
        variant: which weights of the model to load, one it offers (``fp32``, ``4bit``); ``None``: its
            default (``fp32`` on the CPU, ``4bit`` on a GPU).
        prompts: prompts of ``probes/data/curve-prompts.yaml``: ``all`` (the creative, advice and factual
            poles), a pole, a prompt id, or a list of those (the ``copy`` pole only by name).
        policy: the sampling policy measured, by name: ``greedy``, ``default`` (T 1, top-p 0.95, top-k 64),
            ``temp<T>`` (e.g. ``temp0.8``), ``curve-id`` or ``curve-router``.
        reference_policy: the policy it is compared with (the ``reference_*`` outputs and the factors).
        genuine_p2: rank-2 probability from which a greedy position's runner-up is a genuine alternative
            (0.05, the original experiment's cut).
        max_ref_tokens: length cap of each prompt's greedy reference, in tokens; a position is traced
            while 12 tokens follow it, the first 52 at most.
        batch_size: sequences generated at once (speed and memory); not part of the cache key, so a
            stored result is reused at any value.
    """
    from claimcheck.api.sampling import ROUTE_POLICIES, ReferencePasses, get_policy
    from .curve_setup import prompt_run
    from .fork_map import trace_keys, trace_rules, traces
    from .route_hazard import exact_values

    for name in (policy, reference_policy):
        get_policy(name)  # fail fast on a typo
    run = prompt_run(ctx, model, variant, prompts)
    chosen = list(run.chosen)
    passes = ReferencePasses(run.lm.model)
    records = traces(ctx, run.lm, chosen, genuine_p2=genuine_p2, max_ref_tokens=max_ref_tokens, batch_size=batch_size, passes=passes)
    key_of_trace = trace_keys(run.lm, chosen, run.ids, trace_rules(genuine_p2), max_ref_tokens, run.stops)
    names = sorted(set(ROUTE_POLICIES) | {policy, reference_policy})  # the route hazard probe's policy set: a shared cache entry
    exact = exact_values(ctx, run, passes, records, names, key_of_trace)
    per_policy = {name: pooled([exact[p.id][name] for p in chosen]) for name in names}
    values, undefined = exact_outputs(per_policy[policy], per_policy[reference_policy])
    ctx.artifacts["exact_table"] = {name: counts.to_json() for name, counts in per_policy.items()}
    ctx.artifacts["per_prompt"] = {p.id: {name: exact[p.id][name].selectivity() for name in names} for p in chosen}
    ctx.artifacts["labels"] = {p.id: {label: records[p.id]["labels"].count(label) for label in ("FORK", "REMERGE", "LOCKED")}
                               for p in chosen}
    ctx.artifacts["undefined"] = undefined
    ctx.info.update({"prompts": [p.id for p in chosen], "policy": policy, "reference_policy": reference_policy})
    missing = [name for name in ("selectivity", "reference_selectivity") if name in undefined]
    if missing:
        raise NotApplicable(f"exact {' and '.join(missing)} undefined on {', '.join(p.id for p in chosen)}: {undefined[missing[0]]}")
    return values
