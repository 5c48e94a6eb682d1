"""Every expectation in the committed lock names a run a reader can open: one recorded in a committed profile.

A lock section accepted from a run that was never published cannot be checked against its evidence; the
expected verdicts must trace to whole, finished, adjudicated runs of their own class in ``reports/profiles/``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from claimcheck.engine import expectations
from claimcheck.store import EvidenceStore

ROOT = Path(__file__).resolve().parents[2]

PROFILES = ROOT / "reports" / "profiles"


def _published() -> dict[str, tuple[str, Path]]:
    """run id -> (machine class, profile file) for every evidence run of the committed profiles."""
    found: dict[str, tuple[str, Path]] = {}
    for path in sorted(PROFILES.glob("*.sqlite")):
        with EvidenceStore.open_readonly(path) as store:
            for run in store.evidence_runs():
                found[run.run_id] = (run.machine_class, path)
    return found


def _named_runs(lock: expectations.Expectations) -> list[tuple[str, str, str | None]]:
    """(where in the lock, run id, the class the run must be of; None: any class) for every run it names."""
    named: list[tuple[str, str, str | None]] = []
    for machine_class, section in lock.classes.items():
        named.append((f"classes / {machine_class} / run", section.run_id, machine_class))
        named += [(f"classes / {machine_class} / runs / {item}", run, machine_class)
                  for item, run in section.provenance.items()]
    named += [(f"all-classes / {item} / run", entry.run_id, None)
              for item, entry in lock.every_class.items() if entry.run_id]
    return named


def test_every_run_the_committed_lock_names_is_a_published_run_of_its_class() -> None:
    if not PROFILES.is_dir():
        pytest.skip("no committed profiles in this checkout")
    published = _published()
    lock = expectations.read(ROOT / "claims" / "verdicts.lock")
    named = _named_runs(lock)
    assert len(named) > len(lock.classes), "the lock names no runs beyond its section headers"
    missing = [f"{where}: {run} is in no committed profile" for where, run, _ in named if run not in published]
    assert missing == []
    wrong = [f"{where}: {run} is a run of {published[run][0]}" for where, run, cls in named
             if cls is not None and published[run][0] != cls]
    assert wrong == []


def test_the_check_finds_a_section_accepted_from_an_unpublished_run() -> None:
    lock = expectations.Expectations(classes={"cpu/X/8-16GiB": expectations.ClassExpectations(
        "20990101T000000Z-00000000", {}, {"item-a": "20990101T000001Z-00000001"})})
    names = {run for _, run, _ in _named_runs(lock)}
    assert names == {"20990101T000000Z-00000000", "20990101T000001Z-00000001"}
    assert not names & set(_published())
