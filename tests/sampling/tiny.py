"""A tiny random llama model and a character-level tokenizer, for fast tests of generation and probes.

The model is an mlx-lm ``llama.Model`` built from ``ModelArgs`` with a small vocabulary; its
embedding (tied to the output head) is scaled up so that next-token distributions are peaked
like a trained model's (a top token of tens of percent, a runner-up of several percent) rather
than flat, which gives the fork map genuine alternatives to find.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

VOCAB = 96
SPECIAL = {"<|endoftext|>": 0, "<|im_start|>": 1, "<|im_end|>": 2}
FIRST_CHAR = 3


def tiny_model(*, seed: int = 0, vocab: int = VOCAB, layers: int = 2, hidden: int = 32, sharpen: float = 1.3) -> Any:
    """A random llama model small enough to decode hundreds of tokens per second."""
    import mlx.core as mx
    from mlx_lm.models import llama

    args = llama.ModelArgs(
        model_type="llama", hidden_size=hidden, num_hidden_layers=layers, intermediate_size=2 * hidden,
        num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-5, vocab_size=vocab, tie_word_embeddings=True,
    )
    mx.random.seed(seed)
    model = llama.Model(args)
    model.model.embed_tokens.weight = model.model.embed_tokens.weight * sharpen
    mx.eval(model.parameters())
    return model


class CharTokenizer:
    """Characters to ids ``3 + ord(c) % (vocab - 3)``; a minimal chat template around one user turn."""

    def __init__(self, vocab: int = VOCAB) -> None:
        self.vocab = vocab
        self.eos_token_ids = {SPECIAL["<|im_end|>"]}

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return [FIRST_CHAR + ord(c) % (self.vocab - FIRST_CHAR) for c in text]

    def decode(self, ids: Sequence[int]) -> str:
        names = {v: k for k, v in SPECIAL.items()}
        return "".join(names.get(int(i), chr(32 + (int(i) - FIRST_CHAR) % 95)) for i in ids)

    def apply_chat_template(self, messages: list[dict[str, str]], add_generation_prompt: bool = True) -> list[int]:
        ids: list[int] = []
        for message in messages:
            ids += [SPECIAL["<|im_start|>"]] + self.encode(message["role"] + ": " + message["content"]) + [SPECIAL["<|im_end|>"]]
        if add_generation_prompt:
            ids += [SPECIAL["<|im_start|>"]] + self.encode("assistant: ")
        return ids

    def get_vocab(self) -> dict[str, int]:
        return dict(SPECIAL)


@dataclass
class TinyLoaded:
    """Stands in for ``claimcheck.models.LoadedModel`` in probe smoke tests."""

    model: Any
    tokenizer: Any = field(default_factory=CharTokenizer)
    model_id: str = "test:tiny-llama"
    variant: str = "fp32"
    weights_hash: str = "tiny-seed-0"

    def info(self) -> dict[str, Any]:
        return {"model": self.model_id, "variant": self.variant, "weights_hash": self.weights_hash}


def chain_model(*, vocab: int = VOCAB, layers: int = 2, max_shift: int = 30) -> Any:
    """A llama model that is a bigram chain by construction, so fork-map branches re-merge or diverge knowably.

    Its blocks add nothing to the residual stream (zero output projections), so the next token
    depends on the last one alone: greedy decoding walks one cycle ``pi`` through the ordinary
    tokens. Each token's runner-up is the token ``k`` steps further on the cycle (``k`` between 1
    and ``max_shift``, varying by token), so a branch forced onto it rejoins the reference ``k - 1``
    tokens ahead: a small ``k`` re-merges, a large one diverges, one in between partly re-merges.
    Even tokens' runner-ups have about 10% probability (genuine alternatives), odd tokens' under
    1% (so a diverging one is LOCKED).
    """
    import mlx.core as mx
    import numpy as np
    from mlx_lm.models import llama

    args = llama.ModelArgs(
        model_type="llama", hidden_size=vocab, num_hidden_layers=layers, intermediate_size=64,
        num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-5, vocab_size=vocab, tie_word_embeddings=False,
    )
    model = llama.Model(args)
    ordinary = np.arange(FIRST_CHAR, vocab)
    order = np.random.default_rng(0).permutation(ordinary)
    position = {int(t): i for i, t in enumerate(order)}
    head = np.zeros((vocab, vocab), dtype=np.float32)
    for token in range(vocab):
        at = position.get(token, 0)
        shift = 1 + (token * 7) % max_shift
        head[int(order[(at + 1) % len(order)]), token] = 1.0
        head[int(order[(at + shift) % len(order)]), token] += 0.78 if token % 2 == 0 else 0.5
    model.model.embed_tokens.weight = mx.eye(vocab)
    for block in model.model.layers:
        block.self_attn.o_proj.weight = mx.zeros_like(block.self_attn.o_proj.weight)
        block.mlp.down_proj.weight = mx.zeros_like(block.mlp.down_proj.weight)
    model.lm_head.weight = mx.array(head)
    mx.eval(model.parameters())
    return model
