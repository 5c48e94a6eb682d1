"""``claimcheck docs``: the command line over :func:`check_docs`."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Sequence

from claimcheck.store import EvidenceStore

from claimcheck.project_config import ProjectConfigError

from ._annotations import FORMATS, emit
from ._config import read_config
from ._changes import GitError
from ._evidence import Evidence
from ._corrections import insert_banners
from ._gate import GateReport, check_docs


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="claimcheck docs",
        description="Check that doc sentences citing claims (<!-- claim: ID -->) agree with the latest evidence.",
    )
    parser.add_argument("paths", nargs="*", default=None,
                        help="Markdown files or folders (default: [tool.claimcheck.docs] paths, else docs)")
    parser.add_argument("--evidence", choices=EVIDENCE_KINDS, default=None,
                        help="what the figures are judged against: committed (the committed profiles in "
                             "reports/profiles, the default) or local (reports/claimcheck.sqlite, this machine's runs)")
    parser.add_argument("--store", default=None, help="judge against this evidence store instead (a local one)")
    parser.add_argument("--machine-class", default=None,
                        help="gating machine class (default: this machine's class when the evidence has a run "
                             "of it, else the class of its latest run); one the evidence lacks is exit 2")
    parser.add_argument("--changed-since", metavar="REF", default=None,
                        help="also report figures on lines changed since REF that cite no claim")
    parser.add_argument("--strict", action="store_true",
                        help="every figure not verified nor marked not-a-finding, anywhere, and every inconclusive "
                             "claim cited, is an error")
    parser.add_argument("--strict-changed", action="store_true",
                        help="needs --changed-since: figures new or changed since REF that are not verified nor "
                             "marked, and changed lines citing an undecided claim, are errors")
    parser.add_argument("--list-unverified", action="store_true",
                        help="print every figure neither verified nor marked not-a-finding, at file:line:col")
    parser.add_argument("--claims", action="append", default=None, metavar="PATH",
                        help="claim files or folders (repeatable; default: claims)")
    parser.add_argument("--reports", default="reports", metavar="DIR",
                        help="reports folder with corrections/<id>.json (default: reports)")
    parser.add_argument("--fix", action="store_true",
                        help="insert the suggested correction banner above each sentence citing a refuted claim")
    parser.add_argument("--vm-runner", action="store_true",
                        help="this runner is a virtual machine: a cited claim it has no result for (an as-stated "
                             "one) is reported as not measurable here, with its committed evidence, not as an error")
    parser.add_argument("--allow-missing", action="store_true",
                        help="a cited claim with no result yet is a warning (local hooks; never in CI)")
    parser.add_argument("--annotations", choices=FORMATS, default=None,
                        help="also print each finding as a CI annotation (github: ::error file=…,line=…::) and, "
                             "where $GITHUB_STEP_SUMMARY is set, add a table of them to the job summary")
    return parser


PROFILES = Path("reports") / "profiles"
EVIDENCE_KINDS = ("committed", "local")
#: Findings that mean the gate could not judge what it was asked to: exit 2, not 1.
CANNOT_RUN = frozenset({"no-path", "doc-file"})


class EvidenceError(RuntimeError):
    """The evidence asked for is not there (no local store, no committed profiles)."""


def _open_store(kind: str, path: str | None, scratch: Path) -> tuple[EvidenceStore | None, str]:
    """The store, read-only, and what it is.

    ``committed``: the committed profiles (``reports/profiles/*.sqlite``) merged into a scratch
    copy under ``scratch`` (they are never written), whatever this machine has run locally, so a
    local ``pytest -k`` never changes what the gate judges. ``local``: ``path``, else
    ``reports/claimcheck.sqlite``, which must exist.
    """
    from claimcheck.store import DEFAULT_PATH, EvidenceStore, merge

    if kind == "local":
        location = Path(path) if path else DEFAULT_PATH
        if not location.exists():
            raise EvidenceError(f"--evidence local: {location}: no evidence store there")
        return EvidenceStore(location, readonly=True), f"local ({location})"
    profiles = sorted(PROFILES.glob("*.sqlite"))
    if not profiles:
        return None, f"committed (no profiles in {PROFILES})"
    copy = scratch / "profiles.sqlite"
    merge(copy, profiles)
    return EvidenceStore(copy, readonly=True), f"committed ({', '.join(str(p) for p in profiles)})"


def _headline(label: str, evidence: Evidence) -> str:
    """The first output line: what is judged against what, and which runs."""
    runs = evidence.store.runs(evidence.gating_class) if evidence.store is not None and evidence.gating_class else []
    run_ids = ", ".join(run.run_id for run in runs[:5]) + (", ..." if len(runs) > 5 else "")
    return (f"claimcheck docs: evidence {label}; gating on {evidence.choice.describe()}; "
            f"runs {run_ids or 'none'}")


def main(argv: Sequence[str] | None = None) -> int:
    """``claimcheck docs``: exit 0 when the docs agree with the evidence, 1 when not, 2 when it cannot tell."""
    args = _parser().parse_args(argv)
    if args.strict_changed and not args.changed_since:
        print("claimcheck docs: --strict-changed needs --changed-since REF (the base the changes are read from)",
              file=sys.stderr)
        return 2
    try:
        args.config = read_config(".")
    except ProjectConfigError as error:
        print(f"claimcheck docs: {error}", file=sys.stderr)
        return 2
    args.paths = args.paths or list(args.config.paths)
    with tempfile.TemporaryDirectory(prefix="claimcheck-docs-") as scratch:
        return _gate(args, Path(scratch))


def _gate(args: argparse.Namespace, scratch: Path) -> int:
    kind = args.evidence or ("local" if args.store else "committed")
    if args.store and kind == "committed":
        print("claimcheck docs: --store names a local store; it cannot go with --evidence committed", file=sys.stderr)
        return 2
    try:
        store, label = _open_store(kind, args.store, scratch)
    except Exception as error:  # EvidenceError, StoreError: one line
        print(f"claimcheck docs: {error}", file=sys.stderr)
        return 2
    opened: list[EvidenceStore | None] = []
    try:
        evidence = Evidence(store, args.machine_class, label=label)
        known = evidence.classes()
        if args.machine_class and args.machine_class not in known:
            print(f"claimcheck docs: --machine-class {args.machine_class!r}: no run of it in the {kind} evidence "
                  f"(classes: {', '.join(known) or 'none'})", file=sys.stderr)
            return 2
        print(_headline(label, evidence))
        if args.vm_runner and kind == "local":
            committed_store, committed_label = _open_store("committed", None, scratch)
            opened.append(committed_store)
            evidence.committed = Evidence(committed_store, evidence.gating_class, label=committed_label)
        report = _check(args, evidence)
        if args.fix and any(report.fixes.values()):
            for path, fixes in report.fixes.items():
                if fixes:
                    inserted = insert_banners(Path(path), fixes)
                    print(f"claimcheck docs: {path}: inserted {inserted} correction banner(s)", file=sys.stderr)
            report = _check(args, evidence)  # the docs as they are now
    except GitError as error:
        print(f"claimcheck docs: {error}", file=sys.stderr)
        return 2
    finally:
        for each in (store, *opened):
            if each is not None:
                each.close()
    for problem in report.problems:
        if not (args.list_unverified and problem.code == "unverified"):
            print(problem)
    if args.list_unverified:
        for problem in report.coverage.unverified_list:
            print(f"{problem.path}:{problem.line}:{problem.column}: unverified: {problem.message}")
    errors, warnings = len(report.errors), len(report.warnings)
    headline = (f"{report.anchors} claim anchor(s) in {report.docs} doc(s) on "
                f"{report.gating_class or 'no machine class'}: {errors} error(s), {warnings} warning(s)")
    coverage = report.coverage.line()
    print(coverage)
    if args.annotations:
        for line in emit(report.problems, f"{headline}\n\n{coverage}", args.annotations):
            print(line)
    print(f"claimcheck docs: {headline}", file=sys.stderr)
    if any(p.code in CANNOT_RUN for p in report.problems):
        return 2
    return 1 if errors else 0


def _check(args: argparse.Namespace, evidence: Evidence) -> GateReport:
    return check_docs(args.paths, evidence, claim_paths=args.claims or ["claims"], machine_class=args.machine_class,
                      changed_since=args.changed_since, strict=args.strict, reports_dir=args.reports,
                      allow_missing=args.allow_missing, strict_changed=args.strict_changed, strict_paths=args.config)
