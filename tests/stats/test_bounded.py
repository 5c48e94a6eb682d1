"""Every statistics call returns: power and resolution at any df and level, every rule, short plans.

A routine that loops inside C (``scipy.special.nctdtrinc`` at df <= 2 and a tiny level) cannot be
stopped by a signal, so the sweep runs in a child process that announces each call; a call
that has not returned after :data:`PER_CALL_S` seconds fails the test with its name. The limit
is two orders of magnitude above the slowest call measured, so it never fails by chance.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest

PER_CALL_S = 10.0
SWEEP = Path(__file__).with_name("bounded_sweep.py")
ROOT = Path(__file__).resolve().parents[2]


def _watch(args: list[str]) -> tuple[dict[str, object] | None, str | None]:
    """Run ``args``; return its JSON summary, or the call that did not return within the limit."""
    child = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    current, last = None, ""
    try:
        while True:
            try:
                line = lines.get(timeout=PER_CALL_S)
            except queue.Empty:
                return None, current or "(before the first call)"
            if line is None:
                break
            last = line
            if line.startswith("start "):
                current = line[len("start "):]
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        reader.join()
        assert child.stdout is not None
        child.stdout.close()
    if child.returncode != 0 or not last.startswith("{"):
        pytest.fail(f"the sweep failed (exit {child.returncode}): {last}")
    return json.loads(last), None


def test_a_c_routine_that_never_returns_fails_the_watch(tmp_path: Path) -> None:
    """The watch itself: the unguarded scipy call at df = 1, level 1e-6 never returns."""
    script = tmp_path / "hang.py"
    script.write_text("from scipy import special\nprint('start nctdtrinc(1, 0.2, 318309.9)', flush=True)\n"
                      "special.nctdtrinc(1.0, 0.2, 318309.886)\nprint('{}', flush=True)\n")
    summary, stuck = _watch([sys.executable, str(script)])
    assert summary is None and stuck == "nctdtrinc(1, 0.2, 318309.9)"


def test_every_power_and_decision_call_returns() -> None:
    summary, stuck = _watch([sys.executable, str(SWEEP)])
    assert stuck is None, f"did not return within {PER_CALL_S:g} s: {stuck}"
    assert summary is not None and int(summary["calls"]) > 5000  # type: ignore[call-overload]


@pytest.mark.parametrize("df", [1.0, 1.5, 2.0, 5.0, 30.0])
def test_the_bounded_noncentrality_meets_scipys_at_the_switch(df: float) -> None:
    from scipy import special

    from claimcheck.stats._power import NCT_SAFE_QUANTILE, noncentrality

    from scipy import stats

    near = float(special.nctdtrinc(df, 0.2, NCT_SAFE_QUANTILE))
    beyond = noncentrality(df, 0.8, NCT_SAFE_QUANTILE * (1 + 1e-9))
    assert beyond == pytest.approx(near, rel=2e-4)  # scipy's own inverse is off by up to 1e-4 here
    assert float(stats.nct.sf(NCT_SAFE_QUANTILE * 1.25, df, noncentrality(df, 0.8, NCT_SAFE_QUANTILE * 1.25))) \
        == pytest.approx(0.8, abs=1e-4)


@pytest.mark.parametrize(("effect", "alpha", "test"), [(0.3, 0.05, "one-sided"), (1.0, 1e-6, "one-sided"),
                                                       (0.5, 0.01, "tost"), (2.0, 0.05, "one-sided")])
def test_required_n_is_the_smallest_n_that_resolves(effect: float, alpha: float, test: str) -> None:
    import math

    from claimcheck.stats import mde, required_n

    n = required_n(effect, 1.0, alpha=alpha, test=test)  # type: ignore[arg-type]
    assert mde(1 / math.sqrt(n), n - 1, alpha=alpha, test=test) <= effect  # type: ignore[arg-type]
    assert n == 2 or mde(1 / math.sqrt(n - 1), n - 2, alpha=alpha, test=test) > effect  # type: ignore[arg-type]


@pytest.mark.parametrize(("rule", "params"), [
    ("at_least", {"threshold": 1.0, "statistic": "mean"}),
    ("ratio", {"threshold": 1.0, "bound": "at_least", "statistic": "median", "paired": True}),
    ("equivalent", {"margin": 1e-4, "statistic": "median", "paired": True}),
])
def test_a_look_that_may_spend_nothing_reports_no_resolution(rule: str, params: dict[str, object]) -> None:
    from claimcheck import rules
    from claimcheck.stats._decision import LEVEL_FLOOR

    groups = [("x", [1.0, 1.1, 0.9])]
    if rule != "at_least":
        groups.append(("reference", [1.0, 1.0, 1.0]))
    decision = rules.decide(rule, groups, alpha=LEVEL_FLOOR, **params)
    assert decision.mde is None and "would resolve" not in decision.reason


def test_a_paired_median_ratio_with_three_first_samples_decides() -> None:
    """The plan 3/40/3: its first look is at the floor; the run goes on to the looks that spend."""
    import numpy as np

    from claimcheck import rules
    from claimcheck.stats import SequentialPlan

    rng = np.random.default_rng(7)

    def draw(k: int) -> list[tuple[str, list[float]]]:
        return [("x", (2.0 + 0.01 * rng.standard_normal(k)).tolist()), ("reference", [1.0] * k)]

    decision = rules.run_sequential(draw, "ratio", SequentialPlan(0.05, 3, 40, 3), threshold=1.5, bound="at_least",
                                    statistic="median", paired=True)
    assert decision.verdict.value == "holds" and decision.details["sequential"]["alpha_per_look"][0] == 1e-12
