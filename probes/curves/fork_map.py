"""The fork map (methods C) and what reads it: fork shares and funnels, and the fork-vs-re-merge classifier.

- ``bisector_trace``: per prompt, which genuine rank-2 alternatives of the greedy path lead
  elsewhere: fork shares per pole, re-merge shares, funnels.
- ``fork_classifier``: can local next-token features tell a fork from a re-merge?

:func:`traces` makes and caches the fork map of each prompt; the route hazard probe reads it too.
Undefined quantities (no genuine alternative, a reference too short to trace) are never turned into
numbers: they are left out of the samples and listed with their reason in the artifacts.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Callable, Mapping, Sequence

from claimcheck.api import Output, ProbeContext, ProbeError, probe
from .curve_cache import cached_many, stored, whole_on_first_look
from .curve_groups import GROUPS_INFO, prompt_group
from .curve_prompts import ALL_POLES, CurvePrompt, select_prompts
from .curve_text import DEFAULT_MODEL, chat_ids, load_text_model, model_key, stop_token_ids

FEATURES = ("entropy", "p1", "p2", "margin", "bimodality")
# Not local: the branch's reconvergence score, which defines the label. Only a positive control
# uses it (a classifier given it must separate forks from re-merges).
LEAKED_FEATURES = ("downstream_score",)
SETTLE = "label"  # a branch stops once its label is decided (claimcheck.probing.sampling.forkmap.RunTracker.label_settled)


def trace_rules(genuine_p2: float) -> Any:
    """The trace thresholds of the original experiment, with the claim's genuine-alternative cut."""
    from claimcheck.api.sampling import TraceRules

    return TraceRules(genuine_p2=float(genuine_p2))


def trace_keys(
    lm: Any, prompts: Sequence[CurvePrompt], ids: Mapping[str, list[int]], rules: Any, max_ref_tokens: int, stops: list[int],
    branches: str = "all",
) -> dict[str, dict[str, Any]]:
    """The cache key of each prompt's trace (``branches="genuine"`` for a genuine-only one)."""
    base = model_key(lm) | {"probe": "bisector_trace", "rules": asdict(rules), "max_ref_tokens": int(max_ref_tokens), "stop_ids": stops,
                            "early_stop": True, "settle": SETTLE}
    if branches != "all":
        base["branches"] = branches
    return {p.id: base | {"prompt_ids": ids[p.id]} for p in prompts}


def traces(
    ctx: ProbeContext,
    lm: Any,
    prompts: Sequence[CurvePrompt],
    *,
    genuine_p2: float = 0.05,
    max_ref_tokens: int = 80,
    batch_size: int = 64,
    branches: str = "all",
    passes: Any = None,
) -> dict[str, dict[str, Any]]:
    """The fork map of each prompt, cached per prompt; missing ones are traced in one batch.

    ``branches="genuine"`` asks only for the genuine alternatives' branches (enough for fork
    shares, funnels and the classifier): a full trace serves it when one is stored, else a
    genuine-only one is made. A full trace (``"all"``, for the route's labels) completes a stored
    genuine-only trace of the same prompt rather than tracing it again.

    ``passes`` (a :class:`claimcheck.probing.sampling.reference.ReferencePasses`) keeps the teacher-forced
    pass of each traced reference for a caller that reads the same references next.
    """
    from claimcheck.api.sampling import bisector_traces

    rules = trace_rules(genuine_p2)
    ids = {p.id: chat_ids(lm.tokenizer, p.text) for p in prompts}
    stops = stop_token_ids(lm.tokenizer)
    full = trace_keys(lm, prompts, ids, rules, max_ref_tokens, stops)
    partial = trace_keys(lm, prompts, ids, rules, max_ref_tokens, stops, branches="genuine")

    def tracer(mode: str) -> Callable[[list[str]], dict[str, Any]]:
        def compute(missing: list[str]) -> dict[str, Any]:
            known = stored(ctx, {name: partial[name] for name in missing}) if mode == "all" else {}
            ctx.progress(f"bisector trace ({mode} branches) of {len(missing)} prompt(s), {len(known)} completed from genuine-only traces")
            records = bisector_traces(
                lm.model, [ids[name] for name in missing], rules=rules, max_ref_tokens=max_ref_tokens, stop_ids=stops,
                batch_size=batch_size, progress=ctx.progress, branches=mode, known=[known.get(name) for name in missing],
                settle=SETTLE, passes=passes,
            )
            return dict(zip(missing, records))

        return compute

    if branches == "all":
        return cached_many(ctx, full, tracer("all"))
    if branches != "genuine":
        raise ProbeError(f"`branches` must be `all` or `genuine`, got {branches!r}")
    found = stored(ctx, full)
    rest = {p.id: partial[p.id] for p in prompts if p.id not in found}
    return found | (cached_many(ctx, rest, tracer("genuine")) if rest else {})


def _trace_artifact(prompt: CurvePrompt, record: Mapping[str, Any], decode: Callable[[Sequence[int]], str]) -> dict[str, Any]:
    return {
        "prompt": prompt.id,
        "pole": prompt.pole,
        "reference": decode(record["ref"]),
        "reference_tokens": len(record["ref"]),
        "summary": record["summary"],
        "nodes": [
            {k: node[k] for k in ("position", "p1", "p2", "score", "outcome", "label", "decided_early")}
            | {"branch": decode(node["branch_tokens"])[:160]}
            for node in record["nodes"]
        ],
        "work": record["work"],
    }


_TRACE_OUTPUTS = {
    "fork_share": Output("fraction", description="genuine forks / genuine alternatives, one value per prompt that has an alternative"),
    "remerge_share": Output("fraction", description="1 - fork_share: genuine alternatives whose branch re-merged (fully or partly)"),
    "funnel_length": Output("tokens", description="position of the first genuine alternative (the traced length when there is none)"),
    "genuine_alternatives": Output("nodes", description="traced positions with rank-2 probability >= genuine_p2, per prompt"),
    "creative_fork_share": Output("fraction", description="fork_share of the selection's creative prompts"),
    "advice_fork_share": Output("fraction", description="fork_share of the selection's advice prompts"),
    "factual_fork_share": Output("fraction", description="fork_share of the selection's factual prompts"),
}


@probe("bisector_trace", outputs=_TRACE_OUTPUTS, reads_text=True)
def bisector_trace(
    ctx: ProbeContext,
    *,
    model: str = DEFAULT_MODEL,
    variant: str | None = "fp32",
    prompts: str | Sequence[str] = "all",
    genuine_p2: float = 0.05,
    max_ref_tokens: int = 80,
    batch_size: int = 64,
    swap_poles: Sequence[str] = (),
) -> dict[str, list[float]]:
    """Fork map of each prompt: which rank-2 alternatives of the greedy path lead elsewhere.

    Sequential over prompt groups (:func:`.curve_groups.prompt_group`): each look traces the next
    ``ctx.n`` prompts of each pole in the item's seeded order, so a plan with several looks stops
    once the claim is decided; a one-look plan traces the whole selection at once.

    Args:
        model: model id: a registered one, a project alias, an mlx-lm folder or a cached Hugging Face repo.
        variant: which weights of the model to load, one it offers (``fp32``, ``4bit``); ``None``: its
            default (``fp32`` on the CPU, ``4bit`` on a GPU).
        prompts: prompts of ``probes/data/curve-prompts.yaml``: ``all`` (the creative, advice and factual
            poles), a pole, a prompt id, or a list of those (the ``copy`` pole only by name).
        genuine_p2: rank-2 probability from which a greedy position's runner-up is a genuine alternative
            (0.05, the original experiment's cut).
        max_ref_tokens: length cap of each prompt's greedy reference, in tokens; a position is traced
            while 12 tokens follow it, the first 52 at most.
        batch_size: sequences generated at once (speed and memory); not part of the cache key, so a
            stored trace is reused at any value.
        swap_poles: two pole names: each pole's prompts are filed under the other's output (a positive
            control for an ordering of the poles). With the ``copy`` pole (selected by name) its prompts
            take the other pole's output and that pole's prompts are left out of every pole output: a
            pole whose continuation is given, so its alternatives rejoin the text, in place of a claimed one.
    """
    swap = list(swap_poles)
    if swap and (len(swap) != 2 or len(set(swap)) != 2 or not set(swap) <= set(ALL_POLES)):
        raise ProbeError(f"`swap_poles` must name two different poles of {', '.join(ALL_POLES)}, got {swap}")
    pole_of = {swap[0]: swap[1], swap[1]: swap[0]} if swap else {}
    selection = select_prompts(prompts)
    chosen = prompt_group(ctx, selection)
    out: dict[str, list[float]] = {name: [] for name in _TRACE_OUTPUTS}
    if not chosen:
        return out  # every prompt of the selection was measured at an earlier look
    lm = load_text_model(ctx, model, variant)
    records = traces(ctx, lm, chosen, genuine_p2=genuine_p2, max_ref_tokens=max_ref_tokens, batch_size=batch_size, branches="genuine")
    undefined = ctx.artifacts.get("undefined", []) if ctx.look > 0 else []
    for p in chosen:
        summary = records[p.id]["summary"]
        out["genuine_alternatives"].append(float(summary["genuine_alternatives"]))
        if summary["traced"]:
            first = summary["first_alternative"]
            out["funnel_length"].append(float(first if first is not None else summary["traced"]))
        if summary["fork_share"] is None:
            undefined.append({"prompt": p.id, "pole": p.pole, "reason": summary["undefined_reason"]})
            continue
        out["fork_share"].append(summary["fork_share"])
        out["remerge_share"].append(summary["remerge_share"])
        pole_output = f"{pole_of.get(p.pole, p.pole)}_fork_share"
        if pole_output in out:  # a pole without an output of its own (copy, or a pole swapped with it) files nowhere
            out[pole_output].append(summary["fork_share"])
    earlier = ctx.artifacts.get("fork_map", []) if ctx.look > 0 else []
    ctx.artifacts["fork_map"] = earlier + [_trace_artifact(p, records[p.id], lm.tokenizer.decode) for p in chosen]
    ctx.artifacts["undefined"] = undefined
    if pole_of:
        ctx.artifacts["swapped_poles"] = pole_of
    ctx.info["prompts"] = [name for group in ctx.info[GROUPS_INFO] for name in group]
    return out


_CLASSIFIER_OUTPUTS = {
    "auc": Output("AUC", description="cross-validated AUC of FORK vs REMERGE from local features; leave-one-prompt-out jackknife pseudo-values"),
    "chance_auc": Output("AUC", description="0.5 per prompt unit: the no-information reference for an equivalence check"),
}


@probe("fork_classifier", outputs=_CLASSIFIER_OUTPUTS, reads_text=True)
@whole_on_first_look(_CLASSIFIER_OUTPUTS)
def fork_classifier(
    ctx: ProbeContext,
    *,
    model: str = DEFAULT_MODEL,
    variant: str | None = "fp32",
    prompts: str | Sequence[str] = "all",
    features: Sequence[str] = FEATURES,
    ridge: float = 1.0,
    genuine_p2: float = 0.05,
    max_ref_tokens: int = 80,
    batch_size: int = 64,
) -> dict[str, list[float]]:
    """Tell genuine forks from genuine re-merges by the local next-token distribution alone.

    Args:
        model: model id: a registered one, a project alias, an mlx-lm folder or a cached Hugging Face repo.
        variant: which weights of the model to load, one it offers (``fp32``, ``4bit``); ``None``: its
            default (``fp32`` on the CPU, ``4bit`` on a GPU).
        prompts: prompts of ``probes/data/curve-prompts.yaml``: ``all`` (the creative, advice and factual
            poles), a pole, a prompt id, or a list of those (the ``copy`` pole only by name).
        features: the local features the classifier reads, some of ``entropy`` (nats), ``p1``, ``p2``,
            ``margin`` (p1 - p2), ``bimodality`` (p2 / (1 - p1)); ``downstream_score``, the label's own
            definition, only for a positive control.
        ridge: L2 penalty of the logistic regression (features standardised, intercept unpenalised).
        genuine_p2: rank-2 probability from which a greedy position's runner-up is a genuine alternative
            (0.05, the original experiment's cut).
        max_ref_tokens: length cap of each prompt's greedy reference, in tokens; a position is traced
            while 12 tokens follow it, the first 52 at most.
        batch_size: sequences generated at once (speed and memory); not part of the cache key, so a
            stored trace is reused at any value.
    """
    import numpy as np

    from claimcheck.api.sampling import auc, jackknife_auc

    unknown = [f for f in features if f not in FEATURES + LEAKED_FEATURES]
    if unknown:
        raise ProbeError(f"unknown feature(s) {', '.join(unknown)}; expected some of {', '.join(FEATURES)} "
                         f"(or {', '.join(LEAKED_FEATURES)}, the label's own definition, for a positive control)")
    chosen = select_prompts(prompts)
    lm = load_text_model(ctx, model, variant)
    records = traces(ctx, lm, chosen, genuine_p2=genuine_p2, max_ref_tokens=max_ref_tokens, batch_size=batch_size, branches="genuine")
    rows, labels, groups = [], [], []
    for p in chosen:
        record = records[p.id]
        for node in record["nodes"]:
            if node["p2"] < genuine_p2:
                continue
            local = dict(record["positions"][node["position"]]) | {"downstream_score": node["score"]}
            rows.append([local[f] for f in features])
            labels.append(1 if node["label"] == "FORK" else 0)
            groups.append(p.id)
    x, y = np.asarray(rows, dtype=np.float64).reshape(len(rows), len(features)), np.asarray(labels)
    pseudo, full, reason = jackknife_auc(x, y, groups, ridge=ridge)
    ctx.artifacts["classifier"] = {
        "features": list(features),
        "nodes": {"FORK": int(y.sum()), "REMERGE": int(len(y) - y.sum())},
        "prompts_with_nodes": sorted(set(groups)),
        "cross_validated_auc": full,
        "single_feature_auc": {f: auc(x[:, j], y) for j, f in enumerate(features)} if len(y) else {},
        "undefined": reason,
    }
    return {"auc": pseudo, "chance_auc": [0.5] * len(pseudo)}
