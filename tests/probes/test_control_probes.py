"""The probe parameters and estimators that let claims be shown able to fail (their positive controls)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from claimcheck.probing.registry import ProbeContext
from claimcheck.probing.sampling import Policy, get_policy
from probes.decode.decode_loop import decode_arms
from probes.decode.decode_schedules import Session, padded, pipelined, repeated
from probes.decode.moe import last_level_cache_bytes
from probes.curves.route_exact import exact_counts
from probes.curves.temperature_controls import exact_match_log10, likely_prefix_length, prefix_log10, search_seeds


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _session(clock: FakeClock, tokens: int = 3) -> Session:
    def step(token: int) -> int:
        clock.now += 0.5  # every step costs the fake device half a second
        return token + 1

    return Session(step=step, first=0, tokens=tokens, async_eval=lambda *_: None, read=int, clock=clock)


def test_a_padded_arm_takes_its_padding_longer_with_the_same_tokens(monkeypatch) -> None:
    clock = FakeClock()

    def fake_spin(ms: float, clock_: FakeClock) -> None:
        clock_.now += ms / 1e3

    # Patched in the functions' own globals: the module object in sys.modules may be a later import of the file.
    monkeypatch.setitem(pipelined.__globals__, "spin", fake_spin)
    plain = pipelined(_session(clock))
    slowed = padded(pipelined, 250.0)(_session(clock))
    assert slowed.tokens == plain.tokens == [1, 2, 3]
    assert slowed.seconds == pytest.approx(plain.seconds + 0.25)
    assert slowed.build_seconds == plain.build_seconds


def test_a_repeated_arm_takes_every_pass_on_a_fresh_session_and_reports_the_first_tokens() -> None:
    clock = FakeClock()
    fresh_sessions = []

    def fresh() -> Session:
        fresh_sessions.append(_session(clock))
        return fresh_sessions[-1]

    plain = pipelined(_session(clock))
    twice = repeated(pipelined, 2, fresh)(_session(clock))
    assert twice.tokens == plain.tokens == [1, 2, 3] and len(fresh_sessions) == 1
    assert twice.seconds == pytest.approx(2 * plain.seconds), "a second pass costs what the first does"
    assert twice.build_seconds == pytest.approx(2 * plain.build_seconds)
    with pytest.raises(ValueError, match="`pad_passes` must be at least 1"):
        repeated(pipelined, 0, fresh)


def test_decode_arms_refuses_padding_an_arm_it_does_not_run() -> None:
    with pytest.raises(ValueError, match="`pad_arm` must be one of the arms"):
        decode_arms(ProbeContext(), arms=["baseline", "prebuilt"], pad_arm="serial", pad_ms=10)
    with pytest.raises(ValueError, match="`pad_passes` repeats the `pad_arm`"):
        decode_arms(ProbeContext(), arms=["baseline", "prebuilt"], pad_passes=2)


def test_last_level_cache_is_the_highest_data_level(tmp_path) -> None:
    for name, level, kind, size in (("index0", 1, "Data", "32K"), ("index1", 1, "Instruction", "32K"),
                                    ("index2", 2, "Unified", "1024K"), ("index3", 3, "Unified", "32768K")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "level").write_text(f"{level}\n")
        (tmp_path / name / "type").write_text(f"{kind}\n")
        (tmp_path / name / "size").write_text(f"{size}\n")
    assert last_level_cache_bytes(tmp_path) == 32 * 2**20
    assert last_level_cache_bytes(tmp_path / "missing") is None


def _rows(probabilities: list[list[float]]) -> np.ndarray:
    return np.log(np.asarray(probabilities, dtype=np.float64)).astype(np.float32)


def test_exact_hazards_by_hand() -> None:
    # The reference token (id 0) has probability 0.9, 0.5, 0.8 at positions labelled FORK, REMERGE, FORK.
    rows = _rows([[0.9, 0.1], [0.5, 0.5], [0.8, 0.2]])
    counts = exact_counts(rows, [0, 0, 0], ["FORK", "REMERGE", "FORK"], get_policy("temp1"))
    # still on the path: 1, 0.9, 0.45; departing there: 0.1, 0.45, 0.09
    assert counts.at_risk["FORK"] == pytest.approx(1.45) and counts.departures["FORK"] == pytest.approx(0.19)
    assert counts.at_risk["REMERGE"] == pytest.approx(0.9) and counts.departures["REMERGE"] == pytest.approx(0.45)
    assert counts.selectivity() == pytest.approx((0.19 / 1.45) / 0.5)


def test_exact_hazards_are_what_many_sampled_seeds_average_to() -> None:
    """4000 fixed seeds through the sampled path agree with the exact hazards within 4 standard errors."""
    from claimcheck.probing.sampling import Counts, hazard, sample_counts
    from claimcheck.probing.sampling.runs import first_departures

    rng = np.random.default_rng(7)
    logits = rng.normal(size=(12, 6)) * 1.5
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    ref = [int(np.argmax(row)) for row in probabilities]
    labels = ["FORK", "REMERGE", "LOCKED"] * 4
    rows = _rows(probabilities.tolist())
    policy = get_policy("temp0.8")
    exact = exact_counts(rows, ref, labels, policy)
    departures, _ = first_departures(rows, ref, policy, list(range(4000)))
    pooled = Counts({}, {})
    for d in departures:
        pooled = pooled + sample_counts(d, labels)
    for label in ("FORK", "REMERGE"):
        sampled = hazard(pooled, label).value
        p = exact.hazard(label)
        assert sampled is not None and p is not None
        se = math.sqrt(p * (1 - p) / pooled.at_risk[label])
        assert abs(sampled - p) < 4 * se, (label, sampled, p)


def test_exact_match_odds_are_the_product_of_the_policy_probabilities() -> None:
    rows = _rows([[0.5, 0.25, 0.25], [0.1, 0.6, 0.3]])
    tokens = [0, 1]
    assert exact_match_log10(rows, tokens, get_policy("temp1"), []) == pytest.approx(math.log10(0.5 * 0.6), abs=1e-6)
    # banning id 2 renormalises over the rest before the policy applies
    assert exact_match_log10(rows, tokens, get_policy("temp1"), [2]) == pytest.approx(
        math.log10((0.5 / 0.75) * (0.6 / 0.7)), abs=1e-6)
    sharp = Policy(name="t0.5", temperature=0.5)
    expected = math.log10((0.25 / (0.25 + 0.0625 * 2)) * (0.36 / (0.01 + 0.36 + 0.09)))
    assert exact_match_log10(rows, tokens, sharp, []) == pytest.approx(expected, abs=1e-6)


def test_the_likely_prefix_is_the_longest_opening_at_the_odds() -> None:
    rows = _rows([[0.9, 0.05, 0.05], [0.1, 0.5, 0.4], [0.2, 0.2, 0.6]])
    tokens = [0, 1, 2]  # cumulative odds 0.9, 0.45, 0.27
    temp1 = get_policy("temp1")
    assert prefix_log10(rows, tokens, temp1, []) == pytest.approx(np.log10([0.9, 0.45, 0.27]), abs=1e-6)
    cumulative = prefix_log10(rows, tokens, temp1, [])
    assert [likely_prefix_length(cumulative, odds) for odds in (0.95, 0.9, 0.5, 0.3, 0.27, 0.01)] == [1, 1, 1, 2, 3, 3]


def test_search_seeds_leave_out_the_target_seed() -> None:
    assert search_seeds(4, 0, 2) == [0, 1, 3, 4]
    assert search_seeds(3, 10, 2) == [10, 11, 12]


def test_a_perturbed_curve_is_another_curve_and_bad_perturbations_are_refused() -> None:
    from probes.curves.identity_control import perturbed_policy

    moved = perturbed_policy("curve-id", 0.05)
    assert moved.name == "curve-id+0.05" and moved.curve is not None and not moved.curve.is_identity
    lp = np.log(np.asarray([[0.7, 0.2, 0.05, 0.05]], dtype=np.float32))
    weights = moved.log_weights(lp)
    assert not np.allclose(weights - weights.max(), lp - lp.max())
    with pytest.raises(ValueError, match="named curve"):
        perturbed_policy("temp1", 0.05)
    with pytest.raises(ValueError, match=r"\(-0.5, 0.5\)"):
        perturbed_policy("curve-id", 0.9)


def test_swap_poles_needs_two_different_poles() -> None:
    from claimcheck.errors import ProbeError
    from probes.curves.fork_map import bisector_trace

    for bad in (["creative"], ["creative", "creative"], ["creative", "poetry"]):
        with pytest.raises(ProbeError, match="`swap_poles`"):
            bisector_trace(ProbeContext(), swap_poles=bad)


# --- the same parameters on a tiny random model (plumbing only: its text means nothing) -----------

SMALL = {"max_ref_tokens": 30, "batch_size": 16}


@pytest.fixture(scope="module")
def tiny():  # type: ignore[no-untyped-def]
    pytest.importorskip("mlx.core")
    from tests.sampling.tiny import TinyLoaded, tiny_model

    return TinyLoaded(tiny_model())


@pytest.fixture
def ctx(tmp_path, monkeypatch, tiny) -> ProbeContext:
    import claimcheck.api
    import claimcheck.models

    monkeypatch.setattr(claimcheck.models, "load", lambda model, variant=None, needs_text=False: tiny)
    monkeypatch.setattr(claimcheck.api, "load", lambda model, variant=None, needs_text=False: tiny)  # what probes import
    return ProbeContext(cache_dir=str(tmp_path))


def test_the_search_can_run_the_targets_own_policy_under_other_seeds(ctx) -> None:
    from probes.curves.temperature_search import temperature_search

    design = dict(prompt="lighthouse", target_policy="temp1", target_seed=2, temperatures=[0.7, 1.0], seeds=3, max_tokens=10)
    sweep = temperature_search(ctx, **design)
    assert ctx.artifacts["own_seed_reproduces"] is True
    odds = ctx.artifacts["exact_match_log10_probability"]
    assert odds["target_policy"] == pytest.approx(odds["temperatures"]["1"], abs=1e-4)  # temp1 is the target's policy
    same = ProbeContext(cache_dir=ctx.cache_dir)
    arm = temperature_search(same, **design, search_policy="temp1")
    assert len(arm["exact_match"]) == len(sweep["exact_match"]) == 6
    assert same.artifacts["search_arm"] == {"policy": "temp1", "samples": 6, "exact": int(sum(arm["exact_match"])),
                                            "crossed_fork": int(sum(arm["crossed_fork"])), "excludes_seed": 2}
    assert same.info["cache"] and set(same.info["cache"].values()) == {"computed"}  # its own cache entry


def test_a_planted_own_seed_is_a_match_the_count_sees(ctx) -> None:
    from claimcheck.errors import ProbeError
    from probes.curves.temperature_search import temperature_search

    design = dict(prompt="lighthouse", target_policy="temp1", target_seed=2, temperatures=[1.0], seeds=4, max_tokens=10,
                  search_policy="temp1")
    planted = temperature_search(ctx, **design, with_own_seed=True)
    assert ctx.artifacts["search_arm"]["includes_own_seed"] == 2 and len(planted["exact_match"]) == 4
    assert planted["exact_match"][0] == 1.0 and planted["crossed_fork"][0] == 1.0, "the own seed redraws the target"
    with pytest.raises(ProbeError, match="`with_own_seed` plants"):
        temperature_search(ProbeContext(cache_dir=ctx.cache_dir), **(design | {"search_policy": ""}), with_own_seed=True)


def test_the_likely_prefix_cuts_target_and_samples_to_an_opening_the_policy_repeats(ctx) -> None:
    from probes.curves.temperature_search import temperature_search

    design = dict(prompt="lighthouse", target_policy="temp1", target_seed=2, temperatures=[1.0], seeds=6, max_tokens=10,
                  search_policy="temp1", likely_prefix=0.2)
    out = temperature_search(ctx, **design)
    cut = ctx.artifacts["likely_prefix"]
    assert 1 <= cut["tokens"] <= cut["of"] == 10 and len(ctx.artifacts["target"]["tokens"]) == cut["tokens"]
    assert cut["log10_probability"] >= math.log10(0.2) or cut["tokens"] == 1
    assert ctx.artifacts["exact_match_log10_probability"]["target_policy"] == pytest.approx(cut["log10_probability"], abs=1e-3)
    assert all(shared <= cut["tokens"] for shared in out["shared_prefix"])


def test_identity_control_with_a_perturbed_curve_is_its_own_design(ctx) -> None:
    from probes.curves.identity_control import identity_control

    plain = identity_control(ctx, prompts=["lighthouse"], seeds=3, max_tokens=10)
    moved_ctx = ProbeContext(cache_dir=ctx.cache_dir)
    moved = identity_control(moved_ctx, prompts=["lighthouse"], seeds=3, max_tokens=10, perturb=0.2)
    assert plain["mismatch"] == [0.0] * 3 and len(moved["mismatch"]) == 3
    assert moved_ctx.artifacts["identity"]["curve"]["name"] == "curve-id+0.2"
    assert set(moved_ctx.info["cache"].values()) == {"computed"}


def test_route_hazard_reports_exact_selectivities(ctx) -> None:
    from probes.curves.route_hazard import route_hazard

    out = route_hazard(ctx, prompts=["lighthouse", "night-train"], seeds=8, coherence_seeds=0, **SMALL)
    assert len(out["exact_log_selectivity"]) == len(out["reference_exact_log_selectivity"]) <= 2
    for name, row in ctx.artifacts["route_table"].items():
        exact = row["exact"]
        assert set(exact) >= {"fork_hazard", "remerge_hazard", "selectivity", "departures", "at_risk"}, name
        for label in ("FORK", "REMERGE"):
            assert 0.0 <= exact["departures"][label] <= exact["at_risk"][label] + 1e-12


def test_the_classifier_separates_forks_given_the_labels_own_score(ctx) -> None:
    from probes.curves.fork_map import bisector_trace, fork_classifier

    out = fork_classifier(ctx, prompts="all", features=["downstream_score"], **SMALL)
    report = ctx.artifacts["classifier"]
    if report["nodes"]["FORK"] and report["nodes"]["REMERGE"]:
        assert report["single_feature_auc"]["downstream_score"] in (0.0, 1.0)  # the score defines the label
    swapped_ctx = ProbeContext(cache_dir=ctx.cache_dir)
    plain = bisector_trace(ProbeContext(cache_dir=ctx.cache_dir), prompts="all", **SMALL)
    swapped = bisector_trace(swapped_ctx, prompts="all", swap_poles=["creative", "factual"], **SMALL)
    assert swapped["creative_fork_share"] == plain["factual_fork_share"]
    assert swapped["factual_fork_share"] == plain["creative_fork_share"]
    assert swapped["advice_fork_share"] == plain["advice_fork_share"]
    copy_ctx = ProbeContext(cache_dir=ctx.cache_dir)
    copied = bisector_trace(copy_ctx, prompts=["all", "copy"], swap_poles=["creative", "copy"], **SMALL)
    copy_shares = [row["summary"]["fork_share"] for row in copy_ctx.artifacts["fork_map"] if row["pole"] == "copy"]
    assert copied["creative_fork_share"] == [share for share in copy_shares if share is not None]
    assert copied["advice_fork_share"] == plain["advice_fork_share"], "the creative prompts file under no output"
    assert len(copied["fork_share"]) == len(plain["fork_share"]) + len(copied["creative_fork_share"])
    assert isinstance(out["auc"], list)


def test_a_seeded_draw_that_does_not_give_itself_back_leaves_the_search_undecided(ctx, monkeypatch) -> None:
    """On a backend whose sampling depends on the batch (CUDA), exact matches cannot be counted: inconclusive."""
    from claimcheck.errors import Undecidable
    from probes.curves.temperature_search import run_search, temperature_search

    design = dict(prompt="lighthouse", target_policy="temp1", target_seed=2, temperatures=[1.0], seeds=2, max_tokens=10)
    monkeypatch.setitem(run_search.__globals__, "own_seed_divergence", lambda *a, **k: 4)
    with pytest.raises(Undecidable, match="left its own sample at token 4 of 10"):
        temperature_search(ctx, **design)
    assert ctx.artifacts["own_seed_reproduces"] is False and ctx.artifacts["own_seed_diverges_at"] == 4


def test_the_own_seed_check_is_stored_with_its_search_and_a_reuse_reads_it(ctx, monkeypatch, tmp_path) -> None:
    """The solo redraw vouches for the samples it was drawn beside: a reuse of them reads its answer, divergence included."""
    from claimcheck.errors import Undecidable
    from probes.curves.temperature_search import run_search, temperature_search

    design = dict(prompt="lighthouse", target_policy="temp1", target_seed=2, temperatures=[1.0], seeds=2, max_tokens=10)
    real, calls = run_search.__globals__["own_seed_divergence"], []
    monkeypatch.setitem(run_search.__globals__, "own_seed_divergence", lambda *a, **k: calls.append(1) or real(*a, **k))
    first = temperature_search(ctx, **design)
    assert temperature_search(ProbeContext(cache_dir=ctx.cache_dir), **design) == first
    assert len(calls) == 1, "the reuse drew the target's own seed again"
    elsewhere = str(tmp_path / "diverged")
    monkeypatch.setitem(run_search.__globals__, "own_seed_divergence", lambda *a, **k: calls.append(1) or 4)
    for _ in range(2):
        with pytest.raises(Undecidable, match="left its own sample at token 4 of 10"):
            temperature_search(ProbeContext(cache_dir=elsewhere), **design)
    assert len(calls) == 2, "a stored divergence is read back, not drawn again"


def test_the_runner_turns_an_undecidable_measurement_into_inconclusive_with_its_reason() -> None:
    from claimcheck.errors import Undecidable
    from claimcheck.claims.loader import load_claims_text
    from claimcheck.probing.registry import Output, RegisteredProbe
    from claimcheck.engine.runner import RunOptions, run_claim_item

    def premise_fails(ctx, **params):
        raise Undecidable("the draw did not reproduce itself")

    claim = load_claims_text(
        "id: exact\ntitle: t\nstatement: s\nsource: {doc: d.md, section: '1', figure: f}\nscope: {kind: portable}\n"
        "probe: {name: premise_fails}\ncheck: {rule: at_least, output: x, threshold: 1}\n"
        "budget: {min_samples: 2, max_samples: 4, looks: 2, max_seconds: 60}\n", "exact.yaml")[0]
    probe = RegisteredProbe(name="premise_fails", function=premise_fails, outputs={"x": Output("count")})
    result = run_claim_item(claim, claim.id, {}, probe, options=RunOptions(), machine={})
    assert result.verdict.value == "inconclusive" and result.reason == "the draw did not reproduce itself"
