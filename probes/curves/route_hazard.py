"""Route hazards (methods D): does a sampling policy leave the greedy path at forks or at re-merges?

``route_hazard`` reads each prompt's full fork map (every traced position labelled FORK, REMERGE or
LOCKED), finds every policy's first departure from the greedy path under matched seeds, and turns
departures into hazards at FORK and REMERGE positions, their ratio (fork selectivity) and the
coherence of fork departures. Undefined quantities (nothing at risk, a zero denominator) are never
turned into numbers: they are left out of the samples and listed with their reason in the artifacts.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from claimcheck.api import Output, PackPlot, ProbeContext, probe
from .curve_cache import cached_many, whole_on_first_look
from .curve_setup import PromptRun, prompt_run
from .curve_text import DEFAULT_MODEL, model_key
from .fork_map import trace_keys, trace_rules, traces
from .route_departures import COHERENCE_OUTPUTS, coherence, departures
from .route_exact import ExactCounts, exact_counts, log_or_none

if TYPE_CHECKING:
    from claimcheck.api.sampling import ReferencePasses


def exact_values(
    ctx: ProbeContext, run: PromptRun, passes: ReferencePasses, records: Mapping[str, Mapping[str, Any]],
    policy_names: Sequence[str], trace_key_of: Mapping[str, dict[str, Any]],
) -> dict[str, dict[str, ExactCounts]]:
    """Per prompt and policy, the exact (seedless) expected departures and at-risk mass (``probes/curves/route_exact.py``)."""
    from claimcheck.api.sampling import get_policy

    keys = {p.id: model_key(run.lm) | {"probe": "route_exact", "trace": trace_key_of[p.id], "policies": sorted(policy_names)}
            for p in run.chosen}

    def compute(missing: list[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in missing:
            ref, labels = records[name]["ref"], records[name]["labels"]
            _, rows = passes.get(run.ids[name], ref)
            out[name] = {policy: exact_counts(rows, ref, labels, get_policy(policy)).to_json() for policy in sorted(policy_names)}
        return out

    stored = cached_many(ctx, keys, compute)
    return {name: {policy: ExactCounts(value["departures"], value["at_risk"]) for policy, value in per.items()}
            for name, per in stored.items()}


_ROUTE_OUTPUTS = {
    "selectivity": Output("ratio", description="hazard(FORK)/hazard(REMERGE) of `policy`, pooled over prompts; leave-one-seed-out jackknife pseudo-values"),
    "reference_selectivity": Output("ratio", description="the same for `reference_policy`"),
    "log_selectivity": Output("log ratio", description="jackknife pseudo-values of ln(selectivity) of `policy`"),
    "reference_log_selectivity": Output("log ratio", description="the same for `reference_policy`"),
    "fork_hazard": Output("fraction", description="hazard(FORK) of `policy`, jackknife pseudo-values"),
    "remerge_hazard": Output("fraction", description="hazard(REMERGE) of `policy`, jackknife pseudo-values"),
    "log_fork_factor": Output("log ratio", description="ln(hazard_policy(FORK)/hazard_reference(FORK)), jackknife pseudo-values"),
    "log_remerge_factor": Output("log ratio", description="ln(hazard_policy(REMERGE)/hazard_reference(REMERGE)), jackknife pseudo-values"),
    "incoherent": Output("0/1", description="per fork departure of `policy`: mean log-prob from the departure on more than coherence_nats below the reference's"),
    "coherence_gap": Output("nats/token", description="per fork departure of `policy`: reference mean log-prob minus the sample's"),
    "exact_log_selectivity": Output("log ratio", description="per prompt: ln of `policy`'s exact (seedless, teacher-forced) selectivity, prompts where both policies' are defined"),
    "reference_exact_log_selectivity": Output("log ratio", description="the same for `reference_policy`, paired by prompt"),
}


_ROUTE_PLOT = PackPlot(
    "route_hazard", "Route hazard per policy", "rates", artifact="route_table", events=("FORK", "REMERGE"),
    numerator="departures", denominator="at_risk",
    caption="Share of positions at risk where each policy left the greedy path, at FORK and at REMERGE positions, "
            "pooled over prompts and seeds, with exact 95% binomial intervals.")


@probe("route_hazard", outputs=_ROUTE_OUTPUTS, reads_text=True, plot=_ROUTE_PLOT)
@whole_on_first_look(_ROUTE_OUTPUTS)
def route_hazard(
    ctx: ProbeContext,
    *,
    model: str = DEFAULT_MODEL,
    variant: str | None = "fp32",
    prompts: str | Sequence[str] = "creative",
    policy: str = "curve-router",
    reference_policy: str = "curve-id",
    seeds: int = 200,
    coherence_seeds: int = 20,
    coherence_nats: float = 1.5,
    genuine_p2: float = 0.05,
    max_ref_tokens: int = 80,
    batch_size: int = 64,
) -> dict[str, list[float]]:
    """Departure hazards at FORK vs REMERGE positions under matched seeds, and fork-departure coherence.

    Args:
        model: model id: a registered one, a project alias, an mlx-lm folder or a cached Hugging Face repo.
        variant: which weights of the model to load, one it offers (``fp32``, ``4bit``); ``None``: its
            default (``fp32`` on the CPU, ``4bit`` on a GPU).
        prompts: prompts of ``probes/data/curve-prompts.yaml``: ``all`` (the creative, advice and factual
            poles), a pole, a prompt id, or a list of those (the ``copy`` pole only by name).
        policy: the sampling policy measured, by name: ``greedy``, ``default`` (T 1, top-p 0.95, top-k 64),
            ``temp<T>`` (e.g. ``temp0.8``), ``curve-id`` or ``curve-router``.
        reference_policy: the policy it is compared with (the ``reference_*`` outputs and the factors).
        seeds: matched seeds per prompt and policy (0 to ``seeds - 1``), each giving one first departure
            from the greedy path; the jackknife leaves one seed out at a time.
        coherence_seeds: fork departures among the first this many seeds are continued and scored for
            coherence (at most ``seeds``), for every route policy; only when the check reads
            ``incoherent`` or ``coherence_gap`` (or a direct call, which reads everything).
        coherence_nats: a fork departure is incoherent when the sample's mean log-prob per token from the
            departure on is more than this many nats below the reference's.
        genuine_p2: rank-2 probability from which a greedy position's runner-up is a genuine alternative
            (0.05, the original experiment's cut).
        max_ref_tokens: length cap of each prompt's greedy reference, in tokens; a position is traced
            while 12 tokens follow it, the first 52 at most.
        batch_size: sequences generated at once (speed and memory); not part of the cache key, so a
            stored result is reused at any value.
    """
    from claimcheck.api.sampling import (
        Counts,
        ROUTE_POLICIES,
        ReferencePasses,
        Value,
        get_policy,
        hazard,
        jackknife_pseudovalues,
        ratio,
        sample_counts,
        selectivity,
    )

    for name in (policy, reference_policy):
        get_policy(name)  # fail fast on a typo
    run = prompt_run(ctx, model, variant, prompts)
    lm, chosen = run.lm, list(run.chosen)
    passes = ReferencePasses(lm.model)  # one teacher-forced pass per reference: the trace, the departures, the exact hazards
    rules = trace_rules(genuine_p2)
    records = traces(ctx, lm, chosen, genuine_p2=genuine_p2, max_ref_tokens=max_ref_tokens, batch_size=batch_size, passes=passes)
    key_of_trace = trace_keys(lm, chosen, run.ids, rules, max_ref_tokens, run.stops)
    names = sorted(set(ROUTE_POLICIES) | {policy, reference_policy})
    routes = departures(ctx, run, passes, records, names, seeds, key_of_trace)
    scored = ctx.wants(*COHERENCE_OUTPUTS) and coherence_seeds > 0
    coherent = coherence(ctx, run, passes, records, routes, names, min(coherence_seeds, seeds), batch_size, key_of_trace) if scored else {}

    def scores(name: str) -> list[dict[str, Any]]:
        return [c for p in chosen for c in coherent[p.id][name]["scores"]] if scored else []

    def per_seed(policy_name: str) -> list[Counts]:
        counts = []
        for seed in range(seeds):
            total = Counts({}, {})
            for p in chosen:
                total = total + sample_counts(routes[p.id][policy_name]["departures"][seed], records[p.id]["labels"])
            counts.append(total)
        return counts

    def log_of(value: Value) -> Value:
        if value.value is None:
            return value
        if value.value <= 0:
            return Value(None, "the ratio is 0, its log is undefined")
        return Value(math.log(value.value))

    mine, theirs = per_seed(policy), per_seed(reference_policy)
    statistics: dict[str, tuple[Any, Callable[..., Value]]] = {
        "selectivity": (mine, selectivity),
        "reference_selectivity": (theirs, selectivity),
        "log_selectivity": (mine, lambda c: log_of(selectivity(c))),
        "reference_log_selectivity": (theirs, lambda c: log_of(selectivity(c))),
        "fork_hazard": (mine, lambda c: hazard(c, "FORK")),
        "remerge_hazard": (mine, lambda c: hazard(c, "REMERGE")),
        "log_fork_factor": (
            list(zip(mine, theirs)), lambda a, b: log_of(ratio(hazard(a, "FORK"), hazard(b, "FORK"), "fork hazard factor"))
        ),
        "log_remerge_factor": (
            list(zip(mine, theirs)), lambda a, b: log_of(ratio(hazard(a, "REMERGE"), hazard(b, "REMERGE"), "re-merge hazard factor"))
        ),
    }
    out: dict[str, list[float]] = {}
    estimates: dict[str, Any] = {}
    for name, (units, statistic) in statistics.items():
        pseudo, full, reason = jackknife_pseudovalues(units, statistic)
        out[name] = pseudo
        estimates[name] = full.to_json() | {"samples_undefined": reason}
    def gaps_of(name: str) -> list[float]:
        return [c["ref_mean_logprob"] - c["sample_mean_logprob"] for c in scores(name)]

    gaps = gaps_of(policy)
    out["coherence_gap"] = gaps
    out["incoherent"] = [1.0 if gap > coherence_nats else 0.0 for gap in gaps]

    exact = exact_values(ctx, run, passes, records, names, key_of_trace)
    paired = [(log_or_none(exact[p.id][policy].selectivity()), log_or_none(exact[p.id][reference_policy].selectivity())) for p in chosen]
    out["exact_log_selectivity"] = [a for a, b in paired if a is not None and b is not None]
    out["reference_exact_log_selectivity"] = [b for a, b in paired if a is not None and b is not None]

    table = {}
    for name in names:
        pooled = Counts({}, {})
        for c in per_seed(name):
            pooled = pooled + c
        table[name] = {
            "fork_hazard": hazard(pooled, "FORK").to_json(),
            "remerge_hazard": hazard(pooled, "REMERGE").to_json(),
            "selectivity": selectivity(pooled).to_json(),
            "departures": dict(pooled.departures),
            "at_risk": dict(pooled.at_risk),
            "coherent": f"{sum(1 for gap in gaps_of(name) if gap <= coherence_nats)}/{len(gaps_of(name))}" if scored else None,
            "exact": sum((exact[p.id][name] for p in chosen[1:]), exact[chosen[0].id][name]).to_json() if chosen else None,
        }
    ctx.artifacts["route_table"] = table
    ctx.artifacts["work"] = ({p.id: coherent[p.id][policy]["work"] for p in chosen} if scored
                             else "no fork departure continued: the check reads no coherence output")
    ctx.artifacts["estimates"] = estimates
    ctx.artifacts["labels"] = {p.id: {"FORK": records[p.id]["labels"].count("FORK"), "REMERGE": records[p.id]["labels"].count("REMERGE"),
                                      "LOCKED": records[p.id]["labels"].count("LOCKED")} for p in chosen}
    ctx.artifacts["undefined"] = {name: value["samples_undefined"] for name, value in estimates.items() if value["samples_undefined"]}
    if not out["exact_log_selectivity"]:
        reason = "exact selectivity undefined for every prompt (no probability mass at risk at a REMERGE position)"
        ctx.artifacts["undefined"].update({"exact_log_selectivity": reason, "reference_exact_log_selectivity": reason})
    ctx.artifacts["fork_departures"] = [
        {"prompt": p.id, "seed": c["seed"], "departure": c["departure"], "gap": round(c["ref_mean_logprob"] - c["sample_mean_logprob"], 3),
         "text": lm.tokenizer.decode(c["sample_tokens"])[:160]}
        for p in chosen for c in (coherent[p.id][policy]["scores"] if scored else [])
    ]
    ctx.info.update({"prompts": [p.id for p in chosen], "seeds": seeds, "policy": policy, "reference_policy": reference_policy})
    return out
