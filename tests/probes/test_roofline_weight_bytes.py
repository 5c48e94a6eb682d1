"""Header-only byte accounting (weight_bytes probe) on safetensors files written here with known tensors."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from claimcheck.errors import NotApplicable, ProbeError
from claimcheck.probing.registry import ProbeContext
from probes.figures.weight_bytes import account, kv_bytes_per_token, read_safetensors_header, weight_bytes

WIDTH = {"F32": 4, "BF16": 2, "U32": 4, "F16": 2}


def write_safetensors(path: Path, tensors: dict[str, tuple[str, tuple[int, ...]]]) -> None:
    """A valid safetensors file whose data are zeros: the header is written by hand from the spec."""
    header, offset = {"__metadata__": {"format": "mlx"}}, 0
    for name, (dtype, shape) in tensors.items():
        size = WIDTH[dtype]
        for dim in shape:
            size *= dim
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    blob = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(blob)) + blob + bytes(offset))


# A 2-layer model, hidden 8, vocab 16, fp32 (4 bytes). Per layer: q,o 8x8, k,v 4x8, mlp 3 x (8x16), 2 norms of 8.
LAYER = {
    "self_attn.q_proj.weight": ("F32", (8, 8)),
    "self_attn.k_proj.weight": ("F32", (4, 8)),
    "self_attn.v_proj.weight": ("F32", (4, 8)),
    "self_attn.o_proj.weight": ("F32", (8, 8)),
    "mlp.gate_proj.weight": ("F32", (16, 8)),
    "mlp.up_proj.weight": ("F32", (16, 8)),
    "mlp.down_proj.weight": ("F32", (8, 16)),
    "input_layernorm.weight": ("F32", (8,)),
    "post_attention_layernorm.weight": ("F32", (8,)),
}
LAYER_BYTES = 4 * (64 + 32 + 32 + 64 + 128 * 3 + 16)  # = 2368
EMBED_BYTES = 4 * 16 * 8  # 512
NORM_BYTES = 4 * 8


def dense_tensors() -> dict[str, tuple[str, tuple[int, ...]]]:
    tensors = {f"model.layers.{i}.{name}": spec for i in range(2) for name, spec in LAYER.items()}
    tensors["model.embed_tokens.weight"] = ("F32", (16, 8))
    tensors["model.norm.weight"] = ("F32", (8,))
    return tensors


CONFIG = {"num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "hidden_size": 8, "head_dim": 4}


def test_header_is_read_without_tensor_data(tmp_path):
    path = tmp_path / "model.safetensors"
    write_safetensors(path, {"a": ("F32", (2, 3)), "b": ("BF16", (5,))})
    entries = read_safetensors_header(path)
    assert {name: (e.dtype, e.shape, e.nbytes) for name, e in entries.items()} == {
        "a": ("F32", (2, 3), 24),
        "b": ("BF16", (5,), 10),
    }


def test_header_whose_range_disagrees_with_its_shape_is_an_error(tmp_path):
    path = tmp_path / "bad.safetensors"
    blob = json.dumps({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 12]}}).encode()
    path.write_bytes(struct.pack("<Q", len(blob)) + blob + bytes(12))
    with pytest.raises(ProbeError, match="spans 12 bytes"):
        read_safetensors_header(path)


def test_tied_head_is_counted_once_as_the_head(tmp_path):
    write_safetensors(tmp_path / "model.safetensors", dense_tensors())
    (tmp_path / "config.json").write_text(json.dumps({**CONFIG, "tie_word_embeddings": True}))
    ctx = ProbeContext(n=1)
    out = weight_bytes(ctx, path=str(tmp_path))
    assert out["head_bytes"] == [EMBED_BYTES]
    assert out["gathered_bytes"] == [0]
    assert out["bytes_per_token"] == [2 * LAYER_BYTES + NORM_BYTES + EMBED_BYTES]  # 5280
    assert ctx.artifacts["accounting"]["tied"] is True


def test_untied_embedding_is_row_gathered_and_the_head_streamed(tmp_path):
    tensors = dense_tensors()
    tensors["lm_head.weight"] = ("F32", (16, 8))
    write_safetensors(tmp_path / "model.safetensors", tensors)
    (tmp_path / "config.json").write_text(json.dumps({**CONFIG, "tie_word_embeddings": False}))
    out = weight_bytes(ProbeContext(n=1), path=str(tmp_path))
    assert out["gathered_bytes"] == [EMBED_BYTES]
    assert out["head_bytes"] == [EMBED_BYTES]
    assert out["bytes_per_token"] == [2 * LAYER_BYTES + NORM_BYTES + EMBED_BYTES]


def test_untied_config_without_a_head_tensor_is_an_error():
    with pytest.raises(ProbeError, match="untied"):
        account({"model.embed_tokens.weight": 512}, {"tie_word_embeddings": False})


def test_quantized_head_counts_scales_and_biases_and_per_layer_tables_are_gathered():
    sizes = {
        "model.embed_tokens.weight": 100, "model.embed_tokens.scales": 10, "model.embed_tokens.biases": 10,
        "model.embed_tokens_per_layer.weight": 1000,  # per-layer input embeddings: row-gathered
        "model.layers.0.mlp.down_proj.weight": 50,
        "vision_tower.encoder.weight": 7000,  # never touched by text decode
    }
    acc = account(sizes, {})
    assert (acc.head, acc.gathered, acc.layers, acc.untouched, acc.tied) == (120, 1000, 50, 7000, True)
    assert acc.per_token == 170


def test_moe_experts_count_top_k_over_n_experts(tmp_path):
    tensors = dense_tensors()
    for i in range(2):
        for proj in ("gate_proj", "up_proj", "down_proj"):
            tensors[f"model.layers.{i}.mlp.switch_mlp.{proj}.weight"] = ("F32", (8, 16, 8))  # 8 experts, 4096 B
        tensors[f"model.layers.{i}.mlp.shared_expert.gate_proj.weight"] = ("F32", (16, 8))  # dense, streamed
    write_safetensors(tmp_path / "model.safetensors", tensors)
    (tmp_path / "config.json").write_text(json.dumps({**CONFIG, "num_experts": 8, "num_experts_per_tok": 2}))
    out = weight_bytes(ProbeContext(n=1), path=str(tmp_path))
    experts_total = 2 * 3 * 8 * 16 * 8 * 4  # 24576
    assert out["expert_bytes"] == [experts_total * 2 / 8]  # 6144
    shared = 2 * 16 * 8 * 4
    assert out["bytes_per_token"] == [2 * LAYER_BYTES + NORM_BYTES + EMBED_BYTES + shared + experts_total / 4]


def test_moe_without_routing_numbers_is_an_error():
    with pytest.raises(ProbeError, match="top_k"):
        account({"model.layers.0.mlp.experts.0.w1.weight": 10, "lm_head.weight": 1}, {})


def test_kv_bytes_per_token_full_attention():
    # The doc's CPM5 figure: 24 layers x 2 x 2 kv heads x 128 dims x 2 bytes = 24,576 B per position.
    config = {"num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 128}
    assert kv_bytes_per_token(config, 1) == 24_576
    assert kv_bytes_per_token(config, 132) == 132 * 24_576


def test_kv_bytes_sliding_layers_are_capped_at_the_window():
    # The doc's 12B: 8 full + 40 sliding@1024 layers, 8 kv heads x 256 dims, bf16 -> 236 MB @600, 872 MB @8k.
    types = (["sliding_attention"] * 5 + ["full_attention"]) * 8
    config = {"num_hidden_layers": 48, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256,
              "sliding_window": 1024, "layer_types": types}
    assert kv_bytes_per_token(config, 600) == 48 * 2 * 8 * 256 * 2 * 600  # 235,929,600: below the window
    at_8k = kv_bytes_per_token(config, 8192)
    assert at_8k == 8 * 8192 * 8192 + 40 * 8192 * 1024  # 8,192 B per layer-position
    assert round(at_8k / 1e6) == 872


def test_kv_sliding_pattern_from_config_matches_explicit_types():
    config = {"num_hidden_layers": 6, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 2,
              "sliding_window": 4, "sliding_window_pattern": 3}
    explicit = dict(config, layer_types=["sliding_attention", "sliding_attention", "full_attention"] * 2)
    del explicit["sliding_window_pattern"]
    assert kv_bytes_per_token(config, 10) == kv_bytes_per_token(explicit, 10) == 8 * (4 * 4 + 2 * 10)  # 4 sliding layers see 4 positions, 2 full see 10


def test_directory_without_weights_is_not_applicable(tmp_path):
    with pytest.raises(NotApplicable):
        weight_bytes(ProbeContext(n=1), path=str(tmp_path))


def test_smoke_on_a_tiny_synthetic_model():
    # fp32 llama "tiny": hidden 128, 4 layers, FFN 256, 4 heads of 32, 2 KV heads, vocab 2048, tied.
    # Per layer: q,o 128x128, k,v 64x128, mlp 3 x 128x256, 2 norms of 128 -> 139,520 params.
    per_layer = 2 * 128 * 128 + 2 * 64 * 128 + 3 * 128 * 256 + 2 * 128
    expected = 4 * (4 * per_layer + 128 + 2048 * 128)
    out = weight_bytes(ProbeContext(n=1), model="synthetic:llama:tiny", variant="fp32", context=10)
    assert out["bytes_per_token"] == [expected]
    assert out["kv_bytes_per_token"] == [4 * 2 * 2 * 32 * 2 * 10]
