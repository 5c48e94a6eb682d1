"""Loading the plugin stays light: every pytest run of a venv with claimcheck installed pays for it.

pytest loads ``claimcheck.plugin`` through its entry point in any run, even one that collects no
claim; scipy, numpy, MLX and matplotlib load only when the first claim is collected.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("scipy", "numpy", "mlx", "matplotlib")


def _loaded_after(code: str, cwd: Path) -> list[str]:
    check = f"import sys; {code}; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, cwd=cwd, check=True)
    return [name for name in out.stdout.strip().split(",") if name]


@pytest.mark.parametrize("module", ["claimcheck.plugin", "claimcheck.api"])
def test_importing_the_plugin_or_the_facade_loads_no_heavy_library(module: str, tmp_path: Path) -> None:
    assert _loaded_after(f"import {module}", tmp_path) == []


def test_a_plain_pytest_run_with_the_plugin_loaded_imports_no_heavy_library(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain=f"""
        import sys

        def test_nothing_heavy_was_imported():
            assert [m for m in {HEAVY!r} if m in sys.modules] == []
        """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "claimcheck" in result.stdout.str(), "the plugin was loaded in that run"
