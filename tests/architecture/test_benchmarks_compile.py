"""Every benchmark script at least parses: they run by hand, so nothing else would notice one that cannot start."""

from __future__ import annotations

import py_compile
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).resolve().parents[2] / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("script", BENCHMARKS, ids=[path.name for path in BENCHMARKS])
def test_benchmark_script_compiles(script: Path, tmp_path: Path) -> None:
    py_compile.compile(str(script), cfile=str(tmp_path / "compiled.pyc"), doraise=True)
