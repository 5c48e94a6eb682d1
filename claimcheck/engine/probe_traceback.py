"""Where a probe failed: its own ``file:line`` and the last frames of the traceback.

An ``error`` verdict's reason is one line (``AttributeError: 'NoneType' object has no attribute
'shape'``), which says what but not where. The frames below claimcheck's own (the runner and
the sampler that called the probe) are kept with the result, in its ``info``, so the failure
text can point at the probe's line the way pytest points at a test's, and the store keeps it.
"""

from __future__ import annotations

import os
import sysconfig
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: ``info`` keys of an errored result.
RAISED_AT = "error_at"
FRAMES = "error_frames"

#: How many of the innermost frames are kept.
KEPT_FRAMES = 8

_PACKAGE = Path(__file__).resolve().parents[1]
_LIBRARIES = tuple(str(Path(p).resolve()) for p in {sysconfig.get_paths()[k] for k in ("stdlib", "purelib", "platlib")})


def _shown(filename: str) -> str:
    """A frame's file as the user would type it: relative to the working directory when inside it."""
    try:
        return os.path.relpath(filename) if Path(filename).resolve().is_relative_to(Path.cwd()) else filename
    except (OSError, ValueError):
        return filename


def _ours(filename: str) -> bool:
    try:
        return Path(filename).resolve().is_relative_to(_PACKAGE)
    except (OSError, ValueError):
        return False


def _library(filename: str) -> bool:
    try:
        resolved = str(Path(filename).resolve())
    except (OSError, ValueError):
        return False
    return resolved.startswith(_LIBRARIES) or filename.startswith("<")


def failure_info(error: BaseException) -> dict[str, Any]:
    """The ``info`` entries for a failed probe: where it raised, and the innermost frames (empty when unknown).

    The frames start below claimcheck's own caller frames; ``error_at`` is the innermost frame
    that is neither claimcheck's nor a library's (the probe's own line), else the innermost.
    """
    frames = traceback.extract_tb(error.__traceback__)
    first = next((i for i, frame in enumerate(frames) if not _ours(frame.filename)), len(frames))
    probe_frames = list(frames[first:])
    if not probe_frames:
        return {}
    own = [frame for frame in probe_frames if not _library(frame.filename)] or probe_frames
    raised = own[-1]
    return {
        RAISED_AT: f"{_shown(raised.filename)}:{raised.lineno} in {raised.name}",
        FRAMES: [f"{_shown(f.filename)}:{f.lineno} in {f.name}: {(f.line or '').strip()}"
                 for f in probe_frames[-KEPT_FRAMES:]],
    }


def failure_lines(info: Mapping[str, Any], style: str = "auto") -> list[str]:
    """The lines a failure text shows for these ``info`` entries under pytest's ``--tb`` style.

    ``no``: none; ``line``: where it raised; ``short``/``auto``: that and the last 3 frames;
    ``long``/``native``: every kept frame.
    """
    raised = info.get(RAISED_AT)
    if not raised or style == "no":
        return []
    lines = [f"  raised:   {raised}"]
    if style == "line":
        return lines
    frames: Sequence[Any] = info.get(FRAMES) or []
    shown = list(frames) if style in ("long", "native") else list(frames)[-3:]
    if shown:
        lines.append("  traceback (innermost last):")
        lines.extend(f"    {frame}" for frame in shown)
    return lines
