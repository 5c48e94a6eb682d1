"""Words and numbers for reports: figures with intervals, the claimed bound, why a verdict, correction banners.

Every function here takes the plain result dicts the evidence store returns
(flat decision columns plus ``claim``, ``params``, ``info``), so reports can be
rebuilt from the store alone.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping, Sequence

from claimcheck.numbers import finite as _finite
from claimcheck.numbers import level, number, parts, with_unit
from claimcheck.result import Adjustment, verdict_path
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


def claimed(result: Mapping[str, Any]) -> Claimed:
    """The claim's bound on this item's figure, in the rule object's words."""
    from claimcheck import rules
    from claimcheck.claim import Check

    record = dict((result.get("claim") or {}).get("check") or {})
    record.setdefault("rule", result.get("rule") or "")
    if result.get("unit") and not record.get("unit"):
        record["unit"] = result["unit"]
    check = Check.from_record(record)
    try:
        rule = rules.get(check.rule)
        said = rule.claimed(replace(check, params=rule.values(check.params)))
    except (ValueError, KeyError):
        return Claimed(None, text=check.rule)
    return Claimed(said.kind, said.low, said.high, said.text)


def has_interval(result: Mapping[str, Any]) -> bool:
    return all(_finite(result.get(k)) for k in ("statistic", "low", "high"))


def is_computed(result: Mapping[str, Any]) -> bool:
    """One deterministic value (arithmetic on printed inputs), not a sampled estimate."""
    details = (result.get("decision") or {}).get("details") or {}
    if details.get("deterministic"):
        return True
    return has_interval(result) and result["low"] == result["high"] and result.get("n") in (None, 1)


def level_text(result: Mapping[str, Any]) -> str:
    confidence = result.get("confidence_level")
    return f"{level(confidence)} CI" if _finite(confidence) else "CI"


def figure_parts(result: Mapping[str, Any]) -> tuple[str, str, str]:
    """Estimate, low and high with shared decimals."""
    stat, low, high = result.get("statistic"), result.get("low"), result.get("high")
    if is_computed(result):
        return number(stat), number(low), number(high)
    return parts(stat, low, high)


def figure(result: Mapping[str, Any]) -> str:
    """``0.41× [0.38, 0.44]`` for tables; ``—`` when nothing was measured."""
    if not _finite(result.get("statistic")):
        return "—"
    stat, low, high = figure_parts(result)
    unit = result.get("unit")
    if not has_interval(result):
        return with_unit(stat, unit)
    if is_computed(result) or result.get("low") == result.get("high"):
        return f"{with_unit(stat, unit)} (computed)"
    return f"{with_unit(stat, unit)} [{low}, {high}]"


def measured(result: Mapping[str, Any]) -> str:
    """``0.41× raw read (95% CI 0.38–0.44, n=24)``."""
    if not _finite(result.get("statistic")):
        return "no figure"
    stat, low, high = figure_parts(result)
    label = result.get("estimate_label")
    head = with_unit(stat, result.get("unit")) + (f" {label}" if label else "")
    n = result.get("n")
    count = f"n={n}" if n is not None else ""
    if is_computed(result):
        return f"{head} (computed)"
    if has_interval(result) and result.get("low") != result.get("high"):
        inner = ", ".join(p for p in (f"{level_text(result)} {low}–{high}", count) if p)
    else:
        inner = ", ".join(p for p in ("no interval", count) if p)
    return f"{head} ({inner})"


def relation(result: Mapping[str, Any], bound: Claimed | None = None) -> str | None:
    """Where the interval lies relative to the claimed bound, in words; ``None`` when not comparable."""
    bound = bound or claimed(result)
    if not has_interval(result) or bound.kind is None:
        return None
    low, high = result["low"], result["high"]
    if is_computed(result):
        interval = f"the computed value {figure_parts(result)[0]}"
    else:
        interval = f"the {level_text(result)} [{figure_parts(result)[1]}, {figure_parts(result)[2]}]"
    if is_computed(result):
        value = result["statistic"]
        if bound.kind in ("min", "max"):
            side = "below" if value < bound.line else "above" if value > bound.line else "at"
            return f"{interval} lies {side} the claimed {bound.text}"
        inside = bound.low <= value <= bound.high
        return f"{interval} lies {'inside' if inside else 'outside'} the claimed band {bound.text}"
    if bound.kind in ("min", "max"):
        line = bound.line
        if high < line:
            return f"{interval} lies entirely below the claimed {bound.text}"
        if low > line:
            return f"{interval} lies entirely above the claimed {bound.text}"
        return f"{interval} straddles the claimed {bound.text}"
    if low >= bound.low and high <= bound.high:
        return f"{interval} lies inside the claimed band {bound.text}"
    if high < bound.low or low > bound.high:
        return f"{interval} lies entirely outside the claimed band {bound.text}"
    return f"{interval} overlaps the edge of the claimed band {bound.text}"


STEP_SENTENCES = {
    "noise-gate": "The samples were too noisy or drifting to trust this interval, so the verdict {before} became "
                  "{after}.",
    "family": "Before adjusting for the number of claims tested the verdict was {before}; adjusted, it is {after}.",
    "cascade": "A premise it depends on did not hold, so its own verdict {before} is {after}.",
}


def adjustments_of(result: Mapping[str, Any]) -> list[Adjustment]:
    """The verdict changes recorded for a stored result, in the order applied."""
    return [Adjustment.from_record(a) for a in result.get("adjustments") or ()]


def verdict_steps(result: Mapping[str, Any]) -> str:
    """How the verdict came about: ``refuted → noise-gate: inconclusive``; ``—`` when nothing was decided."""
    adjustments = adjustments_of(result)
    raw = result.get("raw_verdict") or result.get("recorded_verdict")
    if adjustments and raw:
        return verdict_path(Verdict(raw), adjustments)
    raw, adjusted = result.get("raw_verdict"), result.get("adjusted_verdict")  # records without the list
    if not raw and not adjusted:
        return "—"
    if raw == adjusted or not adjusted:
        return str(raw)
    return f"{raw} → {adjusted}"


def why(result: Mapping[str, Any]) -> str:
    """The verdict and the reason for it, in a sentence or two."""
    verdict = result.get("verdict")
    parts = []
    where = relation(result)
    if where:
        parts.append(where[0].upper() + where[1:] + ".")
    changes = [a for a in adjustments_of(result) if a.after is not a.before]
    if verdict == "inconclusive" and not any(a.after is Verdict.INCONCLUSIVE for a in changes):
        mde = result.get("mde")
        n = result.get("n")
        extra = f" With n={n} the smallest effect this run could detect was {number(mde)}." if _finite(mde) else ""
        parts.append("The measurement cannot tell whether the claim holds here." + extra)
    for change in changes:
        parts.append(STEP_SENTENCES.get(change.step, "{step} changed the verdict from {before} to {after}.").format(
            step=change.step, before=change.before.value, after=change.after.value))
    raw, adjusted = result.get("raw_verdict"), result.get("adjusted_verdict")
    if not changes and raw and adjusted and raw != adjusted:  # a record stored before adjustments were listed
        parts.append(STEP_SENTENCES["family"].format(before=raw, after=adjusted))
    alpha, pvalue = result.get("alpha"), result.get("pvalue")
    if is_computed(result) and verdict in ("holds", "refuted"):
        parts.append("Decided by arithmetic: one computed value, no sampling.")
    elif _finite(alpha) and verdict in ("holds", "refuted"):
        p = f", p={number(pvalue)}" if _finite(pvalue) else ""
        adjusted_p = result.get("adjusted_pvalue")
        p += f" (adjusted p={number(adjusted_p)})" if _finite(adjusted_p) else ""
        parts.append(f"Decided by rule `{result.get('rule')}` at α={number(alpha)}{p}.")
    if result.get("reason"):
        parts.append(f"Runner: {one_line(result['reason'])}")
    return " ".join(parts)


def one_line(text: Any) -> str:
    return " ".join(str(text).split())


def params_label(params: Mapping[str, Any] | None) -> str:
    if not params:
        return ""
    return ", ".join(f"{k}={v}" for k, v in params.items())


def grid_label(result: Mapping[str, Any]) -> str:
    """The part of the item id in brackets (``size_mib=256``), or the params that vary."""
    item_id = str(result.get("item_id", ""))
    if "[" in item_id and item_id.endswith("]"):
        return item_id[item_id.index("[") + 1 : -1]
    return ""


def run_date(run: Mapping[str, Any]) -> str:
    text = str(run.get("started") or "")
    try:
        return _dt.datetime.fromisoformat(text).date().isoformat()
    except ValueError:
        return text[:10] or _dt.date.today().isoformat()


def scope_text(scope: Mapping[str, Any] | None) -> str:
    """``portable; backend metal; device Apple M*; model SmolLM2*; ≥ 32 GiB``."""
    scope = scope or {}
    parts = [str(scope.get("kind") or "portable")]
    if scope.get("backend") and scope.get("backend") != "any":
        parts.append(f"backend {scope['backend']}")
    if scope.get("device"):
        parts.append(f"device {scope['device']}")
    if scope.get("model"):
        parts.append(f"model {scope['model']}")
    if scope.get("min_memory_gib"):
        parts.append(f"≥ {number(scope['min_memory_gib'])} GiB")
    return "; ".join(parts)


def source_text(source: Mapping[str, Any] | None) -> str:
    source = source or {}
    doc, section, fig = source.get("doc"), source.get("section"), source.get("figure")
    where = ", ".join(str(p) for p in (doc, section) if p)
    return f"{where} — “{fig}”" if fig else where


def model_text(info: Mapping[str, Any] | None) -> str:
    """Model and variant from an item's info, when it measured a model."""
    info = info or {}
    model = info.get("model")
    if not model:
        return ""
    variant = info.get("variant")
    digest = info.get("weights_hash")
    text = f"{model}" + (f" ({variant})" if variant else "")
    return text + (f", weights {str(digest)[:12]}" if digest else "")


MACHINE_KEYS = ("device", "backend", "cores", "cores_available", "memory_gib", "os", "python", "mlx", "mlx_lm", "blas")


def machine_text(machine: Mapping[str, Any] | None) -> str:
    machine = machine or {}
    shown = [f"{k}={machine[k]}" for k in MACHINE_KEYS if machine.get(k) not in (None, "")]
    return ", ".join(shown)


def banner(
    *,
    kind: str,
    run: Mapping[str, Any],
    items: Sequence[Mapping[str, Any]],
    stands: Iterable[str],
) -> str:
    """The suggested correction sentence for a doc, as a dated block quote.

    ``kind`` is ``"refuted"`` (a correction: the figure is overturned) or
    ``"inconclusive"`` (a note: the figure could not be confirmed).
    """
    first = items[0]
    bound = claimed(first)
    figures = []
    for item in items:
        label = grid_label(item)
        figures.append(measured(item) + (f" at {label}" if label and len(items) > 1 else ""))
    machine_class = run.get("machine_class") or "this machine"
    date = run_date(run)
    measured_list = "; ".join(figures)
    stands_text = " ".join(s if s.endswith(".") else s + "." for s in stands)
    if all(is_computed(item) for item in items):
        measured_list = "; ".join(
            with_unit(number(item.get("statistic")), item.get("unit"))
            + (f" at {grid_label(item)}" if grid_label(item) and len(items) > 1 else "")
            for item in items
        )
        claim_part = f", not {bound.text}" if bound.text else ""
        verb = "does not follow" if kind == "refuted" else "cannot be checked"
        text = (
            f"> **{date} CORRECTION (arithmetic)** — recomputed from the source's own inputs: {measured_list}"
            f"{claim_part}; the printed figure {verb} from its inputs, on any machine."
        )
        return text + (f" {stands_text}" if stands_text else "")
    if kind == "refuted":
        claim_part = f", not {bound.text}" if bound.text else ""
        text = (
            f"> **{date} CORRECTION ({machine_class})** — measured {measured_list}{claim_part}; "
            "the claim does not hold on this machine."
        )
    else:
        claim_part = f" whether {bound.text}" if bound.text else " whether it holds"
        text = (
            f"> **{date} NOTE ({machine_class})** — measured {measured_list}; this run cannot tell{claim_part} "
            "on this machine. The figure is unconfirmed here, not overturned."
        )
    return text + (f" {stands_text}" if stands_text else "")
