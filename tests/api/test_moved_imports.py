"""Imports of 0.1.0 keep working after the move, with a DeprecationWarning that names the new home."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from claimcheck import _moved

OLD_PROBE = '''
from claimcheck.probe import Output, ProbeContext, probe


@probe("old_style_probe_0_1_0", outputs={"ms": Output("ms", higher_is_better=False)})
def old_style(ctx: ProbeContext, *, size: int = 4) -> dict[str, list[float]]:
    return {"ms": [float(size)] * ctx.n}
'''


def _forget(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    for name in names:
        monkeypatch.delitem(sys.modules, name, raising=False)


def test_a_probe_written_against_0_1_0_imports_with_a_warning_and_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "old_style_probe.py").write_text(OLD_PROBE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    _forget(monkeypatch, "claimcheck.probe", "old_style_probe")
    with pytest.warns(DeprecationWarning, match=r"`claimcheck.probe` moved to `claimcheck.probing.registry`.*claimcheck.api"):
        module = importlib.import_module("old_style_probe")
    from claimcheck.api import ProbeContext, probe
    from claimcheck.probing.registry import get_probe

    assert sys.modules["claimcheck.probe"].probe is probe  # the same module: one registry, one ProbeContext
    assert get_probe("old_style_probe_0_1_0").function is module.old_style
    assert module.old_style(ProbeContext(n=3), size=2) == {"ms": [2.0, 2.0, 2.0]}


@pytest.mark.parametrize("old", sorted(_moved.MOVED))
def test_every_moved_name_is_the_module_at_its_new_name(old: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _forget(monkeypatch, old)
    with pytest.warns(DeprecationWarning, match=f"`{old}` moved"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(_moved.MOVED[old])


def test_an_old_package_s_submodule_is_the_new_module_not_a_second_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    _forget(monkeypatch, "claimcheck.sampling", "claimcheck.sampling.runs")
    with pytest.warns(DeprecationWarning, match=r"`claimcheck\.sampling(\.runs)?` moved"):
        old = importlib.import_module("claimcheck.sampling.runs")
    assert old is importlib.import_module("claimcheck.probing.sampling.runs")


def test_current_names_give_no_warning() -> None:
    assert _moved.new_name("claimcheck.probing.registry") is None
    assert _moved.new_name("claimcheck.api") is None


def test_the_old_docs_gate_module_still_runs_with_python_m(tmp_path: Path) -> None:
    import os
    import subprocess

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-W", "always::DeprecationWarning", "-m", "claimcheck.docs_gate", "--help"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(root)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: claimcheck docs")
    assert "`claimcheck.docs_gate` moved to `claimcheck.gate`" in done.stderr
