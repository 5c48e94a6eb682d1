"""Fixtures for report tests: synthetic outcomes (from tests/store/synthetic.py) recorded into a fresh store."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, Callable

import pytest

from claimcheck.store import EvidenceStore

_spec = importlib.util.spec_from_file_location(
    "cc_synthetic", Path(__file__).resolve().parents[1] / "store" / "synthetic.py"
)
synth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(synth)


@pytest.fixture
def synthetic() -> Any:
    """The synthetic outcome module (``outcome``, ``claim_record``, machines and classes)."""
    return synth


@pytest.fixture
def recorded(tmp_path: Path) -> Callable[..., tuple[EvidenceStore, str]]:
    """Record outcomes as one finished run: ``recorded([outcome, ...], machine_class=...)`` -> (store, run id)."""
    store = EvidenceStore(tmp_path / "ev.sqlite")

    def record(outcomes: list[dict[str, Any]], *, machine_class: str = synth.CLASS_A,
               machine: dict[str, Any] | None = None) -> tuple[EvidenceStore, str]:
        run_id = store.begin_run(machine=machine or synth.MACHINE_A, machine_class=machine_class,
                                 options={"seed": 0}, suite_commit="1" * 40, claims_commit="2" * 40)
        for outcome in outcomes:
            store.record(run_id, outcome)
        store.finish_run(run_id)
        return store, run_id

    yield record
    store.close()
