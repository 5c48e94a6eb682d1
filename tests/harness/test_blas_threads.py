"""The BLAS thread policy: free cores at start, overrides, and where the choice is recorded."""

from __future__ import annotations

import pytest

from claimcheck.harness import blas_threads
from claimcheck.harness.blas_threads import (
    ThreadChoice, auto_threads, busy_cores, busy_measured, choose_threads, export, runnable_others,
)


@pytest.mark.parametrize(("cores", "busy", "threads"), [(2, 0.0, 2), (2, 0.5, 2), (2, 0.8, 1), (2, 2.0, 1), (2, 5.0, 1),
                                                        (16, 3.0, 13), (16, 0.1, 16)])
def test_auto_takes_the_free_cores_and_never_fewer_than_one(cores: int, busy: float, threads: int) -> None:
    assert auto_threads(cores, busy) == threads


def test_beside_two_busy_loops_a_two_core_machine_gets_one_thread() -> None:
    choice = choose_threads({}, cores=2, busy=lambda: 2.0)
    assert (choice.policy, choice.threads) == ("auto", 1)
    assert choice.describe() == "auto: 1 of 2 cores (2.0 busy at start)"


@pytest.mark.parametrize("workers, cores, busy, threads", [
    ("2", 2, 0.0, 1), ("2", 8, 0.0, 4), ("3", 2, 0.0, 1), ("2", 8, 6.0, 2), ("", 2, 0.0, 2), ("x", 2, 0.0, 2),
])
def test_pytest_workers_share_the_free_cores(workers: str, cores: int, busy: float, threads: int) -> None:
    """Two workers that each saw the other idle at start must not run a thread per core each."""
    choice = choose_threads({"PYTEST_XDIST_WORKER_COUNT": workers}, cores=cores, busy=lambda: busy)
    assert choice.threads == threads
    if workers == "2":
        assert choice.describe().endswith("busy at start, shared by 2 pytest workers)")


def test_busy_is_the_larger_of_the_measured_share_and_the_runnable_threads() -> None:
    assert busy_cores(measured=lambda: 0.1, runnable=lambda: 2.0) == 2.0  # load just started
    assert busy_cores(measured=lambda: 1.7, runnable=lambda: 0.0) == 1.7


def test_a_load_that_just_ended_is_not_read_where_the_share_can_be_measured() -> None:
    lagging = lambda: (1.5, 1.2, 1.0)  # noqa: E731 - the 1-minute average still counts a run that ended
    assert busy_cores(measured=lambda: 0.0, runnable=lambda: 0.0, load=lagging) == 0.0
    assert busy_cores(measured=lambda: None, runnable=lambda: 0.0, load=lagging) == 1.5, "no /proc/stat: the average"


def test_the_measured_share_reads_the_idle_time_of_this_process_cpus() -> None:
    import os

    cpus = sorted(os.sched_getaffinity(0))
    frames = iter([
        "cpu  0 0 0 0 0 0 0 0 0 0\n" + "".join(f"cpu{c} 100 0 0 100 0 0 0 0 0 0\n" for c in cpus),
        # one of the cpus spent the whole window busy, the others idle; guest columns are ignored
        "cpu  0 0 0 0 0 0 0 0 0 0\n" + "".join(
            f"cpu{c} {200 if i == 0 else 100} 0 0 {100 if i == 0 else 200} 0 0 0 0 99 99\n" for i, c in enumerate(cpus)),
    ])
    assert busy_measured(lambda: next(frames), sleep=lambda: None) == pytest.approx(1.0)
    assert busy_measured(lambda: "no cpu lines\n", sleep=lambda: None) is None


def test_runnable_threads_exclude_the_reader_and_take_the_median() -> None:
    reads = iter(["0.5 0.4 0.3 3/200 99\n", "0.5 0.4 0.3 1/200 99\n", "0.5 0.4 0.3 3/200 99\n"])
    assert runnable_others(lambda: next(reads), reads=3, pause=0) == 2.0
    assert runnable_others(lambda: "garbage", reads=3, pause=0) == 0.0


def test_an_explicit_count_or_thread_variable_wins_over_auto() -> None:
    never = lambda: pytest.fail("auto must not be consulted")  # noqa: E731
    assert choose_threads({"CLAIMCHECK_BLAS_THREADS": "3"}, cores=2, busy=never) == ThreadChoice("fixed", 3, 2)
    assert choose_threads({"OPENBLAS_NUM_THREADS": "1"}, cores=2, busy=never) == ThreadChoice("environment", 1, 2)
    assert choose_threads({"CLAIMCHECK_BLAS_THREADS": "library"}, cores=2, busy=never).threads is None


@pytest.mark.parametrize("bad", ["0", "-2", "many"])
def test_a_bad_override_is_one_clear_line(bad: str) -> None:
    with pytest.raises(ValueError, match=r"CLAIMCHECK_BLAS_THREADS must be a positive number"):
        choose_threads({"CLAIMCHECK_BLAS_THREADS": bad}, cores=2)


def test_export_keeps_variables_the_environment_set() -> None:
    env = {"OMP_NUM_THREADS": "4"}
    export(ThreadChoice("auto", 1, 2), env)
    assert env["OPENBLAS_NUM_THREADS"] == "1" and env["OMP_NUM_THREADS"] == "4"


def test_the_fingerprint_records_the_policy_and_the_count() -> None:
    pytest.importorskip("mlx.core")
    from claimcheck.harness.blas import thread_choice
    from claimcheck.machine import fingerprint

    fp = fingerprint()
    assert fp["blas_thread_policy"] == thread_choice().policy
    assert fp["blas_thread_choice"] == thread_choice().describe()
    if fp["blas_kind"] == "openblas" and thread_choice().threads is not None:
        assert fp["blas_threads"] == thread_choice().threads

