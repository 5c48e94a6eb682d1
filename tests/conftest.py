"""Shared test configuration: demo claims and probes are data for pytester runs, not tests."""

from __future__ import annotations

from pathlib import Path

import pytest

collect_ignore = ["demo"]

DEMO = Path(__file__).parent / "demo"


@pytest.fixture(scope="session")
def mlx_imported() -> None:
    """Import MLX, numpy and scipy once in the outer session, before any pytester snapshot.

    pytester drops modules first imported while it is active, and a native
    extension cannot be imported a second time in one process.
    """
    import claimcheck.stats  # noqa: F401 - numpy and scipy are native extensions too
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


TABLE = "claimcheck-table"


@pytest.fixture
def report_table(record_property):
    """Show a table of measured figures (error rates, counts) in the terminal summary.

    Tables travel on the test report, so they are printed even under xdist,
    where a test's own ``print`` output is not shown.
    """

    def show(title: str, text: str) -> None:
        print(f"{title}\n{text}")
        record_property(TABLE, f"{title}\n{text}")

    return show


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    tables = [value for reports in terminalreporter.stats.values() for report in reports
              if getattr(report, "when", None) == "call"
              for name, value in getattr(report, "user_properties", ()) if name == TABLE]
    if tables:
        terminalreporter.section("measured figures", sep="-")
        for table in tables:
            terminalreporter.write_line(table)
            terminalreporter.write_line("")


@pytest.fixture(autouse=True)
def _this_repository_probes_stay_loaded():
    """A test that loads another project's ``probes`` package (``--root tmp``) puts this repository's back after.

    Loading a project's probes replaces the ``probes`` modules and their registrations; without this, which
    later test on the same xdist worker finds ``probes.curves.temperature_search`` gone depended on the order.
    """
    import sys

    from claimcheck.probing import registry

    def ours() -> dict[str, object]:
        return {k: v for k, v in sys.modules.items() if k == "probes" or k.startswith("probes.")}

    modules = ours()
    tables = (registry._REGISTRY, registry._QUALIFIED, registry._SHADOWED)
    saved = [dict(table) for table in tables]
    yield
    if ours() != modules:
        for key in ours():
            sys.modules.pop(key, None)
        sys.modules.update(modules)  # type: ignore[arg-type]
        for table, before in zip(tables, saved):
            table.clear()
            table.update(before)  # type: ignore[attr-defined]
