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


def test_a_lax_member_does_not_loosen_the_others():
    """One claim at alpha 0.25 among 40 at 0.05: each strict member is still tested at 0.05 / 41."""
    from claimcheck.stats import FamilyMember, family_alpha, two_sided_family

    strict = [FamilyMember(R, 0.002, 1.0, 0.05)] + [FamilyMember.absent(0.05) for _ in range(39)]
    alone = two_sided_family(strict, "holm")
    with_lax = two_sided_family(strict + [FamilyMember.absent(0.25)], "holm")
    assert not alone[0].survived and not with_lax[0].survived  # 0.002 > 0.05 / 40: the lax member changes nothing
    assert family_alpha([0.05] * 40 + [0.25]) == pytest.approx(2.25 / 41)
    passes = two_sided_family([FamilyMember(R, 0.0012, 1.0, 0.05)] + strict[1:] + [FamilyMember.absent(0.25)])
    assert passes[0].survived  # 0.0012 <= 0.05 / 41 = 0.00122


def test_the_summary_states_each_familys_level_and_one_suite_wide_fdr_line():
    from claimcheck.stats import FamilyMember
    from claimcheck.stats._family_summary import family_lines

    roofline = [FamilyMember(R, 0.001, 1.0, 0.05), FamilyMember(H, 1.0, 0.002, 0.05), FamilyMember.absent(0.05)]
    decode = [FamilyMember(R, 0.04, 1.0, 0.05)] + [FamilyMember.absent(0.01) for _ in range(3)]
    lines = family_lines({"claims/roofline.yaml": roofline, "claims/decode.yaml": decode})
    assert lines[0] == ("family claims/decode.yaml: Holm over 4 items (1 decided, 1 undone), FWER level 0.02 each way "
                        "(each item first tested at its own alpha / 4)")
    assert lines[1].startswith("family claims/roofline.yaml: Holm over 3 items (2 decided), FWER level 0.05")
    # BH over 7: refutation p 0.001 -> 0.007 stands, 0.04 -> 0.14 does not; the hold 0.002 -> 0.014 stands
    assert lines[2] == "suite-wide FDR (Benjamini–Hochberg over 7 items, q = 0.05): 1 refutations and 1 holds stand"


def test_samples_to_survive_scales_the_measured_effect():
    from claimcheck.stats import samples_to_survive

    needed = samples_to_survive(30, 0.01, 0.2, 0.05)  # must reach p = 0.0025: z 2.33 -> 2.81
    assert needed == math.ceil(30 * (stats.norm.ppf(1 - 0.0025) / stats.norm.ppf(0.99)) ** 2)
    assert samples_to_survive(30, 0.6, 1.0, 0.05) is None  # no effect measured: no n would do


def test_a_verdict_that_does_not_survive_the_family_says_the_n_that_would():
    from claimcheck.engine.adjudicate import correct_family
    from claimcheck.claim import Check, Claim, ProbeSpec, Scope, Source
    from claimcheck.engine.result import ItemResult

    claim = Claim("weak", "t", "s", Source("d.md", "1", "f"), Scope(), ProbeSpec("p"),
                  Check("at_least", output="x", params={"threshold": 0.0}))
    decision = Decision("at_least", 0.0, 0.0, 0.0, 0.9, 20, R, "raw reason", 0.01, 0.05)
    out = correct_family([ItemResult(claim, "weak", {}, R, "raw reason", decision)], "holm",
                         collected={"weak": 0.05, **{f"other-{i}": 0.05 for i in range(19)}})
    assert out[0].verdict is I
    needed = math.ceil(20 * (stats.norm.ppf(1 - 0.01 * 0.05 / 0.2) / stats.norm.ppf(0.99)) ** 2)
    assert f"about n = {needed} at the measured effect would let it survive, against this run's n = 20" in out[0].reason
