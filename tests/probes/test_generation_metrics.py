"""generation_metrics: the text measures on hand-worked sequences, and generations through mlx-lm's sampler."""

from __future__ import annotations

import math

import pytest

from claimcheck.errors import NotApplicable
from claimcheck.probing.registry import ProbeContext, get_probe
from probes.text.generation_metrics import SamplerConfig, generate_ids, generation_metrics, measure_generations, prompt_ids
from probes.text.text_metrics import bleu, distinct_n, ngrams, repetition_rate, self_bleu


def test_distinct_n_and_repetition_rate_by_hand():
    tokens = [5, 6, 5, 6, 5, 6]
    assert ngrams(tokens, 2) == [(5, 6), (6, 5), (5, 6), (6, 5), (5, 6)]
    assert distinct_n(tokens, 1) == pytest.approx(2 / 6)
    assert distinct_n(tokens, 2) == pytest.approx(2 / 5)
    # 4-grams: (5,6,5,6), (6,5,6,5), (5,6,5,6): one of three repeats an earlier one.
    assert repetition_rate(tokens, 4) == pytest.approx(1 / 3)
    assert repetition_rate([1, 2, 3, 4, 5], 4) == 0.0
    assert distinct_n([1], 2) == 1.0  # no bigrams: nothing repeats


def test_bleu_by_hand():
    # Precisions: 3/4; bigrams 2 of 3 -> (2+1)/(3+1); trigrams 1 of 2 -> 2/3; 4-grams 0 of 1 -> 1/2.
    expected = (3 / 4 * 3 / 4 * 2 / 3 * 1 / 2) ** 0.25
    assert bleu([1, 2, 3, 4], [[1, 2, 3, 5]]) == pytest.approx(expected)
    assert bleu([1, 2, 3, 4], [[1, 2, 3, 4]]) == pytest.approx(1.0)
    assert bleu([7, 8, 9], [[1, 2, 3]]) == 0.0  # no unigram in common
    assert bleu([], [[1]]) == 0.0


def test_bleu_clips_counts_and_takes_the_best_reference_per_ngram():
    # "the the the the" against one "the": unigram precision 1/4, not 4/4.
    assert bleu([1, 1, 1, 1], [[1]], max_n=1) == pytest.approx(1 / 4)
    # Two references: the hypothesis unigram counts are clipped by the most any one reference has.
    assert bleu([1, 1, 2], [[1, 3, 3], [1, 1, 3]], max_n=1) == pytest.approx(2 / 3)


def test_brevity_penalty_uses_the_closest_reference_length():
    hypothesis = [1, 2]
    # Closest reference length 4 -> BP = exp(1 - 4/2); unigram precision 1.
    assert bleu(hypothesis, [[1, 2, 3, 4], [1, 2, 3, 4, 5, 6, 7, 8]], max_n=1) == pytest.approx(math.exp(-1))


def test_self_bleu_needs_two_and_scores_each_against_the_rest():
    assert self_bleu([[1, 2, 3], [1, 2, 3], [4, 5, 6]], max_n=1) == pytest.approx([1.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="at least two"):
        self_bleu([[1]])


@pytest.fixture(scope="module")
def tiny():
    from claimcheck.models import load

    return load("synthetic:llama:tiny", variant="fp32")


def test_temperature_zero_gives_every_seed_the_same_text(tiny):
    scored = measure_generations(tiny, [1, 2, 3], config=SamplerConfig(temp=0.0), max_tokens=12, pool_seeds=2)
    assert len({tuple(s.tokens) for s in scored}) == 1
    assert all(s.self_bleu == pytest.approx(1.0) for s in scored)
    assert all(len(s.tokens) == 12 for s in scored)  # no tokenizer, so no end-of-sequence cut


def test_sampling_gives_seeds_different_texts_and_lower_self_bleu(tiny):
    # Fixed seeds on a fixed random-weight model: deterministic, so this cannot fail by chance.
    scored = measure_generations(tiny, [1, 2, 3], config=SamplerConfig(temp=1.0), max_tokens=12, pool_seeds=2)
    assert len({tuple(s.tokens) for s in scored}) == 3
    assert all(s.self_bleu < 0.5 for s in scored)
    for s in scored:
        assert s.distinct_1 == pytest.approx(distinct_n(s.tokens, 1))
        assert s.repetition_rate == pytest.approx(repetition_rate(s.tokens, 4))


def test_the_sampler_config_reaches_make_sampler(tiny):
    # top_k=1 keeps only the most likely token: sampling at temperature 1 becomes greedy decoding.
    ids = prompt_ids(tiny, "unused without a tokenizer")
    greedy = generate_ids(tiny, ids, sampler=SamplerConfig(temp=0.0).build(), seed=0, max_tokens=10, stop=[])
    top1 = generate_ids(tiny, ids, sampler=SamplerConfig(temp=1.0, top_k=1).build(), seed=9, max_tokens=10, stop=[])
    free = generate_ids(tiny, ids, sampler=SamplerConfig(temp=1.0).build(), seed=9, max_tokens=10, stop=[])
    assert top1 == greedy
    assert free != greedy


def test_generation_stops_at_a_stop_id(tiny):
    ids = prompt_ids(tiny, "")
    full = generate_ids(tiny, ids, sampler=SamplerConfig(temp=0.0).build(), seed=0, max_tokens=10, stop=[])
    cut = generate_ids(tiny, ids, sampler=SamplerConfig(temp=0.0).build(), seed=0, max_tokens=10, stop=[full[3]])
    assert cut == full[: full.index(full[3])]


def test_the_probe_refuses_random_weights():
    with pytest.raises(NotApplicable, match="random weights"):
        generation_metrics(ProbeContext(n=2), model="synthetic:llama:tiny", variant="fp32")
    assert get_probe("generation_metrics").reads_text


@pytest.mark.slow
def test_probe_on_the_embedded_model():
    ctx = ProbeContext(n=2, seed=1)
    out = generation_metrics(ctx, temp=0.0, max_tokens=12, pool_seeds=2)
    assert out["self_bleu"] == pytest.approx([1.0, 1.0])
    assert len(ctx.artifacts["generations"]) == 2
    assert ctx.info["model"] == "smollm2-135m-instruct"
