"""The twin-fork probe reads the temperature search's own design and cache: one set of parameters, one sample set."""

from __future__ import annotations

import inspect

import pytest

from claimcheck.errors import ProbeError, Undecidable
from claimcheck.probing.registry import ProbeContext
from probes.curves.temperature_fork import temperature_fork
from probes.curves.temperature_search import SEARCH, SearchDesign, temperature_search


def test_both_probes_show_the_designs_defaults() -> None:
    search = inspect.signature(temperature_search).parameters
    fork = inspect.signature(temperature_fork).parameters
    for field in ("model", "variant", "prompt", "target_policy", "target_seed", "temperatures", "seeds", "seed_start",
                  "max_tokens", "search_policy"):
        assert search[field].default == getattr(SEARCH, field), field
        assert fork[field].default == getattr(SEARCH, field), field
    assert search["stop_at_miss"].default is False and fork["stop_at_miss"].default is True  # the fork probe only needs prefixes


def test_the_twin_is_the_targets_own_seed_at_temperature_one_in_pure_temperature() -> None:
    design = SearchDesign(target_seed=7, temperatures=(0.5, 2.0), seeds=4, seed_start=20, search_policy="curve-router",
                          with_own_seed=True, likely_prefix=0.05)
    twin = design.twin()
    assert (twin.temperatures, twin.seeds, twin.seed_list(), twin.search_policy) == ((1.0,), 1, [7], "")
    assert (twin.with_own_seed, twin.likely_prefix) == (False, 0.0), "the twin is pure temperature, full length"
    assert (twin.target_policy, twin.target_seed, twin.max_tokens) == (design.target_policy, 7, design.max_tokens)
    assert SearchDesign(temperatures=[1, 2]).temperatures == (1.0, 2.0)


def test_a_sweep_holding_the_twin_is_refused_before_any_work() -> None:
    with pytest.raises(ProbeError, match="twin"):
        temperature_fork(ProbeContext(), target_seed=3, temperatures=[1.0], seeds=5, seed_start=0)


def test_a_twin_that_departs_at_the_first_token_leaves_no_opening_to_reproduce(monkeypatch: pytest.MonkeyPatch) -> None:
    import probes.curves.temperature_fork as module

    class Run:
        def __init__(self, shared: list[int]) -> None:
            self.rows = [{"shared_prefix": s} for s in shared]

    def fake_search(ctx: ProbeContext, design: SearchDesign) -> Run:
        return Run([0] if design.seeds == 1 else [0, 2, 0])  # the twin shares nothing with the target

    monkeypatch.setattr(module, "run_search", fake_search)
    monkeypatch.setattr(module, "record_search", lambda ctx, run: None)
    design = dict(target_seed=9, temperatures=[0.7], seeds=3)
    out = temperature_fork(ProbeContext(), **design)
    assert out["reached_twin_fork"] == [1.0, 1.0, 1.0] and out["crossed_twin_fork"] == [0.0, 1.0, 0.0]
    ctx = ProbeContext()
    with pytest.raises(Undecidable, match="no opening"):
        temperature_fork(ctx, **design, require_opening=True)
    assert ctx.artifacts["twin_fork"]["fork_position"] == 0.0


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


def test_the_fork_is_where_the_twin_leaves_the_target_and_the_sweep_is_the_search(ctx) -> None:
    design = dict(prompt="lighthouse", target_policy="curve-router", target_seed=9, temperatures=[0.7, 1.3], seeds=3, max_tokens=10)
    out = temperature_fork(ctx, **design)
    twin_ctx = ProbeContext(cache_dir=ctx.cache_dir)
    twin = temperature_search(twin_ctx, **(design | {"temperatures": [1.0], "seeds": 1, "seed_start": 9}), stop_at_miss=True)
    assert set(twin_ctx.info["cache"].values()) == {"reused"}  # the fork probe's twin is the search's own cache entry
    fork = twin["shared_prefix"][0]
    assert ctx.artifacts["twin_fork"]["fork_position"] == fork
    sweep_ctx = ProbeContext(cache_dir=ctx.cache_dir)
    sweep = temperature_search(sweep_ctx, **design, stop_at_miss=True)
    assert set(sweep_ctx.info["cache"].values()) == {"reused"}
    assert out["shared_prefix"] == sweep["shared_prefix"] and len(out["shared_prefix"]) == 6
    assert out["crossed_twin_fork"] == [1.0 if s > fork else 0.0 for s in sweep["shared_prefix"]]
    assert out["reached_twin_fork"] == [1.0 if s >= fork else 0.0 for s in sweep["shared_prefix"]]
    assert out["beyond_max_shared"] == [1.0 if s > 0 else 0.0 for s in sweep["shared_prefix"]]
    assert ctx.artifacts["own_seed_reproduces"] is True and set(ctx.artifacts["by_temperature"]) == {"0.7", "1.3"}
