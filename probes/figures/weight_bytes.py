"""Bytes a decode step must stream per token, from safetensors headers alone (methods notes, section G).

Nothing here reads tensor data: a safetensors file starts with an 8-byte
little-endian header length and a JSON header listing every tensor's dtype,
shape and byte range, which is all the accounting needs. The rules:

- every layer tensor is streamed once per token;
- the output head is streamed once; a tied head (no separate head tensor) is
  the embedding table, counted once, as the head;
- embedding tables that are only row-gathered (an untied input embedding,
  per-layer embedding tables) are not streamed;
- MoE expert tensors count ``top_k / n_experts`` of their bytes;
- towers a text decode never touches (vision, audio) are not streamed.

KV bytes read per token at context ``c``: for each layer,
``2 (K and V) x kv_heads x head_dim x dtype bytes x min(c, window)``, where
``window`` is the sliding window for sliding layers and unbounded otherwise.
"""

from __future__ import annotations

import json
import math
import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from claimcheck.api import NotApplicable, Output, ProbeContext, ProbeError, probe

DTYPE_BYTES = {
    "F64": 8, "I64": 8, "U64": 8,
    "F32": 4, "I32": 4, "U32": 4,
    "F16": 2, "BF16": 2, "I16": 2, "U16": 2,
    "F8_E4M3": 1, "F8_E5M2": 1, "I8": 1, "U8": 1, "BOOL": 1,
}

HEAD = r"(^|\.)(lm_head|output)\.(weight|scales|biases|bias)$"
TIED_EMBEDDING = r"(^|\.)(embed_tokens|wte|tok_embeddings|token_embd|word_embeddings)\.(weight|scales|biases)$"
EMBEDDING = r"(^|\.)(embed_tokens\w*|wte|tok_embeddings|token_embd|word_embeddings|embed_tokens_per_layer)\."
EXPERTS = r"(^|\.)(experts|switch_mlp)\."
UNTOUCHED = r"(^|\.)(vision_tower|vision_model|audio_tower|audio_model|multi_modal_projector|embed_vision|embed_audio)\."

TOP_K_KEYS = ("num_experts_per_tok", "top_k_experts", "moe_top_k", "num_selected_experts", "top_k")
N_EXPERTS_KEYS = ("num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts")


@dataclass(frozen=True)
class TensorEntry:
    """One tensor as a safetensors header describes it."""

    dtype: str
    shape: tuple[int, ...]
    nbytes: int


def read_safetensors_header(path: str | Path) -> dict[str, TensorEntry]:
    """Parse one safetensors header (no tensor data is read) and check every byte range."""
    with open(path, "rb") as handle:
        raw_length = handle.read(8)
        if len(raw_length) != 8:
            raise ProbeError(f"{path}: not a safetensors file (shorter than its 8-byte header length)")
        (length,) = struct.unpack("<Q", raw_length)
        header = json.loads(handle.read(length))
    entries = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        start, end = spec["data_offsets"]
        shape = tuple(int(d) for d in spec["shape"])
        nbytes = end - start
        width = DTYPE_BYTES.get(spec["dtype"])
        if width is not None and nbytes != math.prod(shape) * width:
            raise ProbeError(f"{path}: `{name}` spans {nbytes} bytes but {spec['dtype']}{list(shape)} needs {math.prod(shape) * width}")
        entries[name] = TensorEntry(spec["dtype"], shape, nbytes)
    return entries


def read_model_headers(model_dir: str | Path) -> dict[str, TensorEntry]:
    """Every tensor entry of every ``*.safetensors`` file in a model directory."""
    files = sorted(Path(model_dir).glob("*.safetensors"))
    if not files:
        raise NotApplicable(f"{model_dir}: no *.safetensors files")
    entries: dict[str, TensorEntry] = {}
    for file in files:
        entries.update(read_safetensors_header(file))
    return entries


def text_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The decoder's config: top-level keys, overridden by a nested ``text_config`` where present."""
    merged = dict(config)
    merged.update(config.get("text_config") or {})
    return merged


def _first(config: Mapping[str, Any], keys: Iterable[str]) -> Any:
    for key in keys:
        if config.get(key) is not None:
            return config[key]
    return None


@dataclass(frozen=True)
class ByteAccount:
    """Where a model's bytes go during one decode step."""

    layers: int  # streamed every token (attention, MLP, norms, dense MoE parts)
    head: int  # the output head (the embedding table when tied)
    experts_total: int  # all expert tensors
    experts_streamed: float  # experts_total x top_k / n_experts
    gathered: int  # row-gathered embedding tables, not streamed
    untouched: int  # towers a text decode never runs
    tied: bool

    @property
    def per_token(self) -> float:
        return self.layers + self.head + self.experts_streamed


def account(
    sizes: Mapping[str, int],
    config: Mapping[str, Any],
    *,
    top_k: int | None = None,
    n_experts: int | None = None,
) -> ByteAccount:
    """Classify tensor byte sizes (name -> bytes) into what a decode step streams."""
    cfg = text_config(config)
    head_names = [n for n in sizes if re.search(HEAD, n)]
    tied = not head_names
    if tied and cfg.get("tie_word_embeddings") is False:
        raise ProbeError("config says the head is untied (`tie_word_embeddings: false`) but no head tensor was found")
    layers = head = experts = gathered = untouched = 0
    for name, nbytes in sizes.items():
        if re.search(UNTOUCHED, name):
            untouched += nbytes
        elif name in head_names or (tied and re.search(TIED_EMBEDDING, name)):
            head += nbytes
        elif re.search(EMBEDDING, name):
            gathered += nbytes
        elif re.search(EXPERTS, name):
            experts += nbytes
        else:
            layers += nbytes
    if tied and head == 0:
        raise ProbeError("no output head and no embedding table to tie it to")
    streamed = 0.0
    if experts:
        top_k = top_k or _first(cfg, TOP_K_KEYS)
        n_experts = n_experts or _first(cfg, N_EXPERTS_KEYS)
        if not top_k or not n_experts:
            raise ProbeError("expert tensors found but the config names no top_k / expert count; pass `top_k` and `n_experts`")
        streamed = experts * top_k / n_experts
    return ByteAccount(layers, head, experts, streamed, gathered, untouched, tied)


def kv_bytes_per_token(
    config: Mapping[str, Any],
    context: int,
    *,
    dtype_bytes: int = 2,
    window: int | None = None,
    layer_types: list[str] | None = None,
) -> int:
    """KV bytes one decode step reads at ``context`` (sliding layers capped at their window)."""
    cfg = text_config(config)
    layers = int(cfg["num_hidden_layers"])
    heads = int(cfg["num_attention_heads"])
    kv_heads = int(cfg.get("num_key_value_heads") or heads)
    head_dim = int(cfg.get("head_dim") or cfg["hidden_size"] // heads)
    window = window or cfg.get("sliding_window")
    types = layer_types or cfg.get("layer_types")
    if types is None:
        pattern = cfg.get("sliding_window_pattern")
        if pattern and window:
            types = ["full_attention" if (i + 1) % int(pattern) == 0 else "sliding_attention" for i in range(layers)]
        else:
            types = ["full_attention"] * layers
    if len(types) != layers:
        raise ProbeError(f"`layer_types` lists {len(types)} layers, config has {layers}")
    per_position = 2 * kv_heads * head_dim * dtype_bytes
    total = 0
    for kind in types:
        positions = min(context, int(window)) if kind == "sliding_attention" and window else context
        total += per_position * positions
    return total


def _sizes_and_config(model: str | None, variant: str | None, path: str | None, ctx: ProbeContext) -> tuple[dict[str, int], dict[str, Any]]:
    """Tensor sizes from the model directory's headers (or, for in-memory models, their parameters)."""
    if path is not None:
        model_dir = Path(path)
    else:
        from claimcheck.api import load

        if model is None:
            raise ProbeError("weight_bytes needs `model` or `path`")
        lm = load(model, variant=variant) if variant else load(model)
        ctx.info.update({"model": lm.model_id, "variant": lm.variant, "weights_hash": lm.weights_hash})
        loaded_dir = Path(lm.path) if lm.path else None
        if loaded_dir is None or not any(loaded_dir.glob("*.safetensors")):
            from claimcheck.api import named_parameters

            ctx.info["source"] = "parameters (no safetensors files)"
            sizes = {name: int(value.nbytes) for name, value in named_parameters(lm.model)}
            return sizes, dict(lm.config)
        model_dir = loaded_dir
    config_path = model_dir / "config.json"
    if not config_path.exists():
        raise NotApplicable(f"{model_dir}: no config.json")
    ctx.info["source"] = f"safetensors headers in {model_dir}"
    entries = read_model_headers(model_dir)
    return {name: e.nbytes for name, e in entries.items()}, json.loads(config_path.read_text())


@probe(
    "weight_bytes",
    deterministic=True,
    outputs={
        "bytes_per_token": Output("B", None, "weights streamed per decode token"),
        "gb_per_token": Output("GB", None, "the same in decimal GB"),
        "head_bytes": Output("B", None, "output head (embedding table when tied)"),
        "layer_bytes": Output("B", None, "per-token layer weights, experts excluded"),
        "expert_bytes": Output("B", None, "expert bytes streamed per token (top_k / n_experts share)"),
        "gathered_bytes": Output("B", None, "row-gathered embedding tables, not streamed"),
        "kv_bytes_per_token": Output("B", None, "KV bytes read per token at `context`"),
        "kv_bytes_per_position": Output("B", None, "KV bytes per cached position over all layers, full-attention"),
    },
)
def weight_bytes(
    ctx: ProbeContext,
    *,
    model: str | None = None,
    variant: str | None = None,
    path: str | None = None,
    context: int = 0,
    kv_dtype_bytes: int = 2,
    top_k: int | None = None,
    n_experts: int | None = None,
) -> dict[str, list[float]]:
    """Weight and KV bytes per decode token, from headers (deterministic: one value per output).

    Args:
        model: model id to count (a registered one, a project alias, an mlx-lm folder or a cached Hugging
            Face repo): loaded, then its folder's safetensors headers are read (its parameters when it
            has none). Give ``model`` or ``path``.
        variant: which weights of the model to load, one it offers (``fp32``, ``4bit``); ``None``: its
            default (``fp32`` on the CPU, ``4bit`` on a GPU).
        path: a model folder (``config.json`` and ``*.safetensors``) read from its headers without
            loading; used instead of ``model``.
        context: positions the KV read is counted at, in tokens; 0: no KV (``kv_bytes_per_token`` is 0).
        kv_dtype_bytes: bytes per cached K/V element (2 for float16/bfloat16, 4 for float32).
        top_k, n_experts: experts used per token and experts in all, for a MoE model's expert share
            (``top_k / n_experts``); ``None``: read from the config.
    """
    if model is None and path is None:
        raise ProbeError("weight_bytes needs `model` or `path`")
    sizes, config = _sizes_and_config(model, variant, path, ctx)
    acc = account(sizes, config, top_k=top_k, n_experts=n_experts)
    kv = kv_bytes_per_token(config, context, dtype_bytes=kv_dtype_bytes) if context else 0
    ctx.artifacts["accounting"] = {
        "layers": acc.layers, "head": acc.head, "tied": acc.tied, "experts_total": acc.experts_total,
        "experts_streamed": acc.experts_streamed, "gathered": acc.gathered, "untouched": acc.untouched,
        "tensors": len(sizes), "context": context,
    }
    return {
        "bytes_per_token": [acc.per_token],
        "gb_per_token": [acc.per_token / 1e9],
        "head_bytes": [acc.head],
        "layer_bytes": [acc.layers],
        "expert_bytes": [acc.experts_streamed],
        "gathered_bytes": [acc.gathered],
        "kv_bytes_per_token": [kv],
        "kv_bytes_per_position": [kv_bytes_per_token(config, 1, dtype_bytes=kv_dtype_bytes)],
    }
