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
