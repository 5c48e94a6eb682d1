"""Content-keyed cache for expensive probe results, and where every claimcheck cache lives.

A trace or a set of generated samples can take minutes on a CPU. Re-running a claim with the same
probe, params, model weights, library versions and machine class must reproduce the same numbers, so
the result is stored under a hash of exactly those facts and reused. Anything that could change the
result belongs in the key; the environment part (versions, machine class) is added automatically.

Files are JSON, one per key, written atomically (temporary file + rename) so that parallel workers
never read half a file. A corrupt or mismatching file counts as a miss and is overwritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Mapping, TypeVar

T = TypeVar("T")

CACHE_ENV = "CLAIMCHECK_CACHE"
FORMAT_VERSION = 1


def cache_root() -> Path:
    """The folder under which claimcheck keeps converted models and cached results.

    ``$CLAIMCHECK_CACHE`` wins; otherwise the platform's user cache folder (``$XDG_CACHE_HOME`` or
    ``~/.cache`` on Linux, ``~/Library/Caches`` on macOS) plus ``claimcheck``.
    """
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "claimcheck"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "claimcheck"


def results_dir(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where result files go: ``cache_dir`` when given (e.g. ``ProbeContext.cache_dir``), else ``<root>/results``."""
    return Path(cache_dir) if cache_dir is not None else cache_root() / "results"


def environment_key() -> dict[str, str]:
    """Versions and machine class that a cached result depends on besides its own key parts."""
    from importlib import metadata

    from claimcheck.machine import fingerprint, machine_class

    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "absent"

    return {
        "mlx": version("mlx"),
        "mlx_lm": version("mlx-lm"),
        "claimcheck": version("claimcheck"),
        "machine_class": machine_class(fingerprint()),
    }


def _canonical(key_parts: Mapping[str, Any]) -> str:
    try:
        return json.dumps(key_parts, sort_keys=True, separators=(",", ":"), allow_nan=True)
    except TypeError as error:
        raise TypeError(f"cache key parts must be JSON-serialisable: {error}") from None


def cache_key(key_parts: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of ``key_parts`` (key order does not matter)."""
    return hashlib.sha256(_canonical(key_parts).encode()).hexdigest()


def content_key(key_parts: Mapping[str, Any], environment: Mapping[str, Any] | None = None) -> str:
    """The full key :func:`cached` files a value under: ``key_parts`` plus the environment part, hashed.

    One key for everything whose result may be reused: a cached probe value, and a whole item
    result carried forward to a later run (``pytest --claims-changed``).

    Args:
        environment: as for :func:`cached`; default :func:`environment_key`.
    """
    env = dict(environment_key() if environment is None else environment)
    return cache_key({"parts": dict(key_parts), "environment": env})


def _file_for(label: str, full_key: Mapping[str, Any], directory: Path) -> Path:
    label = re.sub(r"[^A-Za-z0-9_.-]+", "_", label)[:60] or "result"
    return directory / f"{label}-{cache_key(full_key)[:32]}.json"


def _read(path: Path, full_key: Mapping[str, Any], not_before: float = 0.0) -> tuple[bool, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, ValueError):
        return False, None
    if not isinstance(record, dict) or record.get("format") != FORMAT_VERSION:
        return False, None
    # A different key under the same name means a (truncated-)hash collision: treat as a miss.
    if _canonical(record.get("key", {})) != _canonical(full_key):
        return False, None
    created = record.get("created")
    if not_before and not (isinstance(created, (int, float)) and created >= not_before):
        return False, None
    return True, record.get("value")


def write_json_atomic(path: Path, payload: Any) -> None:
    """Write JSON next to ``path`` then rename over it, so readers see the old or the new file, never half."""
    text = json.dumps(payload, allow_nan=True)  # fails before any file exists if not serialisable
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False
    )
    try:
        with handle:
            handle.write(text)
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise


def cached(
    key_parts: Mapping[str, Any],
    compute: Callable[[], T],
    *,
    fresh: bool | float = False,
    cache_dir: str | os.PathLike[str] | None = None,
    environment: Mapping[str, Any] | None = None,
) -> tuple[T, bool]:
    """Return ``compute()``'s value, reusing a stored one computed under the same key.

    Args:
        key_parts: everything the value depends on, e.g. ``{"probe": "curve", "params": {...},
            "weights_hash": ...}``. Must be JSON-serialisable.
        compute: produces the value; it must be JSON-serialisable (tuples come back as lists).
        fresh: ``True`` ignores any stored value (recompute and overwrite); a timestamp
            (``time.time()``) ignores only values stored before it, so a run that asked for fresh
            results computes a value shared by several claims once, not once per claim.
        cache_dir: folder for the result files (default ``<cache root>/results``).
        environment: the environment part of the key; default :func:`environment_key` (library
            versions and machine class). Pass ``{}`` for values that do not depend on them.

    Returns:
        ``(value, hit)`` where ``hit`` says the value came from the cache.
    """
    env = dict(environment_key() if environment is None else environment)
    full_key = {"parts": dict(key_parts), "environment": env}
    path = _file_for(str(key_parts.get("probe", "result")), full_key, results_dir(cache_dir))
    if fresh is not True:
        hit, value = _read(path, full_key, not_before=float(fresh or 0.0))
        if hit:
            return value, True
    started = time.perf_counter()
    value = compute()
    seconds = time.perf_counter() - started
    record = {"format": FORMAT_VERSION, "key": full_key, "value": value, "compute_seconds": seconds, "created": time.time()}
    try:
        write_json_atomic(path, record)
    except TypeError as error:
        raise TypeError(f"cached value for {key_parts.get('probe', 'result')!r} is not JSON-serialisable: {error}") from None
    return value, False


def lookup(
    key_parts: Mapping[str, Any],
    *,
    fresh: bool | float = False,
    cache_dir: str | os.PathLike[str] | None = None,
    environment: Mapping[str, Any] | None = None,
) -> tuple[bool, Any]:
    """The value :func:`cached` would reuse for ``key_parts``, without computing one: ``(hit, value)``.

    For callers that compute several missing values together (one batch for many keys) and so
    need to know which keys are stored before computing any. Arguments as for :func:`cached`.
    """
    if fresh is True:
        return False, None
    env = dict(environment_key() if environment is None else environment)
    full_key = {"parts": dict(key_parts), "environment": env}
    path = _file_for(str(key_parts.get("probe", "result")), full_key, results_dir(cache_dir))
    return _read(path, full_key, not_before=float(fresh or 0.0))
