"""Gemma 3's SentencePiece vocabulary as a ``tokenizers`` BPE (see :mod:`claimcheck.models.gemma3`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    from tokenizers import Tokenizer

#: GGUF token types; SentencePiece's ``ModelProto.SentencePiece.Type`` uses the same numbers.
TOKEN_NORMAL, TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_USER_DEFINED, TOKEN_UNUSED, TOKEN_BYTE = 1, 2, 3, 4, 5, 6


@dataclass(frozen=True)
class Vocabulary:
    """The GGUF's SentencePiece vocabulary."""

    tokens: list[str]
    scores: list[float]
    types: list[int]
    bos_id: int
    eos_id: int
    unk_id: int
    pad_id: int

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> "Vocabulary":
        if fields.get("tokenizer.ggml.model") != "llama":
            raise ValueError(f"GGUF tokenizer `{fields.get('tokenizer.ggml.model')}` is not supported; expected `llama` (SentencePiece)")
        return cls(
            tokens=list(fields["tokenizer.ggml.tokens"]),
            scores=[float(s) for s in fields["tokenizer.ggml.scores"]],
            types=[int(t) for t in fields["tokenizer.ggml.token_type"]],
            bos_id=int(fields["tokenizer.ggml.bos_token_id"]),
            eos_id=int(fields["tokenizer.ggml.eos_token_id"]),
            unk_id=int(fields["tokenizer.ggml.unknown_token_id"]),
            pad_id=int(fields.get("tokenizer.ggml.padding_token_id", 0)),
        )


def bpe_merges(tokens: Sequence[str], scores: Sequence[float], types: Sequence[int]) -> list[tuple[str, str]]:
    """Merges that make a BPE reproduce SentencePiece's score-driven BPE.

    SentencePiece repeatedly merges the adjacent pair whose concatenation is the highest-scoring normal
    piece. Every split of a normal piece into two normal pieces is therefore a merge, ranked by the
    merged piece's score (all normal scores differ, so ranks between different pieces never tie).
    """
    normal = {token: index for index, token in enumerate(tokens) if types[index] == TOKEN_NORMAL}
    ranked = []
    for piece, index in normal.items():
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if left in normal and right in normal:
                ranked.append((-scores[index], index, normal[left], normal[right], left, right))
    ranked.sort()
    return [(left, right) for *_, left, right in ranked]


def build_tokenizer(vocab: Vocabulary) -> Tokenizer:
    """A ``tokenizers.Tokenizer`` for the vocabulary: Gemma's SentencePiece BPE with byte fallback.

    Control pieces (``<bos>``, ``<start_of_turn>``, ...) are special added tokens; user-defined pieces
    are plain added tokens matched on the raw text (so ``"  "`` stays the two-space piece); ``<bos>`` is
    prepended by the post-processor; spaces become ``▁`` with no dummy prefix.
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, processors

    tokens = vocab.tokens
    ids = {token: index for index, token in enumerate(tokens)}
    model = models.BPE(
        vocab=ids,
        merges=bpe_merges(tokens, vocab.scores, vocab.types),
        unk_token=tokens[vocab.unk_id],
        fuse_unk=True,
        byte_fallback=True,
    )
    tokenizer = Tokenizer(model)
    tokenizer.normalizer = normalizers.Replace(" ", "▁")
    tokenizer.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    bos = tokens[vocab.bos_id]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A", pair=f"{bos} $A $B:1", special_tokens=[(bos, vocab.bos_id)]
    )
    special = [index for index, kind in enumerate(vocab.types) if kind in (TOKEN_CONTROL, TOKEN_UNKNOWN)]
    user_defined = [index for index, kind in enumerate(vocab.types) if kind == TOKEN_USER_DEFINED]
    tokenizer.add_special_tokens([AddedToken(tokens[i], special=True, normalized=False) for i in special])
    tokenizer.add_tokens([AddedToken(tokens[i], special=False, normalized=False) for i in user_defined])
    return tokenizer


def tokenizer_config(vocab: Vocabulary, max_length: int) -> dict[str, Any]:
    """``tokenizer_config.json`` for ``PreTrainedTokenizerFast`` (no chat template: a base model)."""
    return {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": vocab.tokens[vocab.bos_id],
        "eos_token": vocab.tokens[vocab.eos_id],
        "unk_token": vocab.tokens[vocab.unk_id],
        "pad_token": vocab.tokens[vocab.pad_id],
        "add_bos_token": True,
        "add_eos_token": False,
        "clean_up_tokenization_spaces": False,
        "model_max_length": max_length,
    }


def sentencepiece_model(vocab: Vocabulary) -> bytes:
    """The vocabulary as a serialized SentencePiece ``ModelProto`` (BPE, byte fallback, no dummy prefix).

    Not written to the model directory: SentencePiece matches user-defined pieces only after spaces
    became ``▁``, so it never emits Gemma's space-run pieces. It serves as an independent BPE engine to
    check :func:`build_tokenizer` against on text without space runs.
    """
    from sentencepiece import sentencepiece_model_pb2 as model_pb2

    # protobuf builds the message classes at import time, out of mypy's sight.
    proto = model_pb2.ModelProto()  # type: ignore[attr-defined]
    trainer = proto.trainer_spec
    trainer.model_type = model_pb2.TrainerSpec.BPE  # type: ignore[attr-defined]
    trainer.vocab_size = len(vocab.tokens)
    trainer.byte_fallback = True
    trainer.split_digits = True
    trainer.unk_id, trainer.bos_id, trainer.eos_id, trainer.pad_id = vocab.unk_id, vocab.bos_id, vocab.eos_id, vocab.pad_id
    for attribute, index in (("unk_piece", vocab.unk_id), ("bos_piece", vocab.bos_id), ("eos_piece", vocab.eos_id), ("pad_piece", vocab.pad_id)):
        setattr(trainer, attribute, vocab.tokens[index])
    normalizer = proto.normalizer_spec
    normalizer.name = "identity"
    normalizer.add_dummy_prefix = False
    normalizer.remove_extra_whitespaces = False
    normalizer.escape_whitespaces = True
    for index, (token, score, kind) in enumerate(zip(vocab.tokens, vocab.scores, vocab.types)):
        piece = proto.pieces.add()
        piece.piece = token
        piece.score = score
        # llama.cpp marks <unk> as a control token; SentencePiece needs exactly one UNKNOWN piece.
        piece.type = TOKEN_UNKNOWN if index == vocab.unk_id else kind
    return proto.SerializeToString()
