"""AUC, the logistic fit, leave-one-prompt-out scores and their jackknife."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from claimcheck.probing.sampling.classify import auc, cross_validated_auc, fit_logistic, jackknife_auc, out_of_fold_scores


def test_auc_by_hand_and_against_mann_whitney() -> None:
    assert auc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == 0.75  # 3 of 4 positive-negative pairs ordered
    assert auc([1, 1], [0, 1]) == 0.5  # a tie counts half
    assert auc([1, 2], [1, 1]) is None
    rng = np.random.default_rng(0)
    scores, labels = rng.normal(size=60), rng.integers(0, 2, 60)
    u = stats.mannwhitneyu(scores[labels == 1], scores[labels == 0]).statistic
    assert auc(scores, labels) == pytest.approx(u / (labels.sum() * (60 - labels.sum())))


def test_logistic_fit_recovers_a_known_direction() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2000, 2))
    y = (rng.random(2000) < 1 / (1 + np.exp(-(0.5 + 2.0 * x[:, 0])))).astype(float)
    weights = fit_logistic(x, y, ridge=1e-6)
    # 2000 samples: the maximum-likelihood estimate is within ~0.2 of (0.5, 2, 0).
    np.testing.assert_allclose(weights, [0.5, 2.0, 0.0], atol=0.25)


def _groups_data(signal: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    groups = np.repeat([f"p{i}" for i in range(8)], 30)
    y = rng.integers(0, 2, len(groups))
    x = rng.normal(size=(len(groups), 3))
    x[:, 0] += signal * y
    return x, y, groups


def test_out_of_fold_scores_never_see_their_own_prompt() -> None:
    x, y, groups = _groups_data(2.0)
    scores = out_of_fold_scores(x, y, groups)
    # Changing one prompt's labels leaves that prompt's own scores unchanged.
    y2 = y.copy()
    y2[groups == "p3"] = 1 - y2[groups == "p3"]
    np.testing.assert_allclose(out_of_fold_scores(x, y2, groups)[groups == "p3"], scores[groups == "p3"])


def test_a_real_signal_is_found_and_noise_is_not() -> None:
    informative = cross_validated_auc(*_groups_data(2.0))
    noise = cross_validated_auc(*_groups_data(0.0))
    assert informative > 0.8
    assert abs(noise - 0.5) < 0.1  # 240 nodes: the AUC's null SD is ~0.04


def test_jackknife_pseudo_values_one_per_prompt() -> None:
    x, y, groups = _groups_data(1.0)
    pseudo, full, reason = jackknife_auc(x, y, groups)
    assert reason is None and len(pseudo) == 8
    assert np.mean(pseudo) == pytest.approx(full, abs=0.1)  # jackknife bias correction is small here


def test_jackknife_is_undefined_without_both_classes() -> None:
    x, y, groups = _groups_data(1.0)
    pseudo, full, reason = jackknife_auc(x, np.zeros_like(y), groups)
    assert pseudo == [] and "no node" in reason
    assert jackknife_auc(x[:60], y[:60], groups[:60])[2].startswith("needs nodes from at least 3 prompts")
