"""Sampling policies, matched-seed draws, and mlx-lm compatible seeded samplers.

A :class:`Policy` turns next-token log-probs into the log-weights it samples
from (truncation, temperature or a transfer curve). The token is then drawn by
inverse CDF over the vocabulary in token-id order from a uniform number that
depends only on ``(seed, step)`` (:mod:`claimcheck.probing.sampling.seeds`). Hence
"matched seeds": two policies that give the same distribution pick the same
token at every step, and the identity curve reproduces temperature 1 token for
token.

The arithmetic runs in numpy. On CPU, MLX's ``exp`` is several times slower
than numpy's and mlx-lm's ``apply_top_p`` sorts the whole vocabulary (about
0.6 s per step at batch 64 on a 2-core machine); the numpy path selects the
top-k candidates first and is checked against mlx-lm's ``apply_top_p`` /
``apply_top_k`` in the tests. :class:`SeededSampler` keeps mlx-lm's sampler
signature (``logprobs[B, V] -> tokens[B]``, MLX arrays in and out).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from claimcheck.probing.sampling.curves import TransferCurve, named_curve
from claimcheck.probing.sampling.seeds import uniform_draws

CDF_BLOCK = 256


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise ``logits - logsumexp(logits)`` in float32 (``-inf`` entries stay ``-inf``)."""
    logits = np.asarray(logits, dtype=np.float32)
    top = np.max(logits, axis=-1, keepdims=True)
    total = np.sum(np.exp(logits - top), axis=-1, keepdims=True, dtype=np.float64)
    return (logits - (top + np.log(total)).astype(np.float32)).astype(np.float32)


def truncation_mask(logprobs: np.ndarray, top_p: float, top_k: int) -> np.ndarray:
    """Boolean mask of the tokens kept by top-p then top-k (mlx-lm's order and rule).

    mlx-lm keeps, in descending probability, every token whose preceding mass
    is still below ``top_p`` (so the token that crosses ``top_p`` stays), then
    the ``top_k`` best of those. Both keep a prefix of the descending order, so
    the result is the first ``min(nucleus, top_k)`` tokens; with ``top_k`` on,
    only the ``top_k`` best need sorting.
    """
    rows, vocab = logprobs.shape
    use_p = 0.0 < top_p < 1.0
    k = top_k if 0 < top_k < vocab else vocab
    if k < vocab:
        candidates = np.argpartition(-logprobs, k - 1, axis=-1)[:, :k]
    else:
        candidates = np.broadcast_to(np.arange(vocab), (rows, vocab))
    values = np.take_along_axis(logprobs, candidates, axis=-1)
    order = np.argsort(-values, axis=-1, kind="stable")
    ranked = np.take_along_axis(candidates, order, axis=-1)
    keep_count = np.full(rows, k)
    if use_p:
        probs = np.exp(np.take_along_axis(values, order, axis=-1).astype(np.float64))
        total = np.sum(np.exp(logprobs.astype(np.float64)), axis=-1, keepdims=True)
        mass_before = np.cumsum(probs, axis=-1) - probs
        keep_count = np.minimum(keep_count, np.sum(mass_before < top_p * total, axis=-1))
    mask = np.zeros((rows, vocab), dtype=bool)
    keep_rank = np.arange(ranked.shape[1])[None, :] < keep_count[:, None]
    np.put_along_axis(mask, ranked, keep_rank, axis=-1)
    return mask


@dataclass(frozen=True)
class Policy:
    """How a next-token distribution is reshaped before the draw.

    Truncation (top-p then top-k, on the raw log-probs, as in mlx-lm) comes
    first; then either the curve or ``1/temperature`` is applied.
    ``temperature == 0`` means greedy.

    Attributes:
        name: the label used in claims and artifacts.
        temperature: divisor of the log-probs (ignored when ``curve`` is set).
        top_p: nucleus mass kept, off when 0 or >= 1.
        top_k: tokens kept, off when 0.
        curve: a transfer curve replacing temperature.
    """

    name: str
    temperature: float = 1.0
    top_p: float = 0.0
    top_k: int = 0
    curve: TransferCurve | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.temperature < 0 or not math.isfinite(self.temperature):
            raise ValueError(f"policy `{self.name}`: `temperature` must be a finite number >= 0, got {self.temperature}")
        if not 0.0 <= self.top_p <= 1.0:
            raise ValueError(f"policy `{self.name}`: `top_p` must be in [0, 1], got {self.top_p}")
        if self.top_k < 0:
            raise ValueError(f"policy `{self.name}`: `top_k` must be >= 0, got {self.top_k}")

    @property
    def greedy(self) -> bool:
        return self.curve is None and self.temperature == 0

    def log_weights(self, logprobs: np.ndarray) -> np.ndarray:
        """Log-weights (unnormalised, float32) the policy samples from; removed tokens are ``-inf``."""
        z = np.asarray(logprobs, dtype=np.float32)
        if (0.0 < self.top_p < 1.0) or self.top_k > 0:
            z = np.where(truncation_mask(z, self.top_p, self.top_k), z, np.float32(-np.inf))
        if self.curve is not None:
            return self.curve.apply_numpy(z)
        if self.temperature not in (0.0, 1.0):
            z = z * np.float32(1.0 / self.temperature)
        return z

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "temperature": self.temperature, "top_p": self.top_p, "top_k": self.top_k}
        if self.curve is not None:
            out["curve"] = self.curve.describe()
        return out


def temperature_policy(temperature: float) -> Policy:
    """Pure temperature, no truncation (``temp1`` is the identity curve's twin)."""
    return Policy(name=f"temp{temperature:g}", temperature=float(temperature))


def curve_policy(curve: TransferCurve) -> Policy:
    """Sampling through a transfer curve, no truncation, no temperature."""
    return Policy(name=curve.name, curve=curve)


_NAMED: dict[str, Callable[[], Policy]] = {
    "default": lambda: Policy(name="default", temperature=1.0, top_p=0.95, top_k=64),
    "temp0.8": lambda: temperature_policy(0.8),
    "curve-id": lambda: curve_policy(named_curve("curve-id")),
    "curve-router": lambda: curve_policy(named_curve("curve-router")),
    "greedy": lambda: Policy(name="greedy", temperature=0.0),
}

ROUTE_POLICIES = ("default", "temp0.8", "curve-id", "curve-router")


def get_policy(name: str) -> Policy:
    """A policy by name: the route policies, ``greedy``, or ``temp<T>`` (e.g. ``temp1.2``)."""
    if name in _NAMED:
        return _NAMED[name]()
    match = re.fullmatch(r"temp(\d+(?:\.\d+)?)", name)
    if match:
        return temperature_policy(float(match.group(1)))
    raise ValueError(f"unknown policy `{name}`; known: {', '.join(sorted(_NAMED))}, temp<T> (e.g. temp1.2)")


class CdfTable:
    """Inverse-CDF lookup over rows of log-weights, without a full-vocabulary cumulative sum.

    The CDF is taken in token-id order and in two levels: float64 block sums
    of :data:`CDF_BLOCK` tokens locate the block where ``u * total`` falls,
    then a float64 cumulative sum inside that block locates the token. The
    token is the first one whose cumulative mass exceeds ``u * total``, so it
    always has positive probability and a uniform ``u`` yields each token with
    its probability (up to float64 rounding). The same bits in give the same
    token out, which is what matched seeds need.
    """

    def __init__(self, log_weights: np.ndarray) -> None:
        z = np.asarray(log_weights, dtype=np.float32)
        if z.ndim != 2:
            raise ValueError(f"expected log-weights of shape [rows, vocab], got {z.shape}")
        top = np.max(z, axis=-1, keepdims=True)
        if not np.all(np.isfinite(top)):
            raise ValueError("a row has no token with finite log-weight (everything was masked)")
        weights = np.exp(z - top)
        self.rows, self.vocab = weights.shape
        pad = (-self.vocab) % CDF_BLOCK
        if pad:
            weights = np.pad(weights, ((0, 0), (0, pad)))
        self.weights = weights.reshape(self.rows, -1, CDF_BLOCK)
        self.block_cum = np.cumsum(np.sum(self.weights, axis=-1, dtype=np.float64), axis=-1)

    def locate(self, rows: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Token drawn at uniform ``u[m]`` from row ``rows[m]``."""
        rows = np.asarray(rows, dtype=np.int64)
        u = np.asarray(u, dtype=np.float64)
        cum = self.block_cum[rows]
        threshold = u * cum[:, -1]
        block = np.minimum(np.sum(cum <= threshold[:, None], axis=-1), cum.shape[1] - 1)
        before = np.where(block > 0, np.take_along_axis(cum, np.maximum(block - 1, 0)[:, None], axis=-1)[:, 0], 0.0)
        inner = np.cumsum(self.weights[rows, block].astype(np.float64), axis=-1) + before[:, None]
        offset = np.sum(inner <= threshold[:, None], axis=-1)
        # float64 rounding can leave ``threshold`` just past the block's last sum: take the block's last positive token
        last_positive = CDF_BLOCK - 1 - np.argmax(self.weights[rows, block][:, ::-1] > 0, axis=-1)
        offset = np.minimum(offset, last_positive)
        return block * CDF_BLOCK + offset


def draw_tokens(policy: Policy, logprobs: Any, seeds: Sequence[int], steps: Sequence[int] | int) -> np.ndarray:
    """One matched-seed draw per row: row ``b`` uses ``u(seeds[b], steps[b])``.

    ``logprobs`` is a normalised ``[B, V]`` array (numpy or MLX).
    """
    lp = np.asarray(logprobs, dtype=np.float32)
    if policy.greedy:
        return np.argmax(lp, axis=-1)
    if lp.shape[0] != len(seeds):
        raise ValueError(f"expected one seed per row, got {len(seeds)} seeds for {lp.shape[0]} rows")
    table = CdfTable(policy.log_weights(lp))
    return table.locate(np.arange(lp.shape[0]), uniform_draws(seeds, steps))


class SeededSampler:
    """An mlx-lm sampler whose rows draw from fixed seeds, one step per call.

    ``SeededSampler(policy, [s0, s1])(logprobs[2, V])`` draws row ``b`` with
    ``u(s_b, step)``; each call advances every row by one step. It can stand
    wherever mlx-lm takes ``make_sampler(...)``'s return (e.g.
    ``generate_step(..., sampler=...)``), with as many rows as seeds.
    """

    def __init__(self, policy: Policy, seeds: Sequence[int] | int, *, start_step: int = 0) -> None:
        self.policy = policy
        self.seeds = [int(seeds)] if isinstance(seeds, (int, np.integer)) else [int(s) for s in seeds]
        self.step = int(start_step)

    def __call__(self, logprobs: Any) -> Any:
        import mlx.core as mx

        tokens = draw_tokens(self.policy, np.array(logprobs.astype(mx.float32)), self.seeds, self.step)
        self.step += 1
        return mx.array(tokens.astype(np.int32))


def make_curve_sampler(curve: TransferCurve | Sequence[Sequence[float]]) -> Callable[[Any], Any]:
    """An unseeded mlx-lm sampler through a transfer curve (uses MLX's global RNG).

    Drop-in for ``mlx_lm.sample_utils.make_sampler(...)``'s return where matched
    seeds are not needed.
    """
    import mlx.core as mx

    if not isinstance(curve, TransferCurve):
        curve = TransferCurve.from_percent_points(curve)

    def sampler(logprobs: Any) -> Any:
        return mx.random.categorical(curve.apply(logprobs))

    return sampler
