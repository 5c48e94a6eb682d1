"""Several workers on one GPU each take a share of its memory; one process, a CPU or `off` leave MLX's limits."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from claimcheck.harness.device_memory import MEMORY_ENV, worker_share

GIB = 2**30


def test_each_of_four_workers_takes_a_fifth_of_the_device_by_default() -> None:
    share = worker_share(140 * GIB, {"PYTEST_XDIST_WORKER_COUNT": "4"})
    assert share is not None and share.workers == 4
    assert share.limit == int(140 * GIB * 0.8 / 4) and share.cache == int(share.limit * 0.25)
    assert share.describe() == "28.0 GiB memory, 7.0 GiB cache (one of 4 workers)"


def test_the_fraction_is_set_by_the_environment_and_off_leaves_mlx_alone() -> None:
    share = worker_share(100 * GIB, {"PYTEST_XDIST_WORKER_COUNT": "2", MEMORY_ENV: "0.5"})
    assert share is not None and share.limit == 25 * GIB
    assert worker_share(100 * GIB, {"PYTEST_XDIST_WORKER_COUNT": "2", MEMORY_ENV: "off"}) is None
    assert worker_share(100 * GIB, {}) is None  # one process keeps the whole device
    assert worker_share(100 * GIB, {"PYTEST_XDIST_WORKER_COUNT": "1"}) is None


@pytest.mark.parametrize("value", ["1.5", "0", "half"])
def test_a_bad_fraction_names_the_variable(value: str) -> None:
    with pytest.raises(ValueError, match=r"\$CLAIMCHECK_DEVICE_MEMORY is `off` or a fraction of the device in \(0, 1\]"):
        worker_share(0, {MEMORY_ENV: value})


def test_a_bad_fraction_stops_pytest_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", str(tmp_path)], cwd=tmp_path,
                          capture_output=True, text=True, env={**_environ(), MEMORY_ENV: "2"})
    assert done.returncode == 4, done.stdout + done.stderr
    assert "ERROR: $CLAIMCHECK_DEVICE_MEMORY is `off` or a fraction of the device in (0, 1], got '2'" in done.stderr
    assert "Traceback" not in done.stderr


def _environ() -> dict[str, str]:
    import os

    return {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}


def test_on_the_cpu_nothing_is_set() -> None:
    script = textwrap.dedent("""
        import mlx.core as mx
        from claimcheck.harness.device_memory import share_device_memory
        mx.set_default_device(mx.cpu)
        print(share_device_memory({"PYTEST_XDIST_WORKER_COUNT": "4"}))
        """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.stdout.strip() == "None", done.stderr
