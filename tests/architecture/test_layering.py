"""Layering is enforced, not hoped for: import contracts, no cycles, types, and collection without MLX."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=600, **kwargs)  # type: ignore[call-overload]


def test_import_contracts_hold() -> None:
    """The contracts in pyproject.toml ([tool.importlinter]): loader/schema/stats never import MLX or probes, ..."""
    run = _run([sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()",
                "--no-cache"])
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "BROKEN" not in run.stdout and "kept, 0 broken" in run.stdout


def test_no_import_cycle_between_any_two_claimcheck_modules() -> None:
    """Stricter than the sibling contract: no module-level cycle anywhere in the package."""
    import grimp

    graph = grimp.build_graph("claimcheck", exclude_type_checking_imports=True)
    cycles = []
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            if module != imported and graph.chain_exists(imported=module, importer=imported):
                cycles.append(f"{module} <-> {imported}")
    assert not cycles, cycles[:10]


def test_mypy_is_clean() -> None:
    """The package and the probes type-check under the configuration in pyproject.toml."""
    run = _run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", os.devnull])
    assert run.returncode == 0, run.stdout[-6000:]


def test_collecting_the_claims_never_imports_mlx(tmp_path: Path) -> None:
    """`pytest claims/ --co` with a stub `mlx` that refuses to import: every item is still collected."""
    stub = tmp_path / "stub" / "mlx"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text('raise ImportError("mlx must not be imported while collecting claims")\n')
    (stub / "core.py").write_text('raise ImportError("mlx.core must not be imported while collecting claims")\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(stub.parent), os.environ.get("PYTHONPATH", "")])}
    run = _run([sys.executable, "-m", "pytest", "claims/", "--co", "-q", "-p", "no:cacheprovider"], env=env)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    collected = [line for line in run.stdout.splitlines() if line.startswith("claims/")]
    assert len(collected) >= 130, run.stdout[-2000:]
    assert "error" not in run.stdout.lower().split("collected")[-1] or "0 errors" in run.stdout


@pytest.mark.parametrize("module", ["claimcheck.claims.loader", "claimcheck.claims.schema", "claimcheck.rules",
                                    "claimcheck.stats", "claimcheck.engine.adjudicate", "claimcheck.store"])
def test_light_modules_import_without_mlx(module: str, tmp_path: Path) -> None:
    """The layers that must not need MLX import with MLX made unimportable."""
    code = ("import sys; sys.modules['mlx'] = None; sys.modules['mlx.core'] = None; "
            f"import {module}")
    run = _run([sys.executable, "-c", code])
    assert run.returncode == 0, run.stderr[-2000:]
