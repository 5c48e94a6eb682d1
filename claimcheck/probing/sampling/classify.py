"""Can a fork be told from a re-merge by what a sampler sees locally?

A small, dependency-free classifier study: ridge-regularised logistic
regression on local next-token features, scored out of fold with
leave-one-prompt-out cross-validation (so a prompt's own style cannot leak
into its score), and the area under the ROC curve of the pooled out-of-fold
scores. Uncertainty is taken over prompts: leave-one-prompt-out jackknife
pseudo-values of the whole procedure (refitting inside), whose mean and
standard error give an interval on the AUC.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy import stats


def auc(scores: Sequence[float] | np.ndarray, labels: Sequence[int] | np.ndarray) -> float | None:
    """Area under the ROC curve (probability a positive outscores a negative; ties count half).

    ``None`` when either class is absent.
    """
    score_array = np.asarray(scores, dtype=np.float64)
    positive = np.asarray(labels, dtype=bool)
    positives, negatives = int(positive.sum()), int((~positive).sum())
    if positives == 0 or negatives == 0:
        return None
    ranks = stats.rankdata(score_array)
    return float((ranks[positive].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def fit_logistic(x: np.ndarray, y: np.ndarray, *, ridge: float = 1.0, iterations: int = 50) -> np.ndarray:
    """Weights (intercept first) of an L2-penalised logistic regression, by Newton's method.

    Features are expected standardised; the intercept is not penalised.
    """
    design = np.column_stack([np.ones(len(x)), x])
    weights = np.zeros(design.shape[1])
    penalty = np.full(design.shape[1], ridge)
    penalty[0] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-design @ weights))
        gradient = design.T @ (p - y) + penalty * weights
        hessian = (design * (p * (1 - p))[:, None]).T @ design + np.diag(penalty) + 1e-9 * np.eye(design.shape[1])
        step = np.linalg.solve(hessian, gradient)
        weights -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return weights


def _standardise(train: np.ndarray, test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = train.mean(axis=0)
    scale = train.std(axis=0)
    scale[scale == 0] = 1.0
    return (train - mean) / scale, (test - mean) / scale


def out_of_fold_scores(
    x: np.ndarray, y: np.ndarray, groups: Sequence[str] | np.ndarray, *, ridge: float = 1.0
) -> np.ndarray:
    """Score each row with a model fitted on every other group (leave-one-group-out)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    group_of = np.asarray(groups)
    scores = np.full(len(y), np.nan)
    for group in np.unique(group_of):
        held = group_of == group
        train_x, test_x = _standardise(x[~held], x[held])
        train_y = y[~held]
        if train_y.min() == train_y.max():
            scores[held] = train_y.mean()
            continue
        weights = fit_logistic(train_x, train_y, ridge=ridge)
        scores[held] = np.column_stack([np.ones(int(held.sum())), test_x]) @ weights
    return scores


def cross_validated_auc(
    x: np.ndarray, y: np.ndarray, groups: Sequence[str] | np.ndarray, *, ridge: float = 1.0
) -> float | None:
    """AUC of the pooled leave-one-group-out scores (``None`` when a class is absent)."""
    if len(set(groups)) < 2:
        return None
    return auc(out_of_fold_scores(x, y, groups, ridge=ridge), y)


def jackknife_auc(
    x: np.ndarray, y: np.ndarray, groups: Sequence[str], *, ridge: float = 1.0
) -> tuple[list[float], float | None, str | None]:
    """Leave-one-group-out pseudo-values of the cross-validated AUC.

    Returns:
        ``(pseudo_values, auc_all, reason)``; ``reason`` says why the list is
        empty when the AUC (or one leave-one-out AUC) is undefined.
    """
    group_of = np.asarray(groups)
    units = list(dict.fromkeys(group_of.tolist()))
    if len(units) < 3:
        return [], None, f"needs nodes from at least 3 prompts, got {len(units)}"
    full = cross_validated_auc(x, y, group_of, ridge=ridge)
    if full is None:
        return [], None, "one class (FORK or REMERGE) has no node"
    k = len(units)
    pseudo = []
    for unit in units:
        keep = group_of != unit
        held_out = cross_validated_auc(x[keep], y[keep], group_of[keep], ridge=ridge)
        if held_out is None:
            return [], full, f"without prompt `{unit}` one class has no node"
        pseudo.append(k * full - (k - 1) * held_out)
    return pseudo, full, None
