"""The docs gate names this machine's class without importing MLX: it only reads evidence."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from claimcheck.gate._evidence import this_machine_class
from claimcheck.machine import light_fingerprint, machine_class
from claimcheck.store import EvidenceStore

ROOT = Path(__file__).resolve().parents[2]
ELSEWHERE = {"backend": "metal", "device": "Apple M1 Max", "cpu": "Apple M1 Max", "memory_gib": 64.0}


def _store(path: Path, *runs: tuple[dict, str]) -> Path:
    """One finished run per (fingerprint, class), in the order given (the last is the newest)."""
    with EvidenceStore(path) as store:
        for machine, machine_class_name in runs:
            run_id = store.begin_run(machine=machine, machine_class=machine_class_name, options={}, suite_commit="s",
                                     claims_commit="c")
            store.finish_run(run_id)
    return path


@pytest.fixture(scope="module")
def mlx_class() -> str:
    """This machine's class from MLX's fingerprint, in a fresh interpreter (the class every run records)."""
    pytest.importorskip("mlx.core")
    code = "from claimcheck.machine import machine_class; print(machine_class())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_docs_gate_names_this_machines_class_with_mlx_unimportable(tmp_path: Path, mlx_class: str) -> None:
    """A stub `mlx` that refuses to import: the gate still chooses this machine's runs over the newest run."""
    mine = mlx_class
    store = _store(tmp_path / "ev.sqlite", (light_fingerprint(), mine), (ELSEWHERE, "metal/Apple M1 Max/64-128GiB"))
    stub = tmp_path / "stub" / "mlx"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text('raise ImportError("mlx must not be imported by the docs gate")\n')
    (stub / "core.py").write_text('raise ImportError("mlx.core must not be imported by the docs gate")\n')
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.md").write_text("# Notes\n\nNothing measured here.\n")
    (tmp_path / "claims").mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(stub.parent), str(ROOT)])}
    done = subprocess.run([sys.executable, "-m", "claimcheck.cli", "docs", "docs", "--store", str(store), "--claims",
                           "claims"], capture_output=True, text=True, timeout=900, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    first = done.stdout.splitlines()[0]
    assert f"gating on machine class {mine} (this machine's class)" in first, done.stdout


def test_the_facts_name_the_class_the_fingerprint_does_on_this_backend(mlx_class: str) -> None:
    facts = light_fingerprint()
    if facts["backend"] == "cuda":
        pytest.skip("a discrete GPU's name and memory come from MLX: the stored runs name the class there")
    assert machine_class(facts) == mlx_class


def test_a_stored_run_of_this_machine_names_a_class_the_facts_cannot(tmp_path: Path) -> None:
    """A GPU's name (a virtual Mac's, a CUDA card's) is in the stored fingerprint, not in the facts."""
    facts = light_fingerprint()
    gpu_class = f"{facts['backend']}/Some GPU only MLX names/64-128GiB"
    with EvidenceStore(_store(tmp_path / "a.sqlite", (facts, gpu_class), (ELSEWHERE, "metal/x/64-128GiB")),
                       readonly=True) as store:
        assert this_machine_class(store) == gpu_class
    both = _store(tmp_path / "b.sqlite", (facts, machine_class(facts)), (facts, gpu_class))
    with EvidenceStore(both, readonly=True) as store:
        assert this_machine_class(store) == machine_class(facts)  # a run of the facts' own class comes first
    with EvidenceStore(_store(tmp_path / "c.sqlite", (ELSEWHERE, "metal/x/64-128GiB")), readonly=True) as store:
        assert this_machine_class(store) == machine_class(facts)
    assert this_machine_class(None) == machine_class(facts)
