"""proverb_cloze: the shipped items, the batched scoring of endings, and accuracy against a model that knows them."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from claimcheck.probing.registry import ProbeContext, get_probe
from probes.text import quality
from probes.text.quality import DATA, ending_logliks, load_items


def test_the_shipped_set_has_forty_distinct_items_and_says_where_it_comes_from() -> None:
    items = load_items()
    assert len(items) == 40 and len({item.ending for item in items}) == 40
    assert "Provenance:" in DATA.read_text(encoding="utf-8")
    assert get_probe("proverb_cloze").reads_text


class _Tokenizer:
    """Word ids: each distinct word its own id (0 is left for padding)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return [self.ids.setdefault(word, len(self.ids) + 1) for word in text.split()]


def _model_that_knows(items, tokenizer: _Tokenizer, vocab: int = 512):
    """Logits that put all the mass on the next word of every known proverb, given its words so far."""
    import mlx.core as mx

    following: dict[tuple[int, ...], int] = {}
    for item in items:
        words = tokenizer.encode(f"{item.stem} {item.ending}")
        following.update({tuple(words[: i + 1]): words[i + 1] for i in range(len(words) - 1)})

    def model(batch):
        rows = []
        for row in batch.tolist():
            logits = [[0.0] * vocab for _ in row]
            for position in range(len(row)):
                nxt = following.get(tuple(row[: position + 1]))
                if nxt is not None:
                    logits[position][nxt] = 20.0
            rows.append(logits)
        return mx.array(rows)

    return SimpleNamespace(model=model, tokenizer=tokenizer)


def test_ending_logliks_scores_every_candidate_in_one_batch() -> None:
    import math

    tokenizer = _Tokenizer()
    items = load_items()
    lm = _model_that_knows(items, tokenizer)
    stem = tokenizer.encode("A stitch in time")
    true, wrong = ending_logliks(lm, stem, [tokenizer.encode("saves nine"), tokenizer.encode("is not gold")])
    assert true == pytest.approx(0.0, abs=1e-6)  # each word of the ending is the model's certain next word
    assert wrong < -5
    short, = ending_logliks(lm, stem, [tokenizer.encode("saves")])
    assert short == pytest.approx(true, abs=1e-6)  # padding never reaches a scored position
    assert math.isfinite(wrong)


def test_a_model_that_knows_the_proverbs_is_always_right(monkeypatch: pytest.MonkeyPatch) -> None:
    tokenizer = _Tokenizer()
    lm = _model_that_knows(load_items(), tokenizer)
    monkeypatch.setattr(quality, "load_text_model", lambda ctx, model, variant: lm)
    ctx = ProbeContext(n=5, seed=2)
    first = quality.proverb_cloze(ctx, choices=4)
    second = quality.proverb_cloze(ctx, choices=4)
    assert first["correct"] == [1.0] * 5 and all(m > 5 for m in first["margin"])
    stems = [row["stem"] for row in ctx.artifacts["items"]]
    assert len(set(stems)) == 10  # the second call continues the walk instead of repeating items
    assert ctx.artifacts["items_drawn"] == {"smollm2-135m-instruct/None/4": 10}
    assert second["nll"] == pytest.approx([0.0] * 5, abs=1e-6)
    with pytest.raises(ValueError, match=r"`choices` must lie in \[2, 40\]"):
        quality.proverb_cloze(ctx, choices=1)
