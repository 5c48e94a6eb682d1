"""The exact, seedless route hazards as a probe: pooled like the sampled counts, undefined where nothing is at risk."""

from __future__ import annotations

import math

import pytest

from claimcheck.errors import NotApplicable
from claimcheck.probing.registry import ProbeContext, get_probe
from probes.curves.route_exact import LABELS, ExactCounts, exact_outputs, pooled

SMALL = {"max_ref_tokens": 30, "batch_size": 16}


def _counts(fork: tuple[float, float], remerge: tuple[float, float]) -> ExactCounts:
    return ExactCounts({"FORK": fork[0], "REMERGE": remerge[0]}, {"FORK": fork[1], "REMERGE": remerge[1]})


def test_pooling_sums_expected_departures_and_at_risk_mass_before_the_ratio() -> None:
    total = pooled([_counts((0.1, 1.0), (0.2, 0.5)), _counts((0.3, 1.0), (0.0, 0.5))])
    assert total.departures == pytest.approx({"FORK": 0.4, "REMERGE": 0.2})
    assert total.at_risk == pytest.approx({"FORK": 2.0, "REMERGE": 1.0})
    # (0.4 / 2) / (0.2 / 1) = 1, not the mean of the per-prompt ratios (0.25 and undefined)
    assert total.selectivity() == pytest.approx(1.0)
    assert pooled([]).at_risk == {k: 0.0 for k in LABELS}


def test_outputs_are_one_value_each_with_logs_and_factors() -> None:
    mine, theirs = _counts((0.3, 1.0), (0.2, 1.0)), _counts((0.1, 1.0), (0.4, 1.0))
    values, undefined = exact_outputs(mine, theirs)
    assert undefined == {}
    assert values["selectivity"] == [pytest.approx(1.5)] and values["reference_selectivity"] == [pytest.approx(0.25)]
    assert values["log_selectivity"] == [pytest.approx(math.log(1.5))]
    assert values["reference_log_selectivity"] == [pytest.approx(math.log(0.25))]
    assert values["log_fork_factor"] == [pytest.approx(math.log(3.0))]
    assert values["log_remerge_factor"] == [pytest.approx(math.log(0.5))]
    assert set(values) == set(get_probe("route_exact").outputs)


def test_nothing_at_risk_is_undefined_with_a_reason_never_a_number() -> None:
    mine = _counts((0.3, 1.0), (0.0, 0.0))  # no mass ever reaches a REMERGE position
    values, undefined = exact_outputs(mine, _counts((0.1, 1.0), (0.4, 1.0)))
    for name in ("selectivity", "log_selectivity", "remerge_hazard", "log_remerge_factor"):
        assert values[name] == [] and name in undefined
    assert values["fork_hazard"] == [pytest.approx(0.3)] and "fork_hazard" not in undefined


def test_the_probe_is_deterministic() -> None:
    assert get_probe("route_exact").deterministic


# --- on a tiny random model (plumbing: its text means nothing) ------------------------------------


@pytest.fixture
def ctx(tmp_path, monkeypatch) -> ProbeContext:  # type: ignore[no-untyped-def]
    pytest.importorskip("mlx.core")
    import claimcheck.api
    import claimcheck.models
    from tests.sampling.tiny import TinyLoaded, tiny_model

    tiny = TinyLoaded(tiny_model())
    monkeypatch.setattr(claimcheck.models, "load", lambda model, variant=None, needs_text=False: tiny)
    monkeypatch.setattr(claimcheck.api, "load", lambda model, variant=None, needs_text=False: tiny)  # what probes import
    return ProbeContext(cache_dir=str(tmp_path))


def test_the_probe_pools_what_the_route_hazard_probe_records_as_exact(ctx) -> None:
    from probes.curves.route_exact import route_exact
    from probes.curves.route_hazard import route_hazard

    prompts = ["lighthouse", "night-train", "tree-city"]
    route_hazard(ctx, prompts=prompts, seeds=4, coherence_seeds=0, **SMALL)
    table = ctx.artifacts["route_table"]
    exact_ctx = ProbeContext(cache_dir=ctx.cache_dir)
    out = route_exact(exact_ctx, prompts=prompts, policy="curve-router", reference_policy="curve-id", **SMALL)
    assert out["selectivity"] == [pytest.approx(table["curve-router"]["exact"]["selectivity"])]
    assert out["reference_selectivity"] == [pytest.approx(table["curve-id"]["exact"]["selectivity"])]
    assert exact_ctx.artifacts["exact_table"]["curve-router"]["at_risk"] == pytest.approx(table["curve-router"]["exact"]["at_risk"])
    assert "computed" not in exact_ctx.info["cache"].values()  # the route hazard probe's trace and exact entries, reused


def test_a_prompt_with_nothing_at_risk_is_not_applicable_with_the_reason(ctx, monkeypatch) -> None:
    import probes.curves.route_hazard
    from probes.curves.route_exact import route_exact

    def no_remerge_positions(ctx_, run, passes, records, names, trace_key_of):  # type: ignore[no-untyped-def]
        empty = _counts((0.2, 1.0), (0.0, 0.0))
        return {p.id: {name: empty for name in names} for p in run.chosen}

    monkeypatch.setattr(probes.curves.route_hazard, "exact_values", no_remerge_positions)
    with pytest.raises(NotApplicable, match="exact selectivity and reference_selectivity undefined on lighthouse"):
        route_exact(ctx, prompts=["lighthouse"], **SMALL)
    assert ctx.artifacts["undefined"]["selectivity"].startswith("no probability mass at risk")


def test_a_typo_in_a_policy_fails_before_any_work() -> None:
    from probes.curves.route_exact import route_exact

    with pytest.raises(ValueError, match="unknown policy"):
        route_exact(ProbeContext(), policy="curve-routr")
