"""``<!-- measured: ID ... on CLASS -->`` markers as anchors of the gate: the figure must be what that run measured.

A marker names the run a figure was quoted from (see :mod:`claimcheck.gate.quoted` for its
grammar). The figure before it must lie within the measured interval of that run's items,
widened only by its own printed precision, or be one of the recorded values the marker names
(the median or mean of an ``output``'s samples): "0.32x" edited to "0.52x" is an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from claimcheck.figures import Figure, MarkdownDoc, UnitError, convert, format_value
from claimcheck.gate import quoted
from claimcheck.store import EvidenceStore, StoredResult

from ._model import ClaimInfo, Problem
from ._stated import overlaps


@dataclass
class MarkerCheck:
    """What the markers of one doc found: problems, the figures they judged (by offset) and how many agreed."""

    problems: list[Problem] = field(default_factory=list)
    judged: set[int] = field(default_factory=set)
    agreed: set[int] = field(default_factory=set)


def _within(figure: Figure, values: Sequence[quoted.Recorded]) -> bool:
    """The figure (its printed precision) lies inside one recorded interval; a range inside their span."""
    spans = []
    for recorded in values:
        for low, high in recorded.intervals:
            try:
                shown = tuple(sorted(convert(v, recorded.unit, figure.unit) if figure.unit else v
                                     for v in (low, high)))
            except UnitError:
                continue
            spans.append((shown[0], shown[1]))
    if not spans:
        return False
    quoted_low, quoted_high = figure.interval(tolerant=True)
    if figure.is_range:
        low, high = min(s[0] for s in spans), max(s[1] for s in spans)
        return low <= quoted_high and quoted_low <= high and (
            low - figure.rounding <= figure.low and figure.high <= high + figure.rounding)
    return any(overlaps((quoted_low, quoted_high), span) for span in spans)


def _measured_text(figure: Figure, values: Sequence[quoted.Recorded], results: Sequence[StoredResult]) -> str:
    """What the run recorded, in the figure's unit where it converts: ``41% [38%, 44%] n=20``."""
    def shown(value: float, unit: str | None) -> str:
        try:
            return format_value(convert(value, unit, figure.unit), figure.unit) if figure.unit else format_value(
                value, unit)
        except UnitError:
            return format_value(value, unit)

    parts = []
    sizes = [r.decision.n for r in results if r.decision is not None]
    for k, recorded in enumerate(values):
        estimate = ", ".join(shown(v, recorded.unit) for v in recorded.estimates[:2])
        span = "".join(f" [{shown(lo, recorded.unit)}, {shown(hi, recorded.unit)}]" for lo, hi in recorded.intervals[:1])
        n = f" n={sizes[k]}" if len(sizes) == len(values) and recorded.intervals else ""
        parts.append(f"{estimate}{span}{n}")
    return "; ".join(parts[:3]) + ("; ..." if len(parts) > 3 else "")


def check_markers(doc: MarkdownDoc, path: str, store: EvidenceStore | None,
                  index: Mapping[str, ClaimInfo], cache: dict[int, quoted.Evidence]) -> MarkerCheck:
    """Every ``measured:`` marker of one doc checked against the run it names in ``store``."""
    found = MarkerCheck()
    for comment in doc.comments:
        line, column = doc.position(comment.start)
        marker = quoted.parse_marker(comment, path, line)
        if marker is None:
            continue
        if isinstance(marker, quoted.Problem):
            found.problems.append(Problem(path, line, column, marker.message, code="marker"))
            continue
        figures = quoted.figures_before(doc, comment)
        if store is None:
            found.problems.append(Problem(path, line, column, "measured marker: no evidence to check it against",
                                          code="marker"))
            continue
        evidence = cache.setdefault(id(store), quoted.Evidence([store]))
        picked = evidence.pick(marker)
        if isinstance(picked, str):
            found.problems.append(Problem(path, line, column, picked, code="marker"))
            continue
        runs, results = picked
        values = quoted.recorded_values(results, marker)
        comparable = [f for f in figures if quoted.comparable(f, values)]
        found.judged.update(f.start for f in comparable)
        if not comparable:
            found.problems.append(Problem(path, line, column, "marker follows no figure in the unit of what it names",
                                          code="marker"))
        run_ids = ", ".join(run.run_id for run in runs)
        classes = ", ".join(run.machine_class for run in runs)
        stated = "; ".join(index[i].figure for i in marker.items if i in index and index[i].figure) or "(no figure)"
        for figure in comparable:
            if quoted.agrees(figure, values) or _within(figure, values):
                found.agreed.add(figure.start)
                continue
            found.problems.append(Problem(
                path, figure.line, figure.column,
                f"figure {figure.text} disagrees with {', '.join(marker.items)}: stated {stated} / measured "
                f"{_measured_text(figure, values, results) or 'nothing'} on {classes} (run {run_ids})", code="disagrees"))
    return found
