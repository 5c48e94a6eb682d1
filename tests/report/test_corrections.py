"""Correction reports and the index, built from synthetic outcomes recorded in a store."""

from __future__ import annotations

import json

from claimcheck.claim import Claim
from claimcheck.report import build_reports
from claimcheck.report import text as report_text
from claimcheck.engine.result import Adjustment, ItemResult
from claimcheck.stats import Decision
from claimcheck.verdict import Verdict


def _measured(statistic: float, low: float, high: float, n: int, unit: str, level: float = 0.95,
              label: str = "") -> ItemResult:
    """A decided result with these figures (claim check ``at_least 0`` in ``unit``)."""
    claim = Claim.from_record({"id": "c", "check": {"rule": "at_least", "threshold": 0, "unit": unit}})
    decision = Decision("at_least", statistic, low, high, level, n, Verdict.HOLDS, "", 0.01, 0.05,
                        estimate_label=label)
    return ItemResult(claim, "c", {}, Verdict.HOLDS, "", decision)


def test_refuted_item_gets_a_correction_with_the_measured_interval(tmp_path, recorded, synthetic) -> None:
    store, run_id = recorded([synthetic.outcome()])  # refuted: 0.41 [0.38, 0.44], n=24, claim >= 0.74
    out = tmp_path / "reports"
    result = build_reports(store, run_id, out, plots=False)

    md = (out / "corrections" / "qmv-large-bw.md").read_text()
    data = json.loads((out / "corrections" / "qmv-large-bw.json").read_text())
    date = store.run(run_id).started[:10]
    expected_banner = (
        f"> **{date} CORRECTION (cpu/AMD EPYC 9xxx/16-32GiB)** — measured 0.41× raw read "
        "(95% CI 0.38–0.44, n=24), not ≥ 0.74×; the claim does not hold for model SmolLM2-135M (q4) "
        "(on the cpu backend, AMD EPYC 9R14 96-Core Processor), a model other than the source's."
    )
    assert data["replacement"].startswith(expected_banner)
    assert expected_banner in md, "the markdown carries the same replacement sentence"
    # The claim as stated and its source.
    assert "Quantised matvec streams weights at &gt;= 0.74x" in md
    assert "docs/qmv-bandwidth.md, 3.2 Large matrices — “0.74x raw read”" in md
    # What was measured, how, and where.
    (item,) = data["items"]
    assert (item["statistic"], item["low"], item["high"], item["n"]) == (0.41, 0.38, 0.44, 24)
    assert (item["rule"], item["alpha"], item["confidence_level"]) == ("ratio", 0.05, 0.95)
    assert "entirely below the claimed ≥ 0.74×" in item["why"]
    assert data["run"]["machine"]["device"] == "AMD EPYC 9R14 96-Core Processor"
    assert "SmolLM2-135M (q4)" in md, "model and variant from info"
    assert "device=AMD EPYC 9R14 96-Core Processor" in md
    assert data["claim"]["source"] == {"doc": "docs/qmv-bandwidth.md", "section": "3.2 Large matrices",
                                       "figure": "0.74x raw read"}
    assert result.counts["refuted"] == 1
    assert not (out / "inconclusive").exists() or not any((out / "inconclusive").iterdir())


def test_grid_claim_gets_one_correction_listing_its_refuted_items(tmp_path, recorded, synthetic) -> None:
    store, run_id = recorded([
        synthetic.outcome(item="size_mib=64", verdict="holds", statistic=0.80, low=0.78, high=0.82),
        synthetic.outcome(item="size_mib=256", statistic=0.41, low=0.38, high=0.44),
        synthetic.outcome(item="size_mib=1024", statistic=0.52, low=0.50, high=0.55),
    ])
    out = tmp_path / "reports"
    build_reports(store, run_id, out, plots=False)
    assert sorted(p.name for p in (out / "corrections").iterdir()) == ["qmv-large-bw.json", "qmv-large-bw.md"]
    data = json.loads((out / "corrections" / "qmv-large-bw.json").read_text())
    assert [i["item_id"] for i in data["items"]] == ["qmv-large-bw[size_mib=256]", "qmv-large-bw[size_mib=1024]"]
    banner = data["replacement"]
    assert "0.41× raw read (95% CI 0.38–0.44, n=24) at size_mib=256" in banner
    assert "0.52× raw read (95% CI 0.50–0.55, n=24) at size_mib=1024" in banner
    assert "It stands here for size_mib=64 (0.80× [0.78, 0.82])" in banner, "says what stands"


def test_inconclusive_items_get_a_separate_note(tmp_path, recorded, synthetic) -> None:
    store, run_id = recorded([synthetic.outcome(verdict="inconclusive", statistic=0.73, low=0.70, high=0.76)])
    out = tmp_path / "reports"
    build_reports(store, run_id, out, plots=False)
    assert not any((out / "corrections").glob("*")) if (out / "corrections").exists() else True
    note = json.loads((out / "inconclusive" / "qmv-large-bw.json").read_text())
    assert note["kind"] == "inconclusive"
    assert "NOTE" in note["replacement"] and "not overturned" in note["replacement"]
    assert "0.73× raw read (95% CI 0.70–0.76, n=24)" in note["replacement"]
    assert "straddles the claimed ≥ 0.74×" in note["items"][0]["why"]
    assert "(inconclusive/qmv-large-bw.md)" in (out / "index.md").read_text()


def test_other_machine_class_evidence_is_labelled_as_such(tmp_path, recorded, synthetic) -> None:
    recorded([synthetic.outcome(verdict="holds", statistic=0.78, low=0.76, high=0.80, machine=synthetic.MACHINE_B,
                                machine_class=synthetic.CLASS_B)], machine_class=synthetic.CLASS_B,
             machine=synthetic.MACHINE_B)
    store, run_id = recorded([synthetic.outcome()])
    out = tmp_path / "reports"
    build_reports(store, run_id, out, plots=False)
    banner = json.loads((out / "corrections" / "qmv-large-bw.json").read_text())["replacement"]
    assert f"On another machine class ({synthetic.CLASS_B}" in banner
    assert "0.78× raw read (95% CI 0.76–0.80, n=24)" in banner


def test_index_lists_every_item_not_applicable_scope_and_drift(tmp_path, recorded, synthetic) -> None:
    recorded([synthetic.outcome(verdict="holds", statistic=0.80, low=0.78, high=0.82)])
    metal = synthetic.claim_record("metal-kernel-fusion", scope={"kind": "as-stated", "backend": "metal",
                                                                 "device": "Apple M*", "min_memory_gib": 32})
    store, run_id = recorded([
        synthetic.outcome(),
        synthetic.outcome("metal-kernel-fusion", item=None, verdict="not-applicable", claim=metal,
                          reason="as-stated claim scoped to backend `metal`; this machine runs `cpu`"),
        synthetic.outcome("probe-broke", item=None, verdict="error", reason="ProbeError: outputs never evaluated",
                          claim=synthetic.claim_record("probe-broke")),
    ])
    out = tmp_path / "reports"
    build_reports(store, run_id, out, plots=False)
    index = (out / "index.md").read_text()
    assert "| refuted | 1 |" in index and "| not-applicable | 1 |" in index and "| error | 1 |" in index
    row = next(line for line in index.splitlines() if line.startswith("| qmv-large-bw"))
    assert "| refuted | 0.41× \\[0.38, 0.44\\] | 24 | refuted | 0.05 |" in row
    assert "[correction](corrections/qmv-large-bw.md)" in row
    assert "## Not checked on this machine" in index
    assert "as-stated; backend metal; device Apple M\\*; ≥ 32 GiB" in index
    assert "ProbeError: outputs never evaluated" in index
    assert "verdict holds → refuted" in index, "drift against the previous run of the same class"
    summary = json.loads((out / "index.json").read_text())
    assert summary["counts"]["refuted"] == 1 and len(summary["items"]) == 3
    assert summary["drift"][0]["verdict_changed"] is True


def test_raw_and_adjusted_verdicts_are_shown(tmp_path, recorded, synthetic) -> None:
    refuted = synthetic.outcome(verdict="refuted")
    family = Adjustment("family", Verdict.REFUTED, Verdict.INCONCLUSIVE, "does not survive Holm over 12 claims", 0.2)
    store, run_id = recorded([refuted.adjusted(family)])
    out = tmp_path / "reports"
    build_reports(store, run_id, out, plots=False)
    assert "refuted → family: inconclusive" in (out / "index.md").read_text()
    note = json.loads((out / "inconclusive" / "qmv-large-bw.json").read_text())
    assert "Before adjusting for the number of claims tested the verdict was refuted" in note["items"][0]["why"]


def test_ids_that_are_not_slugs_never_become_paths(tmp_path, recorded, synthetic) -> None:
    evil = synthetic.outcome("../../escaped", item=None, claim=synthetic.claim_record("../../escaped"))
    upper = synthetic.outcome("Upper/Case", item=None, claim=synthetic.claim_record("Upper/Case"))
    store, run_id = recorded([evil, upper])
    out = tmp_path / "deep" / "reports"
    result = build_reports(store, run_id, out, plots=False)
    written = {p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()}
    assert not any("escaped" in str(p) or "Case" in str(p) for p in written)
    assert len(result.warnings) == 2 and all("not a slug" in w for w in result.warnings)
    assert "not a slug" in (out / "index.md").read_text()


def test_a_rebuild_drops_corrections_that_no_longer_apply(tmp_path, recorded, synthetic) -> None:
    store, first = recorded([synthetic.outcome()])
    out = tmp_path / "reports"
    build_reports(store, first, out, plots=False)
    assert (out / "corrections" / "qmv-large-bw.md").exists()
    keep = out / "corrections" / "README.txt"
    keep.write_text("not ours")
    _, second = recorded([synthetic.outcome(verdict="holds", statistic=0.8, low=0.78, high=0.82)])
    build_reports(store, second, out, plots=False)
    assert not (out / "corrections" / "qmv-large-bw.md").exists()
    assert keep.exists(), "files the report did not name are left alone"


def test_measured_phrase_matches_the_banner_style() -> None:
    row = _measured(0.41, 0.38, 0.44, 24, "×", label="raw read")
    assert report_text.measured(row) == "0.41× raw read (95% CI 0.38–0.44, n=24)"
    wide = _measured(101.234, 95.1, 107.9, 10, "GB/s", level=0.9)
    assert report_text.measured(wide) == "101 GB/s (90% CI 95–108, n=10)"
    narrow = _measured(5.0123, 4.41, 5.62, 8, "ms")
    assert report_text.figure(narrow) == "5.0 ms [4.4, 5.6]"
    exact = _measured(47.6, 47.6, 47.6, 1, "%", level=1.0)
    assert report_text.figure(exact) == "47.6% (computed)"


def test_claimed_bound_for_each_rule() -> None:
    def bound(check: dict) -> str:
        claim = Claim.from_record({"id": "c", "check": check})
        return report_text.claimed(ItemResult(claim, "c", {}, Verdict.HOLDS, "")).text

    assert bound({"rule": "at_least", "threshold": 90, "unit": "GB/s"}) == "≥ 90 GB/s"
    assert bound({"rule": "at_most", "threshold": 12, "unit": "ms"}) == "≤ 12 ms"
    assert bound({"rule": "ratio", "bound": "at_most", "threshold": 1.1, "unit": "×"}) == "≤ 1.1×"
    # The estimate of a log-ratio equivalence is printed as a ratio, so its band is on the ratio scale too.
    assert bound({"rule": "equivalent", "margin": 0.05, "scale": "log-ratio"}) == "ratio within [0.9524, 1.05] (equivalent)"
    assert bound({"rule": "exact", "expected": 48, "tolerance": 0.5, "unit": "%"}) == "= 48% ± 0.5"
    assert bound({"rule": "ordering", "outputs": ["a", "b", "c"]}) == "a > b > c"


def test_a_refuted_computation_is_corrected_as_arithmetic_not_per_machine(tmp_path, recorded, synthetic) -> None:
    claim = synthetic.claim_record("moe-ceiling", check={"rule": "exact", "output": "tok_s", "expected": 92,
                                                         "tolerance": 0.63, "unit": "tok/s"},
                                   probe={"name": "roofline", "params": {"gbps": 337, "gb": 3.59}})
    record = synthetic.outcome_record("moe-ceiling", item=None, claim=claim, statistic=93.8719, low=93.8719,
                                      high=93.8719, n=1, params={"gbps": 337, "gb": 3.59})
    record["decision"]["details"] = {"deterministic": True}
    store, run_id = recorded([ItemResult.from_record(record)])
    out = tmp_path / "reports"
    build_reports(store, run_id, out, plots=False)
    data = json.loads((out / "corrections" / "moe-ceiling.json").read_text())
    assert "CORRECTION (arithmetic)** — recomputed from the source's own inputs: 93.87 tok/s, not = 92 tok/s ± 0.63" \
        in data["replacement"]
    assert "on any machine" in data["replacement"] and "not portable" not in data["replacement"]
    assert "The inputs as printed (gb=3.59, gbps=337) stand" in data["replacement"]
    assert data["items"][0]["why"].startswith("The computed value 93.87 lies outside the claimed band")


def test_a_noise_gated_item_reads_as_gated_not_as_undecided(tmp_path, recorded) -> None:
    """Its interval is decisive, so the note says the gate made it inconclusive, and shows the verdict path."""
    import numpy as np

    from claimcheck import rules
    from claimcheck.engine.adjudicate import gate_noise
    from claimcheck.claim import Budget, Check, Claim, ProbeSpec, Scope, Source
    from claimcheck.engine.result import ItemResult

    samples = list(np.r_[np.full(60, 8.0), np.full(60, 12.0)])  # mean 10 ms, CV 20%
    claim = Claim("step-latency", "t", "s", Source("d.md", "1", "f"), Scope(), ProbeSpec("p"),
                  Check("at_most", output="ms", unit="ms", params={"threshold": 9.5, "statistic": "mean"}),
                  budget=Budget(exclusive=True))
    decision = rules.decide("at_most", [("ms", samples)], threshold=9.5)
    raw = ItemResult(claim, claim.id, {}, decision.verdict, decision.reason, decision, samples={"ms": tuple(samples)})
    gated = gate_noise(raw, [("ms", samples)], cv_bound=0.10)
    store, run_id = recorded([gated])
    out = tmp_path / "reports"
    build_reports(store, run_id, out, plots=False)
    note = json.loads((out / "inconclusive" / "step-latency.json").read_text())
    why = note["items"][0]["why"]
    assert "too noisy or drifting to trust this interval, so the verdict refuted became inconclusive" in why
    assert "cannot tell" not in why
    assert "refuted → noise-gate: inconclusive" in (out / "index.md").read_text()
