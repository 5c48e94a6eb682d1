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
from probes.arithmetic import readings

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
    assert inconsistent == ["e4b-prebuilt-delta-arith", "gemma-12b-8k-host-figures-agree", "moe-26b-expert-bytes-agree",
                            "per-dispatch-cost-low-end-agrees"]


@pytest.mark.parametrize("claim_id, verdict", [
    ("old-floor-overstatement", Verdict.HOLDS),        # 73-75% is "~70%" within both precisions
    ("moe-26b-recoverable-ms", Verdict.HOLDS),         # the row's 21.5-22.3 ms wall is one reading
    ("gemma-12b-8k-pct-roofline", Verdict.HOLDS),      # 88-96%, the row's interval, meets ~93%
    ("cpm5-recoverable-ms", Verdict.REFUTED),          # the standing reading gives 1.47-1.49 ms
    ("moe-26b-recoverable-gain", Verdict.REFUTED),     # only the withdrawn §4 reading gave 40-60%
    ("e4b-compiled-net-gain-arith", Verdict.REFUTED),  # only the withdrawn §4(d) split gave 3.6%
    ("e4b-host-share-of-step", Verdict.REFUTED),       # 3.6 / 18.9 = 19%, built as the other shares
    ("gemma-12b-8k-drift", Verdict.REFUTED),           # every printed pair gives 8.4-9.4%
    ("moe-26b-expert-slice-size", Verdict.REFUTED),    # 3.19 MiB: the unit slip
    ("moe-26b-expert-read-99-gbps", Verdict.HOLDS),    # ... that §6.2's 99 GB/s corroborates
])
def test_the_restated_items_decide_as_their_printed_inputs_give(claim_id: str, verdict: Verdict) -> None:
    assert _verdict(claim_id) is verdict


def test_a_range_pairs_each_end_with_the_reading_it_describes() -> None:
    assert set(_verdicts(CLAIMS["e4b-recoverable-ms"]).values()) == {Verdict.HOLDS}
    gain = _verdicts(CLAIMS["e4b-recoverable-gain"])
    assert list(gain) == ["reading=§3 e4b @600 18.9 / 13.3", "reading=§3 e4b @8k 21.3 / 13.7"]
    assert set(gain.values()) == {Verdict.REFUTED}


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
