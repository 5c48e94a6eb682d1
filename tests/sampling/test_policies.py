"""Matched-seed draws, inverse-CDF sampling, truncation, and the policies of the route experiment."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from claimcheck.probing.sampling.policies import (
    CDF_BLOCK,
    CdfTable,
    SeededSampler,
    draw_tokens,
    get_policy,
    log_softmax,
    truncation_mask,
)
from claimcheck.probing.sampling.seeds import BLOCK, uniform_draw, uniform_draws


def _logprobs(rows: int, vocab: int, scale: float, seed: int = 0) -> np.ndarray:
    return log_softmax(np.random.default_rng(seed).standard_normal((rows, vocab)).astype(np.float32) * scale)


def test_uniform_draw_depends_only_on_seed_and_step() -> None:
    value = uniform_draw(7, 300)
    # Same value whatever else is drawn around it, and across the block boundary.
    assert uniform_draws([1, 7, 7], [5, 300, 300])[1] == value
    assert uniform_draws([7] * 3, [BLOCK - 1, BLOCK, 300]).tolist()[2] == value
    assert uniform_draw(7, 299) != value and uniform_draw(8, 300) != value
    assert 0.0 <= value < 1.0


def test_uniform_draws_look_uniform() -> None:
    draws = np.array([uniform_draw(seed, step) for seed in range(40) for step in range(0, 600, 7)])
    # Kolmogorov-Smirnov against U(0,1); a correct stream fails this 1 time in 1000.
    assert stats.kstest(draws, "uniform").pvalue > 1e-3


def test_inverse_cdf_picks_the_token_whose_interval_holds_u() -> None:
    probs = np.array([[0.2, 0.5, 0.0, 0.3]])
    table = CdfTable(np.log(np.where(probs > 0, probs, 1e-300)).astype(np.float32))
    # cumulative 0.2, 0.7, 0.7, 1.0: u = 0.1 -> 0, 0.5 -> 1, 0.75 -> 3; the zero-probability token never.
    assert table.locate(np.zeros(3, dtype=int), np.array([0.1, 0.5, 0.75])).tolist() == [0, 1, 3]


def test_masked_and_zero_tokens_are_never_drawn_even_at_u_near_one() -> None:
    z = np.full((1, 3 * CDF_BLOCK + 5), -np.inf, dtype=np.float32)
    z[0, [3, CDF_BLOCK + 1]] = [0.0, -1.0]
    table = CdfTable(z)
    picks = table.locate(np.zeros(4, dtype=int), np.array([0.0, 0.5, 0.999999, 1.0 - 2**-53]))
    assert set(picks.tolist()) <= {3, CDF_BLOCK + 1}
    assert picks[-1] == CDF_BLOCK + 1


def test_draws_follow_the_distribution() -> None:
    vocab = 700  # spans several CDF blocks
    lp = _logprobs(1, vocab, 2.0, seed=3)
    policy = get_policy("temp1")
    tokens = np.array([draw_tokens(policy, lp, [seed], step)[0] for seed in range(40) for step in range(100)])
    probs = np.exp(lp[0].astype(np.float64))
    top = np.argsort(-probs)[:10]
    observed = np.array([np.sum(tokens == t) for t in top] + [np.sum(~np.isin(tokens, top))])
    expected = np.append(probs[top], 1 - probs[top].sum()) * len(tokens)
    # Chi-square goodness of fit on the 10 most likely tokens + the rest; fails 1 time in 1000 if correct.
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_identity_curve_and_temperature_one_draw_the_same_tokens() -> None:
    lp = _logprobs(64, 5000, 3.0)
    seeds = list(range(64))
    for step in (0, 1, 257):
        same = draw_tokens(get_policy("curve-id"), lp, seeds, step) == draw_tokens(get_policy("temp1"), lp, seeds, step)
        assert same.all()


def test_router_curve_changes_the_distribution() -> None:
    lp = _logprobs(64, 5000, 3.0)
    seeds = list(range(64))
    router = draw_tokens(get_policy("curve-router"), lp, seeds, 0)
    plain = draw_tokens(get_policy("temp1"), lp, seeds, 0)
    assert 0 < np.sum(router != plain) < 64  # matched seeds: mostly the same token, not always


def test_a_row_draws_the_same_alone_and_in_a_batch() -> None:
    lp = _logprobs(8, 3000, 2.5)
    policy = get_policy("curve-router")
    batch = draw_tokens(policy, lp, list(range(10, 18)), [3, 4, 5, 6, 7, 8, 9, 10])
    alone = [draw_tokens(policy, lp[i : i + 1], [10 + i], 3 + i)[0] for i in range(8)]
    assert batch.tolist() == alone


@pytest.mark.parametrize("scale", [1.0, 4.0, 9.0])
def test_truncation_matches_mlx_lm_top_p_then_top_k(scale: float) -> None:
    mx = pytest.importorskip("mlx.core")
    from mlx_lm.sample_utils import apply_top_k, apply_top_p

    lp = _logprobs(16, 4096, scale, seed=int(scale))
    ours = truncation_mask(lp, 0.95, 64)
    theirs = np.isfinite(np.array(apply_top_k(apply_top_p(mx.array(lp), 0.95), 64)))
    # mlx-lm sums in float32, we in float64: allow the boundary token to differ in a row or so.
    assert np.sum(ours != theirs) <= 2
    assert np.all(ours.sum(axis=1) <= 64)


def test_default_policy_draws_only_inside_top_k_and_top_p() -> None:
    lp = _logprobs(32, 4096, 1.0)
    kept = truncation_mask(lp, 0.95, 64)
    tokens = draw_tokens(get_policy("default"), lp, list(range(32)), 0)
    assert kept[np.arange(32), tokens].all()


def test_greedy_and_temperature_policies() -> None:
    lp = _logprobs(4, 1000, 3.0)
    assert draw_tokens(get_policy("greedy"), lp, [0] * 4, 0).tolist() == np.argmax(lp, axis=1).tolist()
    cold = get_policy("temp0.4")
    assert cold.temperature == 0.4
    np.testing.assert_allclose(cold.log_weights(lp), lp / 0.4, rtol=1e-6)


def test_unknown_policy_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="curve-router"):
        get_policy("router")


def test_seeded_sampler_is_an_mlx_lm_sampler_that_advances_one_step_per_call() -> None:
    mx = pytest.importorskip("mlx.core")
    lp = _logprobs(2, 500, 2.0)
    sampler = SeededSampler(get_policy("temp1"), [5, 6], start_step=10)
    first = sampler(mx.array(lp))
    assert isinstance(first, mx.array) and first.shape == (2,)
    assert sampler.step == 11
    assert np.array(first).tolist() == draw_tokens(get_policy("temp1"), lp, [5, 6], 10).tolist()
