"""What the benchmarks share: the repository on ``sys.path``, the model/prompt options, a recorded run by name."""

from __future__ import annotations

import argparse
import contextlib
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def curve_parser(doc: str | None) -> argparse.ArgumentParser:
    """An argument parser with ``--model``, ``--variant`` and ``--prompt`` (the embedded SmolLM2's defaults)."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0] if doc else None)
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--variant", default="fp32")
    parser.add_argument("--prompt", default="lighthouse", help="prompt id from probes/data/curve-prompts.yaml")
    return parser


@contextlib.contextmanager
def recorded_run(spec: str) -> Iterator[tuple[sqlite3.Connection, str, str]]:
    """``STORE:RUN`` (an evidence store or a committed profile, a run id or its unique prefix; an empty RUN:
    the store's latest run) -> a read-only connection, the run id and its machine class."""
    store, _, prefix = spec.rpartition(":")
    connection = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        found = connection.execute("SELECT run_id, machine_class FROM runs WHERE run_id LIKE ? ORDER BY started DESC",
                                   (prefix + "%",)).fetchall()
        if not found or (prefix and len(found) != 1):
            raise SystemExit(f"{spec}: {len(found)} runs match {prefix!r}; name one")
        yield connection, found[0][0], found[0][1]
    finally:
        connection.close()
