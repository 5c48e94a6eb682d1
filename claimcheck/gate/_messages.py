"""The one line a disagreeing figure gets: the fix first ("0.794 GB ≠ computed 0.694 GB: write 0.694 GB"), then why.

A doc author reads the first 200 characters; they say what to write. The evidence (the claim,
its stated figure, the interval, the run) follows after `` — ``. A correction banner is offered
only where a claim is overturned (:mod:`._gate`), never for a typo.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

from claimcheck.figures import Figure, UnitError, compatible, convert, family_of, format_value
from claimcheck.store import StoredResult
from claimcheck.verdict import Verdict

from ._agreement import item_interval
from ._evidence import Evidence, suggested_sentence

from ._binding import Binding
from ._model import ClaimInfo, Problem
from ._stated import rule_interval, stated_figures, stated_ratios

#: The lead (the fix) is kept to this many characters; the detail follows it.
LEAD = 200


def printed(value: float, figure: Figure) -> str:
    """``value`` as the figure would print it: its unit, its decimals (at least two significant digits)."""
    if not math.isfinite(value):
        return "∞" if value > 0 else "-∞"
    decimals = max(figure.decimals, 0)
    if value and abs(value) < 10 ** (1 - decimals):
        decimals = max(decimals, 1 - int(math.floor(math.log10(abs(value)))))
    number = f"{value:,.{min(decimals, 6)}f}" if figure.unit not in (None, "x", "%") else f"{value:.{min(decimals, 6)}f}"
    unit = figure.unit or ""
    if figure.kind == "count" and figure.count_of is not None:
        return f"{value * 100:.1f}%"
    return f"{number}{unit}" if unit in ("x", "%", "") else f"{number} {unit}"


def _stated_fix(binding: Binding, claim: ClaimInfo) -> str | None:
    """What the claim states in the doc figure's family: its source's figure, the ratio it implies, or its band."""
    figure = binding.figure
    family = "fraction" if figure.kind == "count" and figure.count_of is not None else figure.family
    for stated in stated_figures(claim):
        if stated.kind == "count" and figure.kind == "count":
            return stated.text
        if stated.unit and compatible(family, family_of(stated.unit)):
            return stated.text
    unit = figure.unit if figure.unit else "x"
    ratios = stated_ratios(claim) if family == "fraction" else []
    try:
        if ratios:
            low, high = (convert(v, "ratio", unit) for v in ratios[0])
            return f"about {printed((low + high) / 2, figure)}"
        band = rule_interval(claim, unit)
    except UnitError:
        return None
    if band is None:
        return None
    low, high = band
    if math.isinf(high):
        return f"at least {printed(low, figure)}"
    if math.isinf(low):
        return f"at most {printed(high, figure)}"
    return f"{printed(low, figure)}–{printed(high, figure)}"


def disagreement(path: str, binding: Binding, claim: ClaimInfo, machine: str, run: str, advice: str = "",
                 computed: bool = False) -> Problem:
    """``FIG ≠ measured X: write X — claim ID: stated …; measured … on CLASS (run R)``."""
    figure = binding.figure
    word = "computed" if computed else "measured"
    measured = binding.measured
    if measured is not None and measured.agrees is False and measured.text:
        value = measured.estimate
        shown = measured.text.split(" n=", 1)[0]
        lead = f"{figure.text} ≠ {word} {shown}"
        lead += f": write {printed(value, figure)}" if value is not None and not figure.is_range else \
            ": write a figure inside that interval"
    else:
        fix = _stated_fix(binding, claim)
        lead = f"{figure.text} ≠ stated {fix}: write {fix.removeprefix('about ')}" if fix else \
            f"{figure.text} disagrees with what `{claim.id}` states"
    if len(lead) > LEAD:
        lead = lead[:LEAD - 1] + "…"
    stated = " ".join(claim.figure.split())
    stated = stated if len(stated) <= 90 else stated[:89] + "…"
    detail = f"claim `{claim.id}`: stated \"{stated or '(no figure)'}\""
    if measured is not None and measured.text:
        detail += f"; {word} {measured.text} on {machine} (run {run})"
    return Problem(path, figure.line, figure.column, f"{lead} — {detail}{advice}", code="disagrees")


def not_compared(path: str, figure: Figure, claims: str, why: str) -> str:
    """The message of a figure an anchor could not compare (reported, never verified)."""
    del path
    return (f"{figure.text} not compared with {claims}: {why}; bind it (a unit the claim uses, or "
            f"`<!-- measured: ... -->`) or mark it `<!-- not-a-finding: REASON -->`")


def prose_banner(claim: ClaimInfo, items: Sequence[StoredResult], machine: str, computed: bool,
                 today: str) -> str:
    """The correction banner ``--fix`` inserts, in prose: what was measured (or computed), with units, and where.

    ``> **2026-12-04 CORRECTION (arithmetic)** — recomputed from the source's own inputs: 41.6%
    (claim `roofline-small-models-leave-30-40-pct`), not what the sentence below prints.``
    """
    unit = claim.unit if claim.unit not in (None, "ratio", "rate", "fraction") else "x"  # a ratio reads as 0.2x
    values = []
    for item in items[:3]:
        interval = item_interval(item, claim.unit, claim.unit)
        if interval is None:
            continue
        low, high, estimate = interval
        shown = format_value(estimate if estimate is not None else low, unit)
        if not computed and low != high:
            shown += f" [{format_value(low, unit)}, {format_value(high, unit)}]"
        values.append(shown)
    found = ", ".join(values) + (", …" if len(items) > 3 else "")
    if computed:
        return (f"> **{today} CORRECTION (arithmetic)** — recomputed from the source's own inputs: "
                f"{found or 'no value'} (claim `{claim.id}`), not what the sentence below prints.")
    return (f"> **{today} CORRECTION ({machine})** — measured {found or 'no value'} (claim `{claim.id}`); "
            "the sentence below does not hold there.")


def one_line_per_figure(problems: list[Problem]) -> list[Problem]:
    """A figure under an anchor naming several claims disagrees once, not once per claim."""
    seen: set[tuple[int, int]] = set()
    out = []
    for problem in problems:
        if problem.code == "disagrees":
            if (problem.line, problem.column) in seen:
                continue
            seen.add((problem.line, problem.column))
        out.append(problem)
    return out


def word(verdict: Verdict | None) -> str:
    return verdict.value if verdict is not None else "missing"


def verdict_message(claim: ClaimInfo, verdict: Verdict | None, items: Sequence[StoredResult], machine: str,
                     evidence: Evidence, reports_dir: str | Path | None) -> str:
    if verdict is None:
        if evidence.store is None:
            where = f" at {evidence.label}" if evidence.label else ""
            return f"claim `{claim.id}` has no result on {machine} (no evidence store{where})"
        return f"claim `{claim.id}` has no result on {machine}; run it before a doc cites it"
    reason = next((" ".join(i.reason.split()) for i in items if i.verdict is verdict and i.reason), "")
    reason = reason if len(reason) <= 240 else reason[:239] + "…"
    message = f"claim `{claim.id}` is {verdict.value} on {machine}" + (f": {reason}" if reason else "")
    suggestion = suggested_sentence(reports_dir, claim.id, verdict)
    if suggestion and len(suggestion) <= 240 and "{'" not in suggestion:  # a short sentence, never a repr
        message += f"; suggested: {suggestion}"
    return message
