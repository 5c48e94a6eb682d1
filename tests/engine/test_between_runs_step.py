"""The between-run widening as the first adjustment: the within-run verdict stays raw, the change is recorded."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np

from claimcheck import rules
from claimcheck.claim import Budget, Check, Claim, ProbeSpec, Scope, Source
from claimcheck.engine.adjudicate import ITEM_STEPS, STEPS, correct_family, gate_noise, widen
from claimcheck.engine.explain import failure_text
from claimcheck.engine.result import ItemResult, verdict_path
from claimcheck.pytest_plugin.changed import ITEM_STEPS as MEASURED_STEPS
from claimcheck.pytest_plugin.changed import as_measured
from claimcheck.store import EvidenceStore
from claimcheck.verdict import Verdict

WIDE = (97.0, 101.0, 104.0, 99.0)  # earlier runs' medians: SD 3, far wider than this run's interval


def _held(timing: bool = True, item_id: str = "held") -> ItemResult:
    """A median ``at_least 100`` on 30 N(101, 2) samples: held within the run."""
    x = 101.0 + 2.0 * np.random.default_rng(3).standard_normal(30)
    check = Check("at_least", output="x", params={"threshold": 100.0, "statistic": "median"})
    claim = Claim(item_id, "t", "s", Source("d.md", "1", "f"), Scope(), ProbeSpec("p"), check,
                  budget=Budget(exclusive=timing))
    decision = rules.decide("at_least", [("x", x)], threshold=100.0, statistic="median")
    assert decision.verdict is Verdict.HOLDS
    return ItemResult(claim, item_id, {}, decision.verdict, decision.reason, decision, samples={"x": tuple(x)})


def test_the_widening_is_an_adjustment_from_the_within_run_verdict() -> None:
    raw = _held()
    widened = widen(raw, WIDE)
    assert widened.raw_verdict is Verdict.HOLDS and widened.raw_reason == raw.reason
    (step,) = widened.adjustments
    assert (step.step, step.before, step.after) == ("between-runs", Verdict.HOLDS, Verdict.INCONCLUSIVE)
    assert verdict_path(widened.raw_verdict, widened.adjustments) == "holds → between-runs: inconclusive"
    assert "verdict:  holds → between-runs: inconclusive" in failure_text(widened)
    # the decision the family and the reports read is the widened one: its interval and p-values
    assert widened.decision is not None and raw.decision is not None
    assert widened.decision.low < raw.decision.low and widened.decision.hold_pvalue > 0.05
    assert widened.reason == widened.decision.reason and "would have been holds" in widened.reason


def test_a_kept_verdict_is_recorded_too_and_the_path_shows_no_change() -> None:
    widened = widen(_held(), (101.0, 101.01, 100.99))
    (step,) = widened.adjustments
    assert step.before is step.after is Verdict.HOLDS and "between-run spread of 3 earlier runs" in step.reason
    assert verdict_path(widened.raw_verdict, widened.adjustments) == "holds"


def test_shared_and_undeclared_items_are_not_widened() -> None:
    shared = _held(timing=False)
    assert widen(shared, WIDE) is shared
    timing = _held()
    assert timing.decision is not None
    bare = dataclasses.replace(timing, decision=dataclasses.replace(timing.decision, hypothesis=None))
    assert widen(bare, WIDE) is bare


def test_the_widening_comes_first_and_stays_with_the_item_as_measured() -> None:
    assert STEPS[:2] == ITEM_STEPS == MEASURED_STEPS == ("between-runs", "noise-gate")
    result = gate_noise(widen(_held(), WIDE), [], 0.10)
    family = correct_family([result, widen(_held(item_id="other"), ())], "holm")[0]
    assert as_measured(family).adjustments == result.adjustments
    again = ItemResult.from_record(result.to_record())
    assert again.adjustments == result.adjustments and again.raw_verdict is Verdict.HOLDS
    assert again.decision is not None and result.decision is not None
    assert again.decision.hypothesis == result.decision.hypothesis


def _synthetic() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cc_synthetic_widen", Path(__file__).parents[1] / "store" / "synthetic.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_the_store_keeps_the_widening(tmp_path: Path) -> None:
    synth = _synthetic()
    widened = widen(_held(), WIDE)
    path = tmp_path / "ev.sqlite"
    with EvidenceStore(path) as store:
        run_id = store.begin_run(machine=synth.MACHINE_A, machine_class=synth.CLASS_A, suite_commit="s",
                                 claims_commit="c")
        store.record(run_id, widened)
        store.finish_run(run_id, complete=True)
    with EvidenceStore.open_readonly(path) as store:
        (step,) = store.adjustments(run_id)[widened.item_id]
    assert (step.step, step.before, step.after, step.reason) == (
        "between-runs", Verdict.HOLDS, Verdict.INCONCLUSIVE, widened.reason)
