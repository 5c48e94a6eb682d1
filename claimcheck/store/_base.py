"""The store's constants, its one error type, JSON and number helpers, and the SQLite connection plumbing."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import json
import sqlite3
from pathlib import Path
from typing import Any

from claimcheck.errors import ClaimcheckError
from claimcheck.verdict import Verdict

DEFAULT_PATH = Path("reports") / "claimcheck.sqlite"
SCHEMA_VERSION = 4
APPLICATION_ID = 0x436C4368  # "ClCh": marks the file as a claimcheck store
BUSY_TIMEOUT_MS = 60_000

VERDICTS = tuple(verdict.value for verdict in Verdict)
RUN_STATUSES = ("running", "complete", "incomplete")


class StoreError(ClaimcheckError):
    """The evidence store cannot be used as asked; ``str()`` is one line."""


class NotAStore(StoreError):
    """The file is not a claimcheck store (not SQLite, another application's, an unknown layout); never touched."""

    def __init__(self, path: str, detail: str) -> None:
        self.path = path
        self.detail = " ".join(detail.split())
        super().__init__(f"the store {path} is not a claimcheck store ({self.detail}); it was not modified: "
                         "move it away or name another store")


class DuplicateResult(StoreError):
    """A second, different outcome for an item that already has one in this run."""


def _json_default(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, (Path, _dt.datetime, _dt.date)):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


def dumps(value: Any) -> str:
    """Canonical JSON (sorted keys, compact) so equal records hash equally."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_json_default)


def loads(text: str | None, empty: Any = None) -> Any:
    if text is None or text == "":
        return empty
    return json.loads(text)


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")


def timestamp(value: Any) -> str | None:
    """Store times as ISO-8601 text whether the outcome gave text or epoch seconds."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _dt.datetime.fromtimestamp(float(value), _dt.timezone.utc).isoformat(timespec="milliseconds")
    return str(value)


def to_float(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number


class Transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT``: takes the write lock up front so writers queue instead of deadlocking."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, kind: type | None, *exc: object) -> None:
        if kind is None:
            self.conn.execute("COMMIT")
        else:
            self.conn.execute("ROLLBACK")


def connect_readonly(path: Path) -> sqlite3.Connection:
    uri = Path(path).resolve().as_uri() + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot open evidence store ({exc})") from None
    return conn


def like_prefix(prefix: str) -> str:
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
