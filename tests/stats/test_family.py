"""Suite-level multiplicity: Holm / BH adjustment of refutations over all claims of a run."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from claimcheck.rules import decide
from claimcheck.stats import adjust_family, adjust_pvalues, family_adjustment
from claimcheck.stats._decision import Decision
from claimcheck.verdict import Verdict

H, R, I = Verdict.HOLDS, Verdict.REFUTED, Verdict.INCONCLUSIVE


def fake(verdict: Verdict, p: float) -> Decision:
    return Decision("at_least", 0.0, 0.0, 0.0, 0.9, 10, verdict, "", p, 0.05)


def test_holm_matches_the_step_down_definition():
    p = [0.01, 0.04, 0.03, 0.005]
    # Holm (1979): sorted 0.005, 0.01, 0.03, 0.04 -> 4p, 3p, 2p, 1p, running max
    assert adjust_pvalues(p, "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert adjust_pvalues(p, "bh") == pytest.approx(stats.false_discovery_control(p, method="bh"))
    assert adjust_pvalues([None, math.nan, 0.2], "none") == pytest.approx([1.0, 1.0, 0.2])
    with pytest.raises(ValueError, match="`method` must be one of 'holm', 'bh', 'none'; got 'bonf'"):
        adjust_pvalues(p, "bonf")


def test_only_refutations_are_downgraded_and_inputs_stay_untouched():
    decisions = [fake(R, 0.01), fake(R, 0.04), fake(H, 0.9), fake(I, 0.3), fake(R, 0.0)]
    out = family_adjustment(decisions, "holm")
    assert [a.verdict for a in out] == [R, I, H, I, R]
    assert out[1].reason == "refutation does not survive Holm over 5 claims (adjusted p = 0.12)"
    assert out[0].reason is None and out[4].pvalue == 0.0
    assert [d.verdict for d in decisions] == [R, R, H, I, R]
    assert adjust_family(decisions, "none") == [R, R, H, I, R]


FAMILY_RUNS = 200
TRUE_CLAIMS = 100
FALSE_CLAIMS = 25
N = 10


def test_family_error_rates_under_holm_and_bh(report_table):
    """100 true claims (at their edge, the worst case) + 25 false ones per run, 200 runs, n = 10 each.

    Holm must keep P(any true claim refuted) <= alpha; BH must keep the mean false-discovery
    proportion <= q = alpha; both within 2 SE of the simulated rate.
    """
    rng = np.random.default_rng(2024)
    means = np.r_[np.zeros(TRUE_CLAIMS), np.full(FALSE_CLAIMS, -1.2)]  # claim: mean >= 0
    rows = {m: {"fwe": [], "fdp": [], "power": []} for m in ("none", "holm", "bh")}
    for _ in range(FAMILY_RUNS):
        samples = rng.normal(means[:, None], 1.0, (means.size, N))
        decisions = [decide("at_least", [("x", s)], threshold=0.0) for s in samples]
        for method, row in rows.items():
            refuted = np.array([v is R for v in adjust_family(decisions, method)])
            false_refutations = refuted[:TRUE_CLAIMS].sum()
            row["fwe"].append(false_refutations > 0)
            row["fdp"].append(false_refutations / max(1, refuted.sum()))
            row["power"].append(refuted[TRUE_CLAIMS:].mean())
    summary = {m: {k: float(np.mean(v)) for k, v in row.items()} for m, row in rows.items()}
    print(f"\nFamily of {TRUE_CLAIMS} true + {FALSE_CLAIMS} false claims, {FAMILY_RUNS} runs, n = {N},"
          " alpha = q = 0.05 (loss: power lost against no adjustment)")
    print(f"{'method':<8}{'FWER':>8}{'±SE':>7}{'FDR':>8}{'±SE':>7}{'power':>8}{'loss':>8}")
    lines = [f"{'method':<8}{'FWER':>8}{'±SE':>7}{'FDR':>8}{'±SE':>7}{'power':>8}{'loss':>8}"]
    for m, s in summary.items():
        fdp_se = float(np.std(rows[m]["fdp"], ddof=1) / math.sqrt(FAMILY_RUNS))
        lines.append(f"{m:<8}{s['fwe']:>8.3f}{math.sqrt(s['fwe'] * (1 - s['fwe']) / FAMILY_RUNS):>7.3f}{s['fdp']:>8.3f}"
              f"{fdp_se:>7.3f}{s['power']:>8.3f}{summary['none']['power'] - s['power']:>8.3f}")
    report_table(f"family of {TRUE_CLAIMS} true + {FALSE_CLAIMS} false claims, {FAMILY_RUNS} runs, n = {N}", "\n".join(lines))
    se_alpha = math.sqrt(0.05 * 0.95 / FAMILY_RUNS)
    assert summary["none"]["fwe"] > 0.5  # without adjustment some true claim is refuted in most runs
    assert summary["holm"]["fwe"] <= 0.05 + 2 * se_alpha
    fdp_se = float(np.std(rows["bh"]["fdp"], ddof=1) / math.sqrt(FAMILY_RUNS))
    assert summary["bh"]["fdp"] <= 0.05 + 2 * fdp_se
    assert summary["bh"]["power"] >= summary["holm"]["power"]
