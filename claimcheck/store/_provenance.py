"""Who wrote a run and from what: run ids, the writer process, and the suite and claims commits.

The writer's pid and its kernel start time tell a run whose process died from one still going.
The commits say which code and which claims produced the evidence. A copy of the tree without
``.git`` (a lent GPU machine gets the working tree only) names them through
:data:`SUITE_COMMIT_ENV` and :data:`CLAIMS_COMMIT_ENV`, which :func:`commit_environment` prints
from a checkout.
"""

from __future__ import annotations

import datetime as _dt
import os
import subprocess
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

#: Environment variables naming the commits where git cannot (a copy of the tree without ``.git``).
SUITE_COMMIT_ENV = "CLAIMCHECK_SUITE_COMMIT"
CLAIMS_COMMIT_ENV = "CLAIMCHECK_CLAIMS_COMMIT"
#: Appended to a commit measured with uncommitted changes.
DIRTY = "+dirty"


def new_run_id() -> str:
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{uuid.uuid4().hex[:8]}"


def process_start(pid: int) -> str | None:
    """Kernel start time of a process (Linux), to tell a reused pid from the writer."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def process_alive(pid: int | None, started: str | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    except OSError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        if state in ("Z", "X"):
            return False
    except (OSError, IndexError):
        pass
    if started is not None:
        now = process_start(pid)
        if now is not None and now != started:
            return False
    return True


@dataclass(frozen=True)
class Commit:
    """A commit as a run recorded it: the hash and whether the tree had uncommitted changes."""

    sha: str
    dirty: bool

    @classmethod
    def parse(cls, recorded: str | None) -> "Commit | None":
        """Read a stored commit (``<sha>`` or ``<sha>+dirty``); ``None`` when none was recorded."""
        if not recorded:
            return None
        dirty = recorded.endswith(DIRTY)
        return cls(recorded[: -len(DIRTY)] if dirty else recorded, dirty)

    def __str__(self) -> str:
        return self.sha + (DIRTY if self.dirty else "")

    def short(self) -> str:
        """``1a2b3c4d5e6f`` or ``1a2b3c4d5e6f (dirty)`` for reports."""
        return self.sha[:12] + (" (dirty)" if self.dirty else "")


@dataclass(frozen=True)
class Provenance:
    """The suite and claims commits a run was measured on, and where they were read from."""

    suite: Commit | None
    claims: Commit | None
    source: str  # "git" | "environment" | "unknown"


def _git(root: str | Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def provenance(root: str | Path = ".", environ: Mapping[str, str] | None = None) -> Provenance:
    """The commits of the checkout at ``root``: from the environment when set, else git, else unknown.

    The environment wins because it is set on purpose for a copy of a checkout (a GPU machine), and
    such a copy may carry a ``.git`` of another state. A dirty tree marks its commit dirty, so
    evidence never claims a clean commit it was not measured on. The claims commit is the last
    commit touching ``claims/``.
    """
    env = os.environ if environ is None else environ
    suite_env = Commit.parse(env.get(SUITE_COMMIT_ENV, "").strip() or None)
    claims_env = Commit.parse(env.get(CLAIMS_COMMIT_ENV, "").strip() or None)
    if suite_env or claims_env:
        return Provenance(suite_env, claims_env, "environment")
    suite_sha = _git(root, "rev-parse", "HEAD")
    if suite_sha:
        claims_sha = _git(root, "log", "-1", "--format=%H", "--", "claims")
        suite = Commit(suite_sha, bool(_git(root, "status", "--porcelain", "--untracked-files=no")))
        claims = Commit(claims_sha, bool(_git(root, "status", "--porcelain", "--", "claims"))) if claims_sha else None
        return Provenance(suite, claims, "git")
    return Provenance(None, None, "unknown")


def git_commits(root: str | Path = ".", environ: Mapping[str, str] | None = None) -> tuple[str | None, str | None]:
    """``(suite commit, claims commit)`` as stored: ``<sha>`` or ``<sha>+dirty``; ``None`` where unknown."""
    found = provenance(root, environ)
    return (str(found.suite) if found.suite else None), (str(found.claims) if found.claims else None)


def commit_environment(root: str | Path = ".") -> str:
    """``CLAIMCHECK_SUITE_COMMIT=… CLAIMCHECK_CLAIMS_COMMIT=…`` for a run on a copy of this checkout."""
    suite, claims = git_commits(root, environ={})
    return f"{SUITE_COMMIT_ENV}={suite or ''} {CLAIMS_COMMIT_ENV}={claims or ''}"
