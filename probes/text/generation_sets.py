"""A set of generations scored as one sample: self-BLEU within the set, and the set's mean text measures.

Texygen's self-BLEU (Zhu et al. 2018) is a property of a set: each text's BLEU against the set's
other texts, averaged. A prompt set sampled from one seed is such a set, so a claim about a
sampler's diversity across prompts reads one number per set, and repeated sets give the noise.
Pure Python over token ids; nothing here imports MLX.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import fmean
from typing import Sequence

from .text_metrics import distinct_n, repetition_rate, self_bleu


@dataclass(frozen=True)
class SetMetrics:
    """One set's scores (each the set's own, or the mean over its texts)."""

    seed: int
    tokens: list[list[int]]
    repetition_rate: float
    distinct_1: float
    distinct_2: float
    self_bleu: float
    length: float
    cross_entropy: float


def score_set(seed: int, generations: Sequence[tuple[list[int], float]], repetition_n: int = 4) -> SetMetrics:
    """Score ``(tokens, cross-entropy)`` per text of one set; an empty text counts with self-BLEU 0."""
    texts = [tokens for tokens, _ in generations]
    return SetMetrics(
        seed=seed,
        tokens=texts,
        repetition_rate=fmean(repetition_rate(t, repetition_n) for t in texts),
        distinct_1=fmean(distinct_n(t, 1) for t in texts),
        distinct_2=fmean(distinct_n(t, 2) for t in texts),
        self_bleu=fmean(self_bleu(texts)),
        length=fmean(float(len(t)) for t in texts),
        cross_entropy=fmean(entropy for _, entropy in generations),
    )
