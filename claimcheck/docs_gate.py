"""Docs gate: a sentence that cites a claim must agree with the claim's latest evidence.

A doc ties a sentence to a claim with an HTML comment, invisible on GitHub and in any
Markdown renderer::

    mlx's qmv kernel reaches **74–88%** of raw bandwidth on large matrices. <!-- claim: qmv-large-bw -->

Several claims: ``<!-- claim: qmv-large-bw, qmv-small-bw -->``. The comment anchors the
sentence it sits in, or the sentence it directly follows (same paragraph); in a table it
anchors its row. For every anchor the gate checks, on the *gating machine class*
(``--machine-class``, default: the class of the store's latest run):

1. the claim exists (and is not a draft);
2. its latest result there holds. Refuted, stale, inconclusive, error and missing results fail
   the gate, quoting the replacement sentence of the claim's correction report when there is one;
3. every figure in the sentence of the claim's unit family (``GB/s`` and ``TB/s`` alike;
   ``%`` and ``x`` and ratios alike) agrees with the measured interval, converted to the
   figure's unit, or with the band the claim states (threshold, expected ± tolerance). A
   point agrees when it lies inside (allowing its printed rounding, and 10% more for ``~``),
   a range when it overlaps. With several anchors in a sentence, each anchor takes the figures
   between it and the previous anchor; figures after the last anchor go to the last one.
4. A figure measured elsewhere is allowed only when the sentence names that machine
   (``M1 Max``, ``H200``, ``CPU``...): it is then checked against that machine class's result
   if the store has one, and otherwise accepted as a cited external figure.

With ``--changed-since REF``, figures with performance units on lines changed since ``REF``
(its merge base with ``HEAD``; untracked docs count as changed) in sentences that anchor no
claim are reported: a warning, or an error with ``--strict``.

Every problem is one line, ``file:line:column: message``; the exit status is 1 when any
error was found and 2 when the gate could not run (bad git ref, unreadable store).
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from claimcheck import rules
from claimcheck.claim import Check, Claim
from claimcheck.errors import ClaimError
from claimcheck.numbers import finite
from claimcheck.schema import ID_PATTERN
from claimcheck.numbers import level as confidence_level
from claimcheck.store import EvidenceStore, StoredResult
from claimcheck.verdict import Verdict, worst
from claimcheck.figures import (
    Figure,
    MarkdownDoc,
    Sentence,
    UnitError,
    compatible,
    convert,
    family_of,
    format_value,
    parse_figures,
    read_markdown,
)

ANCHOR_RE = re.compile(r"^claims?\s*:\s*(?P<ids>.+?)\s*$", re.S | re.I)
ID_RE = re.compile(ID_PATTERN)
DOC_SUFFIXES = (".md", ".markdown")
PERFORMANCE_FAMILIES = frozenset({"time", "bandwidth", "size", "throughput", "fraction", "information"})
FAILING = ("refuted", "stale", "inconclusive", "error")
# Worst first: the verdict a claim with several items (grid) gets in the gate.
VERDICT_VALUES = frozenset(v.value for v in Verdict)

# Machine names a sentence can cite a figure for; each matches machine classes
# (``backend/device/memory``) whose text contains it, case-insensitively.
MACHINE_NAME_RE = re.compile(
    r"\b(?:Apple\s+)?M[1-9](?:\s+(?:Pro|Max|Ultra))?\b"
    r"|\b(?:GH|GB)?[ABHL]\d{2,3}\b|\bRTX\s*\d{4}\b|\bMI\d{3}X?\b"
    r"|\b(?:EPYC|Xeon|Graviton\d?|CPU)\b"
)


@dataclass(frozen=True)
class Problem:
    """One finding of the gate, printed as ``file:line:column: message``."""

    path: str
    line: int
    column: int
    message: str
    severity: str = "error"  # "error" | "warning"
    code: str = ""  # unknown-claim, draft, verdict, missing-result, disagrees, unanchored, claim-file

    def __str__(self) -> str:
        prefix = "" if self.severity == "error" else f"{self.severity}: "
        return f"{self.path}:{self.line}:{self.column}: {prefix}{self.message}"


@dataclass(frozen=True)
class Anchor:
    """A ``<!-- claim: id -->`` comment and the sentence it anchors."""

    claim_id: str
    path: str
    offset: int
    line: int
    column: int
    sentence: Sentence | None


@dataclass(frozen=True)
class ClaimInfo:
    """What the gate needs from a claim: its figure and its check (the rule states the band)."""

    id: str
    figure: str = ""
    check: Check | None = None
    content_hash: str = ""
    draft: bool = False
    path: str = ""
    line: int = 0

    @property
    def rule(self) -> str | None:
        """The check's rule name."""
        return self.check.rule if self.check else None

    @property
    def unit(self) -> str | None:
        """The unit of the claim's figure."""
        return self.check.unit if self.check else None

    @classmethod
    def from_claim(cls, claim: Claim) -> ClaimInfo:
        """From a loaded claim."""
        return cls(id=claim.id, figure=claim.source.figure, check=claim.check, content_hash=claim.content_hash,
                   path=claim.path, line=claim.line)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], path: str = "", line: int = 0) -> ClaimInfo:
        """From a claim record (the store's form)."""
        check = data.get("check") or {}
        source = data.get("source") or {}
        return cls(id=str(data.get("id")), figure=str(source.get("figure") or ""),
                   check=Check.from_record(check) if check.get("rule") else None,
                   draft=data.get("draft") is True, path=path, line=line)

    def stated_band(self, unit: str | None) -> tuple[float, float] | None:
        """The values the claim itself states, in ``unit`` (from the rule object)."""
        if self.check is None or self.check.rule not in rules.names():
            return None
        try:
            band = rules.get(self.check.rule).stated_band(self.check)
        except KeyError:
            return None
        if band is None:
            return None
        try:
            return convert(band[0], self.unit, unit), convert(band[1], self.unit, unit)
        except UnitError:
            return None


# --------------------------------------------------------------------------- claims


def load_claim_index(paths: Iterable[str | Path]) -> tuple[dict[str, ClaimInfo], list[Problem]]:
    """Claims (and drafts) by id from claim files; a broken file becomes a problem, not a crash."""
    from claimcheck.loader import Draft, iter_claim_files, read_claim_file

    index: dict[str, ClaimInfo] = {}
    problems: list[Problem] = []
    for path in iter_claim_files(paths):
        try:
            built_all = read_claim_file(path, with_drafts=True)
        except ClaimError as error:
            problems.append(Problem(error.path, error.line or 1, 1, f"{error.field + ': ' if error.field else ''}"
                                                                    f"{error.message}", code="claim-file"))
            continue
        for built in built_all:
            if isinstance(built, Draft):
                index[built.id] = ClaimInfo(id=built.id, draft=True, path=built.path, line=built.line)
            else:
                index[built.id] = ClaimInfo.from_claim(built)
    return index, problems


# --------------------------------------------------------------------------- evidence


class Evidence:
    """Latest result items per claim and machine class, read from an evidence store.

    ``store`` is an evidence store, or ``None`` for "nothing measured yet".
    """

    def __init__(self, store: EvidenceStore | None, machine_class: str | None = None, *, label: str = "") -> None:
        self.store = store
        self.label = label
        self._history: dict[str, list[StoredResult]] = {}
        if machine_class is None and store is not None:
            machine_class = _this_machine_class(store)
        self.gating_class = machine_class

    def classes(self) -> list[str]:  # noqa: D102
        if self.store is None:
            return []
        return self.store.machine_classes()

    def latest(self, claim_id: str, machine_class: str | None) -> list[StoredResult]:
        """Items of the newest run on ``machine_class`` that has a result for ``claim_id``."""
        if self.store is None or machine_class is None:
            return []
        if claim_id not in self._history:
            self._history[claim_id] = list(self.store.history(claim_id))
        rows = [row for row in self._history[claim_id] if row.machine_class == machine_class]
        if not rows:
            return []
        last_run = rows[-1].run_id
        return [row for row in rows if row.run_id == last_run]


def claim_verdict(items: Sequence[StoredResult]) -> str:
    """One verdict for a claim's items: the worst of them (``missing`` when there are none)."""
    chosen = worst(item.verdict for item in items)
    return chosen.value if chosen else "missing"


def suggested_sentence(reports_dir: str | Path | None, claim_id: str, verdict: str = "refuted") -> str | None:
    """The replacement sentence a report wrote for the claim, one line, if any.

    ``claimcheck report`` writes ``corrections/<id>.json`` for refuted claims and
    ``inconclusive/<id>.json`` for inconclusive ones, each with a ``replacement`` sentence.
    """
    if reports_dir is None:
        return None
    folders = ("inconclusive", "corrections") if verdict == "inconclusive" else ("corrections", "inconclusive")
    for folder in folders:
        try:
            data = json.loads((Path(reports_dir) / folder / f"{claim_id}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for key in ("replacement", "suggested_sentence", "suggestion"):
            value = data.get(key) if isinstance(data, dict) else None
            if isinstance(value, str) and value.strip():
                return " ".join(value.split())
    return None


# --------------------------------------------------------------------------- anchors


def find_anchors(doc: MarkdownDoc, path: str) -> tuple[list[Anchor], list[Problem]]:
    """Claim anchors in a doc, each tied to its sentence; malformed ones are problems."""
    anchors: list[Anchor] = []
    problems: list[Problem] = []
    for comment in doc.comments:
        match = ANCHOR_RE.match(comment.body)
        if not match:
            continue
        line, column = doc.position(comment.start)
        sentence = _anchored_sentence(doc, comment.start)
        if sentence is None:
            problems.append(Problem(path, line, column, "claim anchor is not attached to a sentence: put it inside "
                                                        "or right after the sentence it vouches for"))
        for raw in match.group("ids").split(","):
            claim_id = raw.strip()
            if not ID_RE.match(claim_id):
                problems.append(Problem(path, line, column, f"malformed claim id {claim_id!r} in anchor "
                                                            "(expected a slug of a-z, 0-9 and '-')"))
                continue
            anchors.append(Anchor(claim_id, path, comment.start, line, column, sentence))
    return anchors, problems


def _anchored_sentence(doc: MarkdownDoc, offset: int) -> Sentence | None:
    before = [s for s in doc.sentences if s.start <= offset]
    if not before:
        return None
    sentence = before[-1]
    if offset < sentence.end:
        return sentence
    gap = doc.masked[sentence.end:offset]
    if not gap.strip() and gap.count("\n") <= 1 and sentence.kind != "table":
        return sentence
    return None


def machines_named(text: str) -> list[str]:
    """Machine names a sentence mentions (``"M1 Max"``, ``"H200"``, ``"CPU"``)."""
    return [" ".join(m.group().split()) for m in MACHINE_NAME_RE.finditer(text)]


def class_matches(machine_class: str, name: str) -> bool:
    """Whether a machine class (``backend/device/memory``) is the machine ``name`` refers to."""
    lowered = machine_class.lower()
    name = name.lower().removeprefix("apple ").strip()
    if name == "cpu":
        return lowered.startswith("cpu/")
    return re.search(r"(?<![a-z0-9])" + re.escape(name) + r"(?![a-z0-9])", lowered) is not None


# --------------------------------------------------------------------------- numbers


def _item_interval(item: StoredResult, unit: str | None,
                   fallback_unit: str | None = None) -> tuple[float, float, float | None] | None:
    """``(low, high, estimate)`` of one result item in ``unit``.

    An item without a unit is taken to be in ``fallback_unit`` (the claim's), and failing that
    in ``unit`` itself. An interval unbounded on both sides stands for its estimate alone.
    """
    decision = item.decision
    if decision is None:
        return None
    low, high = decision.low, decision.high
    statistic: float | None = decision.statistic if finite(decision.statistic) else None
    if not finite(low) and not finite(high):
        if statistic is None:
            return None
        low = high = statistic
    source_unit = item.claim.check.unit or fallback_unit or unit
    try:
        converted = (convert(low, source_unit, unit), convert(high, source_unit, unit))
        estimate = convert(float(statistic), source_unit, unit) if statistic is not None else None
    except UnitError:
        return None
    return min(converted), max(converted), estimate


def _families_of_claim(claim: ClaimInfo, items: Sequence[StoredResult]) -> set[str]:
    """Unit families the claim measures, limited to those its source figure quotes."""
    measured_unit = _measured_unit(claim, items)
    source = {f.family for f in parse_figures(claim.figure)}
    if measured_unit is not None:
        family = family_of(measured_unit)
        if family is None:
            return set()
        matching = {f for f in source if compatible(f, family)}
        if family == "fraction" and "count" in source:
            matching.add("count")  # "0 of 924" against a measured rate
        return matching or ({family} if not source else set())
    return {f for f in source if f not in ("count", "number")}


def _measured_unit(claim: ClaimInfo, items: Sequence[StoredResult]) -> str | None:
    return next((item.claim.check.unit for item in items if item.claim.check.unit), None) or claim.unit


def _compare_unit(figure: Figure, claim: ClaimInfo, items: Sequence[StoredResult]) -> str | None:
    """The unit a figure and the measurement are compared in: the figure's own where it has one."""
    measured = _measured_unit(claim, items)
    if figure.kind == "count":
        return "ratio" if family_of(measured) == "fraction" else "count"
    if figure.unit is None:
        return measured
    return figure.unit


def _agrees(figure: Figure, items: Sequence[StoredResult], claim: ClaimInfo) -> bool | None:
    """``True``/``False`` when the figure can be compared with the items, ``None`` when it cannot."""
    unit = _compare_unit(figure, claim, items)
    try:
        quoted = figure.interval(unit, tolerant=True)
    except UnitError:
        return None
    intervals = [iv for iv in (_item_interval(item, unit, claim.unit) for item in items) if iv is not None]
    band = claim.stated_band(unit)
    if not intervals and band is None:
        return None
    if band is not None and quoted[0] <= band[1] and band[0] <= quoted[1]:
        return True
    if not intervals:
        return False
    if figure.is_range:
        low = min(iv[0] for iv in intervals)
        high = max(iv[1] for iv in intervals)
        return quoted[0] <= high and low <= quoted[1]
    return any(quoted[0] <= iv[1] and iv[0] <= quoted[1] for iv in intervals)


def _measured_text(figure: Figure, items: Sequence[StoredResult], claim: ClaimInfo, machine_class: str) -> str:
    unit = _compare_unit(figure, claim, items)
    parts = []
    for item in items:
        interval = _item_interval(item, unit, claim.unit)
        if interval is None:
            continue
        low, high, estimate = interval
        level = item.decision.confidence_level if item.decision is not None else None
        level_text = f" ({confidence_level(level)} interval)" if finite(level) else ""
        params = item.params
        where = f" at {', '.join(f'{k}={v}' for k, v in params.items())}" if params and len(items) > 1 else ""
        head = format_value(estimate, unit) + " " if estimate is not None else ""
        parts.append(f"{head}[{format_value(low, unit)}, {format_value(high, unit)}]{level_text}{where}")
    shown = "; ".join(parts[:3]) + ("; ..." if len(parts) > 3 else "")
    return f"measured {shown} on {machine_class}"


def _figures_by_anchor(doc: MarkdownDoc, anchors: Sequence[Anchor]) -> dict[int, list[Figure]]:
    """Split a sentence's figures between its anchors (figures before each anchor; the rest to the last)."""
    out: dict[int, list[Figure]] = {}
    offsets = sorted({a.offset for a in anchors})
    sentence = anchors[0].sentence
    assert sentence is not None
    figures = doc.figures_in(sentence.start, max(sentence.end, max(offsets)))
    previous = -1
    for k, offset in enumerate(offsets):
        last = k == len(offsets) - 1
        out[offset] = [f for f in figures if f.start > previous and (last or f.start < offset)]
        previous = offset
    return out


# --------------------------------------------------------------------------- git


class GitError(RuntimeError):
    """The changed lines could not be read from git."""


def _git(root: Path, *args: str) -> str:
    result = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    if result.returncode != 0:
        message = (result.stderr.strip().splitlines() or ["failed"])[-1]
        raise GitError(f"git {' '.join(args[:2])}: {message}")
    return result.stdout


def changed_lines(paths: Sequence[Path], ref: str) -> dict[Path, set[int] | None]:
    """Lines of each doc changed since ``ref`` (merge base with HEAD); ``None`` = the whole file."""
    out: dict[Path, set[int] | None] = {}
    by_root: dict[Path, list[Path]] = {}
    for path in paths:
        root = Path(_git(path.parent if path.parent != Path("") else Path("."), "rev-parse", "--show-toplevel").strip())
        by_root.setdefault(root, []).append(path.resolve())
    for root, files in by_root.items():
        try:
            base = _git(root, "merge-base", ref, "HEAD").strip()
        except GitError:
            try:
                _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
            except GitError:
                raise GitError(f"--changed-since: {ref!r} names no commit in {root}") from None
            base = ref  # no common ancestor with HEAD: compare with the ref itself
        relative = [str(f.relative_to(root)) for f in files]
        untracked = set(_git(root, "ls-files", "--others", "--exclude-standard", "--", *relative).splitlines())
        diff = _git(root, "diff", "--unified=0", "--no-color", "--no-ext-diff", base, "--", *relative)
        current: str | None = None
        changed: dict[str, set[int]] = {}
        for line in diff.splitlines():
            if line.startswith("+++ "):
                name = line[4:]
                current = name[2:] if name.startswith("b/") else None
                if current is not None:
                    changed.setdefault(current, set())
            elif line.startswith("@@") and current is not None:
                hunk = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)
                if hunk:
                    start, count = int(hunk.group(1)), int(hunk.group(2) or 1)
                    changed[current].update(range(start, start + count))
        for file, rel in zip(files, relative):
            out[file] = None if rel in untracked else changed.get(rel, set())
    return out


# --------------------------------------------------------------------------- the gate


def doc_files(paths: Iterable[str | Path]) -> list[Path]:
    """Markdown files under ``paths`` (files as given, folders searched recursively), sorted."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out.extend(sorted(p for p in path.rglob("*") if p.suffix.lower() in DOC_SUFFIXES and p.is_file()))
        elif path.is_file():
            out.append(path)
    return out


@dataclass
class GateReport:
    """What the gate found: the problems plus counts for the summary line."""

    problems: list[Problem] = field(default_factory=list)
    docs: int = 0
    anchors: int = 0
    gating_class: str | None = None

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    @property
    def ok(self) -> bool:
        return not self.errors


def check_docs(
    paths: Iterable[str | Path],
    store: Any | None,
    *,
    claims: Mapping[str, ClaimInfo] | Iterable[ClaimInfo | Claim | Mapping[str, Any]] | None = None,
    claim_paths: Iterable[str | Path] = ("claims",),
    machine_class: str | None = None,
    changed_since: str | None = None,
    strict: bool = False,
    reports_dir: str | Path | None = "reports",
    allow_missing: bool = False,
) -> GateReport:
    """Check every claim anchor (and, with ``changed_since``, every changed figure) in ``paths``.

    Args:
        paths: Markdown files or folders.
        store: an evidence store (or ``None``: every anchored claim then lacks a result).
        claims: ``ClaimInfo`` by id, or ``Claim`` objects or claim dicts (the outcome's ``claim``
            shape); read from ``claim_paths`` when omitted.
        machine_class: the gating machine class; default the class of the store's latest run.
        changed_since: a git ref; figures on lines changed since it must be anchored.
        strict: unanchored figures are errors instead of warnings.
        reports_dir: the reports folder, whose ``corrections/<id>.json`` replacement sentences are quoted.
        allow_missing: a claim with no result yet is a warning, not an error (for local hooks
            run before the suite has; CI should never set it).

    Raises:
        GitError: ``changed_since`` names no commit, or a doc is outside a git work tree.
    """
    report = GateReport()
    if claims is None:
        index, problems = load_claim_index(claim_paths)
        report.problems.extend(problems)
    elif isinstance(claims, Mapping):
        index = dict(claims)
    else:
        infos = [c if isinstance(c, ClaimInfo) else ClaimInfo.from_claim(c) if isinstance(c, Claim)
                 else ClaimInfo.from_mapping(c) for c in claims]
        index = {info.id: info for info in infos}
    evidence = store if isinstance(store, Evidence) else Evidence(store, machine_class)
    if machine_class is not None:
        evidence.gating_class = machine_class
    report.gating_class = evidence.gating_class
    paths = list(paths)
    for raw in paths:
        if not Path(raw).exists():
            report.problems.append(Problem(str(raw), 1, 1, "no such file or folder", "warning"))
    files = doc_files(paths)
    report.docs = len(files)
    changed = changed_lines(files, changed_since) if changed_since and files else {}
    for path in files:
        label = str(path)
        try:
            doc = read_markdown(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as error:
            report.problems.append(Problem(label, 1, 1, f"cannot read: {error}", code="doc-file"))
            continue
        anchors, problems = find_anchors(doc, label)
        report.problems.extend(problems)
        report.anchors += len(anchors)
        by_sentence: dict[int, list[Anchor]] = {}
        for anchor in anchors:
            if anchor.sentence is not None:
                by_sentence.setdefault(anchor.sentence.start, []).append(anchor)
        for anchor in anchors:
            siblings = by_sentence.get(anchor.sentence.start if anchor.sentence else -1, [])
            for problem in _check_anchor(anchor, doc, index, evidence, reports_dir, siblings):
                if allow_missing and problem.code == "missing-result":
                    problem = dataclasses.replace(problem, severity="warning")
                report.problems.append(problem)
        if changed_since:
            lines = changed.get(path.resolve(), set())
            report.problems.extend(_unanchored(doc, label, lines, set(by_sentence), strict))
    report.problems.sort(key=lambda p: (p.path, p.line, p.column))
    return report


def _check_anchor(anchor: Anchor, doc: MarkdownDoc, index: Mapping[str, ClaimInfo], evidence: Evidence,
                  reports_dir: str | Path | None, siblings: Sequence[Anchor]) -> list[Problem]:
    where = (anchor.path, anchor.line, anchor.column)
    claim = index.get(anchor.claim_id)
    if claim is None:
        close = difflib.get_close_matches(anchor.claim_id, list(index), n=1)
        hint = f" (did you mean `{close[0]}`?)" if close else ""
        return [Problem(*where, f"unknown claim `{anchor.claim_id}`{hint}", code="unknown-claim")]
    if claim.draft:
        return [Problem(*where, f"claim `{claim.id}` is a draft ({claim.path}:{claim.line}); complete it and run it "
                                "before a doc cites it", code="draft")]
    if anchor.sentence is None:
        return []
    gating = evidence.gating_class
    gating_text = gating or "no machine class (the store has no runs)"
    named = machines_named(doc.masked[anchor.sentence.start:anchor.sentence.end])
    foreign_names = [n for n in named if not (gating and class_matches(gating, n))]
    other_classes = [c for c in evidence.classes() if c != gating and any(class_matches(c, n) for n in foreign_names)]
    items = evidence.latest(claim.id, gating)
    verdict = claim_verdict(items)

    if verdict in FAILING or verdict == "missing":
        code = "missing-result" if verdict == "missing" else "verdict"
        return [Problem(*where, _verdict_message(claim, verdict, items, gating_text, evidence, reports_dir), code=code)]
    if verdict == "not-applicable":
        if not foreign_names:
            return [Problem(*where, f"claim `{claim.id}` is not applicable on {gating_text}; a figure from another "
                                    "machine must name that machine in its sentence (e.g. \"on the M1 Max\")",
                            code="verdict")]
        for machine in other_classes:
            other = claim_verdict(evidence.latest(claim.id, machine))
            if other in FAILING:
                message = _verdict_message(claim, other, evidence.latest(claim.id, machine), machine, evidence,
                                           reports_dir)
                return [Problem(*where, message, code="verdict")]
        items = []  # nothing measured on the gating class to compare the figures with

    problems: list[Problem] = []
    share = _figures_by_anchor(doc, siblings or [anchor]).get(anchor.offset, [])
    families = _families_of_claim(claim, items)
    for figure in share:
        if figure.family not in families:
            continue
        agreement = _agrees(figure, items, claim) if items else None
        if agreement is True:
            continue
        if foreign_names:
            # Quoted for a machine the sentence names: compare with that machine if it was measured,
            # otherwise accept it as a cited external figure.
            disagreeing: str | None = None
            for machine in other_classes:
                other_items = evidence.latest(claim.id, machine)
                other_agreement = _agrees(figure, other_items, claim) if other_items else None
                if other_agreement is True:
                    disagreeing = None
                    break
                if other_agreement is False:
                    disagreeing = machine
            if disagreeing is not None:
                measured = _measured_text(figure, evidence.latest(claim.id, disagreeing), claim, disagreeing)
                problems.append(Problem(anchor.path, figure.line, figure.column,
                                        f"\"{figure.text}\" disagrees with claim `{claim.id}`: {measured}",
                                        code="disagrees"))
            continue
        if agreement is False:
            measured = _measured_text(figure, items, claim, gating_text)
            problems.append(Problem(anchor.path, figure.line, figure.column,
                                    f"\"{figure.text}\" disagrees with claim `{claim.id}`: {measured}; if the figure "
                                    "is from another machine, name it in the sentence", code="disagrees"))
    return problems


def _verdict_message(claim: ClaimInfo, verdict: str, items: Sequence[StoredResult], machine: str,
                     evidence: Evidence, reports_dir: str | Path | None) -> str:
    if verdict == "missing":
        if evidence.store is None:
            where = f" at {evidence.label}" if evidence.label else ""
            return f"claim `{claim.id}` has no result on {machine} (no evidence store{where})"
        return f"claim `{claim.id}` has no result on {machine}; run it before a doc cites it"
    reason = next((" ".join(i.reason.split()) for i in items if i.verdict.value == verdict and i.reason), "")
    message = f"claim `{claim.id}` is {verdict} on {machine}" + (f": {reason}" if reason else "")
    suggestion = suggested_sentence(reports_dir, claim.id, verdict)
    if suggestion:
        message += f"; suggested: {suggestion}"
    return message


def _unanchored(doc: MarkdownDoc, path: str, lines: set[int] | None, anchored: set[int],
                strict: bool) -> list[Problem]:
    problems = []
    severity = "error" if strict else "warning"
    for sentence in doc.sentences:
        if sentence.start in anchored:
            continue
        for figure in doc.figures_in(sentence.start, sentence.end):
            if figure.family not in PERFORMANCE_FAMILIES or figure.unit is None:
                continue
            if lines is not None and figure.line not in lines:
                continue
            problems.append(Problem(path, figure.line, figure.column,
                                    f"unanchored figure \"{figure.text}\" on a changed line: cite the claim that "
                                    "checks it with <!-- claim: ID --> (or draft one: claimcheck extract)",
                                    severity, code="unanchored"))
    return problems


# --------------------------------------------------------------------------- command line


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="claimcheck docs",
        description="Check that doc sentences citing claims (<!-- claim: ID -->) agree with the latest evidence.",
    )
    parser.add_argument("paths", nargs="*", default=["docs"], help="Markdown files or folders (default: docs)")
    parser.add_argument("--store", default=None, help="evidence store (default: reports/claimcheck.sqlite)")
    parser.add_argument("--machine-class", default=None,
                        help="gating machine class (default: the class of the store's latest run)")
    parser.add_argument("--changed-since", metavar="REF", default=None,
                        help="also report figures on lines changed since REF that cite no claim")
    parser.add_argument("--strict", action="store_true", help="unanchored figures are errors, not warnings")
    parser.add_argument("--claims", action="append", default=None, metavar="PATH",
                        help="claim files or folders (repeatable; default: claims)")
    parser.add_argument("--reports", default="reports", metavar="DIR",
                        help="reports folder with corrections/<id>.json (default: reports)")
    parser.add_argument("--allow-missing", action="store_true",
                        help="a cited claim with no result yet is a warning (local hooks; never in CI)")
    return parser


def _open_store(path: str | None) -> tuple[Any | None, str]:
    """The store, read-only; ``None`` when the default one does not exist yet (a named one must)."""
    from claimcheck.store import DEFAULT_PATH, EvidenceStore

    location = Path(path) if path else DEFAULT_PATH
    if not location.exists():
        if path:
            raise FileNotFoundError(f"{location}: no evidence store there")
        return None, str(location)
    return EvidenceStore(location, readonly=True), str(location)


def main(argv: Sequence[str] | None = None) -> int:
    """``claimcheck docs``: exit 0 when the docs agree with the evidence, 1 when not, 2 when it cannot tell."""
    args = _parser().parse_args(argv)
    try:
        store, label = _open_store(args.store)
    except Exception as error:  # StoreError or a missing file given explicitly: one line
        print(f"claimcheck docs: {error}", file=sys.stderr)
        return 2
    evidence = Evidence(store, args.machine_class, label=label)
    try:
        report = check_docs(args.paths, evidence, claim_paths=args.claims or ["claims"],
                            machine_class=args.machine_class, changed_since=args.changed_since, strict=args.strict,
                            reports_dir=args.reports, allow_missing=args.allow_missing)
    except GitError as error:
        print(f"claimcheck docs: {error}", file=sys.stderr)
        return 2
    finally:
        if store is not None:
            store.close()
    for problem in report.problems:
        print(problem)
    errors, warnings = len(report.errors), len(report.warnings)
    print(f"claimcheck docs: {report.anchors} claim anchor(s) in {report.docs} doc(s) on "
          f"{report.gating_class or 'no machine class'}: {errors} error(s), {warnings} warning(s)", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


def _this_machine_class(store: EvidenceStore) -> str | None:
    """The gating class by default: this machine's, when the store has a run of it.

    Stores merge in other machines' profiles (a GPU run, a CI matrix), so "the
    latest run" may be another machine's; gating on it would judge this
    machine's docs by that machine's figures. Falls back to the latest run.
    """
    try:
        from claimcheck.machine import machine_class

        mine = machine_class()
    except Exception:  # noqa: BLE001 - no MLX here: gate on what the store has
        mine = None
    if mine and store.runs(mine, limit=1):
        return mine
    latest = store.latest_run()
    return latest.machine_class if latest is not None and latest.machine_class else None
