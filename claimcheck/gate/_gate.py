"""The gate: every anchor of every doc checked against the evidence, plus unanchored figures on changed lines."""

from __future__ import annotations

import dataclasses
from datetime import date
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from claimcheck.claim import Claim
from claimcheck.figures import Figure, MarkdownDoc, read_markdown
from claimcheck.outcome.policy import not_checked, overturned, standing, undecided
from claimcheck.store import StoredResult
from claimcheck.suggest import did_you_mean

from ._anchors import class_matches, figures_by_anchor, find_anchors, machines_named
from ._binding import bind, inputs_of
from ._config import DocsConfig
from ._changes import base_texts, changed_lines, new_figures
from ._corrections import Fix, banner_above, corrected, correction_paragraph
from ._coverage import Bound, Coverage, Severity, unreadable
from ._evidence import Evidence, claim_verdict
from ._exempt import exemptions
from ._measured import check_markers
from ._messages import disagreement, one_line_per_figure, prose_banner, verdict_message as _verdict_message, word as _word
from ._model import Anchor, ClaimInfo, DOC_SUFFIXES, Problem, cites_badly, load_claim_index

#: Findings that mean a cited claim has no decided result.
UNDECIDED = frozenset({"unconfirmed", "missing-result"})


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
    fixes: dict[str, list[Fix]] = field(default_factory=dict)  # doc path -> banners `--fix` would insert
    docs: int = 0
    anchors: int = 0
    gating_class: str | None = None
    coverage: Coverage = field(default_factory=Coverage)

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
    strict_changed: bool = False,
    strict_paths: DocsConfig | None = None,
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
        strict_changed: the ratchet: figures new or changed since ``changed_since`` that are not
            verified or marked, and changed lines that cite an undecided claim, are errors.
        strict_paths: the docs configuration whose ``strict`` paths are always gated as with ``strict``.

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
            report.problems.append(Problem(str(raw), 1, 1, "no such file or folder", code="no-path"))
    files = doc_files(paths)
    report.docs = len(files)
    changed = changed_lines(files, changed_since) if changed_since and files else {}
    bases = base_texts(files, changed_since) if changed_since and files else {}
    marker_cache: dict[int, Any] = {}
    for path in files:
        label = str(path)
        try:
            doc = read_markdown(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as error:
            report.problems.append(Problem(label, 1, 1, f"cannot read: {error}", code="doc-file"))
            continue
        lines = changed.get(path.resolve(), set()) if changed_since else set()
        new = _new_figures(doc, bases.get(path.resolve()), lines) if changed_since else None
        full = strict or (strict_paths is not None and strict_paths.is_strict(path))
        severity = Severity(full, strict_changed and changed_since is not None, lines, new, changed_since is not None,
                            bases.get(path.resolve()))
        _check_doc(report, doc, label, index, evidence, reports_dir, full, allow_missing, severity, marker_cache)
    report.problems.sort(key=lambda p: (p.path, p.line, p.column))
    return report


def _new_figures(doc: MarkdownDoc, base: str | None, lines: set[int] | None) -> set[int] | None:
    """The figures of ``doc`` new or changed since its ``base`` text (:func:`new_figures`)."""
    def text(figure: Figure) -> str:
        return " ".join(figure.text.split())

    old = [text(f) for f in read_markdown(base).figures] if base is not None else None
    return new_figures([(f.start, f.line, text(f)) for f in doc.figures], old, lines)


def _check_doc(report: GateReport, doc: MarkdownDoc, label: str, index: Mapping[str, ClaimInfo],
               evidence: Evidence, reports_dir: str | Path | None, strict: bool, allow_missing: bool,
               severity: Severity, marker_cache: dict[int, Any]) -> None:
    """One doc: its markers, its anchors, its unreadable figures, and every figure's coverage."""
    anchors, problems = find_anchors(doc, label)
    found: list[Problem] = list(problems)
    markers = check_markers(doc, label, evidence.store, index, marker_cache)
    found.extend(markers.problems)
    exempt = exemptions(doc, label)
    found.extend(exempt.problems)
    marked = frozenset(markers.judged) | frozenset(exempt.direct)  # judged by its marker, or marked no finding
    report.anchors += len(anchors)
    by_sentence: dict[int, list[Anchor]] = {}
    for anchor in anchors:
        if anchor.sentence is not None:
            by_sentence.setdefault(anchor.sentence.start, []).append(anchor)
    undecided: set[int] = set()
    wanted = report.fixes.setdefault(label, [])
    bound = Bound()
    for anchor in anchors:
        siblings = by_sentence.get(anchor.sentence.start if anchor.sentence else -1, [])
        for problem in _check_anchor(anchor, doc, index, evidence, reports_dir, siblings, strict, wanted, marked,
                                     bound):
            if problem.code in UNDECIDED and anchor.sentence is not None:
                undecided.add(anchor.sentence.start)
                if severity.ratchet and severity.is_changed(problem.line):
                    problem = dataclasses.replace(problem, severity="error")  # a changed line cites it
                elif allow_missing and problem.code == "missing-result":
                    problem = dataclasses.replace(problem, severity="warning")
            found.append(problem)
    found = one_line_per_figure(found)
    found.extend(unreadable(doc, label, severity))
    found.extend(report.coverage.add(doc, label, bound, exempt.reason, undecided, markers.agreed, found, severity))
    report.problems.extend(found)


def _check_anchor(anchor: Anchor, doc: MarkdownDoc, index: Mapping[str, ClaimInfo], evidence: Evidence,
                  reports_dir: str | Path | None, siblings: Sequence[Anchor], strict: bool = False,
                  fixes: list[Fix] | None = None, marked: frozenset[int] = frozenset(),
                  bound: Bound | None = None) -> list[Problem]:
    where = (anchor.path, anchor.line, anchor.column)
    bound = Bound() if bound is None else bound
    fixes = [] if fixes is None else fixes
    claim = index.get(anchor.claim_id)
    if claim is None:
        hint = did_you_mean(anchor.claim_id, index)
        return [Problem(*where, f"unknown claim `{anchor.claim_id}`{hint}", code="unknown-claim")]
    if claim.draft:
        return [Problem(*where, f"claim `{claim.id}` is a draft ({claim.path}:{claim.line}); complete it and run it "
                                "before a doc cites it", code="draft")]
    if anchor.sentence is None:
        return []
    computed = evidence.computed(claim.id)
    if correction_paragraph(doc, anchor.sentence):
        # the doc's own correction of its source: whatever the verdict, each figure it quotes must be the
        # source's (stated) figure, the computed or measured value, or an input
        items = computed or evidence.latest(claim.id, evidence.gating_class)
        return _compare_figures(anchor, doc, claim, items, _run_machine(items, evidence), siblings, index, evidence,
                                marked, bound, corrected=True, computed=bool(computed))
    if computed:
        machine = f"{computed[0].machine_class} (computed; the same on every machine)"
        settled = _in_doc_correction(anchor, doc, claim, computed, machine, evidence, reports_dir, strict, fixes)
        if settled == [] and corrected(doc, anchor.sentence):
            return _compare_figures(anchor, doc, claim, computed, machine, siblings, index, evidence, marked, bound,
                                    corrected=True, computed=True)
        if settled is not None:
            return settled
        return _check_computed(anchor, doc, claim, computed, evidence, reports_dir, siblings, index, marked, bound)
    gating = evidence.gating_class
    gating_text = gating or "no machine class (the store has no runs)"
    named = machines_named(doc.masked[anchor.sentence.start:anchor.sentence.end])
    foreign_names = [n for n in named if not (gating and class_matches(gating, n))]
    other_classes = [c for c in evidence.classes() if c != gating and any(class_matches(c, n) for n in foreign_names)]
    items = evidence.latest(claim.id, gating)
    verdict = claim_verdict(items)

    settled = _in_doc_correction(anchor, doc, claim, items, gating_text, evidence, reports_dir, strict, fixes)
    if settled == [] and corrected(doc, anchor.sentence):
        return _compare_figures(anchor, doc, claim, items, gating_text, siblings, index, evidence, marked, bound,
                                corrected=True)
    if settled is not None:
        return settled
    if (verdict is None or not_checked(verdict)) and evidence.committed is not None:
        return _not_measurable_here(anchor, claim, gating_text, evidence.committed, named)
    if cites_badly(verdict):
        code = "missing-result" if verdict is None else "verdict"
        return [Problem(*where, _verdict_message(claim, verdict, items, gating_text, evidence, reports_dir), code=code)]
    if verdict is not None and not_checked(verdict):
        if not foreign_names:
            return [Problem(*where, f"claim `{claim.id}` is not applicable on {gating_text}; a figure from another "
                                    "machine must name that machine in its sentence (e.g. \"on the M1 Max\")",
                            code="verdict")]
        for machine in other_classes:
            other = claim_verdict(evidence.latest(claim.id, machine))
            if other is not None and cites_badly(other):
                message = _verdict_message(claim, other, evidence.latest(claim.id, machine), machine, evidence,
                                           reports_dir)
                return [Problem(*where, message, code="verdict")]
        items = []  # nothing measured on the gating class to compare the figures with

    compare_with = items
    machine = gating_text
    if foreign_names:
        # Quoted for a machine the sentence names: compared with that machine where it was measured,
        # else only with what the claim states (a cited external figure).
        measured_on = next((c for c in other_classes if evidence.latest(claim.id, c)), None)
        compare_with = evidence.latest(claim.id, measured_on) if measured_on else []
        machine = measured_on or ", ".join(foreign_names)
    problems = _compare_figures(anchor, doc, claim, compare_with, machine, siblings, index, evidence, marked,
                                bound, hint=not foreign_names)
    return problems + _not_shown_able_to_fail(anchor, claim, items, gating_text)


def _compare_figures(anchor: Anchor, doc: MarkdownDoc, claim: ClaimInfo, items: Sequence[StoredResult],
                     machine: str, siblings: Sequence[Anchor], index: Mapping[str, ClaimInfo], evidence: Evidence,
                     marked: frozenset[int], bound: Bound, *, corrected: bool = False,
                     hint: bool = False, computed: bool = False) -> list[Problem]:
    """Bind every figure of the anchor's share (:func:`bind`); one line for each that disagrees."""
    problems = []
    inputs = inputs_of(claim, items)
    for figure in figures_by_anchor(doc, siblings or [anchor]).get(anchor.offset, []):
        if figure.start in marked:
            continue  # a figure with its own measured marker is judged by it
        binding = bind(figure, doc.masked, claim, items, corrected=corrected, inputs=inputs)
        if binding.status == "disagrees" and _co_cited_agrees(figure, anchor, siblings, index, evidence, doc,
                                                                         corrected):
            binding = dataclasses.replace(binding, status="verified")
        bound.record(binding, claim.id)
        if binding.status != "disagrees":
            continue
        advice = ("; if it is another machine's figure, name it in the sentence"
                  if hint and binding.measured is not None and binding.measured.agrees is False else "")
        problems.append(disagreement(anchor.path, binding, claim, machine, _run_of(items), advice, computed))
    return problems


def _not_measurable_here(anchor: Anchor, claim: ClaimInfo, machine: str, committed: Evidence,
                         named: Sequence[str]) -> list[Problem]:
    """A claim this runner (a VM) cannot measure, cited with its committed evidence: a warning, never an error.

    The evidence of a machine the sentence names comes first.
    """
    classes = sorted(committed.classes(), key=lambda c: not any(class_matches(c, n) for n in named))
    found = next(((c, items) for c in classes if (items := committed.latest(claim.id, c))), None)
    if found is None:
        evidence_text = "no committed evidence either"
    else:
        klass, items = found
        evidence_text = f"committed evidence: {_word(claim_verdict(items))} on {klass} (run {_run_of(items)})"
    return [Problem(anchor.path, anchor.line, anchor.column,
                    f"claim `{claim.id}` is not measurable on this runner (VM) ({machine}); {evidence_text}",
                    severity="warning", code="not-measurable")]


def _run_machine(items: Sequence[StoredResult], evidence: Evidence) -> str:
    """The class the items were measured on (or the gating class)."""
    return items[0].machine_class if items else (evidence.gating_class or "no machine class")


def _run_of(items: Sequence[StoredResult]) -> str:
    return ", ".join(sorted({item.run_id for item in items})) or "none"


def _check_computed(anchor: Anchor, doc: MarkdownDoc, claim: ClaimInfo, items: Sequence[StoredResult],
                    evidence: Evidence, reports_dir: str | Path | None, siblings: Sequence[Anchor],
                    index: Mapping[str, ClaimInfo], marked: frozenset[int] = frozenset(),
                    bound: Bound | None = None) -> list[Problem]:
    """A claim computed exactly: its verdict and value hold on every machine, so the sentence's machine is moot."""
    where = (anchor.path, anchor.line, anchor.column)
    machine = f"{items[0].machine_class} (computed; the same on every machine)"
    verdict = claim_verdict(items)
    if cites_badly(verdict):
        return [Problem(*where, _verdict_message(claim, verdict, items, machine, evidence, reports_dir), code="verdict")]
    problems = _compare_figures(anchor, doc, claim, items, machine, siblings, index, evidence, marked,
                                Bound() if bound is None else bound, computed=True)
    return problems + _not_shown_able_to_fail(anchor, claim, items, machine)


def _co_cited_agrees(figure: Figure, anchor: Anchor, siblings: Sequence[Anchor], index: Mapping[str, ClaimInfo],
                     evidence: Evidence, doc: MarkdownDoc, corrected: bool = False) -> bool:
    """Another claim of the same comment binds the figure (``<!-- claim: a, b -->`` with one figure each)."""
    for other in siblings:
        info = index.get(other.claim_id)
        if other.offset != anchor.offset or other.claim_id == anchor.claim_id or info is None:
            continue
        items = evidence.computed(info.id) or evidence.latest(info.id, evidence.gating_class)
        if bind(figure, doc.masked, info, items, corrected=corrected, inputs=inputs_of(info, items)).status == "verified":
            return True
    return False


def _not_shown_able_to_fail(anchor: Anchor, claim: ClaimInfo, items: Sequence[StoredResult],
                            machine: str) -> list[Problem]:
    """A warning when the claim holds but its positive control was not refuted: the hold says little."""
    weak = [i.result.control for i in items if standing(i.verdict) and i.result.control is not None
            and not i.result.control.shown_able_to_fail]
    if not weak or weak[0] is None:
        return []
    control = weak[0]
    return [Problem(anchor.path, anchor.line, anchor.column,
                    f"claim `{claim.id}` holds on {machine} but is not shown able to fail here: its control "
                    f"{control.item_id} was {control.verdict.value}", severity="warning", code="not-shown-able-to-fail")]


def _in_doc_correction(anchor: Anchor, doc: MarkdownDoc, claim: ClaimInfo, items: Sequence[StoredResult],
                       machine: str, evidence: Evidence, reports_dir: str | Path | None, strict: bool,
                       fixes: list[Fix]) -> list[Problem] | None:
    """What the verdict asks of the sentence itself; ``None`` when its figures are to be checked as usual.

    A refuted claim needs its sentence corrected in the doc (a dated banner above it, or struck
    through), and so does one its source contradicts (``inconsistent``: the banner names the
    readings that do and do not give the figure); a banner above a sentence whose claim holds is wrong; an inconclusive claim is a
    warning (an error under ``--strict``): unconfirmed is not overturned.
    """
    assert anchor.sentence is not None
    where = (anchor.path, anchor.line, anchor.column)
    verdict = claim_verdict(items)
    banner = banner_above(doc, anchor.sentence)
    if verdict is not None and overturned(verdict):
        if corrected(doc, anchor.sentence):
            return []
        computed = bool(items) and all(item.result.deterministic for item in items)
        fixes.append(Fix(anchor.sentence.line, prose_banner(claim, items, machine, computed, date.today().isoformat())))
        message = ("add a dated correction banner above this sentence (`claimcheck docs --fix` inserts one) or strike "
                   "it through: " + _verdict_message(claim, verdict, items, machine, evidence, None))
        return [Problem(*where, message, code="uncorrected")]
    if banner is not None and verdict is not None and standing(verdict):
        return [Problem(*where, f"a correction banner ({banner[:60]}) stands above a sentence citing claim "
                                f"`{claim.id}`, which holds on {machine}; remove it, or anchor the claim it corrects",
                        code="needless-correction")]
    if verdict is not None and undecided(verdict):
        message = _verdict_message(claim, verdict, items, machine, evidence, reports_dir)
        if "not overturned" not in message:
            message += "; unconfirmed here, not overturned"
        return [Problem(*where, message + "; to clear it, drop the anchor or quote the run with "
                                          "`<!-- measured: ID on CLASS -->`", severity="error" if strict else "warning",
                        code="unconfirmed")]
    return None
