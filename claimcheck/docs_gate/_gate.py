"""The gate: every anchor of every doc checked against the evidence, plus unanchored figures on changed lines."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from claimcheck.claim import Claim
from claimcheck.figures import Figure, MarkdownDoc, read_markdown
from claimcheck.store import StoredResult
from claimcheck.suggest import did_you_mean

from ._agreement import agrees, families_of_claim, measured_text
from ._anchors import class_matches, figures_by_anchor, find_anchors, machines_named
from ._changes import changed_lines
from ._corrections import Fix, banner_above, struck_through
from ._evidence import Evidence, claim_verdict, suggested_sentence
from ._model import Anchor, ClaimInfo, DOC_SUFFIXES, FAILING, PERFORMANCE_FAMILIES, Problem, load_claim_index


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
            wanted = report.fixes.setdefault(str(path), [])
            for problem in _check_anchor(anchor, doc, index, evidence, reports_dir, siblings, strict, wanted):
                if allow_missing and problem.code == "missing-result":
                    problem = dataclasses.replace(problem, severity="warning")
                report.problems.append(problem)
        if changed_since:
            lines = changed.get(path.resolve(), set())
            report.problems.extend(_unanchored(doc, label, lines, set(by_sentence), strict))
    report.problems.sort(key=lambda p: (p.path, p.line, p.column))
    return report


def _check_anchor(anchor: Anchor, doc: MarkdownDoc, index: Mapping[str, ClaimInfo], evidence: Evidence,
                  reports_dir: str | Path | None, siblings: Sequence[Anchor], strict: bool = False,
                  fixes: list[Fix] | None = None) -> list[Problem]:
    where = (anchor.path, anchor.line, anchor.column)
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
    if computed:
        machine = f"{computed[0].machine_class} (computed; the same on every machine)"
        settled = _in_doc_correction(anchor, doc, claim, computed, machine, evidence, reports_dir, strict, fixes)
        if settled is not None:
            return settled
        return _check_computed(anchor, doc, claim, computed, evidence, reports_dir, siblings, index)
    gating = evidence.gating_class
    gating_text = gating or "no machine class (the store has no runs)"
    named = machines_named(doc.masked[anchor.sentence.start:anchor.sentence.end])
    foreign_names = [n for n in named if not (gating and class_matches(gating, n))]
    other_classes = [c for c in evidence.classes() if c != gating and any(class_matches(c, n) for n in foreign_names)]
    items = evidence.latest(claim.id, gating)
    verdict = claim_verdict(items)

    settled = _in_doc_correction(anchor, doc, claim, items, gating_text, evidence, reports_dir, strict, fixes)
    if settled is not None:
        return settled
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
    share = figures_by_anchor(doc, siblings or [anchor]).get(anchor.offset, [])
    families = families_of_claim(claim, items)
    for figure in share:
        if figure.family not in families:
            continue
        agreement = agrees(figure, items, claim) if items else None
        if agreement is True or _co_cited_agrees(figure, anchor, siblings, index, evidence):
            continue
        if foreign_names:
            # Quoted for a machine the sentence names: compare with that machine if it was measured,
            # otherwise accept it as a cited external figure.
            disagreeing: str | None = None
            for machine in other_classes:
                other_items = evidence.latest(claim.id, machine)
                other_agreement = agrees(figure, other_items, claim) if other_items else None
                if other_agreement is True:
                    disagreeing = None
                    break
                if other_agreement is False:
                    disagreeing = machine
            if disagreeing is not None:
                measured = measured_text(figure, evidence.latest(claim.id, disagreeing), claim, disagreeing)
                problems.append(Problem(anchor.path, figure.line, figure.column,
                                        f"\"{figure.text}\" disagrees with claim `{claim.id}`: {measured}",
                                        code="disagrees"))
            continue
        if agreement is False:
            measured = measured_text(figure, items, claim, gating_text)
            problems.append(Problem(anchor.path, figure.line, figure.column,
                                    f"\"{figure.text}\" disagrees with claim `{claim.id}`: {measured}; if the figure "
                                    "is from another machine, name it in the sentence", code="disagrees"))
    return problems + _not_shown_able_to_fail(anchor, claim, items, gating_text)


def _check_computed(anchor: Anchor, doc: MarkdownDoc, claim: ClaimInfo, items: Sequence[StoredResult],
                    evidence: Evidence, reports_dir: str | Path | None, siblings: Sequence[Anchor],
                    index: Mapping[str, ClaimInfo]) -> list[Problem]:
    """A claim computed exactly: its verdict and value hold on every machine, so the sentence's machine is moot."""
    where = (anchor.path, anchor.line, anchor.column)
    machine = f"{items[0].machine_class} (computed; the same on every machine)"
    verdict = claim_verdict(items)
    if verdict in FAILING:
        return [Problem(*where, _verdict_message(claim, verdict, items, machine, evidence, reports_dir), code="verdict")]
    problems = []
    families = families_of_claim(claim, items)
    for figure in figures_by_anchor(doc, siblings or [anchor]).get(anchor.offset, []):
        if figure.family not in families or agrees(figure, items, claim) is not False:
            continue
        if _printed_input(figure, items) or _co_cited_agrees(figure, anchor, siblings, index, evidence):
            continue
        problems.append(Problem(anchor.path, figure.line, figure.column,
                                f"\"{figure.text}\" disagrees with claim `{claim.id}`: "
                                f"{measured_text(figure, items, claim, machine)}", code="disagrees"))
    return problems + _not_shown_able_to_fail(anchor, claim, items, machine)


def _printed_input(figure: Figure, items: Sequence[StoredResult]) -> bool:
    """The figure is one of the printed inputs a computed claim was derived from (its probe parameters)."""
    low, high = figure.interval(tolerant=True)
    for item in items:
        for value in item.params.values():
            values = value if isinstance(value, (list, tuple)) else [value]
            if any(isinstance(v, (int, float)) and not isinstance(v, bool) and low <= v <= high for v in values):
                return True
    return False


def _co_cited_agrees(figure: Figure, anchor: Anchor, siblings: Sequence[Anchor], index: Mapping[str, ClaimInfo],
                     evidence: Evidence) -> bool:
    """Another claim of the same comment accounts for the figure (``<!-- claim: a, b -->`` with one figure each)."""
    for other in siblings:
        info = index.get(other.claim_id)
        if other.offset != anchor.offset or other.claim_id == anchor.claim_id or info is None:
            continue
        items = evidence.computed(info.id) or evidence.latest(info.id, evidence.gating_class)
        if items and figure.family in families_of_claim(info, items) and agrees(figure, items, info) is True:
            return True
    return False


def _not_shown_able_to_fail(anchor: Anchor, claim: ClaimInfo, items: Sequence[StoredResult],
                            machine: str) -> list[Problem]:
    """A warning when the claim holds but its positive control was not refuted: the hold says little."""
    weak = [i.result.control for i in items if i.verdict.value == "holds" and i.result.control is not None
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
    corrected = banner is not None or struck_through(doc, anchor.sentence)
    if verdict in ("refuted", "inconsistent"):
        if corrected:
            return []
        suggestion = suggested_sentence(reports_dir, claim.id, verdict)
        if suggestion and suggestion.startswith("> "):
            fixes.append(Fix(anchor.sentence.line, suggestion))
        how = " (`claimcheck docs --fix` inserts the suggested one)" if suggestion else ""
        message = (_verdict_message(claim, verdict, items, machine, evidence, reports_dir)
                   + f"; its sentence needs a dated correction banner above it, or a strike-through{how}")
        return [Problem(*where, message, code="uncorrected")]
    if banner is not None and verdict == "holds":
        return [Problem(*where, f"a correction banner ({banner[:60]}) stands above a sentence citing claim "
                                f"`{claim.id}`, which holds on {machine}; remove it, or anchor the claim it corrects",
                        code="needless-correction")]
    if verdict == "inconclusive":
        return [Problem(*where, _verdict_message(claim, verdict, items, machine, evidence, reports_dir)
                        + "; unconfirmed here, not overturned", severity="error" if strict else "warning",
                        code="inconclusive")]
    return None


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
