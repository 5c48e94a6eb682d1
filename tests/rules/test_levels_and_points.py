"""``level_ratio`` (two levels of one sweep) and thresholds set per grid point, from YAML to verdict."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from claimcheck import rules
from claimcheck.claim import Claim, PointValues
from claimcheck.errors import ClaimError
from claimcheck.engine.explain import expectation
from claimcheck.claims.loader import expand_grid, load_claims_text, validate_paths
from claimcheck.probing.registry import Output, ProbeContext, RegisteredProbe
from claimcheck.engine.runner import RunOptions, run_claim_item
from claimcheck.verdict import Verdict

HEAD = """\
id: c1
title: t
statement: s
source: {doc: d.md, section: "1", figure: f}
scope: {kind: portable}
"""
SWEEP = HEAD + """\
probe: {name: swept, params: {batch: [1, 4, 8]}}
check: {rule: level_ratio, output: tps, over: batch, level: 8, versus: 1, bound: at_least, threshold: 1.5}
budget: {min_samples: 8, max_samples: 30, looks: 3}
"""
GRID = HEAD + """\
probe:
  name: sized
  grid: {size_mib: [32, 128]}
check:
  rule: at_least
  output: gbps
  threshold:
    by: size_mib
    values: {32: 50, 128: 90}
budget: {min_samples: 8, max_samples: 30, looks: 3}
"""


def _swept(speedup: float, deterministic: bool = False) -> RegisteredProbe:
    def probe(ctx: ProbeContext, *, batch: int) -> dict[str, list[float]]:
        base = 100.0 * (speedup if batch == 8 else 1.0 + 0.1 * (batch == 4))
        count = 1 if deterministic else ctx.n
        return {"tps": [base * (1 + 0.01 * ctx.rng.gauss(0, 1)) if not deterministic else base for _ in range(count)]}

    return RegisteredProbe("swept", probe, {"tps": Output("tokens/s", higher_is_better=True)},
                           deterministic=deterministic)


def _sized(ctx: ProbeContext, *, size_mib: int) -> dict[str, list[float]]:
    """60 GB/s at 32 MiB, 100 GB/s at 128 MiB, with 1% noise."""
    mean = 60.0 if size_mib == 32 else 100.0
    return {"gbps": [mean * (1 + 0.01 * ctx.rng.gauss(0, 1)) for _ in range(ctx.n)]}


SIZED = RegisteredProbe("sized", _sized, {"gbps": Output("GB/s", higher_is_better=True)})


def _run(claim: Claim, params: dict, probe: RegisteredProbe, seed: int = 0):
    return run_claim_item(claim, claim.id, params, probe, options=RunOptions(seed=seed), machine={"backend": "cpu"})


# -- level_ratio ---------------------------------------------------------------------------------------
def test_level_ratio_compares_the_two_named_levels_of_the_sweep() -> None:
    (claim,) = load_claims_text(SWEEP, "c.yaml")
    held = _run(claim, dict(claim.probe.params), _swept(2.0))
    assert held.verdict is Verdict.HOLDS and "ratio of means" in held.reason
    assert set(held.samples) >= {"tps@batch=1", "tps@batch=4", "tps@batch=8"}
    refuted = _run(claim, dict(claim.probe.params), _swept(1.2))
    assert refuted.verdict is Verdict.REFUTED


def test_level_ratio_on_a_timing_item_decides_the_median_of_per_round_ratios() -> None:
    text = SWEEP.replace("looks: 3}", "looks: 3, exclusive: true}")
    (claim,) = load_claims_text(text, "c.yaml")
    result = _run(claim, dict(claim.probe.params), _swept(2.0))
    assert result.verdict is Verdict.HOLDS and result.decision is not None
    assert result.decision.estimate_label == "median of per-round ratios"


def test_level_difference_is_paired_and_a_deterministic_probe_decides_exactly() -> None:
    text = SWEEP.replace("threshold: 1.5}", "threshold: 40, scale: difference}")
    (claim,) = load_claims_text(text, "c.yaml")
    result = _run(claim, dict(claim.probe.params), _swept(1.5))
    assert result.verdict is Verdict.HOLDS and "per-round difference" in result.decision.estimate_label
    exact = _run(claim, dict(claim.probe.params), _swept(1.3, deterministic=True))
    assert exact.verdict is Verdict.REFUTED and "batch=8 - batch=1 = 30" in exact.reason


def test_level_ratio_words_come_from_the_rule_object() -> None:
    (claim,) = load_claims_text(SWEEP, "c.yaml")
    assert expectation(claim.check) == "tps@batch=8 / tps@batch=1 >= 1.5"
    assert rules.get("level_ratio").claimed(claim.check).low == 1.5


@pytest.mark.parametrize(
    ("change", "where", "message"),
    [
        (("level: 8", "level: 16"), "check.level", "`level: 16` is not one of the swept `batch` values (1, 4, 8)"),
        (("versus: 1", "versus: 8"), "check.versus", "`level` and `versus` name the same swept value"),
        (("threshold: 1.5}", "threshold: 1.5, scale: difference, paired: false}"), "check.paired",
         "needs `paired: true`"),
        (("threshold: 1.5", "threshold: -1"), "check.threshold", "must be positive"),
        (("level: 8", "level: [8]"), "check.level", "expected one value"),
        ((", over: batch", ""), "check", "needs `check.over`"),
    ],
)
def test_level_ratio_misuse_is_one_line_at_its_field(change: tuple[str, str], where: str, message: str) -> None:
    text = SWEEP.replace(*change)
    with pytest.raises(ClaimError) as error:
        load_claims_text(text, "c.yaml")
    assert f"c.yaml:7: {where}" in str(error.value) and message in str(error.value)


# -- per-point thresholds --------------------------------------------------------------------------------
def test_a_threshold_per_grid_point_is_used_at_that_point() -> None:
    (claim,) = load_claims_text(GRID, "c.yaml")
    assert claim.check.by_point == {"threshold": PointValues("size_mib", (("32", 50.0), ("128", 90.0)))}
    verdicts = {}
    for name, params in expand_grid(claim):
        result = _run(claim, params, SIZED)
        verdicts[name] = result.verdict
        assert result.claim.check.number("threshold") == (50.0 if params["size_mib"] == 32 else 90.0)
        assert f"{params['size_mib']}" in name
    assert verdicts == {"size_mib=32": Verdict.HOLDS, "size_mib=128": Verdict.HOLDS}
    # one threshold for both (90) refutes the small size: the per-point value is what decided it
    (single,) = load_claims_text(GRID.replace("  threshold:\n    by: size_mib\n    values: {32: 50, 128: 90}\n",
                                              "  threshold: 90\n"), "c.yaml")
    assert _run(single, {"size_mib": 32}, SIZED).verdict is Verdict.REFUTED


def test_a_per_point_check_round_trips_through_its_record_and_words() -> None:
    (claim,) = load_claims_text(GRID, "c.yaml")
    record = json.loads(json.dumps(claim.to_record()))
    assert record["check"]["threshold"] == {"by": "size_mib", "values": {"32": 50.0, "128": 90.0}}
    again = Claim.from_record(record)
    assert again.check.by_point == claim.check.by_point
    assert again.check.at_point({"size_mib": 128}).number("threshold") == 90.0
    assert expectation(claim.check) == "at_least"  # no single threshold to print before a grid point is chosen
    assert expectation(claim.check.at_point({"size_mib": 32})) == "gbps >= 50"


@pytest.mark.parametrize(
    ("change", "line", "where", "message"),
    [
        (("by: size_mib", "by: size"), 13, "check.threshold.by", "`threshold` is set per `size`, which is not a grid "
                                                               "axis of `probe.grid` (axes: size_mib)"),
        (("{32: 50, 128: 90}", "{32: 50}"), 14, "check.threshold.values", "`threshold` has no value for "
                                                                          "size_mib = 128"),
        (("{32: 50, 128: 90}", "{32: 50, 128: 90, 512: 95}"), 14, "check.threshold.values.512",
         "gives a value for size_mib = 512, which no grid lists"),
        (("{32: 50, 128: 90}", "{32: 50, 128: high}"), 14, "check.threshold.values.128",
         "expected a number, got text 'high'"),
        (("    by: size_mib\n", "    by: size_mib\n    per: x\n"), 14, "check.threshold.per", "unknown key `per`"),
        (("    values: {32: 50, 128: 90}\n", ""), 12, "check.threshold", "needs `values:"),
    ],
)
def test_per_point_misuse_is_one_line_at_its_field(change: tuple[str, str], line: int, where: str,
                                                   message: str) -> None:
    with pytest.raises(ClaimError) as error:
        load_claims_text(GRID.replace(*change), "c.yaml")
    assert str(error.value).startswith(f"c.yaml:{line}: {where}: "), str(error.value)
    assert message in str(error.value)


def test_every_per_point_value_is_checked_against_the_rules_domain() -> None:
    text = GRID.replace("rule: at_least", "rule: rate_at_most").replace("{32: 50, 128: 90}", "{32: 0.1,\n      128: 1.5}")
    with pytest.raises(ClaimError) as error:
        load_claims_text(text, "c.yaml")
    assert str(error.value).startswith("c.yaml:15: check.threshold.values.128: `threshold` must lie in (0, 1)")


def test_profiles_and_controls_must_stay_on_covered_grid_points() -> None:
    profile = GRID + "profiles:\n  cuda: {grid: {size_mib: [32, 512]}}\n"
    with pytest.raises(ClaimError, match=r"c.yaml:14: check.threshold.values: `threshold` has no value for "
                                         r"size_mib = 512 \(`profiles.cuda.grid.size_mib` lists it\)"):
        load_claims_text(profile, "c.yaml")
    covered = GRID.replace("{32: 50, 128: 90}", "{32: 50, 128: 90, 512: 95}") + \
        "profiles:\n  cuda: {grid: {size_mib: [32, 512]}}\n"
    (claim,) = load_claims_text(covered, "c.yaml")
    assert claim.for_profile("cuda").check.at_point({"size_mib": 512}).number("threshold") == 95.0
    control = GRID + "control:\n  params: {size_mib: 64}\n  why: too small a matrix\n"
    with pytest.raises(ClaimError, match=r"c.yaml:\d+: control.params.size_mib: the control sets size_mib = 64"):
        load_claims_text(control, "c.yaml")


def test_validate_reports_per_point_problems_with_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(GRID.replace("{32: 50, 128: 90}", "{32: 50}"))
    errors, _ = validate_paths([tmp_path], probes=False)
    assert errors == [f"{bad}:14: check.threshold.values: `threshold` has no value for size_mib = 128 "
                      "(`probe.grid.size_mib` lists it)"]


def test_level_ratio_picks_its_levels_by_label_in_any_sweep_order() -> None:
    """``level_ratio`` picks its levels by label whatever order the sweep lists them in."""
    check = rules.make_check("level_ratio", {"level": 8, "versus": 1, "bound": "at_least", "threshold": 1.5})
    check = type(check)(rule=check.rule, output="tps", over="batch", params=check.params)
    rng = random.Random(1)
    groups = [(f"batch={b}", [100.0 * (2 if b == 8 else 1) + rng.gauss(0, 1) for _ in range(12)]) for b in (8, 4, 1)]
    picked = rules.get("level_ratio").groups(groups, check)
    assert [label for label, _ in picked] == ["batch=8", "batch=1"]
    with pytest.raises(ValueError, match="the sweep has no level `batch=1`"):
        rules.get("level_ratio").groups(groups[:2], check)


# -- level_ratio under serial dependence -----------------------------------------------------------------
# A preallocated KV cache's step with attention at 4000 vs 500 positions (the control of
# kv-preallocated-step-flat-in-context), 12 rounds as a 2-core Intel Xeon measured them (ms):
# every per-round ratio lies in 8.1-9.3, the ranks drift (lag-1 autocorrelation +0.59).
XEON_ATTEND = {
    4000: [233.91, 238.86, 232.04, 234.90, 238.93, 233.96, 227.63, 233.95, 224.36, 228.45, 229.24, 226.88],
    500: [25.627, 26.975, 26.218, 26.577, 27.189, 26.549, 27.352, 26.905, 26.711, 26.932, 27.563, 27.394],
}
KV_FLAT = HEAD + """\
probe: {name: recorded, params: {context: [500, 4000]}}
check: {rule: level_ratio, output: ms, over: context, level: 4000, versus: 500, bound: at_most, threshold: 1.2}
budget: {min_samples: 6, max_samples: 12, looks: 2, exclusive: true}
"""


def _recorded(series: dict[int, list[float]]) -> RegisteredProbe:
    """Replays recorded rounds, each level's in the order measured."""
    taken = dict.fromkeys(series, 0)

    def probe(ctx: ProbeContext, *, context: int) -> dict[str, list[float]]:
        start, taken[context] = taken[context], taken[context] + ctx.n
        return {"ms": series[context][start:start + ctx.n]}

    return RegisteredProbe("recorded", probe, {"ms": Output("ms", higher_is_better=False)})


def test_a_level_ratio_carries_its_hypothesis_so_a_large_dependent_effect_decides() -> None:
    """12 serially dependent rounds 7x past the bound: refuted on the effect's size, not left undecided."""
    (claim,) = load_claims_text(KV_FLAT, "c.yaml")
    result = _run(claim, dict(claim.probe.params), _recorded(XEON_ATTEND))
    decision = result.decision
    assert decision is not None and decision.hypothesis is not None
    assert (decision.hypothesis.scale, decision.hypothesis.paired, decision.hypothesis.assumed_spread) == \
        ("log", True, 1.0)
    assert result.verdict is Verdict.REFUTED, result.reason
    assert 8.0 < decision.statistic < 9.5 and decision.low > 1.2, result.reason
    assert sorted(result.samples["ms@context=500"]) == sorted(XEON_ATTEND[500]), "every recorded round, once"


def test_a_level_ratio_is_widened_between_runs_like_a_ratio() -> None:
    """The between-run step reads the declared hypothesis: a first run assumes one within-run SE between runs."""
    from claimcheck.engine.adjudicate import widen

    text = SWEEP.replace("looks: 3}", "looks: 3, exclusive: true}")
    (claim,) = load_claims_text(text, "c.yaml")
    result = widen(_run(claim, dict(claim.probe.params), _swept(2.0)), [])
    between = result.decision.details.get("between_run")
    assert between is not None and between["source"] == "assumed", result.reason
    assert between["total_se"] == pytest.approx(between["se"] * 2 ** 0.5)
