"""Public claims draw their inputs as the test they quote does, at a commit that holds its text; and a
claim about a measured point leaves the point room to hold."""

from __future__ import annotations

from pathlib import Path

from claimcheck.claims.loader import load_claims

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = {c.id: c for c in load_claims([ROOT / "claims"])}
TEST_FAST_PIN = "0017d3c3f1b9ad5aad9ea0d76f1d39376fa17b56"


def test_every_test_fast_claim_is_pinned_where_the_quoted_text_exists() -> None:
    quoting = [c for c in CLAIMS.values() if c.source.doc.endswith("python/tests/test_fast.py")]
    assert len(quoting) == 6
    assert [c.id for c in quoting if TEST_FAST_PIN not in c.source.doc] == []


def test_the_per_dtype_tolerances_are_checked_on_the_tests_uniform_inputs_and_width() -> None:
    for claim_id, width in [("rms-norm-fast-matches-reference-per-dtype", 32),
                            ("layer-norm-fast-matches-reference-per-dtype", 32),
                            ("rope-fast-matches-reference-per-dtype", 8)]:
        params = CLAIMS[claim_id].probe.params
        assert params["inputs"]["dist"] == "uniform", claim_id
        assert params["inputs"]["high"] - params["inputs"]["low"] == 1, claim_id
        assert params["shape"][-1] == width, claim_id
    large = CLAIMS["rope-fast-large-input-within-5e-3"].probe.params
    assert "inputs" not in large, "test_rope_large_input draws standard-normal inputs, the probe's default"


def test_a_slower_claim_reads_slower_and_its_size_is_a_band_around_the_point() -> None:
    point = 9.6 / 8.1
    for claim_id in ("moe-merged-gate-up-slower-m1max", "moe-merged-gate-up-slower-portable"):
        assert CLAIMS[claim_id].check.number("threshold") == 1.0
    low = CLAIMS["moe-merged-gate-up-penalty-m1max"].check.number("threshold")
    high = CLAIMS["moe-merged-gate-up-penalty-upper-m1max"].check.number("threshold")
    assert low < point / 1.04 and high > point * 1.04, "the doc's own point lies well inside the band"


def test_the_as_stated_batch_claim_runs_the_prs_model_and_lengths() -> None:
    claim = CLAIMS["batch-32-generates-6x-faster-granite-as-stated"]
    assert claim.scope.kind == "as-stated" and "granite-4.0-tiny" in claim.scope.model
    assert claim.probe.params["max_tokens"] == claim.probe.params["prompt_tokens"] == 128
    assert claim.check.number("threshold") < 809.770 / 133.149
