"""Diversity and repetition of generated token sequences: distinct-n, repetition rate, BLEU.

Pure Python over token ids (no tokenizer needed, no text normalisation to disagree about). BLEU is
written out here because neither nltk nor sacrebleu is a dependency of this project: it is the
standard modified n-gram precision (Papineni et al. 2002, counts clipped by the most any one
reference holds), geometric mean over n = 1..max_n, times the brevity penalty against the
reference length closest to the hypothesis. Short texts often share no 4-gram, which makes plain
BLEU 0; precisions for n >= 2 therefore get add-one smoothing (BLEU+1, Lin & Och 2004).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Sequence

Tokens = Sequence[int]


def ngrams(tokens: Tokens, n: int) -> list[tuple[int, ...]]:
    """The ``n``-grams of ``tokens`` in order (none when it is shorter than ``n``)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def distinct_n(tokens: Tokens, n: int) -> float:
    """Unique ``n``-grams over all ``n``-grams of one sequence (Li et al. 2016); 1.0 when it has none."""
    grams = ngrams(tokens, n)
    return len(set(grams)) / len(grams) if grams else 1.0


def repetition_rate(tokens: Tokens, n: int = 4) -> float:
    """Share of ``n``-grams that repeat an earlier one in the same sequence (seq-rep-n, Welleck et al. 2019)."""
    return 1.0 - distinct_n(tokens, n)


def bleu(hypothesis: Tokens, references: Sequence[Tokens], max_n: int = 4) -> float:
    """Sentence BLEU of ``hypothesis`` against ``references`` (clipped precisions, brevity penalty, BLEU+1)."""
    if not references:
        raise ValueError("BLEU needs at least one reference")
    if not hypothesis:
        return 0.0
    log_precision = 0.0
    for n in range(1, max_n + 1):
        counts = Counter(ngrams(hypothesis, n))
        most: Counter[tuple[int, ...]] = Counter()
        for reference in references:
            for gram, count in Counter(ngrams(reference, n)).items():
                most[gram] = max(most[gram], count)
        matched = sum(min(count, most[gram]) for gram, count in counts.items())
        total = sum(counts.values())
        smooth = 1 if n > 1 else 0
        if matched + smooth == 0 or total + smooth == 0:
            return 0.0
        log_precision += math.log((matched + smooth) / (total + smooth)) / max_n
    length = len(hypothesis)
    closest = min((abs(len(r) - length), len(r)) for r in references)[1]
    brevity = 1.0 if length > closest else math.exp(1 - closest / length)
    return brevity * math.exp(log_precision)


def self_bleu(generations: Sequence[Tokens], max_n: int = 4) -> list[float]:
    """Each generation's BLEU against all the others (Zhu et al. 2018, Texygen); needs two or more."""
    if len(generations) < 2:
        raise ValueError("self-BLEU needs at least two generations")
    return [bleu(g, [r for j, r in enumerate(generations) if j != i], max_n) for i, g in enumerate(generations)]
