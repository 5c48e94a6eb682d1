"""Smoke runs of the curve probes on a tiny random model with a character tokenizer.

They check plumbing and bookkeeping (outputs present, well-formed, cached, undefined values
reported), not findings: a random model's text means nothing.
"""

from __future__ import annotations

import math

import pytest

pytest.importorskip("mlx.core")

import claimcheck.api
import claimcheck.models  # noqa: E402
from probes.curves import fork_map, identity_control, route_hazard, temperature_search  # noqa: E402
from probes.curves.curve_prompts import select_prompts  # noqa: E402
from probes.curves.curve_text import chat_ids, stop_token_ids  # noqa: E402
from claimcheck.probing.registry import ProbeContext, get_probe  # noqa: E402
from tests.sampling.tiny import TinyLoaded, tiny_model  # noqa: E402

SMALL = {"max_ref_tokens": 30, "batch_size": 16}


@pytest.fixture(scope="module")
def tiny() -> TinyLoaded:
    return TinyLoaded(tiny_model())


@pytest.fixture
def ctx(tmp_path, monkeypatch, tiny) -> ProbeContext:
    monkeypatch.setattr(claimcheck.models, "load", lambda model, variant=None, needs_text=False: tiny)
    monkeypatch.setattr(claimcheck.api, "load", lambda model, variant=None, needs_text=False: tiny)  # what probes import
    return ProbeContext(cache_dir=str(tmp_path))


def _finite(samples: dict[str, list[float]]) -> None:
    for name, values in samples.items():
        assert all(isinstance(v, float) and math.isfinite(v) for v in values), name


def test_bisector_trace_outputs_and_cache(ctx) -> None:
    out = fork_map.bisector_trace(ctx, prompts=["lighthouse", "weights-advice", "paris"], **SMALL)
    _finite(out)
    assert set(out) == set(get_probe("bisector_trace").outputs)
    assert len(out["genuine_alternatives"]) == 3
    assert all(0.0 <= v <= 1.0 for v in out["fork_share"])
    assert len(ctx.artifacts["fork_map"]) == 3
    assert set(ctx.info["cache"].values()) == {"computed"}
    again = ProbeContext(cache_dir=ctx.cache_dir)
    assert fork_map.bisector_trace(again, prompts=["lighthouse", "weights-advice", "paris"], **SMALL) == out
    assert set(again.info["cache"].values()) == {"reused"}
    assert fork_map.bisector_trace(ProbeContext(look=1, cache_dir=ctx.cache_dir), prompts="paris", **SMALL)["fork_share"] == []


def test_route_hazard_outputs(ctx) -> None:
    out = route_hazard.route_hazard(ctx, prompts=["lighthouse", "night-train"], seeds=12, coherence_seeds=4, **SMALL)
    _finite(out)
    assert set(out) == set(get_probe("route_hazard").outputs)
    table = ctx.artifacts["route_table"]
    assert set(table) == {"default", "temp0.8", "curve-id", "curve-router"}
    for name, values in out.items():
        if name in ("incoherent", "coherence_gap"):
            continue
        # one pseudo-value per seed (per prompt for the exact, seedless estimates) or none, with the reason recorded
        assert len(values) in ((0, 1, 2) if "exact" in name else (0, 12))
        if not values:
            assert name in ctx.artifacts["undefined"]
    assert set(out["incoherent"]) <= {0.0, 1.0}
    assert len(out["incoherent"]) == len(out["coherence_gap"])


def test_identity_policy_and_temperature_one_depart_identically(ctx) -> None:
    route_hazard.route_hazard(ctx, prompts=["lighthouse"], policy="curve-id", reference_policy="temp1", seeds=12, coherence_seeds=0, **SMALL)
    table = ctx.artifacts["route_table"]
    assert table["curve-id"]["departures"] == table["temp1"]["departures"]
    assert table["curve-id"]["at_risk"] == table["temp1"]["at_risk"]


def test_fork_classifier_outputs(ctx) -> None:
    out = fork_map.fork_classifier(ctx, prompts="all", **SMALL)
    _finite(out)
    report = ctx.artifacts["classifier"]
    if out["auc"]:
        assert len(out["auc"]) == len(report["prompts_with_nodes"]) == len(out["chance_auc"])
    else:
        assert report["undefined"]


def test_temperature_search_outputs(ctx) -> None:
    out = temperature_search.temperature_search(ctx, prompt="lighthouse", temperatures=[0.5, 1.0], seeds=3, max_tokens=12, batch_size=8)
    _finite(out)
    assert len(out["exact_match"]) == len(out["crossed_fork"]) == len(out["shared_prefix"]) == 6
    assert set(out["exact_match"]) <= {0.0, 1.0}
    assert "fork_position" in ctx.artifacts["target"]
    with pytest.raises(Exception, match="one prompt id"):
        temperature_search.temperature_search(ctx, prompt="creative")


def test_temperature_search_finds_the_target_when_it_is_a_temperature_sample(ctx) -> None:
    # Target drawn at temperature 1 with seed 2: the sweep's (T=1, seed 2) sample is the same text.
    out = temperature_search.temperature_search(ctx, prompt="lighthouse", target_policy="temp1", target_seed=2, temperatures=[1.0], seeds=3, max_tokens=10)
    assert out["exact_match"] == [0.0, 0.0, 1.0]


def test_identity_control_outputs(ctx, tiny) -> None:
    out = identity_control.identity_control(ctx, prompts=["lighthouse", "paris"], seeds=3, max_tokens=10)
    assert out["mismatch"] == [0.0] * 6
    assert out["token_agreement"] == [1.0] * 6
    router_ctx = ProbeContext(cache_dir=ctx.cache_dir)
    router = identity_control.identity_control(router_ctx, prompts=["lighthouse"], curve="curve-router", seeds=3, max_tokens=10)
    assert len(router["mismatch"]) == 3
    assert sum(router["mismatch"]) >= 1  # the router curve is not temperature 1
    # the reference arm, shadowed then continued alone, is what temperature 1 draws by itself
    from claimcheck.probing.sampling import GenerationRequest, generate_batch, get_policy

    ids = chat_ids(tiny.tokenizer, select_prompts("lighthouse")[0].text)
    alone = generate_batch(tiny.model, [GenerationRequest(prompt=ids, policy=get_policy("temp1"), seed=s, max_tokens=10) for s in range(3)],
                           stop_ids=(), ban_ids=stop_token_ids(tiny.tokenizer))
    for example in router_ctx.artifacts["identity"]["differing_examples"]:
        assert example["reference"] == tiny.tokenizer.decode(alone[example["seed"]].tokens)
        assert example["first_difference"] is not None


def test_stopping_samples_at_a_miss_changes_no_match_count(ctx) -> None:
    """``stop_at_miss`` cuts samples short but finds the same matches, crossings and shared prefixes."""
    design = dict(prompt="lighthouse", target_policy="temp1", target_seed=2, temperatures=[0.7, 1.0], seeds=4, max_tokens=16)
    full = temperature_search.temperature_search(ctx, **design)
    cut_ctx = ProbeContext(cache_dir=ctx.cache_dir)
    cut = temperature_search.temperature_search(cut_ctx, **design, stop_at_miss=True)
    for name in ("exact_match", "crossed_fork", "shared_prefix"):
        assert cut[name] == full[name], name
    assert sum(full["exact_match"]) >= 1  # the (T=1, seed 2) sample is the target itself
    stopped = cut_ctx.artifacts["stopped_at_miss"]
    assert 1 <= stopped <= len(cut["exact_match"]) - 1
    assert len(cut["content_recall"]) == len(cut["exact_match"]) - stopped


def test_genuine_only_traces_agree_with_full_ones_and_complete_into_them(ctx, tiny, monkeypatch) -> None:
    """Fork shares from genuine-only traces equal full traces'; completing one gives the full trace."""
    names = ["lighthouse", "paris"]
    chosen = select_prompts(names)
    full = fork_map.traces(ctx, tiny, chosen, max_ref_tokens=30, batch_size=16)
    p2s = sorted(node["p2"] for record in full.values() for node in record["nodes"])
    threshold = p2s[len(p2s) // 2]  # half the positions are genuine alternatives
    full = fork_map.traces(ProbeContext(cache_dir=ctx.cache_dir + "/full"), tiny, chosen, genuine_p2=threshold, max_ref_tokens=30, batch_size=16)
    split_ctx = ProbeContext(cache_dir=ctx.cache_dir + "/split")
    genuine = fork_map.traces(split_ctx, tiny, chosen, genuine_p2=threshold, max_ref_tokens=30, batch_size=16, branches="genuine")
    for name in names:
        wanted = [node for node in full[name]["nodes"] if node["p2"] >= threshold]
        assert 0 < len(genuine[name]["nodes"]) == len(wanted) < len(full[name]["nodes"])
        assert [n["outcome"] for n in genuine[name]["nodes"]] == [n["outcome"] for n in wanted]
        assert genuine[name]["labels"] is None
        for field in ("fork_share", "first_alternative", "traced", "genuine_alternatives"):
            assert genuine[name]["summary"][field] == full[name]["summary"][field], field
    completed = fork_map.traces(split_ctx, tiny, chosen, genuine_p2=threshold, max_ref_tokens=30, batch_size=16)
    for name in names:
        assert completed[name]["work"]["completed_a_genuine_only_trace"]
        assert [n["position"] for n in completed[name]["nodes"]] == [n["position"] for n in full[name]["nodes"]]
        assert completed[name]["labels"] == full[name]["labels"]
    # a stored full trace serves a genuine-only request without tracing anything
    import claimcheck.probing.sampling.runs as runs

    monkeypatch.setattr(runs, "bisector_traces", lambda *a, **k: pytest.fail("traced again"))
    again = ProbeContext(cache_dir=ctx.cache_dir + "/split")
    assert fork_map.traces(again, tiny, chosen, genuine_p2=threshold, max_ref_tokens=30, batch_size=16, branches="genuine") == completed
