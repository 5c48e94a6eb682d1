"""``claimcheck docs``: the command line over :func:`check_docs`."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Sequence

from claimcheck.store import EvidenceStore

from ._annotations import FORMATS, emit
from ._changes import GitError
from ._evidence import Evidence
from ._corrections import insert_banners
from ._gate import GateReport, check_docs


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="claimcheck docs",
        description="Check that doc sentences citing claims (<!-- claim: ID -->) agree with the latest evidence.",
    )
    parser.add_argument("paths", nargs="*", default=["docs"], help="Markdown files or folders (default: docs)")
    parser.add_argument("--store", default=None, help="evidence store (default: reports/claimcheck.sqlite)")
    parser.add_argument("--machine-class", default=None,
                        help="gating machine class (default: this machine's class when the store has a run "
                             "of it, else the class of the store's latest run)")
    parser.add_argument("--changed-since", metavar="REF", default=None,
                        help="also report figures on lines changed since REF that cite no claim")
    parser.add_argument("--strict", action="store_true",
                        help="unanchored figures and inconclusive claims are errors, not warnings")
    parser.add_argument("--claims", action="append", default=None, metavar="PATH",
                        help="claim files or folders (repeatable; default: claims)")
    parser.add_argument("--reports", default="reports", metavar="DIR",
                        help="reports folder with corrections/<id>.json (default: reports)")
    parser.add_argument("--fix", action="store_true",
                        help="insert the suggested correction banner above each sentence citing a refuted claim")
    parser.add_argument("--allow-missing", action="store_true",
                        help="a cited claim with no result yet is a warning (local hooks; never in CI)")
    parser.add_argument("--annotations", choices=FORMATS, default=None,
                        help="also print each finding as a CI annotation (github: ::error file=…,line=…::) and, "
                             "where $GITHUB_STEP_SUMMARY is set, add a table of them to the job summary")
    return parser


PROFILES = Path("reports") / "profiles"


def _open_store(path: str | None, scratch: Path) -> tuple[EvidenceStore | None, str]:
    """The store, read-only, and what it is.

    A named store must exist. Without one, the local store is used; a fresh clone has none
    yet, so the committed profiles (``reports/profiles/*.sqlite``) are merged into a scratch
    copy under ``scratch`` (they are never written) and the gate reads that.
    """
    from claimcheck.store import DEFAULT_PATH, EvidenceStore, merge

    location = Path(path) if path else DEFAULT_PATH
    if location.exists():
        return EvidenceStore(location, readonly=True), str(location)
    if path:
        raise FileNotFoundError(f"{location}: no evidence store there")
    profiles = sorted(PROFILES.glob("*.sqlite"))
    if not profiles:
        return None, str(location)
    copy = scratch / "profiles.sqlite"
    merge(copy, profiles)
    return EvidenceStore(copy, readonly=True), f"the committed profiles in {PROFILES} ({location} does not exist yet)"


def main(argv: Sequence[str] | None = None) -> int:
    """``claimcheck docs``: exit 0 when the docs agree with the evidence, 1 when not, 2 when it cannot tell."""
    args = _parser().parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="claimcheck-docs-") as scratch:
        return _gate(args, Path(scratch))


def _gate(args: argparse.Namespace, scratch: Path) -> int:
    try:
        store, label = _open_store(args.store, scratch)
    except Exception as error:  # StoreError or a missing file given explicitly: one line
        print(f"claimcheck docs: {error}", file=sys.stderr)
        return 2
    evidence = Evidence(store, args.machine_class, label=label)
    print(f"claimcheck docs: evidence from {label}; gating on {evidence.choice.describe()}", file=sys.stderr)
    try:
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
        if store is not None:
            store.close()
    for problem in report.problems:
        print(problem)
    errors, warnings = len(report.errors), len(report.warnings)
    headline = (f"{report.anchors} claim anchor(s) in {report.docs} doc(s) on "
                f"{report.gating_class or 'no machine class'}: {errors} error(s), {warnings} warning(s)")
    if args.annotations:
        for line in emit(report.problems, headline, args.annotations):
            print(line)
    print(f"claimcheck docs: {headline}", file=sys.stderr)
    return 1 if errors else 0


def _check(args: argparse.Namespace, evidence: Evidence) -> GateReport:
    return check_docs(args.paths, evidence, claim_paths=args.claims or ["claims"], machine_class=args.machine_class,
                      changed_since=args.changed_since, strict=args.strict, reports_dir=args.reports,
                      allow_missing=args.allow_missing)
