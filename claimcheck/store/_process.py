"""Who wrote a run: run ids, the writer process (to tell a dead run from a live one), the git commits."""

from __future__ import annotations

import datetime as _dt
import os
import subprocess
import uuid
from pathlib import Path

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


def git_commits(root: str | Path = ".") -> tuple[str | None, str | None]:
    """``(suite commit, last commit touching claims/)`` of the checkout at ``root``.

    A dirty tree gets ``+dirty`` appended so evidence never claims a clean
    commit it was not measured on. ``None`` where git or a commit is missing.
    """

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    suite = git("rev-parse", "HEAD")
    claims = git("log", "-1", "--format=%H", "--", "claims")
    if suite and git("status", "--porcelain", "--untracked-files=no"):
        suite += "+dirty"
    if claims and git("status", "--porcelain", "--", "claims"):
        claims += "+dirty"
    return suite or None, claims or None
