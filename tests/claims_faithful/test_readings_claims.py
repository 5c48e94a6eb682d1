"""The source's arithmetic, decided as a run decides it: which figures hold, which are inconsistent.

Every `readings` claim is evaluated in-process (deterministic, no MLX): each reading is an interval
over its printed inputs' rounding, a range claim pairs each end with the reading it describes, and a
withdrawn reading is no reading. `inconsistent` is left only where two printed readings disagree
beyond both their precisions.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from claimcheck.claim import Claim
from claimcheck.claims.loader import expand_grid, load_claims
from claimcheck.probing.registry import ProbeContext
from claimcheck.rules import decide_check
from claimcheck.verdict import Verdict
from probes.figures.arithmetic import readings

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = {c.id: c for c in load_claims([ROOT / "claims" / "arithmetic"]) if c.probe.name == "readings"}


def _verdicts(claim: Claim) -> dict[str, Verdict]:
    out = {}
    for name, params in expand_grid(claim):
        point = claim.at_point(params)
        names = params["reading"] if point.check.over else [params["reading"]]
        groups = [(f"reading={r}" if point.check.over else "",
                   readings(ProbeContext(n=1), of=params["of"], reading=r, inputs=params["inputs"])[point.check.output])
                  for r in names]
        out[name] = decide_check(point.check, groups, 0.05, deterministic=True).verdict
    return out


def _verdict(claim_id: str) -> Verdict:
    verdicts = set(_verdicts(CLAIMS[claim_id]).values())
    for worst in (Verdict.REFUTED, Verdict.INCONSISTENT, Verdict.HOLDS):
        if worst in verdicts:
            return worst
    raise AssertionError(verdicts)


def test_inconsistent_only_where_two_printed_readings_disagree() -> None:
    inconsistent = sorted(cid for cid in CLAIMS if _verdict(cid) is Verdict.INCONSISTENT)
    # the two genuine ones: two printings of one figure, apart beyond both precisions
    assert inconsistent == ["gemma-12b-8k-host-figures-agree", "moe-26b-expert-bytes-agree"]


@pytest.mark.parametrize("claim_id, verdict", [
    ("old-floor-overstatement", Verdict.HOLDS),        # 73-75% is "~70%" within both precisions
    ("moe-26b-recoverable-ms", Verdict.HOLDS),         # the row's 21.5-22.3 ms wall is one reading
    ("gemma-12b-8k-pct-roofline", Verdict.HOLDS),      # 88-96%, the row's interval, meets ~93%
    ("cpm5-recoverable-ms", Verdict.REFUTED),          # the standing reading gives 1.47-1.49 ms
    ("moe-26b-recoverable-gain", Verdict.HOLDS),       # share 36-42% ~ "40", speed-up 61-70% meets "60" ± 2.5
    ("cpm5-recoverable-gain", Verdict.HOLDS),          # share 36.3-36.7% ~ "35", speed-up 56.9-57.9% meets "55" ± 2.5
    ("e4b-recoverable-gain", Verdict.REFUTED),         # the high end: the @8k speed-up is 54.5-56.4%, not "50"
    ("e4b-sharedkv-compile-estimate", Verdict.REFUTED),  # 11.6-12.7% and 13.2-14.6% against "10" and "12"
    ("cpm5-compiled-decode-estimate", Verdict.HOLDS),  # 0.8 / 4.06 = 19.7% "20", 0.8 / 3.26 = 24.5% "25"
    ("gemma-12b-concat-compile-estimate", Verdict.HOLDS),  # the share, as §6 item 1 prints it: 9.2%
    ("gemma-12b-recoverable-gain", Verdict.HOLDS),     # a single figure is both ends: 8.1-8.7% and 8.9-9.5%
    ("e4b-prebuilt-delta-arith", Verdict.HOLDS),       # against the pass it names; the other pass is drift
    ("per-dispatch-estimate-contains-measured-chain", Verdict.HOLDS),  # 10-15 lies inside 5-15
    ("e4b-compiled-net-gain-arith", Verdict.REFUTED),  # only the withdrawn §4(d) split gave 3.6%
    ("e4b-host-share-of-step", Verdict.REFUTED),       # 3.6 / 18.9 = 19%, built as the other shares
    ("gemma-12b-8k-drift", Verdict.HOLDS),             # the drop, 8.0-8.3% on every printed pair
    ("moe-26b-expert-slice-size", Verdict.REFUTED),    # 3.19 MiB: the unit slip
    ("moe-26b-expert-read-99-gbps", Verdict.HOLDS),    # ... that §6.2's 99 GB/s corroborates
])
def test_the_restated_items_decide_as_their_printed_inputs_give(claim_id: str, verdict: Verdict) -> None:
    assert _verdict(claim_id) is verdict


def test_a_range_pairs_each_end_with_the_reading_it_describes() -> None:
    assert set(_verdicts(CLAIMS["e4b-recoverable-ms"]).values()) == {Verdict.HOLDS}
    gain = _verdicts(CLAIMS["e4b-recoverable-gain"])
    assert list(gain.values()) == [Verdict.HOLDS, Verdict.REFUTED]  # low end (share @600) holds; high end does not


RANGE_GAINS = ["cpm5-recoverable-gain", "e4b-recoverable-gain", "moe-26b-recoverable-gain", "cpm5-compiled-decode-estimate",
               "e4b-sharedkv-compile-estimate"]


@pytest.mark.parametrize("claim_id", RANGE_GAINS)
def test_every_recoverable_range_pairs_its_low_end_with_the_share_and_its_high_end_with_the_speed_up(
        claim_id: str) -> None:
    """One rule for one kind of sentence (issue #45): the same readings, the same ±2.5 pp, for every sibling."""
    claim = CLAIMS[claim_id]
    low, high = claim.probe.grid["reading"]
    assert low.startswith("low end, share of") and high.startswith("high end, speed-up")
    values = {name: claim.at_point({**claim.probe.params, "reading": name}).check.number("expected")
              for name in (low, high)}
    assert values[low] < values[high] and claim.check.output == "pct"
    # half the step the ends are printed to: multiples of 5 -> 2.5, whole percents -> 0.5
    step = 5 if all(v % 5 == 0 for v in values.values()) else 1
    assert claim.check.number("tolerance") == step / 2
    assert "One rule for every" in (claim.notes or "") or "The rule of the verdict's" in (claim.notes or "")


def test_no_swept_reading_rests_on_the_withdrawn_decomposition_unless_the_claim_is_withdrawn() -> None:
    offenders = []
    for claim in CLAIMS.values():
        if claim.retracted is not None:
            continue
        swept = claim.probe.params.get("reading") or claim.probe.grid.get("reading") or []
        for name in [swept] if isinstance(swept, str) else swept:
            if "§4(b,c)" in name or "§4(d) decomposition" in name or "(21.5 - 4.0 - 3.7)" in name:
                offenders.append(f"{claim.id}: {name}")
    assert offenders == []


def test_every_exact_readings_claim_reads_its_groups_as_spans() -> None:
    assert [cid for cid, c in CLAIMS.items() if c.check.rule == "exact" and not c.check.params.get("spans")] == []
