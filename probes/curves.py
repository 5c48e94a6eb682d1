"""Probes for the curve sampler, the fork map and the routing falsification (curve-bisector-routing.md).

Five probes share one cached fork map per prompt:

- ``bisector_trace``: the fork map of each prompt (methods C): fork shares, funnels.
- ``route_hazard``: first departures of each policy from the greedy path under matched seeds, hazards
  at FORK and REMERGE positions, and the coherence of fork departures (methods D).
- ``fork_classifier``: can local next-token features tell a fork from a re-merge?
- ``temperature_search``: pure temperature against one curve-generated target (methods E).
- ``identity_control``: the identity curve against temperature 1 under matched seeds.

Each design is fixed by its params and returned whole on the first look (later looks add nothing),
because the expensive part (generation) is cached per prompt and shared across claims. Undefined
quantities (no genuine alternative, nothing at risk, a zero denominator) are never turned into
numbers: they are left out of the samples and listed with their reason in the artifacts.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

from claimcheck.errors import ProbeError
from claimcheck.probe import Output, ProbeContext, probe

if TYPE_CHECKING:
    from claimcheck.sampling.generate import Root

PROMPT_SET = Path(__file__).with_name("data") / "curve-prompts.yaml"
POLES = ("creative", "advice", "factual")
TEMPERATURE_GRID = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.4, 1.6, 2.0)
FEATURES = ("entropy", "p1", "p2", "margin", "bimodality")
DEFAULT_MODEL = "smollm2-135m-instruct"
CACHE_VERSION = 1


# ---------------------------------------------------------------------------------------------------
# prompt set


@dataclass(frozen=True)
class CurvePrompt:
    """One prompt of the set: an id, its pole and the user turn."""

    id: str
    pole: str
    text: str
    origin: str = "added"


def load_prompt_set(path: Path = PROMPT_SET) -> list[CurvePrompt]:
    """Read and validate the prompt set (unique ids, known poles, non-empty text)."""
    import yaml

    with open(path, encoding="utf-8") as handle:
        data = yaml.safe_load(handle)
    if not isinstance(data, dict) or not isinstance(data.get("prompts"), list):
        raise ProbeError(f"{path}: expected a mapping with a `prompts` list")
    prompts, seen = [], set()
    for index, entry in enumerate(data["prompts"]):
        where = f"{path}: prompts[{index}]"
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) and entry.get(k) for k in ("id", "pole", "text")):
            raise ProbeError(f"{where}: expected `id`, `pole` and `text` strings, got {entry!r}")
        if entry["pole"] not in POLES:
            raise ProbeError(f"{where}: `pole` must be one of {', '.join(POLES)}, got {entry['pole']!r}")
        if entry["id"] in seen:
            raise ProbeError(f"{where}: duplicate id `{entry['id']}`")
        seen.add(entry["id"])
        prompts.append(CurvePrompt(entry["id"], entry["pole"], entry["text"], str(entry.get("origin", "added"))))
    return prompts


def select_prompts(selection: str | Sequence[str], prompt_set: Sequence[CurvePrompt] | None = None) -> list[CurvePrompt]:
    """Prompts by ``all``, a pole name, an id, or a list of those."""
    prompt_set = list(prompt_set if prompt_set is not None else load_prompt_set())
    names = [selection] if isinstance(selection, str) else list(selection)
    chosen: list[CurvePrompt] = []
    for name in names:
        if name == "all":
            matches = prompt_set
        elif name in POLES:
            matches = [p for p in prompt_set if p.pole == name]
        else:
            matches = [p for p in prompt_set if p.id == name]
        if not matches:
            known = ", ".join(["all", *POLES, *(p.id for p in prompt_set)])
            raise ProbeError(f"no prompt matches `{name}`; expected one of: {known}")
        chosen += [p for p in matches if p not in chosen]
    return chosen


# ---------------------------------------------------------------------------------------------------
# model, tokens, cache


def _load(ctx: ProbeContext, model: str, variant: str | None) -> Any:
    from claimcheck.models import load

    loaded = load(model, variant=variant, needs_text=True)
    ctx.info.update(loaded.info())
    try:
        from claimcheck.harness.blas import ensure_fast_blas

        ctx.info["blas"] = ensure_fast_blas().describe()
    except Exception:  # noqa: BLE001 - the BLAS note is informative only
        pass
    return loaded


def chat_ids(tokenizer: Any, text: str) -> list[int]:
    """The model's chat template around one user turn, ready for generation.

    A base model without a chat template (e.g. Gemma 3 270M) gets the prompt as
    plain text after its BOS token instead.
    """
    if not getattr(tokenizer, "chat_template", None):
        return [int(t) for t in tokenizer.encode(text)]
    ids = tokenizer.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True)
    if isinstance(ids, str):
        ids = tokenizer.encode(ids, add_special_tokens=False)
    return [int(t) for t in ids]


def stop_token_ids(tokenizer: Any) -> list[int]:
    """End-of-sequence ids: the tokenizer's, plus the chat/text end markers it knows.

    SmolLM2 ends a chat turn with ``<|im_end|>`` (2) but plain completions with
    ``<|endoftext|>`` (0); both end a sequence.
    """
    ids = {int(t) for t in (getattr(tokenizer, "eos_token_ids", None) or [])}
    vocab = tokenizer.get_vocab() if hasattr(tokenizer, "get_vocab") else {}
    for marker in ("<|endoftext|>", "<|im_end|>", "<|eot_id|>", "<end_of_turn>", "</s>", "<eos>"):
        if marker in vocab:
            ids.add(int(vocab[marker]))
    return sorted(ids)


class _Miss(Exception):
    pass


@contextlib.contextmanager
def _exclusive(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``path`` for the block (released by the kernel if the process dies)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no flock (Windows): parallel workers may compute twice
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _raise_miss() -> Any:
    raise _Miss


def _stored(ctx: ProbeContext, keys: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """The stored values among ``keys`` (respecting ``--claims-fresh``); computes nothing."""
    from claimcheck.cache import cached

    found = {}
    for name, key in keys.items():
        try:
            found[name], _ = cached(key, _raise_miss, fresh=ctx.fresh, cache_dir=ctx.cache_dir)
        except _Miss:
            pass
    return found


def _cached_many(
    ctx: ProbeContext,
    keys: Mapping[str, dict[str, Any]],
    compute_missing: Callable[[list[str]], Mapping[str, Any]],
) -> dict[str, Any]:
    """Values for every key: stored ones reused, the missing ones computed together, then stored.

    Computing holds a per-probe file lock, and the cache is read again once it is held, so
    parallel workers (``pytest -n``) that need the same trace compute it once, not once each.
    """
    from claimcheck.cache import cached, results_dir

    def lookup(names: Sequence[str]) -> list[str]:
        found = _stored(ctx, {name: keys[name] for name in names})
        values.update(found)
        return [name for name in names if name not in found]

    values: dict[str, Any] = {}
    missing = lookup(list(keys))
    if missing:
        probe_name = str(next(iter(keys.values()))["probe"])
        with _exclusive(results_dir(ctx.cache_dir) / f".{probe_name}.lock"):
            missing = lookup(missing)
            if missing:
                computed = compute_missing(missing)
                for name in missing:
                    values[name], _ = cached(keys[name], functools.partial(computed.__getitem__, name), fresh=True,
                                             cache_dir=ctx.cache_dir)
    hits = ctx.info.setdefault("cache", {})
    for name in keys:
        hits[f"{keys[name]['probe']}:{name}"] = "computed" if name in missing else "reused"
    return values


def _model_key(lm: Any) -> dict[str, Any]:
    return {"model": lm.model_id, "variant": lm.variant, "weights_hash": lm.weights_hash, "version": CACHE_VERSION}


# ---------------------------------------------------------------------------------------------------
# the fork map (shared by every probe but the temperature search)


def _rules(genuine_p2: float) -> Any:
    from claimcheck.sampling import TraceRules

    return TraceRules(genuine_p2=float(genuine_p2))


def _trace_keys(
    lm: Any, prompts: Sequence[CurvePrompt], ids: Mapping[str, list[int]], rules: Any, max_ref_tokens: int, stops: list[int],
    branches: str = "all",
) -> dict[str, dict[str, Any]]:
    base = _model_key(lm) | {"probe": "bisector_trace", "rules": asdict(rules), "max_ref_tokens": int(max_ref_tokens), "stop_ids": stops, "early_stop": True}
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
) -> dict[str, dict[str, Any]]:
    """The fork map of each prompt, cached per prompt; missing ones are traced in one batch.

    ``branches="genuine"`` asks only for the genuine alternatives' branches (enough for fork
    shares, funnels and the classifier): a full trace serves it when one is stored, else a
    genuine-only one is made. A full trace (``"all"``, for the route's labels) completes a stored
    genuine-only trace of the same prompt rather than tracing it again.
    """
    from claimcheck.sampling.runs import bisector_traces

    rules = _rules(genuine_p2)
    ids = {p.id: chat_ids(lm.tokenizer, p.text) for p in prompts}
    stops = stop_token_ids(lm.tokenizer)
    full = _trace_keys(lm, prompts, ids, rules, max_ref_tokens, stops)
    partial = _trace_keys(lm, prompts, ids, rules, max_ref_tokens, stops, branches="genuine")

    def tracer(mode: str) -> Callable[[list[str]], dict[str, Any]]:
        def compute(missing: list[str]) -> dict[str, Any]:
            known = _stored(ctx, {name: partial[name] for name in missing}) if mode == "all" else {}
            ctx.progress(f"bisector trace ({mode} branches) of {len(missing)} prompt(s), {len(known)} completed from genuine-only traces")
            records = bisector_traces(
                lm.model, [ids[name] for name in missing], rules=rules, max_ref_tokens=max_ref_tokens, stop_ids=stops,
                batch_size=batch_size, progress=ctx.progress, branches=mode, known=[known.get(name) for name in missing],
            )
            return dict(zip(missing, records))

        return compute

    if branches == "all":
        return _cached_many(ctx, full, tracer("all"))
    if branches != "genuine":
        raise ProbeError(f"`branches` must be `all` or `genuine`, got {branches!r}")
    found = _stored(ctx, full)
    rest = {p.id: partial[p.id] for p in prompts if p.id not in found}
    return found | (_cached_many(ctx, rest, tracer("genuine")) if rest else {})


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
) -> dict[str, list[float]]:
    """Fork map of each prompt: which rank-2 alternatives of the greedy path lead elsewhere."""
    if ctx.look > 0:
        return {name: [] for name in _TRACE_OUTPUTS}
    chosen = select_prompts(prompts)
    lm = _load(ctx, model, variant)
    records = traces(ctx, lm, chosen, genuine_p2=genuine_p2, max_ref_tokens=max_ref_tokens, batch_size=batch_size, branches="genuine")
    out: dict[str, list[float]] = {name: [] for name in _TRACE_OUTPUTS}
    undefined = []
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
        out[f"{p.pole}_fork_share"].append(summary["fork_share"])
    ctx.artifacts["fork_map"] = [_trace_artifact(p, records[p.id], lm.tokenizer.decode) for p in chosen]
    ctx.artifacts["undefined"] = undefined
    ctx.info["prompts"] = [p.id for p in chosen]
    return out


# ---------------------------------------------------------------------------------------------------
# route hazards


def _route_values(
    ctx: ProbeContext,
    lm: Any,
    chosen: Sequence[CurvePrompt],
    records: Mapping[str, Mapping[str, Any]],
    policy_names: Sequence[str],
    seeds: int,
    coherence_seeds: int,
    batch_size: int,
    trace_keys: Mapping[str, dict[str, Any]],
) -> dict[str, Any]:
    from claimcheck.sampling import GenerationStats, get_policy
    from claimcheck.sampling.runs import first_departures, fork_departure_coherence, reference_pass

    ids = {p.id: chat_ids(lm.tokenizer, p.text) for p in chosen}
    stops = stop_token_ids(lm.tokenizer)
    keys = {
        p.id: _model_key(lm) | {
            "probe": "route_hazard", "trace": trace_keys[p.id], "policies": sorted(policy_names),
            "seeds": int(seeds), "coherence_seeds": int(coherence_seeds),
        }
        for p in chosen
    }

    def compute(missing: list[str]) -> dict[str, Any]:
        policies = [get_policy(name) for name in sorted(policy_names)]
        roots: list[Root] = []
        results: dict[str, Any] = {}
        items: list[dict[str, Any]] = []
        owners: list[tuple[str, str, int, int]] = []
        for name in missing:
            record = records[name]
            ref, labels = record["ref"], record["labels"]
            root, rows = reference_pass(lm.model, ids[name], ref)
            roots.append(root)
            per_policy: dict[str, dict[str, Any]] = {}
            for policy in policies:
                departures, tokens = first_departures(rows, ref, policy, list(range(seeds)))
                per_policy[policy.name] = {"departures": departures, "tokens": tokens, "coherence": []}
                for seed in range(min(coherence_seeds, seeds)):
                    d = departures[seed]
                    if d < len(ref) and labels[d] == "FORK":
                        items.append({
                            "prompt": ids[name], "ref": ref, "ref_logprobs": [f["ref_logprob"] for f in record["positions"]],
                            "policy": policy, "seed": seed, "departure": d, "token": tokens[seed],
                            "token_logprob": float(rows[d, tokens[seed]]),
                        })
                        owners.append((name, policy.name, seed, d))
            results[name] = per_policy
        ctx.progress(f"route hazard: continuing {len(items)} fork departures")
        stats = GenerationStats()
        scored = fork_departure_coherence(lm.model, items, roots=roots, stop_ids=stops, batch_size=batch_size, stats=stats)
        for (name, policy_name, seed, d), score in zip(owners, scored):
            results[name][policy_name]["coherence"].append({"seed": seed, "departure": d} | score)
        for name in missing:
            results[name]["work"] = stats.to_json() | {"shared_by": missing}
        return results

    return _cached_many(ctx, keys, compute)


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
}


@probe("route_hazard", outputs=_ROUTE_OUTPUTS, reads_text=True)
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
    """Departure hazards at FORK vs REMERGE positions under matched seeds, and fork-departure coherence."""
    from claimcheck.sampling import ROUTE_POLICIES, Counts, get_policy, hazard, jackknife_pseudovalues, sample_counts, selectivity
    from claimcheck.sampling.routes import Value, ratio

    if ctx.look > 0:
        return {name: [] for name in _ROUTE_OUTPUTS}
    for name in (policy, reference_policy):
        get_policy(name)  # fail fast on a typo
    chosen = select_prompts(prompts)
    lm = _load(ctx, model, variant)
    rules = _rules(genuine_p2)
    records = traces(ctx, lm, chosen, genuine_p2=genuine_p2, max_ref_tokens=max_ref_tokens, batch_size=batch_size)
    ids = {p.id: chat_ids(lm.tokenizer, p.text) for p in chosen}
    trace_keys = _trace_keys(lm, chosen, ids, rules, max_ref_tokens, stop_token_ids(lm.tokenizer))
    names = sorted(set(ROUTE_POLICIES) | {policy, reference_policy})
    routes = _route_values(ctx, lm, chosen, records, names, seeds, coherence_seeds, batch_size, trace_keys)

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
    gaps = [c["ref_mean_logprob"] - c["sample_mean_logprob"] for p in chosen for c in routes[p.id][policy]["coherence"]]
    out["coherence_gap"] = gaps
    out["incoherent"] = [1.0 if gap > coherence_nats else 0.0 for gap in gaps]

    table = {}
    for name in names:
        pooled = Counts({}, {})
        for c in per_seed(name):
            pooled = pooled + c
        coherent = [c for p in chosen for c in routes[p.id][name]["coherence"]]
        table[name] = {
            "fork_hazard": hazard(pooled, "FORK").to_json(),
            "remerge_hazard": hazard(pooled, "REMERGE").to_json(),
            "selectivity": selectivity(pooled).to_json(),
            "departures": dict(pooled.departures),
            "at_risk": dict(pooled.at_risk),
            "coherent": f"{sum(1 for c in coherent if c['ref_mean_logprob'] - c['sample_mean_logprob'] <= coherence_nats)}/{len(coherent)}",
        }
    ctx.artifacts["route_table"] = table
    ctx.artifacts["work"] = {p.id: routes[p.id].get("work") for p in chosen}
    ctx.artifacts["estimates"] = estimates
    ctx.artifacts["labels"] = {p.id: {"FORK": records[p.id]["labels"].count("FORK"), "REMERGE": records[p.id]["labels"].count("REMERGE"),
                                      "LOCKED": records[p.id]["labels"].count("LOCKED")} for p in chosen}
    ctx.artifacts["undefined"] = {name: value["samples_undefined"] for name, value in estimates.items() if value["samples_undefined"]}
    ctx.artifacts["fork_departures"] = [
        {"prompt": p.id, "seed": c["seed"], "departure": c["departure"], "gap": round(c["ref_mean_logprob"] - c["sample_mean_logprob"], 3),
         "text": lm.tokenizer.decode(c["sample_tokens"])[:160]}
        for p in chosen for c in routes[p.id][policy]["coherence"]
    ]
    ctx.info.update({"prompts": [p.id for p in chosen], "seeds": seeds, "policy": policy, "reference_policy": reference_policy})
    return out


# ---------------------------------------------------------------------------------------------------
# fork vs re-merge from local features


_CLASSIFIER_OUTPUTS = {
    "auc": Output("AUC", description="cross-validated AUC of FORK vs REMERGE from local features; leave-one-prompt-out jackknife pseudo-values"),
    "chance_auc": Output("AUC", description="0.5 per prompt unit: the no-information reference for an equivalence check"),
}


@probe("fork_classifier", outputs=_CLASSIFIER_OUTPUTS, reads_text=True)
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
    """Tell genuine forks from genuine re-merges by the local next-token distribution alone."""
    import numpy as np

    from claimcheck.sampling.classify import auc, jackknife_auc

    if ctx.look > 0:
        return {name: [] for name in _CLASSIFIER_OUTPUTS}
    unknown = [f for f in features if f not in FEATURES]
    if unknown:
        raise ProbeError(f"unknown feature(s) {', '.join(unknown)}; expected some of {', '.join(FEATURES)}")
    chosen = select_prompts(prompts)
    lm = _load(ctx, model, variant)
    records = traces(ctx, lm, chosen, genuine_p2=genuine_p2, max_ref_tokens=max_ref_tokens, batch_size=batch_size, branches="genuine")
    rows, labels, groups = [], [], []
    for p in chosen:
        record = records[p.id]
        for node in record["nodes"]:
            if node["p2"] < genuine_p2:
                continue
            local = record["positions"][node["position"]]
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


# ---------------------------------------------------------------------------------------------------
# temperature search


_SEARCH_OUTPUTS = {
    "exact_match": Output("0/1", description="temperature sample equals the target text (whitespace-normalised)"),
    "crossed_fork": Output("0/1", description="temperature sample agrees with the target through the target's fork (its first departure from the greedy path)"),
    "content_recall": Output("fraction", description="share of the target's content words the temperature sample also uses"),
    "shared_prefix": Output("tokens", description="tokens the temperature sample shares with the target from the start"),
}


@probe("temperature_search", outputs=_SEARCH_OUTPUTS, reads_text=True)
def temperature_search(
    ctx: ProbeContext,
    *,
    model: str = DEFAULT_MODEL,
    variant: str | None = "fp32",
    prompt: str = "lighthouse",
    target_policy: str = "curve-router",
    target_seed: int = 102,
    temperatures: Sequence[float] = TEMPERATURE_GRID,
    seeds: int = 26,
    seed_start: int = 0,
    max_tokens: int = 48,
    batch_size: int = 64,
    stop_at_miss: bool = False,
) -> dict[str, list[float]]:
    """Sweep pure temperature x seeds for an exact match of one curve-generated sample.

    ``stop_at_miss`` stops each sample once its text can no longer equal the target's: the
    same exact matches, fork crossings and shared prefixes for a fraction of the tokens, but no
    ``content_recall`` for the samples cut short (claims on content keep it off).
    """
    from claimcheck.sampling import get_policy
    from claimcheck.sampling.runs import temperature_search as search

    if ctx.look > 0:
        return {name: [] for name in _SEARCH_OUTPUTS}
    matches = select_prompts(prompt)
    if not isinstance(prompt, str) or prompt == "all" or prompt in POLES or len(matches) != 1:
        raise ProbeError(f"`prompt` must name one prompt id, got {prompt!r}")
    chosen = matches[0]
    target = get_policy(target_policy)
    lm = _load(ctx, model, variant)
    ids = chat_ids(lm.tokenizer, chosen.text)
    stops = stop_token_ids(lm.tokenizer)
    seed_list = list(range(int(seed_start), int(seed_start) + int(seeds)))
    key = _model_key(lm) | {
        "probe": "temperature_search", "prompt_ids": ids, "target_policy": target_policy, "target_seed": int(target_seed),
        "temperatures": [float(t) for t in temperatures], "seeds": seed_list, "max_tokens": int(max_tokens), "ban_ids": stops,
    } | ({"stop_at_miss": True} if stop_at_miss else {})

    def compute(_: list[str]) -> dict[str, Any]:
        return {chosen.id: search(
            lm.model, lm.tokenizer.decode, ids, target_policy=target, target_seed=int(target_seed),
            temperatures=[float(t) for t in temperatures], seeds=seed_list, max_tokens=int(max_tokens),
            ban_ids=stops, batch_size=batch_size, progress=ctx.progress, stop_at_miss=bool(stop_at_miss),
        )}

    result = _cached_many(ctx, {chosen.id: key}, compute)[chosen.id]
    rows = result["samples"]
    ctx.artifacts["target"] = result["target"] | {"fork_position": result["fork_position"], "greedy": result["greedy"]["text"]}
    by_t: dict[str, dict[str, float]] = {}
    for t in temperatures:
        subset = [r for r in rows if r["temperature"] == float(t)]
        by_t[f"{float(t):g}"] = {
            "samples": len(subset),
            "exact": sum(r["exact_match"] for r in subset),
            "crossed_fork": sum(r["crossed_fork"] for r in subset),
            "mean_shared_prefix": round(sum(r["shared_prefix"] for r in subset) / max(1, len(subset)), 2),
        }
    ctx.artifacts["by_temperature"] = by_t
    closest = sorted(rows, key=lambda r: (-r["shared_prefix"], -(r["content_recall"] or 0)))[:5]
    ctx.artifacts["closest_samples"] = [
        {k: r.get(k) for k in ("temperature", "seed", "shared_prefix", "content_recall", "stopped_at_miss", "text")} for r in closest
    ]
    ctx.artifacts["stopped_at_miss"] = sum(1 for r in rows if r.get("stopped_at_miss"))
    ctx.artifacts["work"] = result["work"]
    return {
        "exact_match": [float(r["exact_match"]) for r in rows],
        "crossed_fork": [float(r["crossed_fork"]) for r in rows],
        "content_recall": [float(r["content_recall"]) for r in rows if r["content_recall"] is not None],
        "shared_prefix": [float(r["shared_prefix"]) for r in rows],
    }


# ---------------------------------------------------------------------------------------------------
# identity control


_IDENTITY_OUTPUTS = {
    "mismatch": Output("0/1", description="per (prompt, seed): the curve's sample differs from the reference policy's anywhere"),
    "token_agreement": Output("fraction", description="per (prompt, seed): share of positions with the same token"),
}


@probe("identity_control", outputs=_IDENTITY_OUTPUTS, reads_text=True)
def identity_control(
    ctx: ProbeContext,
    *,
    model: str = DEFAULT_MODEL,
    variant: str | None = "fp32",
    prompts: str | Sequence[str] = "all",
    curve: str = "curve-id",
    reference_policy: str = "temp1",
    seeds: int = 5,
    max_tokens: int = 32,
    batch_size: int = 64,
) -> dict[str, list[float]]:
    """Generate with a curve and with a reference policy under the same seeds, token for token.

    The reference arm draws from the curve arm's own distributions for as long as the two agree
    (a shadow draw, :class:`GenerationRequest` ``shadows``), so a difference is the policies' and
    not the last bits of two batch rows; from its first different token on it continues alone.
    """
    from claimcheck.sampling import GenerationRequest, generate_batch, get_policy

    if ctx.look > 0:
        return {name: [] for name in _IDENTITY_OUTPUTS}
    chosen = select_prompts(prompts)
    lm = _load(ctx, model, variant)
    stops = stop_token_ids(lm.tokenizer)
    arms = (get_policy(curve), get_policy(reference_policy))
    ids = {p.id: chat_ids(lm.tokenizer, p.text) for p in chosen}
    keys = {p.id: _model_key(lm) | {"probe": "identity_control", "prompt_ids": ids[p.id], "arms": [curve, reference_policy],
                                     "seeds": int(seeds), "max_tokens": int(max_tokens), "ban_ids": stops, "paired": True} for p in chosen}

    def compute(missing: list[str]) -> dict[str, Any]:
        curve_arm, reference_arm = arms
        requests = [GenerationRequest(prompt=ids[name], policy=curve_arm, seed=seed, max_tokens=int(max_tokens), tag=(name, seed),
                                      shadows=(reference_arm,))
                    for name in missing for seed in range(seeds)]
        ctx.progress(f"identity control: {len(requests)} paired samples")
        generated = generate_batch(lm.model, requests, stop_ids=(), ban_ids=stops, batch_size=batch_size)
        out: dict[str, Any] = {name: {curve_arm.name: {}, reference_arm.name: {}, "first_difference": {}} for name in missing}
        continuations = []
        for request, g in zip(requests, generated):
            name, seed = request.tag
            shadow = g.shadow_tokens.get(reference_arm.name, [])
            differs = next((i for i, (x, y) in enumerate(zip(g.tokens, shadow)) if x != y), None)
            out[name][curve_arm.name][str(seed)] = g.tokens
            if differs is None:
                out[name][reference_arm.name][str(seed)] = list(g.tokens)
                continue
            head = g.tokens[:differs] + [shadow[differs]]
            out[name][reference_arm.name][str(seed)] = head
            out[name]["first_difference"][str(seed)] = differs
            if len(head) < max_tokens:
                continuations.append(GenerationRequest(prompt=ids[name] + head, policy=reference_arm, seed=seed, start_step=len(head),
                                                       max_tokens=int(max_tokens) - len(head), tag=(name, seed)))
        for request, g in zip(continuations, generate_batch(lm.model, continuations, stop_ids=(), ban_ids=stops, batch_size=batch_size)):
            name, seed = request.tag
            out[name][reference_arm.name][str(seed)] += g.tokens
        return out

    values = _cached_many(ctx, keys, compute)
    mismatch: list[float] = []
    agreement: list[float] = []
    examples: list[dict[str, Any]] = []
    for p in chosen:
        for seed in range(seeds):
            a, b = values[p.id][arms[0].name][str(seed)], values[p.id][arms[1].name][str(seed)]
            same = sum(1 for x, y in zip(a, b) if x == y)
            agreement.append(same / max(len(a), len(b), 1))
            mismatch.append(0.0 if a == b else 1.0)
            if a != b and len(examples) < 5:
                examples.append({"prompt": p.id, "seed": seed, "first_difference": values[p.id].get("first_difference", {}).get(str(seed)),
                                 "curve": lm.tokenizer.decode(a), "reference": lm.tokenizer.decode(b)})
    ctx.artifacts["identity"] = {"pairs": len(mismatch), "identical": int(len(mismatch) - sum(mismatch)), "differing_examples": examples}
    return {"mismatch": mismatch, "token_agreement": agreement}
