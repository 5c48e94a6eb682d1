"""The committed tree as a fresh clone has it (no local store), unpacked from ``git archive HEAD``."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PARTS = ("docs/findings", "claims", "reports/profiles", "reports/corrections", "reports/inconclusive")


def unpack_committed(folder: Path, parts: tuple[str, ...] = PARTS) -> Path:
    """The committed findings, claims and profiles under ``folder``; the tracked files are never touched."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", "HEAD", *parts],
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder
