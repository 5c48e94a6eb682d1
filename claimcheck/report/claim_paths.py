"""Where a claim file sits: the path a report shows for it and the claims pack it belongs to.

Both read the innermost folder named :data:`CLAIMS_ROOT` above the file, so a run stored from a CI
clone or a snapshot shows and groups its files the way the reader's checkout does.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath
from typing import Iterable, Sequence

#: The folder name a claims root has by default (the plugin's ``claims_dirs``).
CLAIMS_ROOT = "claims"


def innermost_claims_folder(folders: Sequence[str]) -> int | None:
    """Index of the last :data:`CLAIMS_ROOT` among a path's folder names, or ``None``."""
    return max((i for i, name in enumerate(folders) if name == CLAIMS_ROOT), default=None)


def display_path(path: str) -> str:
    """A claim file path as a reader can find it: relative to the working directory, else from its ``claims/`` folder.

    A run made in another checkout (a CI clone, a snapshot) stores absolute paths that mean nothing
    where the report is read; the part from the claims folder on does.
    """
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        parts = Path(path).parts
        at = innermost_claims_folder(parts[:-1])
        return Path(*parts[at:]).as_posix() if at is not None else str(path)


def _safe(name: str) -> str:
    """A folder name fit for a file name (letters, digits, ``.``, ``_``, ``-``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or CLAIMS_ROOT


def pack_names(paths: Iterable[str]) -> dict[str, str]:
    """Claim file path -> its claims pack: the first folder under the claims root, or the root's own name.

    The claims root is the nearest folder named :data:`CLAIMS_ROOT` above each file; when some file
    has none (a project naming its claims folder otherwise), it is the folder all the files share.
    A file lying in the root itself (a flat ``claims/`` folder) belongs to the pack named after the root.
    """
    folders = {path: PurePosixPath(path.replace("\\", "/")).parent for path in paths}
    roots: dict[str, PurePosixPath | None] = {}
    for path, folder in folders.items():
        at = innermost_claims_folder(folder.parts)
        roots[path] = None if at is None else PurePosixPath(*folder.parts[:at + 1])
    if any(root is None for root in roots.values()):
        try:
            shared: PurePosixPath | None = PurePosixPath(os.path.commonpath([str(f) for f in folders.values()]))
        except ValueError:  # absolute and relative paths mixed: each file's own folder
            shared = None
        roots = {path: shared or folder for path, folder in folders.items()}
    out = {}
    for path, folder in folders.items():
        root = roots[path] or folder
        below = folder.relative_to(root).parts if folder.is_relative_to(root) else ()
        out[path] = _safe(below[0] if below else root.name)
    return out
