"""Changed lines since a git ref, for gating only what a pull request touched."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Sequence


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


def _base(root: Path, ref: str) -> str:
    """The merge base of ``ref`` and HEAD (``ref`` itself when they share no history)."""
    try:
        return _git(root, "merge-base", ref, "HEAD").strip()
    except GitError:
        return ref


def base_texts(paths: Sequence[Path], ref: str) -> dict[Path, str | None]:
    """Each doc as it was at the merge base of ``ref`` and HEAD; ``None`` where it did not exist there."""
    out: dict[Path, str | None] = {}
    for path in paths:
        root = Path(_git(path.parent if path.parent != Path("") else Path("."), "rev-parse", "--show-toplevel").strip())
        relative = path.resolve().relative_to(root).as_posix()
        try:
            out[path.resolve()] = _git(root, "show", f"{_base(root, ref)}:{relative}")
        except GitError:
            out[path.resolve()] = None
    return out


def new_figures(figures: Sequence[tuple[int, int, str]], old: Sequence[str] | None,
                changed: set[int] | None) -> set[int] | None:
    """Starts of the figures new or changed since the base: the ratchet compares figures, not lines.

    ``figures`` are ``(start, line, text)`` of the doc now, ``old`` the figure texts at the base
    (``None``: the doc is new). A figure on an unchanged line is old; one on a changed line is
    old when the base had that figure more times than the unchanged lines still hold it (a
    reworded sentence keeps its figures), else new.
    """
    if old is None or changed is None:
        return None
    from collections import Counter

    available = Counter(old)
    available.subtract(text for _, line, text in figures if line not in changed)
    new: set[int] = set()
    for start, line, text in figures:
        if line not in changed:
            continue
        if available[text] > 0:
            available[text] -= 1
        else:
            new.add(start)
    return new
