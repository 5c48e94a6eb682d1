"""generation_metrics over a prompt set: each sample one set scored as a set, and every text's cross-entropy."""

from __future__ import annotations

import math

import pytest

from probes.text.generation_metrics import SamplerConfig, generate_scored, measure_generations, measure_sets, prompt_ids
from probes.text.generation_sets import score_set
from probes.text.text_metrics import self_bleu


def test_a_set_is_scored_as_a_set_by_hand() -> None:
    texts = [([1, 2, 3, 4], 2.0), ([1, 2, 3, 4], 1.0), ([5, 6, 7, 8], 3.0)]
    scored = score_set(7, texts)
    assert scored.self_bleu == pytest.approx(sum(self_bleu([t for t, _ in texts])) / 3)
    assert scored.cross_entropy == pytest.approx(2.0) and scored.length == 4.0
    assert scored.repetition_rate == 0.0 and scored.distinct_2 == 1.0 and scored.seed == 7


@pytest.fixture(scope="module")
def tiny():
    from claimcheck.models import load

    return load("synthetic:llama:tiny", variant="fp32")


def test_cross_entropy_is_the_mean_surprise_of_the_sampled_tokens(tiny) -> None:
    import mlx.core as mx

    ids = prompt_ids(tiny, "any")
    tokens, entropy = generate_scored(tiny, ids, sampler=SamplerConfig(temp=0.0).build(), seed=0, max_tokens=6, stop=[])
    assert len(tokens) == 6 and math.isfinite(entropy) and entropy > 0
    # recompute: each greedy token's -log p under the model, given everything before it
    context, surprise = list(ids), 0.0
    for token in tokens:
        logits = tiny.model(mx.array([context]))[0, -1].astype(mx.float32)
        surprise -= float((logits - mx.logsumexp(logits))[token].item())
        context.append(token)
    assert entropy == pytest.approx(surprise / len(tokens), rel=1e-3)
    per_seed = measure_generations(tiny, [1, 2], config=SamplerConfig(temp=1.0), max_tokens=6, pool_seeds=1)
    assert all(s.cross_entropy > 0 for s in per_seed)


def test_sets_from_one_seed_and_a_greedy_sampler_repeat_one_text(tiny) -> None:
    """Without a tokenizer every prompt is the same fixed ids, so a greedy set is one text: self-BLEU 1."""
    sets = measure_sets(tiny, [3, 4], config=SamplerConfig(temp=0.0), prompts=["a", "b", "c"], max_tokens=8,
                        repetition_n=4, stop_at_eos=True)
    assert [len(s.tokens) for s in sets] == [3, 3]
    assert all(s.self_bleu == pytest.approx(1.0) for s in sets)
    with pytest.raises(ValueError, match="at least two prompts"):
        measure_sets(tiny, [1], config=SamplerConfig(), prompts=["only"], max_tokens=4, repetition_n=4,
                     stop_at_eos=True)
