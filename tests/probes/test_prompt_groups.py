"""Curve probes measured in prompt groups: a seeded, balanced, disjoint deal; the runner stops once decided."""

from __future__ import annotations

import pytest

from claimcheck.probing.sampling.prompt_groups import PromptDealer

POLES = ("creative", "advice", "factual")
ITEMS = [(pole, i) for pole in POLES for i in range(5)]


def _pole(item: tuple[str, int]) -> str:
    return item[0]


def test_groups_are_balanced_disjoint_and_cover_the_selection() -> None:
    dealer = PromptDealer(ITEMS, seed=7, stratum=_pole)
    groups = [dealer.deal(2), dealer.deal(2), dealer.deal(2), dealer.deal(2)]
    assert [len(g) for g in groups] == [6, 6, 3, 0]
    assert all(sum(1 for item in g if item[0] == pole) == len(g) // 3 for g in groups for pole in POLES)
    dealt = [item for g in groups for item in g]
    assert sorted(dealt) == sorted(ITEMS) and len(set(dealt)) == len(ITEMS) and dealer.exhausted


def test_the_same_seed_deals_the_same_groups_and_another_seed_another_order() -> None:
    first = [PromptDealer(ITEMS, seed=s, stratum=_pole).deal(2) for s in (11, 11, 12)]
    assert first[0] == first[1]
    orders = {tuple(PromptDealer(ITEMS, seed=s, stratum=_pole).deal(1)) for s in range(20)}
    assert len(orders) > 5  # every prompt can come first: the early groups are random, not the file's order


def test_a_whole_selection_asked_at_once_comes_in_selection_order() -> None:
    assert PromptDealer(ITEMS, seed=3, stratum=_pole).deal(15) == ITEMS


mx = pytest.importorskip("mlx.core")


@pytest.fixture
def tiny_ctx(tmp_path, monkeypatch):
    import claimcheck.api
    import claimcheck.models
    from claimcheck.probing.registry import ProbeContext
    from tests.sampling.tiny import TinyLoaded, tiny_model

    loaded = TinyLoaded(tiny_model())
    monkeypatch.setattr(claimcheck.models, "load", lambda model, variant=None, needs_text=False: loaded)
    monkeypatch.setattr(claimcheck.api, "load", lambda model, variant=None, needs_text=False: loaded)  # what probes import
    return lambda **kw: ProbeContext(cache_dir=str(tmp_path), **kw)


SMALL = {"max_ref_tokens": 24, "batch_size": 16}


def test_the_fork_map_traced_in_groups_gives_the_whole_selections_values(tiny_ctx) -> None:
    from probes.curves.fork_map import bisector_trace

    whole = bisector_trace(tiny_ctx(n=15), prompts="all", **SMALL)
    grouped = tiny_ctx(seed=5, looks=4)
    parts = []
    for look, n in enumerate((2, 2, 1, 3)):
        grouped.look, grouped.n = look, n
        parts.append(bisector_trace(grouped, prompts="all", **SMALL))
    assert [len(ids) for ids in grouped.info["prompt_groups"]] == [6, 6, 3, 0]
    for name in ("funnel_length", "fork_share", "creative_fork_share", "factual_fork_share"):
        assert sorted(v for part in parts for v in part[name]) == sorted(whole[name]), name
    assert len(grouped.artifacts["fork_map"]) == 15
    assert set(grouped.info["cache"].values()) == {"reused"}  # each prompt's trace is the one the whole run stored


def test_the_runner_stops_at_the_first_group_that_decides(tiny_ctx, monkeypatch) -> None:
    from claimcheck.claims.loader import load_claims_text
    from claimcheck.engine.runner import RunOptions, run_claim_item
    from claimcheck.probing.registry import get_probe

    text = ("id: g\ntitle: t\nstatement: s\nsource: {doc: d.md, section: '1', figure: f}\nscope: {kind: portable}\n"
            "probe: {name: bisector_trace, params: {prompts: all, max_ref_tokens: 24, batch_size: 16}}\n"
            "check: {rule: at_most, output: funnel_length, threshold: 1000}\n"
            "budget: {min_samples: 2, max_samples: 5, looks: 3, max_seconds: 600}\n")
    claim = load_claims_text(text, "g.yaml")[0]
    cache_dir = tiny_ctx().cache_dir
    result = run_claim_item(claim, claim.id, dict(claim.probe.params), get_probe("bisector_trace"),
                            options=RunOptions(cache_dir=cache_dir), machine={})
    assert result.verdict.value == "holds", result.reason
    groups, record = result.info["prompt_groups"], result.decision.details["sequential"]
    assert record["stopped"] == "decided" and len(groups) == record["look"] < 3
    assert len(groups[0]) == 6  # 2 prompts per pole at the first look
    assert len({p for g in groups for p in g}) == sum(map(len, groups)) < 15  # disjoint groups, not all traced
