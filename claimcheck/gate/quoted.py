"""Figures a doc quotes as measured by our runs, checked against the recorded run they came from.

A sentence in the findings quoting what one of our runs measured marks the figure with an HTML
comment right after it (invisible when rendered)::

    On the H200 the ratio was 0.78 <!-- measured: decode-prebuilt-equals-baseline-synthetic on cuda -->.
    It streamed 0.76–0.92 TB/s <!-- measured: qmv-large-bw-portable output gbps in GB/s on cuda -->.

``measured: ITEMS [output NAME] [@LEVEL] [in UNIT] on CLASS [run RUN]``: ``ITEMS`` are item or
claim ids (a claim id stands for all its items), comma-separated; ``@LEVEL`` is the level of a
swept output (``output gbps@size_mib=1``) or, without ``output``, the grid point of the items; ``CLASS`` is a machine class or its
first parts (``cuda``, ``cpu/AMD EPYC``, ``cuda/NVIDIA H200``: spaces are part of it), or several joined by
commas (``cpu,cuda``); ``RUN`` a
run id or prefix (default: the latest whole, finished, adjudicated run of that class holding the items). Every
figure in a unit those values convert to, between the start of the sentence (or the previous
comment in it) and the marker, must be a recorded value of those items to its printed
precision: the estimate or an end of its interval, or with ``output``, the median or mean of
that output's samples. A range must have both ends recorded. Anything else (a derived figure such as "22% faster", a value from an older run) is
reported at ``file:line``, so a doc never quotes a figure no recorded run has.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from claimcheck.figures import Comment, Figure, MarkdownDoc, UnitError, convert, read_markdown
from claimcheck.numbers import finite, with_unit
from claimcheck.store import EvidenceStore, StoredResult, StoredRun, is_evidence

MARKER_RE = re.compile(
    r"^measured\s*:\s*(?P<items>.+?)(?:\s+output\s+(?P<output>[^\s@]+))?(?:\s*@(?P<level>\S+))?"
    r"(?:\s+in\s+(?P<unit>\S+))?\s+on\s+(?P<klass>\S.*?)(?:\s+run\s+(?P<run>\S+))?\s*$", re.S | re.I)


@dataclass(frozen=True)
class Marker:
    """One ``measured:`` comment: what it names and where it is."""

    path: str
    line: int
    items: tuple[str, ...]
    machine_class: str
    run: str | None = None
    output: str | None = None
    unit: str | None = None
    level: str | None = None  # without ``output``: the grid point of the items (``size_mib=64``)


@dataclass(frozen=True)
class Problem:
    """A quoted figure (or a marker) that no recorded run bears out."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


@dataclass(frozen=True)
class Checked:
    """One figure checked: the marker, the figure as written, the run and whether a recorded value matches."""

    marker: Marker
    figure: str
    run_id: str
    matched: bool


@dataclass
class QuotedReport:
    """Every quoted figure checked, and the problems found."""

    checked: list[Checked]
    problems: list[Problem]


def parse_marker(comment: Comment, path: str, line: int) -> Marker | Problem | None:
    """The marker a comment holds; ``None`` for any other comment, a :class:`Problem` for a malformed one."""
    body = comment.body.strip()
    if not body.lower().startswith("measured"):
        return None
    found = MARKER_RE.match(body)
    if found is None:
        return Problem(path, line, f"malformed marker `<!-- {body} -->`; expected "
                                   "`measured: ITEMS [output NAME] [@LEVEL] [in UNIT] on CLASS [run RUN]`")
    items = tuple(part.strip() for part in found["items"].split(",") if part.strip())
    output, level = found["output"], found["level"]
    if output and level:
        output = f"{output}@{level}"  # a swept output's samples are kept per level: "gbps@size_mib=1"
    return Marker(path, line, items, found["klass"], found["run"], output, found["unit"],
                  None if found["output"] else level)


class Evidence:
    """The runs of several stores, read once: each run's results by item."""

    def __init__(self, stores: Sequence[EvidenceStore]) -> None:
        self._runs: dict[str, tuple[StoredRun, EvidenceStore]] = {}
        for store in stores:
            for run in store.runs():
                self._runs.setdefault(run.run_id, (run, store))
        self._results: dict[str, list[StoredResult]] = {}

    def results(self, run_id: str) -> list[StoredResult]:
        if run_id not in self._results:
            _, store = self._runs[run_id]
            self._results[run_id] = store.results(run_id)
        return self._results[run_id]

    def pick(self, marker: Marker) -> tuple[list[StoredRun], list[StoredResult]] | str:
        """The run of each named machine class a marker refers to and its results for the named items, or why none."""
        picked_runs: list[StoredRun] = []
        picked: list[StoredResult] = []
        for wanted in marker.machine_class.split(","):
            found = self._pick_one(marker, wanted.strip())
            if isinstance(found, str):
                return found
            picked_runs.append(found[0])
            picked += found[1]
        return picked_runs, picked

    def _pick_one(self, marker: Marker, wanted: str) -> tuple[StoredRun, list[StoredResult]] | str:
        runs = sorted((run for run, _ in self._runs.values()
                       if _class_matches(run.machine_class, wanted) and run.effective_status != "running"),
                      key=lambda run: (run.started, run.run_id), reverse=True)
        if marker.run:
            runs = [run for run in runs if run.run_id.startswith(marker.run)]
        else:  # by default a class's figures come from its evidence runs, never a shard or a selection
            runs = [run for run in runs if is_evidence(run)]
        for run in runs:
            chosen = [result for result in self.results(run.run_id) if _names(result, marker.items, marker.level)]
            if chosen:
                return run, chosen
        where = f"run {marker.run} of " if marker.run else ""
        return f"no recorded {where}machine class {wanted} has {', '.join(marker.items)}"


def _class_matches(machine_class: str, wanted: str) -> bool:
    return machine_class == wanted or machine_class.lower().startswith(wanted.lower().rstrip("/") + "/")


def _names(result: StoredResult, items: Iterable[str], level: str | None = None) -> bool:
    if level is not None and f"{level}" not in result.item_id.partition("[")[2]:
        return False
    return any(result.item_id == item or result.claim_id == item for item in items)


@dataclass(frozen=True)
class Recorded:
    """What a quoted figure may be: the items' estimates (or output summaries) and their intervals, in a unit."""

    estimates: tuple[float, ...]
    intervals: tuple[tuple[float, float], ...]
    unit: str | None


def recorded_values(results: Sequence[StoredResult], marker: Marker) -> list[Recorded]:
    """Per item: its estimate and interval, or with ``output`` the median and mean of that output's samples."""
    found: list[Recorded] = []
    for result in results:
        if marker.output:
            samples = [v for v in result.result.samples.get(marker.output, ()) if finite(v)]
            if samples:
                found.append(Recorded((float(statistics.median(samples)), float(statistics.fmean(samples))), (),
                                      marker.unit))
            continue
        decision = result.decision
        if decision is None or not finite(decision.statistic):
            continue
        interval = ((float(decision.low), float(decision.high)),) if finite(decision.low) and finite(decision.high) \
            else ()
        found.append(Recorded((float(decision.statistic),), interval, result.claim.check.unit))
    return found


def comparable(figure: Figure, values: Sequence[Recorded]) -> bool:
    """Whether a figure is in a unit some recorded value converts to (``at 1 MiB`` beside a bandwidth is context).

    Counts (``in 924 samples``, ``75 of 75``) are sample sizes, not the figure quoted.
    """
    if figure.kind == "count" or figure.family == "count":
        return False
    return any(_shown(1.0, recorded.unit, figure) is not None for recorded in values)


def _shown(value: float, unit: str | None, figure: Figure) -> float | None:
    """``value`` in the figure's unit, ``None`` when the units do not convert."""
    try:
        return convert(value, unit, figure.unit) if figure.unit else value
    except UnitError:
        return None


def _close(figure: Figure, end: float, value: float | None) -> bool:
    if value is None:
        return False
    slack = figure.rounding + (0.1 * abs(end) if figure.approx else 0.0)
    return abs(value - end) <= slack + 1e-12 * max(1.0, abs(end))


def agrees(figure: Figure, values: Sequence[Recorded]) -> bool:
    """A value is some item's estimate; a range has each end an estimate, or is one item's interval."""
    estimates = [_shown(v, r.unit, figure) for r in values for v in r.estimates]
    if not figure.is_range:
        return any(_close(figure, figure.low, v) for v in estimates)
    if all(any(_close(figure, end, v) for v in estimates) for end in (figure.low, figure.high)):
        return True
    return any(_close(figure, figure.low, _shown(low, r.unit, figure)) and _close(figure, figure.high, _shown(high, r.unit, figure))
               for r in values for low, high in r.intervals)


def figures_before(doc: MarkdownDoc, comment: Comment) -> list[Figure]:
    """The figures between the start of the marker's sentence (or the comment before it in the sentence) and it."""
    sentence = doc.sentence_at(comment.start)
    if sentence is None:
        before = [s for s in doc.sentences if s.end <= comment.start]
        if not before:
            return []
        sentence = before[-1]
    start = sentence.start
    for other in doc.comments:
        if sentence.start <= other.end <= comment.start and other is not comment:
            start = max(start, other.end)
    inside = [(f.start, f.end) for f in doc.figures if start <= f.start < comment.start]
    clause = max((at for mark in CLAUSE_MARKS for at in _finds(doc.masked, mark, start, comment.start)
                  if not any(a <= at < b for a, b in inside)), default=-1)  # "3,400" is no clause
    start = max(start, clause + 1)
    return [figure for figure in doc.figures if start <= figure.start and figure.end <= comment.start]


def _finds(text: str, mark: str, start: int, end: int) -> list[int]:
    """Every offset of ``mark`` in ``text[start:end]``."""
    found, at = [], text.find(mark, start, end)
    while at >= 0:
        found.append(at)
        at = text.find(mark, at + 1, end)
    return found


#: Where a clause starts: a marker checks the figures of its own clause, not the source's figures before it.
CLAUSE_MARKS = (";", "(", ":", ",", "—")


def check_text(text: str, path: str, evidence: Evidence) -> QuotedReport:
    """Check every marked figure of one Markdown document."""
    doc = read_markdown(text)
    report = QuotedReport([], [])
    for comment in doc.comments:
        line = doc.position(comment.start)[0]
        marker = parse_marker(comment, path, line)
        if marker is None:
            continue
        if isinstance(marker, Problem):
            report.problems.append(marker)
            continue
        picked = evidence.pick(marker)
        if isinstance(picked, str):
            report.problems.append(Problem(path, line, picked))
            continue
        runs, results = picked
        run_id = " and ".join(run.run_id for run in runs)
        commits = "; ".join(run.commits_text() for run in runs)
        values = recorded_values(results, marker)
        figures = [figure for figure in figures_before(doc, comment) if comparable(figure, values)]
        if not figures:
            report.problems.append(Problem(path, line, "marker follows no figure in the unit of what it names"))
        for figure in figures:
            matched = agrees(figure, values)
            report.checked.append(Checked(marker, figure.text, run_id, matched))
            if not matched:
                shown = ", ".join(with_unit(f"{value:.4g}", r.unit) for r in values[:6] for value in r.estimates)
                report.problems.append(Problem(
                    path, doc.position(figure.start)[0],
                    f"figure '{figure.text}' quoted for {', '.join(marker.items)} on {marker.machine_class} is no "
                    f"recorded value of run {run_id} ({commits}); recorded: {shown or 'nothing'}"))
    return report


def check_paths(paths: Iterable[str | Path], stores: Iterable[str | Path]) -> QuotedReport:
    """Check the marked figures of every Markdown file at ``paths`` against the runs in the store files."""
    opened: list[EvidenceStore] = []
    try:
        for location in stores:
            opened.append(EvidenceStore.open_readonly(location))
        evidence = Evidence(opened)
        total = QuotedReport([], [])
        for path in paths:
            found = check_text(Path(path).read_text(encoding="utf-8"), str(path), evidence)
            total.checked += found.checked
            total.problems += found.problems
        return total
    finally:
        for each in opened:
            each.close()
