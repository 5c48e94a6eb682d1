"""``python -m claimcheck.workflow.docs_changed --base REF``: the docs gate on what a pull request touched.

A pull request can break a doc without editing it: a claim's file changes, its expected
verdict is re-accepted, or the run refutes it. So the docs gated are the docs changed since
the merge base of ``REF`` and ``HEAD`` (working tree and untracked files included), plus every
doc citing a claim whose file changed, whose entry in the lock changed, or whose verdict in
this run differs from the lock. They go through ``claimcheck docs`` with GitHub annotations
(``--changed-since REF``, so unanchored figures on changed lines are reported too); without
``--base`` every doc is gated. The exit status is the gate's: 0, 1 on errors, 2 when it cannot run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import yaml

from claimcheck import gate as docs_gate
from claimcheck.engine import expectations
from claimcheck.gate import doc_files, find_anchors, load_claim_index
from claimcheck.figures import read_markdown
from claimcheck.store import DEFAULT_PATH, EvidenceStore, choose_class

from .github import write_summary
from .summary import CHANGES


class GitError(RuntimeError):
    """git could not answer; ``str()`` is one line."""


def _git(*args: str) -> str:
    result = subprocess.run(["git", *args], capture_output=True, text=True)
    if result.returncode != 0:
        message = (result.stderr.strip().splitlines() or ["failed"])[-1]
        raise GitError(f"git {' '.join(args[:2])}: {message}")
    return result.stdout


def changed_files(base: str) -> tuple[str, set[str]]:
    """The merge base of ``base`` and HEAD, and the repository paths changed since it (untracked included)."""
    try:
        merge_base = _git("merge-base", base, "HEAD").strip()
    except GitError:
        raise GitError(f"--base: {base!r} has no merge base with HEAD (fetch it: actions/checkout with "
                       "fetch-depth: 0)") from None
    changed = set(_git("diff", "--name-only", "--no-renames", merge_base).splitlines())
    changed |= set(_git("ls-files", "--others", "--exclude-standard").splitlines())
    return merge_base, changed


def claim_of(item_id: str) -> str:
    """``"qmv-large-bw[size_mib=256]"`` -> ``"qmv-large-bw"``."""
    return item_id.split("[", 1)[0]


def lock_changes(lock: Path, merge_base: str) -> set[str]:
    """Claims whose expected verdict on some machine class differs from the lock at the merge base."""
    now = expectations.read(lock)
    try:
        text = _git("show", f"{merge_base}:{lock.as_posix()}")
        before_data = yaml.safe_load(text) or {}
    except (GitError, yaml.YAMLError):
        before_data = {}
    before: dict[tuple[str, str], str] = {}
    for machine_class, section in (before_data.get("classes") or {}).items() if isinstance(before_data, dict) else ():
        for item_id, verdict in ((section or {}).get("items") or {}).items():
            before[(str(machine_class), str(item_id))] = str(verdict)
    every = before_data.get(expectations.EVERY_CLASS) if isinstance(before_data, dict) else None
    for item_id, entry in ((every or {}).get("items") or {}).items() if isinstance(every, dict) else ():
        before[(expectations.EVERY_CLASS, str(item_id))] = str((entry or {}).get("verdict"))
    after = {(machine_class, item_id): verdict.value for machine_class, section in now.classes.items()
             for item_id, verdict in section.items.items()}
    after.update({(expectations.EVERY_CLASS, item_id): entry.verdict.value  # arithmetic: every class's
                  for item_id, entry in now.every_class.items()})
    return {claim_of(key[1]) for key in set(before) | set(after) if before.get(key) != after.get(key)}


def run_changes(store_path: Path, lock: Path, machine_class: str | None) -> set[str]:
    """Claims whose verdict in the latest run of the class differs from the lock (nothing without a store)."""
    if not store_path.exists():
        return set()
    expected = expectations.read(lock)
    with EvidenceStore(store_path, readonly=True) as store:
        choice = choose_class(store, machine_class)
        if choice.machine_class is None:
            return set()
        run = store.latest_evidence(choice.machine_class)
        outcome = store.outcome(run.run_id) if run else None
    if outcome is None:
        return set()
    # explicitly against today's lock: a claim whose expectation moved since the run is affected too
    return {found.claim_id for found in outcome.rejudged(expected, lock).findings if found.agreement in CHANGES}


def cited_claims(path: Path) -> set[str]:
    """The claim ids a doc's anchors cite."""
    try:
        anchors, _ = find_anchors(read_markdown(path.read_text(encoding="utf-8")), str(path))
    except (OSError, UnicodeDecodeError):
        return set()
    return {anchor.claim_id for anchor in anchors}


@dataclass
class Selection:
    """The docs to gate and why each one."""

    docs: list[Path] = field(default_factory=list)
    why: dict[str, str] = field(default_factory=dict)

    def add(self, path: Path, reason: str) -> None:
        if str(path) not in self.why:
            self.docs.append(path)
            self.why[str(path)] = reason


def select(docs: Iterable[Path], changed: set[str], affected: set[str]) -> Selection:
    """Changed docs, then docs citing an affected claim."""
    chosen = Selection()
    every = list(docs)
    for path in every:
        if path.as_posix() in changed:
            chosen.add(path, "changed")
    for path in every:
        hit = sorted(cited_claims(path) & affected)
        if hit:
            chosen.add(path, "cites " + ", ".join(f"`{c}`" for c in hit[:5]) + (" ..." if len(hit) > 5 else ""))
    return chosen


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m claimcheck.workflow.docs_changed",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--base", default=None, help="the pull request's base (e.g. origin/main); omitted: every doc")
    parser.add_argument("--docs", action="append", default=None, help="docs folders (repeatable; default: docs)")
    parser.add_argument("--claims", action="append", default=None, help="claims folders (repeatable; default: claims)")
    parser.add_argument("--lock", default=str(Path("claims") / expectations.LOCK_NAME))
    parser.add_argument("--store", default=str(DEFAULT_PATH))
    parser.add_argument("--machine-class", default=None)
    parser.add_argument("--strict", action="store_true", help="passed to the gate")
    parser.add_argument("--vm-runner", action="store_true",
                        help="passed to the gate: claims this VM cannot measure are cited with their committed evidence")
    return parser


def _affected(args: argparse.Namespace, claims: list[str], changed: set[str], merge_base: str) -> set[str]:
    changed_claim_files = [p for p in changed if Path(p).suffix in (".yaml", ".yml") and Path(p).exists()
                           and any(Path(p).is_relative_to(Path(c)) for c in claims)]
    index, _ = load_claim_index(changed_claim_files) if changed_claim_files else ({}, [])
    return set(index) | lock_changes(Path(args.lock), merge_base) | run_changes(Path(args.store), Path(args.lock),
                                                                                args.machine_class)


def main(argv: Sequence[str] | None = None) -> int:
    """Select the docs, then run the gate on them; the gate's exit status."""
    args = _parser().parse_args(argv)
    roots, claims = args.docs or ["docs"], args.claims or ["claims"]
    docs = doc_files(roots)
    try:
        if args.base:
            merge_base, changed = changed_files(args.base)
            selection = select(docs, changed, _affected(args, claims, changed, merge_base))
        else:
            selection = Selection()
            for path in docs:
                selection.add(path, "no base ref: every doc")
    except (GitError, expectations.LockError) as error:
        print(f"claimcheck docs_changed: {error}", file=sys.stderr)
        return 2
    if not selection.docs:
        write_summary(f"### Docs gate\n\nNo doc under {', '.join(roots)} changed or cites a changed claim "
                      f"since `{args.base}`.\n")
        print("claimcheck docs_changed: no doc to gate", file=sys.stderr)
        return 0
    write_summary("### Docs gated\n\n" + "".join(f"- `{p}`: {selection.why[str(p)]}\n" for p in selection.docs))
    gate = [*map(str, selection.docs), "--annotations", "github"]
    if Path(args.store).exists():  # else the gate reads the committed profiles
        gate += ["--store", args.store]
    gate += [arg for claim in claims for arg in ("--claims", claim)]
    if args.base:
        gate += ["--changed-since", args.base]
    if args.machine_class:
        gate += ["--machine-class", args.machine_class]
    if args.strict:
        gate.append("--strict")
    if args.vm_runner:
        gate.append("--vm-runner")
    return docs_gate.main(gate)


if __name__ == "__main__":
    raise SystemExit(main())
