"""The run's multiplicity family: fixed by the suite, two-sided (refutations and holds), weighted by alpha."""

from __future__ import annotations

import dataclasses

import pytest

from claimcheck.engine.adjudicate import correct_family
from claimcheck.claim import Check, Claim, ProbeSpec, Scope, Source
from claimcheck.engine.result import ItemResult
from claimcheck.stats import Decision, FamilyMember, adjust_pvalues, two_sided_family
from claimcheck.verdict import Verdict

H, R, I = Verdict.HOLDS, Verdict.REFUTED, Verdict.INCONCLUSIVE


def _decision(verdict: Verdict, *, p: float = 1.0, hold_p: float = 1.0, alpha: float = 0.05,
              deterministic: bool = False) -> Decision:
    details = {"deterministic": True} if deterministic else {}
    return Decision("at_least", 0.0, 0.0, 0.0, 1 - 2 * alpha, 10, verdict, "raw reason", p, alpha,
                    hold_pvalue=hold_p, details=details)


def _result(item_id: str, decision: Decision | None, *, raw: Verdict | None = None) -> ItemResult:
    claim = Claim(item_id, "t", "s", Source("d.md", "1", "f"), Scope(), ProbeSpec("p"),
                  Check("at_least", output="x", params={"threshold": 0.0}))
    verdict = raw or (decision.verdict if decision else Verdict.ERROR)
    return ItemResult(claim, item_id, {}, verdict, "raw reason", decision)


def _suite(size: int, alpha: float = 0.05) -> dict[str, float]:
    return {f"item-{i}": alpha for i in range(size)}


def test_weighted_holm_reduces_to_holm_and_weights_by_alpha() -> None:
    p = [0.01, 0.04, 0.03, 0.005]
    assert adjust_pvalues(p, "holm", [1, 1, 1, 1]) == pytest.approx(adjust_pvalues(p, "holm"))
    # One claim at alpha 0.01 in a family at 0.05 has weight 0.2: alone it is tested at its own alpha,
    assert adjust_pvalues([0.009], "holm", [0.2]) == pytest.approx([0.045])
    assert adjust_pvalues([0.011], "holm", [0.2])[0] > 0.05
    # beside a 0.05 claim (weight 1) the family's weight is 1.2: ordered by p / w, step-down on the rest.
    assert adjust_pvalues([0.004, 0.03], "holm", [0.2, 1.0]) == pytest.approx([0.024, 0.03])
    with pytest.raises(ValueError, match="one positive number per p-value"):
        adjust_pvalues([0.1, 0.2], "holm", [1.0, 0.0])


def test_a_hold_that_does_not_survive_becomes_inconclusive_and_a_clear_one_survives() -> None:
    members = [FamilyMember(H, 0.9, 0.004, 0.05), FamilyMember(H, 0.9, 0.02, 0.05)]
    members += [FamilyMember.absent(0.05)] * 8
    out = two_sided_family(members, "holm")
    assert [o.verdict for o in out[:2]] == [H, I]
    assert out[0].pvalue == pytest.approx(10 * 0.004) and out[1].pvalue == pytest.approx(9 * 0.02)
    assert not out[1].survived and out[0].survived


def test_refutations_and_holds_are_separate_families() -> None:
    """A strong refutation does not use up the holds' budget, nor the other way round."""
    members = [FamilyMember(R, 0.001, 1.0, 0.05), FamilyMember(H, 1.0, 0.024, 0.05)]
    out = two_sided_family(members, "holm")
    # in the hold family only the hold can be rejected: Holm multiplies its p by 2, not by 1
    assert [o.verdict for o in out] == [R, H] and out[1].pvalue == pytest.approx(0.048)


def test_the_family_is_the_suite_not_what_ran() -> None:
    """A p of 0.004 is inconclusive over a 40-item suite whether the run held 1 item (-k) or all 40."""
    suite = _suite(40)
    alone = [_result("item-0", _decision(R, p=0.004))]
    everything = alone + [_result(f"item-{i}", _decision(I, p=0.6, hold_p=0.6)) for i in range(1, 40)]
    single, full = correct_family(alone, "holm", collected=suite), correct_family(everything, "holm", collected=suite)
    assert single[0].verdict is full[0].verdict is Verdict.INCONCLUSIVE
    for run in (single, full):
        step = run[0].adjustment("family")
        assert step is not None and step.adjusted_pvalue == pytest.approx(40 * 0.004)
    assert "over 40 items (39 without a decision count at p = 1)" in single[0].reason
    # the same item without the suite (old behaviour) would stand refuted
    assert correct_family(alone, "holm")[0].verdict is Verdict.REFUTED


def test_errors_count_at_p_one_and_probe_not_applicable_leaves_the_family() -> None:
    """An item that errored could have been anything (p = 1); an item the probe found outside its scope
    measured nothing here and leaves the family, so it cannot make a design unable to hold."""
    suite = _suite(3)
    results = [_result("item-0", _decision(R, p=0.02)), _result("item-1", None),
               _result("item-2", None, raw=Verdict.NOT_APPLICABLE)]
    out = correct_family(results, "holm", collected=suite)
    step = out[0].adjustment("family")
    assert step is not None and step.adjusted_pvalue == pytest.approx(0.04), "a family of two: the error stays"
    assert out[0].verdict is Verdict.REFUTED
    assert out[1].adjustments == () and out[2].adjustments == ()


def test_mixed_alpha_uses_weights_and_the_mean_alpha_as_the_level() -> None:
    suite = {"strict": 0.01, "usual": 0.05}
    strict = _result("strict", _decision(R, p=0.004, alpha=0.01))
    usual = _result("usual", _decision(H, p=0.9, hold_p=0.01))
    out = correct_family([strict, usual], "holm", collected=suite)
    # refutations: only `strict` is a candidate, p / w = 0.012 (w = 0.01 / 0.03), times the family's weight 2
    # -> 0.024 <= the level 0.03 (mean alpha): `strict` is first tested at its own 0.01 / 2
    step = out[0].adjustment("family")
    assert out[0].verdict is Verdict.REFUTED and step is not None and step.adjusted_pvalue == pytest.approx(0.024)
    # plain Holm on alpha 0.05 would have let a 0.01 claim refute at p = 0.02; weighted Holm does not
    looser = _result("strict", _decision(R, p=0.02, alpha=0.01))
    assert correct_family([looser, usual], "holm", collected=suite)[0].verdict is Verdict.INCONCLUSIVE
    assert out[1].verdict is Verdict.HOLDS


def test_deterministic_items_and_controls_stay_out_of_the_family() -> None:
    exact = _result("exact", _decision(H, p=1.0, hold_p=0.0, deterministic=True))
    control = dataclasses.replace(_result("item-0--control", _decision(R, p=0.04)), control_for="item-0")
    weak = _result("item-0", _decision(R, p=0.04))
    out = correct_family([exact, control, weak], "holm", collected=_suite(1))
    assert out[0] is exact and out[1] is control
    step = out[2].adjustment("family")
    assert out[2].verdict is Verdict.REFUTED and step is not None and step.adjusted_pvalue == pytest.approx(0.04)


def test_benjamini_hochberg_adjusts_holds_too_and_none_leaves_everything() -> None:
    members = [FamilyMember(H, 1.0, 0.01, 0.05), FamilyMember(H, 1.0, 0.04, 0.05), FamilyMember.absent(0.05)]
    bh = two_sided_family(members, "bh")
    assert [o.verdict for o in bh[:2]] == [H, I]
    assert bh[0].pvalue == pytest.approx(0.03) and bh[1].pvalue == pytest.approx(0.06)
    assert [o.verdict for o in two_sided_family(members, "none")[:2]] == [H, H]


def test_a_run_selected_with_k_is_adjusted_over_the_whole_suite(demo_project) -> None:
    """The demo suite has 9 sampled, in-scope items (the metal-only and the exact claim are not members)."""
    from tests.conftest import DEMO

    (demo_project.path / "claims" / "rules.yaml").write_text((DEMO / "claims" / "rules.yaml").read_text())
    selected = demo_project.runpytest("claims", "--claims-no-store", "-k", "demo-at-most-refuted")
    selected.stdout.fnmatch_lines(["family rules.yaml: Holm over 9 items (1 decided), FWER level 0.05 each way "
                                   "(each item first tested at its own alpha / 9)",
                                   "suite-wide FDR (Benjamini–Hochberg over 9 items, q = 0.05): *"])
    everything = demo_project.runpytest("claims", "--claims-no-store")
    everything.stdout.fnmatch_lines(["family rules.yaml: Holm over 9 items (8 decided, 1 undone), FWER level 0.05 each way *"])
