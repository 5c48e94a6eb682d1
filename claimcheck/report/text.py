"""Words and numbers for reports: figures with intervals, the claimed bound, why a verdict, labels and settings.

Every function here takes a typed result (:class:`ItemResult`, or the
:class:`StoredResult` the evidence store returns), so reports can be rebuilt
from the store alone and read each number the way the result defines it.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, replace
from typing import Any, Mapping, Union

from claimcheck.claim import Scope, Source
from claimcheck.numbers import NON_NEGATIVE_UNITS, level, number, parts, with_unit, within_range
from claimcheck.numbers import finite as _finite
from claimcheck.outcome import figure_of
from claimcheck.engine.result import ItemResult, verdict_path
from claimcheck.stats import Decision
from claimcheck.store import StoredResult
from claimcheck.verdict import Verdict


@dataclass(frozen=True)
class Claimed:
    """What the claim asserts about the figure, as a bound the interval can be compared with."""

    kind: str | None  # "min" | "max" | "band" | None (no single bound: ordering, monotone)
    low: float | None = None
    high: float | None = None
    text: str = ""

    @property
    def line(self) -> float | None:
        """The single threshold of a one-sided claim."""
        return self.low if self.kind == "min" else self.high if self.kind == "max" else None


Result = Union[ItemResult, StoredResult]


def item_of(result: Result) -> ItemResult:
    """The typed item behind a result, whether it came from this run or from the store."""
    return result.result if isinstance(result, StoredResult) else result


def decision_of(result: Result) -> Decision | None:
    """The statistical decision of a result (``None`` for an item never decided)."""
    return item_of(result).decision


def _finite_of(result: Result, name: str) -> float | None:
    """A decision number when it is finite (``None`` when nothing was decided or it is unbounded)."""
    decision = decision_of(result)
    value = getattr(decision, name) if decision is not None else None
    return float(value) if _finite(value) else None


def unit(result: Result) -> str | None:
    """The unit of the item's figure, as the claim's check names it."""
    return item_of(result).claim.check.unit


def claimed(result: Result) -> Claimed:
    """The claim's bound on this item's figure, in the rule object's words."""
    from claimcheck import rules

    item = item_of(result)
    check = item.claim.check
    if not check.rule and item.decision is not None:
        check = replace(check, rule=item.decision.rule)
    try:
        rule = rules.get(check.rule)
        said = rule.claimed(replace(check, params=rule.values(check.params)))
    except (ValueError, KeyError):
        return Claimed(None, text=check.rule)
    return Claimed(said.kind, said.low, said.high, said.text)


def has_interval(result: Result) -> bool:
    return all(_finite_of(result, k) is not None for k in ("statistic", "low", "high"))


def bound_side(result: Result) -> str | None:
    """``"upper"`` or ``"lower"`` when the item's interval is a one-sided bound; ``None`` for a two-sided one."""
    decision = decision_of(result)
    if decision is None or statistic(result) is None or is_computed(result):
        return None
    low, high = decision.low, decision.high
    if figure_of(item_of(result)).sides == "upper" or (not _finite(low) and _finite(high)):
        return "upper"
    if _finite(low) and not _finite(high):
        return "lower"
    return None


def non_negative(result: Result) -> bool:
    """Whether the item's figure can never be negative: a duration, size, bandwidth, rate, ratio or count.

    A difference can be negative whatever its unit. Without a unit, a mean or median of an output
    whose every sample is a non-negative whole number (a length, a count of tokens) is a count.
    """
    item = item_of(result)
    label = (item.decision.estimate_label if item.decision is not None else "").lower()
    if "difference" in label or "slope" in label or "log" in label:
        return False
    if figure_of(item).non_negative or unit(result) in NON_NEGATIVE_UNITS or label.startswith(("rate", "ratio", "share", "fraction")):
        return True
    output = item.claim.check.output
    values = item.samples.get(output, ()) if output else ()
    return (label in ("mean", "median") and bool(values)
            and all(_finite(v) and v >= 0 and float(v).is_integer() for v in values))


def shown_bounds(result: Result) -> tuple[float | None, float | None]:
    """The interval a reader sees: the decision's, cut to the quantity's range (never below 0 for a length)."""
    return within_range(_finite_of(result, "low"), _finite_of(result, "high"), non_negative=non_negative(result))


def one_sided_parts(result: Result) -> tuple[str, str, str, str]:
    """Estimate, ``"upper"``/``"lower"``, the bound and the event count (``"25 of 312"`` or ``""``) of a one-sided item."""
    decision = decision_of(result)
    side = bound_side(result)
    assert decision is not None and side is not None
    value = decision.statistic
    bound = decision.high if side == "upper" else decision.low
    shown, _, edge = parts(value, min(value, bound), max(value, bound))
    if side == "lower":
        edge = parts(value, min(value, bound), max(value, bound))[1]
    events = decision.details.get("events") if isinstance(decision.details, Mapping) else None
    return shown, side, edge, f"{events} of {decision.n}" if isinstance(events, int) else ""


def is_computed(result: Result) -> bool:
    """One deterministic value (arithmetic on printed inputs), not a sampled estimate."""
    item = item_of(result)
    if item.deterministic:
        return True
    decision = item.decision
    return decision is not None and has_interval(item) and decision.low == decision.high and decision.n in (0, 1)


def level_text(result: Result) -> str:
    confidence = _finite_of(result, "confidence_level")
    return f"{level(confidence)} CI" if confidence is not None else "CI"


def figure_parts(result: Result) -> tuple[str, str, str]:
    """Estimate, low and high with shared decimals (the interval as :func:`shown_bounds` cuts it)."""
    stat = _finite_of(result, "statistic")
    if is_computed(result):
        return number(stat), number(_finite_of(result, "low")), number(_finite_of(result, "high"))
    low, high = shown_bounds(result)
    return parts(stat, low, high)


def statistic(result: Result) -> float | None:
    """The item's estimate, or ``None`` when nothing was measured."""
    return _finite_of(result, "statistic")


def figure(result: Result) -> str:
    """``0.41× [0.38, 0.44]`` for tables; ``—`` when nothing was measured."""
    if statistic(result) is None:
        return "—"
    stat, low, high = figure_parts(result)
    if bound_side(result) is not None:
        shown, side, edge, _ = one_sided_parts(result)
        return f"{with_unit(shown, unit(result))} [{'≤' if side == 'upper' else '≥'} {edge}]"
    if not has_interval(result):
        return with_unit(stat, unit(result))
    if is_computed(result) or _finite_of(result, "low") == _finite_of(result, "high"):
        return f"{with_unit(stat, unit(result))} (computed)"
    return f"{with_unit(stat, unit(result))} [{low}, {high}]"


def measured(result: Result) -> str:
    """``0.41× raw read (95% CI 0.38–0.44, n=24)``."""
    decision = decision_of(result)
    if decision is None or statistic(result) is None:
        return "no figure"
    stat, low, high = figure_parts(result)
    label = decision.estimate_label
    head = with_unit(stat, unit(result)) + (f" {label}" if label else "")
    count = f"n={decision.n}"
    if is_computed(result):
        return f"{head} (computed)"
    if bound_side(result) is not None:
        shown, side, edge, events = one_sided_parts(result)
        head = with_unit(shown, unit(result)) + (f" {label}" if label else "")
        return f"{head} ({level(decision.confidence_level)} {side} bound {edge}, {events or count})"
    if has_interval(result) and decision.low != decision.high:
        inner = ", ".join(p for p in (f"{level_text(result)} {low}–{high}", count) if p)
    else:
        inner = ", ".join(p for p in ("no interval", count) if p)
    return f"{head} ({inner})"


def relation(result: Result, bound: Claimed | None = None) -> str | None:
    """Where the interval lies relative to the claimed bound, in words; ``None`` when not comparable."""
    bound = bound or claimed(result)
    decision = decision_of(result)
    if decision is None or not has_interval(result) or bound.kind is None:
        return None
    cut_low, cut_high = shown_bounds(result)
    low = cut_low if cut_low is not None else decision.low
    high = cut_high if cut_high is not None else decision.high
    if is_computed(result):
        interval = f"the computed value {figure_parts(result)[0]}"
    elif bound_side(result) is not None:
        _, side, edge, _ = one_sided_parts(result)
        interval = f"the {level(decision.confidence_level)} {side} bound {edge}"
    else:
        interval = f"the {level_text(result)} [{figure_parts(result)[1]}, {figure_parts(result)[2]}]"
    if is_computed(result):
        value = decision.statistic
        if bound.line is not None:
            side = "below" if value < bound.line else "above" if value > bound.line else "at"
            return f"{interval} lies {side} the claimed {bound.text}"
        assert bound.low is not None and bound.high is not None
        inside = bound.low <= value <= bound.high
        return f"{interval} lies {'inside' if inside else 'outside'} the claimed band {bound.text}"
    if bound.line is not None:
        line = bound.line
        if high < line:
            return f"{interval} lies entirely below the claimed {bound.text}"
        if low > line:
            return f"{interval} lies entirely above the claimed {bound.text}"
        return f"{interval} straddles the claimed {bound.text}"
    if bound.low is None or bound.high is None:
        return None
    if low >= bound.low and high <= bound.high:
        return f"{interval} lies inside the claimed band {bound.text}"
    if high < bound.low or low > bound.high:
        return f"{interval} lies entirely outside the claimed band {bound.text}"
    return f"{interval} overlaps the edge of the claimed band {bound.text}"


STEP_SENTENCES = {
    "between-runs": "Within this run the verdict was {before}; widened by how far the figure moves between runs "
                    "(measured over earlier runs, or assumed on a first run), it is {after}.",
    "noise-gate": "The samples were too noisy or drifting to trust this interval, so the verdict {before} became "
                  "{after}.",
    "family": "Before adjusting for the number of claims tested the verdict was {before}; adjusted, it is {after}.",
    "cascade": "A premise it depends on did not hold, so its own verdict {before} is {after}.",
}


def verdict_steps(result: Result) -> str:
    """How the verdict came about: ``refuted → noise-gate: inconclusive``."""
    item = item_of(result)
    return verdict_path(item.raw_verdict, item.adjustments)


def why(result: Result) -> str:
    """The verdict and the reason for it, in a sentence or two."""
    item = item_of(result)
    decision = item.decision
    verdict = item.verdict
    parts = []
    where = relation(item)
    if where:
        parts.append(where[0].upper() + where[1:] + ".")
    changes = [a for a in item.adjustments if a.after is not a.before]
    if verdict is Verdict.INCONCLUSIVE and not any(a.after is Verdict.INCONCLUSIVE for a in changes):
        mde = decision.mde if decision is not None else None
        extra = (f" With n={decision.n} the smallest effect this run could detect was {number(mde)}."
                 if decision is not None and _finite(mde) else "")
        parts.append("The measurement cannot tell whether the claim holds here." + extra)
    for change in changes:
        parts.append(STEP_SENTENCES.get(change.step, "{step} changed the verdict from {before} to {after}.").format(
            step=change.step, before=change.before.value, after=change.after.value))
    if is_computed(item) and verdict in (Verdict.HOLDS, Verdict.REFUTED):
        parts.append("Decided by arithmetic: one computed value, no sampling.")
    elif decision is not None and _finite(decision.alpha) and verdict in (Verdict.HOLDS, Verdict.REFUTED):
        p = f", p={number(decision.pvalue)}" if _finite(decision.pvalue) else ""
        family = item.adjustment("family")
        if family is not None and _finite(family.adjusted_pvalue):
            p += f" (adjusted p={number(family.adjusted_pvalue)})"
        parts.append(f"Decided by rule `{decision.rule or item.claim.check.rule}` at α={number(decision.alpha)}{p}.")
    if item.reason:
        parts.append(f"Runner: {one_line(item.reason)}")
    return " ".join(parts)


def one_line(text: Any) -> str:
    return " ".join(str(text).split())


def params_label(params: Mapping[str, Any] | None) -> str:
    if not params:
        return ""
    return ", ".join(f"{k}={v}" for k, v in params.items())


def grid_label(result: Result) -> str:
    """The part of the item id in brackets (``size_mib=256``); empty for an item without a grid."""
    item_id = item_of(result).item_id
    if "[" in item_id and item_id.endswith("]"):
        return item_id[item_id.index("[") + 1 : -1]
    return ""


def run_date(started: str) -> str:
    """The day of an ISO-8601 time (today when it is missing)."""
    try:
        return _dt.datetime.fromisoformat(started).date().isoformat()
    except ValueError:
        return started[:10] or _dt.date.today().isoformat()


def scope_text(scope: Scope) -> str:
    """``portable; backend metal; device Apple M*; model SmolLM2*; ≥ 32 GiB``."""
    parts: list[str] = [scope.kind or "portable"]
    if scope.backend and scope.backend != "any":
        parts.append(f"backend {scope.backend}")
    if scope.device:
        parts.append(f"device {scope.device}")
    if scope.model:
        parts.append(f"model {scope.model}")
    if scope.min_memory_gib:
        parts.append(f"≥ {number(scope.min_memory_gib)} GiB")
    return "; ".join(parts)


def source_text(source: Source) -> str:
    """``doc, section — “figure”``."""
    where = ", ".join(p for p in (source.doc, source.section) if p)
    return f"{where} — “{source.figure}”" if source.figure else where


def model_name(info: Mapping[str, Any] | None) -> str:
    """``smollm2-135m-instruct (fp32)``: the model an item measured, without its weights hash."""
    info = info or {}
    model = info.get("model")
    if not model:
        return ""
    return f"{model}" + (f" ({info['variant']})" if info.get("variant") else "")


def model_text(info: Mapping[str, Any] | None) -> str:
    """Model, variant and weights hash from an item's info, when it measured a model."""
    name = model_name(info)
    digest = (info or {}).get("weights_hash")
    return name + (f", weights {str(digest)[:12]}" if name and digest else "")


MACHINE_KEYS = ("device", "backend", "cores", "cores_available", "memory_gib", "os", "python", "mlx", "mlx_backend_build",
                "mlx_lm", "numpy", "scipy", "blas")


def machine_text(machine: Mapping[str, Any] | None) -> str:
    machine = machine or {}
    shown = [f"{k}={machine[k]}" for k in MACHINE_KEYS if machine.get(k) not in (None, "")]
    return ", ".join(shown)
