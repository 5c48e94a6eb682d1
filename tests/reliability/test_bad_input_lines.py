"""Bad input is one line, and evidence is whole: options, a probe's traceback, publishing a part, plots.

The fault matrix (``test_fault_matrix.py``) runs each fault through pytest; these check the
pieces it rests on directly, and that a run's plot declarations travel with its evidence.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from claimcheck.cli import main
from claimcheck.engine.probe_traceback import FRAMES, RAISED_AT, failure_info, failure_lines
from claimcheck.engine.options import option_problems
from claimcheck.store import EvidenceStore
from tests.reliability._project import claim_yaml
from tests.store import synthetic as synth

GOOD = {"--claims-alpha": None, "--claims-family-alpha": 0.05, "--claims-budget-scale": 1.0, "--claims-cv-bound": 0.1,
        "--claims-progress": 0.0, "--claims-store": None, "--claims-reports": None, "--claims-warm-start": None}


@pytest.mark.parametrize(("option", "value", "line"), [
    ("--claims-alpha", 0.7, "claimcheck: --claims-alpha 0.7: expected an error rate in (0, 0.5), as a claim's check.alpha"),
    ("--claims-alpha", 0.0, "claimcheck: --claims-alpha 0: expected an error rate in (0, 0.5)"),
    ("--claims-family-alpha", float("nan"), "claimcheck: --claims-family-alpha nan: expected a finite number"),
    ("--claims-budget-scale", 0.0, "claimcheck: --claims-budget-scale 0: expected a number > 0"),
    ("--claims-cv-bound", -1.0, "claimcheck: --claims-cv-bound -1: expected a number > 0"),
    ("--claims-progress", -5.0, "claimcheck: --claims-progress -5: expected a number >= 0"),
    ("--claims-warm-start", -1, "claimcheck: --claims-warm-start -1: expected a number >= 0"),
])
def test_a_bad_option_value_is_one_line_naming_it(option: str, value: float, line: str) -> None:
    problems = option_problems(lambda name: value if name == option else GOOD[name])
    assert len(problems) == 1 and problems[0].startswith(line)


def test_paths_that_cannot_be_a_store_or_a_report_folder_are_refused(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    values = {**GOOD, "--claims-store": str(tmp_path), "--claims-reports": str(afile / "reports")}
    assert option_problems(values.__getitem__) == [
        f"claimcheck: --claims-store {tmp_path}: is a folder; name a file (e.g. {tmp_path / 'claimcheck.sqlite'})",
        f"claimcheck: --claims-reports {afile / 'reports'}: {afile} is a file, not a folder",
    ]
    assert option_problems(GOOD.__getitem__) == []


def _inner() -> None:
    value = None
    value.shape  # type: ignore[attr-defined]  # noqa: B018 - the fault under test


def _outer() -> None:
    _inner()


def test_a_probe_failure_keeps_its_own_line_and_last_frames() -> None:
    try:
        _outer()
    except AttributeError as error:
        info = failure_info(error)
    here = Path(__file__).name
    assert here in info[RAISED_AT] and info[RAISED_AT].endswith("in _inner")
    assert [frame.split(" in ")[1].split(":")[0] for frame in info[FRAMES]][-2:] == ["_outer", "_inner"]
    assert failure_lines(info, "no") == []
    assert failure_lines(info, "line") == [f"  raised:   {info[RAISED_AT]}"]
    short = failure_lines(info, "short")
    assert short[1] == "  traceback (innermost last):" and short[-1].strip().endswith("value.shape  # type: ignore[attr-defined]  # noqa: B018 - the fault under test")
    assert len(short) <= 5, "no more than 5 lines reach the user by default"


def test_publish_refuses_a_run_whose_session_did_not_finish(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store_path = tmp_path / "s.sqlite"
    with EvidenceStore(store_path) as store:
        run_id = store.begin_run(machine=synth.MACHINE_A, machine_class=synth.CLASS_A, options={})
        store.record(run_id, synth.outcome(item="size_mib=64", verdict="holds", statistic=0.8, low=0.78, high=0.82))
        store.finish_run(run_id, complete=False)
    out = tmp_path / "reports"
    assert main(["publish", "--store", str(store_path), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    refused = [line for line in err.splitlines() if line.startswith("publish: refused")]
    assert len(refused) == 1 and f"publish: refused: run {run_id} is incomplete (crashed, interrupted" in refused[0], err
    assert not out.exists(), "nothing was written"


PLOTTED_PROBE = '''
from claimcheck.probing.registry import Output, ProbeContext, probe
from claimcheck.probing.plots import PackPlot


@probe("plotted", outputs={"a": Output("ms"), "b": Output("ms")},
       plot=PackPlot("plotted-arms", "Two arms", "arms", "each arm's mean", outputs=("a", "b")))
def plotted(ctx: ProbeContext) -> dict:
    return {"a": [5.0 + 0.01 * ctx.rng.random() for _ in range(ctx.n)],
            "b": [6.0 + 0.01 * ctx.rng.random() for _ in range(ctx.n)]}
'''


def test_plot_declarations_travel_with_the_run(demo_project: pytest.Pytester, tmp_path: Path) -> None:
    """The run stores its probes' plot declarations; a report rebuilt elsewhere draws from them alone."""
    (demo_project.path / "probes" / "plotted.py").write_text(PLOTTED_PROBE)
    (demo_project.path / "claims" / "plotted.yaml").write_text(claim_yaml(
        "plotted-arms", "plotted", check={"rule": "at_least", "output": "a", "threshold": 0},
        budget={"min_samples": 6, "max_samples": 6, "looks": 1}))
    store_path = demo_project.path / "s.sqlite"
    result = demo_project.runpytest_subprocess("claims", f"--claims-store={store_path}", "-p", "no:cacheprovider",
                                               f"--claims-reports={demo_project.path / 'run-reports'}")
    assert result.ret == 0, result.stdout.str()[-2000:]
    with EvidenceStore.open_readonly(store_path) as store:
        (run,) = store.runs()
        (declared,) = store.plots(run.run_id).values()
    assert declared.probe == "plotted" and declared.plot.name == "plotted-arms" and declared.outputs["a"].unit == "ms"
    # Rebuilt in a process that cannot import the probes (another checkout, another machine).
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = ("import sys; sys.modules['claimcheck.probing.registry'] = None; from claimcheck.report import build_reports; "
            f"r = build_reports({str(store_path)!r}, None, {str(elsewhere / 'reports')!r}, docs=[]); "
            "print([p.name for p in r.plots])")
    done = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "plotted-arms.png" in done.stdout
    assert (elsewhere / "reports" / "plots" / "plotted-arms.png").stat().st_size > 0


def test_a_repeated_id_under_xdist_stops_the_run_before_any_worker_runs(demo_project: pytest.Pytester) -> None:
    """Under xdist the controller collects nothing, so it checks the claims folders for repeats itself."""
    text = claim_yaml("twice", "normal", params={"mean": 5}, check={"rule": "at_least", "output": "x", "threshold": 0})
    (demo_project.path / "claims" / "a.yaml").write_text(text)
    (demo_project.path / "claims" / "b.yaml").write_text(text)
    store_path = demo_project.path / "s.sqlite"
    result = demo_project.runpytest_subprocess("claims", "-n", "2", f"--claims-store={store_path}", "-p",
                                               "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.str() + result.stderr.str()
    assert "claims/b.yaml:1: id: duplicate claim id `twice` (first defined at " in output
    assert "Traceback" not in output and "INTERNALERROR" not in output
    assert not store_path.exists()
