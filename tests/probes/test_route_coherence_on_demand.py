"""Route items continue fork departures only when their check reads coherence, and decide on the same numbers.

Continuing fork departures is most of what a route item generates; a check on selectivities or
hazard factors reads none of it. The runner tells the probe what the check reads
(``ProbeContext.reads``); these tests hold the probe to generating nothing for coherence then, to
giving every other output exactly as a call that reads everything does, and to caching coherence per
(prompt, policy): the first item continues every route policy's departures in one batch, and an item
with one more policy continues that policy's alone.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

pytest.importorskip("mlx.core")

import claimcheck.api  # noqa: E402
import claimcheck.api.sampling  # noqa: E402
import claimcheck.models  # noqa: E402
from claimcheck.claim import Check  # noqa: E402
from claimcheck.claims.loader import load_claims_text  # noqa: E402
from claimcheck.engine.sampler import Sampler  # noqa: E402
from claimcheck.probing.registry import ProbeContext, get_probe  # noqa: E402
from probes.curves import route_hazard  # noqa: E402
from tests.sampling.tiny import TinyLoaded, tiny_model  # noqa: E402

SMALL = {"max_ref_tokens": 30, "batch_size": 16}
PROMPTS = ["lighthouse", "night-train"]
SELECTIVITY = frozenset({"log_selectivity", "reference_log_selectivity"})


@pytest.fixture(scope="module")
def tiny() -> TinyLoaded:
    return TinyLoaded(tiny_model())


@pytest.fixture
def continued(monkeypatch: pytest.MonkeyPatch, tiny: TinyLoaded) -> list[int]:
    """How many fork departures each coherence computation continued (one entry per call)."""
    monkeypatch.setattr(claimcheck.models, "load", lambda model, variant=None, needs_text=False: tiny)
    monkeypatch.setattr(claimcheck.api, "load", lambda model, variant=None, needs_text=False: tiny)
    calls: list[int] = []
    real = claimcheck.api.sampling.fork_departure_coherence

    def counting(model: Any, items: Any, **kwargs: Any) -> Any:
        calls.append(len(items))
        return real(model, items, **kwargs)

    monkeypatch.setattr(claimcheck.api.sampling, "fork_departure_coherence", counting)
    return calls


def _call(folder: Any, reads: frozenset[str] | None, **params: Any) -> tuple[dict[str, list[float]], dict[str, Any]]:
    ctx = ProbeContext(cache_dir=str(folder), reads=reads)
    out = route_hazard.route_hazard(ctx, prompts=PROMPTS, seeds=16, coherence_seeds=8, **(SMALL | params))
    return out, ctx.artifacts


def test_a_check_reading_no_coherence_continues_nothing_and_gets_the_same_samples(tmp_path, continued) -> None:
    lazy, lazy_artifacts = _call(tmp_path / "lazy", SELECTIVITY)
    assert continued == []
    assert lazy["incoherent"] == [] and lazy["coherence_gap"] == []
    assert lazy_artifacts["work"].startswith("no fork departure continued")
    full, full_artifacts = _call(tmp_path / "full", None)
    assert len(continued) == 1 and continued[0] > 0, "a call reading everything continues the fork departures"
    assert full["incoherent"], "the tiny model's fork departures give coherence samples to compare"
    for name in set(full) - {"incoherent", "coherence_gap"}:
        assert lazy[name] == full[name], name
    for name in ("labels", "estimates", "undefined"):
        assert lazy_artifacts[name] == full_artifacts[name], name
    for policy, row in full_artifacts["route_table"].items():
        assert {k: v for k, v in row.items() if k != "coherent"} == {k: v for k, v in lazy_artifacts["route_table"][policy].items()
                                                                    if k != "coherent"}
        assert lazy_artifacts["route_table"][policy]["coherent"] is None
        assert full_artifacts["route_table"][policy]["coherent"] is not None


def test_coherence_is_cached_per_policy_and_read_the_same_by_every_check_that_wants_it(tmp_path, continued) -> None:
    first, _ = _call(tmp_path, frozenset({"incoherent"}), policy="curve-router")
    again, _ = _call(tmp_path, frozenset({"coherence_gap"}), policy="curve-router", reference_policy="default")
    assert len(continued) == 1, "the second item reads the stored continuations of the same policy"
    assert again["incoherent"] == first["incoherent"] and again["coherence_gap"] == first["coherence_gap"]
    _call(tmp_path, frozenset({"incoherent"}), policy="temp2")
    assert len(continued) == 2 and 0 < continued[1] < continued[0], "another policy's departures are continued, that policy's alone"
    _call(tmp_path / "fresh", None, policy="temp2")
    assert continued[2] == continued[0] + continued[1], "a call from empty caches continues every route policy's and temp2's"


def test_the_sampler_tells_the_probe_what_the_check_reads_and_nothing_for_a_shared_measurement() -> None:
    text = """
id: reads-two
title: t
statement: s
source: {doc: d.md, section: s, figure: f}
scope: {kind: portable, backend: any}
probe: {name: route_hazard, params: {prompts: creative}}
check: {rule: equivalent, output: log_selectivity, reference: reference_log_selectivity, margin: 0.065, scale: difference}
budget: {min_samples: 2, max_samples: 2, looks: 1}
"""
    (claim,) = load_claims_text(text, "reads-two.yaml")
    ctx = ProbeContext()
    Sampler(claim, get_probe("route_hazard"), dict(claim.probe.params), ctx)
    assert ctx.reads == SELECTIVITY and not ctx.wants("incoherent", "coherence_gap") and ctx.wants("log_selectivity")
    shared = ProbeContext()
    Sampler(dataclasses.replace(claim, measurement="doc"), get_probe("route_hazard"), dict(claim.probe.params), shared)
    assert shared.reads is None and shared.wants("incoherent")
    assert Check(rule="ordering", outputs=("c", "a", "b")).reads() == ("c", "a", "b")
    assert Check(rule="equivalent", output="x", reference="y").reads() == ("x", "y")
    assert ProbeContext().wants("anything"), "a direct call reads every output"
