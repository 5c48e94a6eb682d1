"""Convert a llama-architecture GGUF file into a standard mlx-lm model directory.

``mx.load(path, return_metadata=True)`` reads a GGUF file as MLX arrays: Q4_0/Q4_1/Q8_0 tensors come
back already in MLX's affine quantized layout (packed ``uint32`` weight + ``scales`` + ``biases``), and
the metadata holds the architecture, the tokenizer vocabulary and merges, and the chat template. This
module renames the tensors to mlx-lm's llama names, writes ``config.json``, ``model.safetensors`` and
a ``tokenizers`` tokenizer, so that plain ``mlx_lm.load(directory)`` works.

Two facts about llama.cpp's GGUF files decide the config:

- llama.cpp's converter permutes the rows of ``attn_q``/``attn_k`` so that rotary embedding pairs are
  adjacent; ``rope_traditional: true`` is the matching rotary layout, so the weights are used as stored.
- Bits and group size can differ per tensor (a "Q4_1" file may store the embedding as Q8_0), so the
  quantization config names each tensor whose bits or group size differ from the common one.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claimcheck.models.gguf_recipe import LAYER_NAMES
from claimcheck.models.gguf_recipe import mlx_lm_name as gguf_tensor_name

if TYPE_CHECKING:
    from tokenizers import Tokenizer
    from tokenizers.pre_tokenizers import PreTokenizer

#: Bumped when the converted directory's content changes, so old conversions are not reused.
CONVERTER_VERSION = 1

#: llama's layer tensors: the shared table, with the one norm before the MLP.
LLAMA_LAYER_NAMES = {**LAYER_NAMES, "ffn_norm": "post_attention_layernorm"}

GGUF_TOKEN_CONTROL = 3
GGUF_TOKEN_USER_DEFINED = 4


def mlx_lm_name(gguf_name: str) -> str:
    """``blk.3.attn_q.scales`` -> ``model.layers.3.self_attn.q_proj.scales``; raises KeyError if unknown."""
    return gguf_tensor_name(gguf_name, LLAMA_LAYER_NAMES)


def _scalar(value: Any) -> Any:
    """GGUF metadata scalars come back as 0-d MLX arrays; make them plain Python values.

    float32 values are rounded to the 7 significant digits float32 holds (1e-5, not 9.9999997e-06).
    """
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        item = value.item()
        return float(f"{item:.7g}") if isinstance(item, float) else item
    return value


def read_gguf(path: str | Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """MLX tensors and metadata of a GGUF file (metadata scalars as Python values)."""
    from claimcheck.models.arrays import load_with_metadata

    weights, metadata = load_with_metadata(path)
    return weights, {key: _scalar(value) for key, value in metadata.items()}


def llama_config(metadata: dict[str, Any]) -> dict[str, Any]:
    """mlx-lm llama ``config.json`` fields from GGUF ``llama.*`` metadata."""
    arch = metadata.get("general.architecture")
    if arch != "llama":
        raise ValueError(f"GGUF architecture `{arch}` is not supported; expected `llama`")
    heads = int(metadata["llama.attention.head_count"])
    hidden = int(metadata["llama.embedding_length"])
    eos = [int(metadata["tokenizer.ggml.eos_token_id"])]
    # Plain completions may end with <|endoftext|> (the unknown/pad id 0 in GPT-2 style vocabularies).
    end_of_text = _token_id(metadata, "<|endoftext|>")
    if end_of_text is not None and end_of_text not in eos:
        eos.append(end_of_text)
    return {
        "model_type": "llama",
        "architectures": ["LlamaForCausalLM"],
        "hidden_size": hidden,
        "num_hidden_layers": int(metadata["llama.block_count"]),
        "intermediate_size": int(metadata["llama.feed_forward_length"]),
        "num_attention_heads": heads,
        "num_key_value_heads": int(metadata.get("llama.attention.head_count_kv", heads)),
        "head_dim": int(metadata.get("llama.rope.dimension_count", hidden // heads)),
        "rms_norm_eps": float(metadata["llama.attention.layer_norm_rms_epsilon"]),
        "rope_theta": float(metadata.get("llama.rope.freq_base", 10000.0)),
        "rope_traditional": True,
        "max_position_embeddings": int(metadata.get("llama.context_length", 2048)),
        "vocab_size": int(metadata.get("llama.vocab_size", len(metadata["tokenizer.ggml.tokens"]))),
        "bos_token_id": int(metadata["tokenizer.ggml.bos_token_id"]),
        "eos_token_id": eos,
    }


def _token_id(metadata: dict[str, Any], token: str) -> int | None:
    tokens = metadata.get("tokenizer.ggml.tokens") or []
    try:
        return tokens.index(token)
    except ValueError:
        return None


def _token_types(metadata: dict[str, Any]) -> list[int]:
    types = metadata.get("tokenizer.ggml.token_type")
    if types is None:
        return [1] * len(metadata["tokenizer.ggml.tokens"])
    return [int(t) for t in (types.tolist() if hasattr(types, "tolist") else types)]


def _pre_tokenizer(kind: str) -> PreTokenizer:
    from tokenizers import pre_tokenizers

    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if kind == "smollm":
        # llama.cpp's "smollm": every digit on its own, then GPT-2 byte-level splitting.
        return pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
    if kind in ("gpt2", "default"):
        return byte_level
    raise ValueError(f"GGUF pre-tokenizer `{kind}` is not supported; expected `smollm` or `gpt2`")


def build_tokenizer(metadata: dict[str, Any]) -> Tokenizer:
    """A ``tokenizers.Tokenizer`` equivalent to llama.cpp's for a byte-level BPE (``gpt2``) GGUF vocabulary."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, processors

    if metadata.get("tokenizer.ggml.model") != "gpt2":
        raise ValueError(f"GGUF tokenizer model `{metadata.get('tokenizer.ggml.model')}` is not supported; expected `gpt2` (byte-level BPE)")
    tokens: list[str] = list(metadata["tokenizer.ggml.tokens"])
    vocab = {token: index for index, token in enumerate(tokens)}
    merges = [tuple(merge.split(" ", 1)) for merge in metadata["tokenizer.ggml.merges"]]
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False, byte_fallback=False))
    tokenizer.pre_tokenizer = _pre_tokenizer(str(metadata.get("tokenizer.ggml.pre", "gpt2")))
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    types = _token_types(metadata)
    added = [
        AddedToken(tokens[index], special=types[index] == GGUF_TOKEN_CONTROL, normalized=False)
        for index in range(len(tokens))
        if types[index] in (GGUF_TOKEN_CONTROL, GGUF_TOKEN_USER_DEFINED)
    ]
    tokenizer.add_tokens([token for token in added if not token.special])
    tokenizer.add_special_tokens([token for token in added if token.special])
    return tokenizer


def tokenizer_config(metadata: dict[str, Any]) -> dict[str, Any]:
    """``tokenizer_config.json`` for ``PreTrainedTokenizerFast``, with the GGUF chat template inline."""
    tokens = metadata["tokenizer.ggml.tokens"]

    def token(key: str) -> str | None:
        index = metadata.get(key)
        return tokens[int(index)] if index is not None else None

    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": token("tokenizer.ggml.bos_token_id"),
        "eos_token": token("tokenizer.ggml.eos_token_id"),
        "unk_token": token("tokenizer.ggml.unknown_token_id"),
        "pad_token": token("tokenizer.ggml.padding_token_id"),
        "add_bos_token": bool(metadata.get("tokenizer.ggml.add_bos_token", False)),
        "add_eos_token": False,
        "add_prefix_space": bool(metadata.get("tokenizer.ggml.add_space_prefix", False)),
        "clean_up_tokenization_spaces": False,
        "model_max_length": int(metadata.get("llama.context_length", 2048)),
    }
    if template := metadata.get("tokenizer.chat_template"):
        config["chat_template"] = template
    return {key: value for key, value in config.items() if value is not None}


def _quantized_bases(weights: dict[str, Any]) -> list[str]:
    return sorted(name[: -len(".scales")] for name in weights if name.endswith(".scales"))


GGUF_BLOCK = 32  # MLX's GGUF reader keeps ggml's block size (32) as the quantization group size


def quantization_of(base: str, weights: dict[str, Any]) -> dict[str, int]:
    """Bits and group size implied by a quantized tensor's packed width.

    With ``in_dims = groups * 32`` and ``packed = in_dims * bits / 32``, ``bits = packed / groups``.
    """
    packed = weights[f"{base}.weight"].shape[-1]
    groups = weights[f"{base}.scales"].shape[-1]
    bits, remainder = divmod(packed, groups)
    if remainder or bits not in (2, 3, 4, 5, 6, 8):
        raise ValueError(f"cannot tell the bits of `{base}` from packed width {packed} and {groups} groups")
    return {"group_size": GGUF_BLOCK, "bits": bits}


def convert_weights(weights: dict[str, Any], variant: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Rename to mlx-lm names; ``4bit`` keeps the stored quantized tensors, ``fp32`` dequantizes all.

    Returns the new weights and, for ``4bit``, the mlx-lm ``quantization`` config (common bits and
    group size plus one entry per tensor that differs).
    """
    import mlx.core as mx

    if variant not in ("4bit", "fp32"):
        raise ValueError(f"variant `{variant}` is not supported for GGUF conversion; expected `4bit` or `fp32`")
    quantized = {base: quantization_of(base, weights) for base in _quantized_bases(weights)}
    out: dict[str, Any] = {}
    for name, value in weights.items():
        base, _, part = name.rpartition(".")
        if base in quantized and variant == "fp32":
            if part != "weight":
                continue
            q = quantized[base]
            value = mx.dequantize(
                value,
                weights[f"{base}.scales"].astype(mx.float32),
                weights[f"{base}.biases"].astype(mx.float32),
                group_size=q["group_size"],
                bits=q["bits"],
            )
        elif base not in quantized and variant == "fp32":
            value = value.astype(mx.float32)
        out[mlx_lm_name(name)] = value
    if variant == "fp32" or not quantized:
        return out, None
    common = Counter((q["group_size"], q["bits"]) for q in quantized.values()).most_common(1)[0][0]
    quantization: dict[str, Any] = {"group_size": common[0], "bits": common[1], "mode": "affine"}
    for base, q in quantized.items():
        if (q["group_size"], q["bits"]) != common:
            quantization[mlx_lm_name(f"{base}.weight")[: -len(".weight")]] = {**q, "mode": "affine"}
    return out, quantization


def convert(gguf_path: str | Path, destination: Path, *, variant: str, source_sha256: str) -> dict[str, Any]:
    """Write an mlx-lm model directory for ``gguf_path`` into ``destination`` (which must exist).

    Returns the manifest written to ``claimcheck.json`` (source, hashes, variant, timings).
    """
    import mlx.core as mx

    from claimcheck.models._files import write_manifest

    started = time.perf_counter()
    weights, metadata = read_gguf(gguf_path)
    config = llama_config(metadata)
    new_weights, quantization = convert_weights(weights, variant)
    config["tie_word_embeddings"] = "lm_head.weight" not in new_weights
    config["torch_dtype"] = "float32" if variant == "fp32" else "float16"
    if quantization is not None:
        config["quantization"] = quantization
        config["quantization_config"] = quantization
    mx.eval(new_weights)
    mx.save_safetensors(str(destination / "model.safetensors"), new_weights, metadata={"format": "mlx"})
    (destination / "config.json").write_text(json.dumps(dict(sorted(config.items())), indent=2))
    build_tokenizer(metadata).save(str(destination / "tokenizer.json"))
    tokenizer_settings = tokenizer_config(metadata)
    (destination / "tokenizer_config.json").write_text(json.dumps(tokenizer_settings, indent=2, ensure_ascii=False))
    special = {key: tokenizer_settings[key] for key in ("bos_token", "eos_token", "unk_token", "pad_token") if key in tokenizer_settings}
    (destination / "special_tokens_map.json").write_text(json.dumps(special, indent=2))
    (destination / "generation_config.json").write_text(
        json.dumps({"bos_token_id": config["bos_token_id"], "eos_token_id": config["eos_token_id"]}, indent=2)
    )
    return write_manifest(destination, converter_version=CONVERTER_VERSION, source=gguf_path,
                          source_sha256=source_sha256, variant=variant, started=started)
