"""Shared test configuration: demo claims and probes are data for pytester runs, not tests."""

from __future__ import annotations

from pathlib import Path

import pytest

collect_ignore = ["demo"]

DEMO = Path(__file__).parent / "demo"


@pytest.fixture(scope="session")
def mlx_imported() -> None:
    """Import MLX once in the outer session, before any pytester snapshot.

    pytester drops modules first imported while it is active, and a native
    extension cannot be imported a second time in one process.
    """
    from claimcheck.machine import fingerprint

    fingerprint()


@pytest.fixture
def demo_project(mlx_imported: None, pytester: pytest.Pytester) -> pytest.Pytester:
    """A throwaway project with the demo probes and an empty claims folder."""
    import shutil

    shutil.copytree(DEMO / "probes", pytester.path / "probes")
    (pytester.path / "claims").mkdir()
    pytester.makeini("[pytest]\n")
    return pytester
