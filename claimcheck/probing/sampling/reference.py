"""The greedy reference of a prompt and its teacher-forced pass: what every fork-map branch and route departure starts from.

The teacher-forced pass over prompt + reference gives both the per-position distributions (the
features a sampler sees, the first departures of every seed) and the KV cache that branches and
continuations are sliced from. :class:`ReferencePasses` keeps each pass once per experiment, so the
fork map, the route departures and the exact hazards of one prompt share a single prefill.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence, TypedDict

import numpy as np

from claimcheck.probing.sampling.generate import DEFAULT_STOP_IDS, GenerationRequest, GenerationStats, Root, generate_batch, prefill
from claimcheck.probing.sampling.policies import get_policy

Progress = Callable[[str], None]


def quiet(message: str) -> None:
    """A progress callback that reports nothing."""
    return None


def greedy_references(
    model: Any,
    prompts: Sequence[Sequence[int]],
    *,
    max_tokens: int = 80,
    stop_ids: Sequence[int] = DEFAULT_STOP_IDS,
    batch_size: int = 64,
    stats: GenerationStats | None = None,
) -> list[list[int]]:
    """Greedy paths (stop ids excluded) for several prompts, in one batch."""
    greedy = get_policy("greedy")
    out = generate_batch(
        model,
        [GenerationRequest(prompt=p, policy=greedy, max_tokens=max_tokens) for p in prompts],
        stop_ids=stop_ids,
        batch_size=batch_size,
        stats=stats,
        logprobs=False,
    )
    return [g.tokens for g in out]


def reference_pass(model: Any, prompt: Sequence[int], ref: Sequence[int]) -> tuple[Root, np.ndarray]:
    """One forward pass over prompt + reference: the root cache for branches and the per-position log-probs.

    Returns ``(root, rows)`` with ``rows[i]`` the teacher-forced distribution of ``ref[i]`` (``[N, V]``).
    """
    root, rows = prefill(model, list(prompt) + list(ref), logits=True)
    start = len(prompt) - 1
    return root, rows[start : start + len(ref)]


class PositionFeatures(TypedDict):
    """What a sampler sees at one reference position (see :func:`position_features`)."""

    top1: int
    rank2: int
    p1: float
    p2: float
    ref_logprob: float
    entropy: float
    margin: float
    top2_mass: float
    bimodality: float


def position_features(rows: np.ndarray, ref: Sequence[int]) -> list[PositionFeatures]:
    """Per reference position: the reference token's probability and the best other token.

    ``p1``/``top1`` are the reference token (the greedy choice) and its
    probability; ``p2``/``rank2`` the most probable token other than it (the
    rank-2 token, robust to near-ties between the greedy decode and the
    teacher-forced pass). Also the local features a sampler could see:
    entropy (nats), ``p1 - p2``, top-2 mass and the runner-up's share of the
    mass outside the top token (``p2 / (1 - p1)``, high for a two-peaked
    distribution), and the reference token's log-prob.
    """
    out: list[PositionFeatures] = []
    for i, token in enumerate(ref):
        row = rows[i].astype(np.float64)
        ref_lp = float(row[token])
        masked = row.copy()
        masked[token] = -np.inf
        rank2 = int(np.argmax(masked))
        probs = np.exp(row)
        entropy = float(-np.sum(np.where(probs > 0, probs * row, 0.0)))
        p1, p2 = math.exp(ref_lp), math.exp(float(row[rank2]))
        out.append(
            {
                "top1": int(token),
                "rank2": rank2,
                "p1": p1,
                "p2": p2,
                "ref_logprob": ref_lp,
                "entropy": entropy,
                "margin": p1 - p2,
                "top2_mass": p1 + p2,
                "bimodality": p2 / (1.0 - p1) if p1 < 1.0 else 0.0,
            }
        )
    return out



class ReferencePasses:
    """The teacher-forced pass of each (prompt, reference), computed on first use and kept.

    A pass is one single-sequence prefill, so the same tokens always give the same root cache and
    the same log-probs; keeping it changes no number, it only spares the prefill a second reader
    would repeat. Holds ``[len(ref), vocabulary]`` log-probs per pass: scope one to an experiment.
    ``keep=False`` recomputes every pass it is asked for (each reader prefilling its own), the
    baseline that benchmarks and tests compare against.
    """

    def __init__(self, model: Any, *, keep: bool = True) -> None:
        self.model = model
        self.keep = keep
        self.prefill_tokens = 0
        self.passes = 0
        self.reused = 0
        self._kept: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[Root, np.ndarray]] = {}

    def get(self, prompt: Sequence[int], ref: Sequence[int]) -> tuple[Root, np.ndarray]:
        """``(root, rows)`` of :func:`reference_pass`, computed once per distinct (prompt, reference)."""
        key = (tuple(int(t) for t in prompt), tuple(int(t) for t in ref))
        if key in self._kept:
            self.reused += 1
            return self._kept[key]
        result = reference_pass(self.model, key[0], key[1])
        self.passes += 1
        self.prefill_tokens += len(key[0]) + len(key[1])
        if self.keep:
            self._kept[key] = result
        return result
