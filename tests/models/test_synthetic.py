"""Random-weight models: shapes, variants, determinism, refusal for text claims, saving as a directory."""

from __future__ import annotations

import json

import pytest

from claimcheck.errors import NotApplicable
from claimcheck.models import load, synthetic


def _parameters(model) -> dict:
    from mlx.utils import tree_flatten

    return dict(tree_flatten(model.parameters()))


def _count(config: dict) -> int:
    """Parameters of a synthetic model from its shape, by constructing it lazily (nothing is evaluated)."""
    import importlib

    from mlx.utils import tree_flatten

    module = importlib.import_module(f"mlx_lm.models.{config['model_type']}")
    model = module.Model(module.ModelArgs.from_dict(config))
    return sum(value.size for _, value in tree_flatten(model.parameters()))


def test_named_shapes_state_their_source():
    for (arch, name), shape in synthetic.SHAPES.items():
        assert shape.source, (arch, name)
    one_b = synthetic.shape_of("synthetic:llama:1b").config
    assert {k: one_b[k] for k in ("hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
                                  "intermediate_size", "vocab_size")} == {
        "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8,
        "intermediate_size": 8192, "vocab_size": 32000}


@pytest.mark.parametrize(
    "model_id, low, high",
    [
        # 16 x (2 x 2048^2 + 2 x 2048 x 512 + 3 x 2048 x 8192) + 32000 x 2048 + norms = 1.039e9
        ("synthetic:llama:1b", 1.03e9, 1.05e9),
        # 36 x (2 x 2560 x 4096 + 2 x 2560 x 1024 + 3 x 2560 x 9728) + 151936 x 2560 + norms = 4.02e9
        ("synthetic:llama:4b", 4.0e9, 4.05e9),
        # SmolLM2-135M: 134.5 M parameters with the tied head
        ("synthetic:llama:small", 1.34e8, 1.35e8),
        ("synthetic:llama:tiny", 0.8e6, 0.9e6),
    ],
)
def test_parameter_counts_match_the_size_class(model_id, low, high):
    assert low <= _count(synthetic.model_config(model_id, "fp32")) <= high


def test_unknown_shape_is_not_applicable():
    with pytest.raises(NotApplicable, match="no synthetic shape llama:huge; known: "):
        load("synthetic:llama:huge")
    with pytest.raises(NotApplicable, match="synthetic:<arch>:<name>"):
        load("synthetic:llama")


@pytest.mark.parametrize("variant", ["fp32", "bf16", "4bit"])
def test_tiny_llama_runs_in_every_variant(variant):
    import mlx.core as mx

    loaded = load("synthetic:llama:tiny", variant=variant, reuse=False)
    assert not loaded.reads_text and loaded.tokenizer is None and loaded.path is None
    prompt = mx.array([synthetic.prompt_tokens(loaded.config["vocab_size"], 8)])
    logits = loaded.model(prompt)
    mx.eval(logits)
    assert logits.shape == (1, 8, 2048)
    assert mx.isfinite(logits).all().item()
    params = _parameters(loaded.model)
    if variant == "4bit":
        layer = loaded.model.model.layers[0].self_attn.q_proj
        assert (layer.bits, layer.group_size) == (4, 64)
        assert params["model.layers.0.self_attn.q_proj.scales"].dtype == mx.bfloat16
        assert params["model.layers.0.input_layernorm.weight"].dtype == mx.float32
        assert logits.dtype == mx.float32  # float32 norms keep CPU activations in float32
    else:
        expected = mx.float32 if variant == "fp32" else mx.bfloat16
        assert {value.dtype for value in params.values()} == {expected}


def test_weights_are_deterministic_and_distinct_per_tensor():
    import mlx.core as mx

    first = _parameters(load("synthetic:llama:tiny", variant="fp32", reuse=False).model)
    second = _parameters(load("synthetic:llama:tiny", variant="fp32", reuse=False).model)
    assert all(mx.array_equal(first[name], second[name]).item() for name in first)
    q, k = first["model.layers.0.self_attn.q_proj.weight"], first["model.layers.1.self_attn.q_proj.weight"]
    assert not mx.array_equal(q, k).item()
    # uniform with standard deviation INIT_STD: the sample std of 16k values is within 2 %.
    assert abs(mx.std(q).item() - synthetic.INIT_STD) < 0.02 * synthetic.INIT_STD


def test_weights_hash_is_the_recipe_and_differs_by_variant():
    fp32 = load("synthetic:llama:tiny", variant="fp32", reuse=False)
    four = load("synthetic:llama:tiny", variant="4bit", reuse=False)
    assert fp32.weights_hash == synthetic.recipe_hash("synthetic:llama:tiny", "fp32")
    assert fp32.weights_hash != four.weights_hash


def test_moe_router_gets_the_architectures_8bit_override():
    import mlx.core as mx

    loaded = load("synthetic:qwen3_moe:tiny", variant="4bit", reuse=False)
    # qwen3_moe's quant_predicate keeps the router ("mlp.gate") at 8 bits.
    assert loaded.config["quantization"]["model.layers.0.mlp.gate"] == {"group_size": 64, "bits": 8}
    assert loaded.model.model.layers[0].mlp.gate.bits == 8
    assert loaded.model.model.layers[0].mlp.switch_mlp.gate_proj.bits == 4
    logits = loaded.model(mx.array([synthetic.prompt_tokens(2048, 5)]))
    assert mx.isfinite(logits).all().item()


def test_saved_synthetic_directory_loads_by_path_with_the_same_outputs(model_cache):
    import mlx.core as mx

    directory = synthetic.saved_dir("synthetic:llama:tiny", "4bit")
    assert directory.parent == model_cache / "models"
    manifest = json.loads((directory / "claimcheck.json").read_text())
    assert manifest["kind"] == "synthetic" and manifest["variant"] == "4bit"
    assert json.loads((directory / "config.json").read_text())["quantization"]["bits"] == 4
    assert synthetic.saved_dir("synthetic:llama:tiny", "4bit") == directory  # reused, not rebuilt

    from_disk = load(str(directory), reuse=False)
    in_memory = load("synthetic:llama:tiny", variant="4bit", reuse=False)
    assert from_disk.variant == "4bit" and not from_disk.reads_text and from_disk.tokenizer is None
    assert from_disk.weights_hash == manifest["weights_sha256"]
    prompt = mx.array([synthetic.prompt_tokens(2048, 6)])
    assert mx.allclose(from_disk.model(prompt), in_memory.model(prompt)).item()
    with pytest.raises(NotApplicable, match="stores variant 4bit"):
        load(str(directory), variant="fp32", reuse=False)
