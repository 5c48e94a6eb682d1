"""Random-weight models at named shapes: ``synthetic:<arch>:<name>``, e.g. ``synthetic:llama:1b``.

Speed and byte claims depend on tensor shapes, dtypes and kernels, not on what the weights say, so a
model built from an mlx-lm architecture with random weights measures the same work as the trained
model of that shape. Their token streams are meaningless: ``reads_text`` is False and text-reading
probes refuse them.

Weights are deterministic in ``(arch, shape, variant, seed)``. Drawing a billion random numbers takes
most of a minute on one CPU thread, so one block of :data:`PERIOD` random values is drawn per seed
(numpy PCG64) and each tensor reads it from an offset given by ``crc32(name)``, repeating it when the
tensor is larger (the period is prime, so rows do not line up). Quantized variants draw the packed
words directly (uniform 4-bit codes with a constant scale), which is what an affine-quantized
checkpoint looks like to the kernels.

Variants:
    ``fp32``: every parameter float32.
    ``bf16``: every parameter bfloat16 (like an mlx-community bf16 checkpoint).
    ``4bit``: affine 4-bit, group 64, bfloat16 scales and biases (like an mlx-community 4-bit
        checkpoint); per-module overrides from the architecture's ``quant_predicate`` (e.g. 8-bit MoE
        routers). Norm weights stay float32 so that CPU activations run in float32 after the first
        norm (bf16 math is ~35x slower than fp32 on x86); this adds ``2 * hidden`` bytes per norm.

MLX's CPU backend runs ``gather_mm`` in float32 only, so ``bf16`` mixture-of-experts models build but
do not run on CPU (``4bit`` ones do, through ``gather_qmm``).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import shutil
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claimcheck.errors import NotApplicable
from claimcheck.models._registry import LoadedModel, register

if TYPE_CHECKING:
    import mlx.core as mx

PREFIX = "synthetic:"
VARIANTS = ("4bit", "bf16", "fp32")
GENERATOR_VERSION = 1
PERIOD = 4_194_301  # prime just below 2**22: the repeat length of large random tensors
INIT_STD = 0.02
GROUP_SIZE = 64
BITS = 4


@dataclass(frozen=True)
class SyntheticShape:
    """An mlx-lm architecture config at a named size, and where the numbers come from."""

    arch: str
    name: str
    config: dict[str, Any]
    source: str
    approx_params: str = ""
    notes: dict[str, Any] = field(default_factory=dict)


_LLAMA_BASE = {"rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": True, "max_position_embeddings": 4096}
_QWEN3_MOE_BASE = {
    "rms_norm_eps": 1e-6,
    "rope_theta": 1_000_000.0,
    "tie_word_embeddings": True,
    "max_position_embeddings": 4096,
    "decoder_sparse_step": 1,
    "mlp_only_layers": [],
    "norm_topk_prob": True,
}

SHAPES: dict[tuple[str, str], SyntheticShape] = {}


def register_shape(shape: SyntheticShape) -> None:
    """Add a named shape so that ``synthetic:<arch>:<name>`` resolves to it."""
    SHAPES[(shape.arch, shape.name)] = shape


for _shape in (
    SyntheticShape(
        "llama",
        "tiny",
        {**_LLAMA_BASE, "hidden_size": 128, "num_hidden_layers": 4, "intermediate_size": 256,
         "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 2048},
        "test-sized llama (~0.85 M parameters)",
        "0.85M",
    ),
    SyntheticShape(
        "llama",
        "small",
        {**_LLAMA_BASE, "hidden_size": 576, "num_hidden_layers": 30, "intermediate_size": 1536,
         "num_attention_heads": 9, "num_key_value_heads": 3, "head_dim": 64, "vocab_size": 49152,
         "rope_theta": 100000.0, "max_position_embeddings": 8192},
        "SmolLM2-135M's shapes (the embedded model's GGUF metadata), random weights",
        "135M",
    ),
    SyntheticShape(
        "llama",
        "1b",
        {**_LLAMA_BASE, "hidden_size": 2048, "num_hidden_layers": 16, "intermediate_size": 8192,
         "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 32000,
         "rope_theta": 500000.0},
        "1-B dense class: Llama-3.2-1B's layer shapes (hidden 2048, 16 layers, 32 heads, 8 KV heads, "
        "FFN 8192, tied head) with a 32000-token vocabulary",
        "1.04B",
    ),
    SyntheticShape(
        "llama",
        "4b",
        {**_LLAMA_BASE, "hidden_size": 2560, "num_hidden_layers": 36, "intermediate_size": 9728,
         "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936,
         "rope_theta": 1_000_000.0},
        "4-B dense class: Qwen3-4B's shapes (hidden 2560, 36 layers, 32 heads of 128, 8 KV heads, "
        "FFN 9728, vocab 151936, tied head) on the llama architecture (no QK-norm)",
        "4.0B",
    ),
    SyntheticShape(
        "qwen3_moe",
        "tiny",
        {**_QWEN3_MOE_BASE, "hidden_size": 128, "num_hidden_layers": 2, "intermediate_size": 256,
         "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32, "num_experts": 8,
         "num_experts_per_tok": 2, "moe_intermediate_size": 64, "vocab_size": 2048},
        "test-sized mixture of experts (8 experts, top-2)",
        "0.7M",
    ),
    SyntheticShape(
        "qwen3_moe",
        "small",
        {**_QWEN3_MOE_BASE, "hidden_size": 1024, "num_hidden_layers": 8, "intermediate_size": 2816,
         "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 64, "num_experts": 32,
         "num_experts_per_tok": 4, "moe_intermediate_size": 256, "vocab_size": 32000},
        "small mixture of experts in Qwen3-MoE's layout: 8 layers, 32 experts of width 256, top-4",
        "0.25B total, 0.06B active",
    ),
):
    register_shape(_shape)


def parse_id(model_id: str) -> tuple[str, str]:
    """``synthetic:llama:1b`` -> ``("llama", "1b")``; raises NotApplicable for unknown shapes."""
    parts = model_id.split(":")
    if len(parts) != 3 or parts[0] + ":" != PREFIX or not parts[1] or not parts[2]:
        raise NotApplicable(f"model {model_id} not installed: synthetic ids look like synthetic:<arch>:<name>")
    arch, name = parts[1], parts[2]
    if (arch, name) not in SHAPES:
        known = ", ".join(f"synthetic:{a}:{n}" for a, n in sorted(SHAPES))
        raise NotApplicable(f"model {model_id} not installed: no synthetic shape {arch}:{name}; known: {known}")
    return arch, name


def shape_of(model_id: str) -> SyntheticShape:
    return SHAPES[parse_id(model_id)]


def model_config(model_id: str, variant: str) -> dict[str, Any]:
    """The mlx-lm config for a synthetic model (quantization filled in by :func:`build`)."""
    shape = shape_of(model_id)
    return {"model_type": shape.arch, **shape.config, "torch_dtype": {"fp32": "float32", "bf16": "bfloat16", "4bit": "bfloat16"}[variant]}


def recipe_hash(model_id: str, variant: str, seed: int = 0) -> str:
    """sha256 of everything that determines the weights (stands in for a file hash in memory)."""
    recipe = {"generator": GENERATOR_VERSION, "config": model_config(model_id, variant), "variant": variant, "seed": seed}
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()


@functools.lru_cache(maxsize=6)
def _block(seed: int, kind: str) -> mx.array:
    """Two periods of random values shared by all tensors: ``uniform`` floats (float32 or bfloat16) or ``bits``."""
    import mlx.core as mx
    import numpy as np

    rng = np.random.default_rng([seed, GENERATOR_VERSION])
    if kind == "bits":
        block = mx.array(rng.integers(0, 2**32, PERIOD, dtype=np.uint32))
    else:
        half_width = INIT_STD * 3**0.5  # uniform with standard deviation INIT_STD
        block = mx.array(rng.uniform(-half_width, half_width, PERIOD).astype(np.float32))
        block = block.astype(mx.bfloat16) if kind == "uniform-bf16" else block
    doubled = mx.concatenate([block, block])
    mx.eval(doubled)
    return doubled


def _values(seed: int, name: str, kind: str, shape: tuple[int, ...]) -> mx.array:
    """Tensor ``name``: the shared block read from a name-dependent offset, repeated to fill ``shape``.

    One copy in MLX (no numpy round trip), so a 4-GB model fills at memory speed.
    """
    import mlx.core as mx

    size = 1
    for dim in shape:
        size *= int(dim)
    block = _block(seed, kind)
    start = zlib.crc32(name.encode()) % PERIOD
    window = block[start : start + PERIOD]
    full, rest = divmod(size, PERIOD)
    pieces = [window] * full + ([window[:rest]] if rest else [])
    flat = pieces[0] if len(pieces) == 1 else mx.concatenate(pieces)
    return mx.contiguous(flat.reshape(shape))


def _random_parameter(name: str, like: mx.array, seed: int, float_dtype: mx.Dtype) -> mx.array:
    """A deterministic replacement for parameter ``name`` with ``like``'s shape (and dtype rules above)."""
    import mlx.core as mx

    shape = tuple(like.shape)
    leaf = name.rsplit(".", 1)[-1]
    if like.dtype == mx.uint32:  # packed quantized codes: uniform random bits
        return _values(seed, name, "bits", shape)
    if leaf == "scales":
        return mx.full(shape, INIT_STD / 4.61, dtype=like.dtype)  # 4.61 = std of a uniform 4-bit code
    if leaf == "biases":  # quantization offsets (a plain linear bias is called `bias`)
        return mx.full(shape, -7.5 * INIT_STD / 4.61, dtype=like.dtype)
    if leaf == "bias":
        return mx.zeros(shape, dtype=float_dtype)
    if len(shape) == 1:  # norm weights
        return mx.ones(shape, dtype=mx.float32 if like.dtype == mx.float32 else float_dtype)
    return _values(seed, name, "uniform-bf16" if float_dtype == mx.bfloat16 else "uniform", shape)


def build(model_id: str, variant: str = "fp32", *, seed: int = 0) -> tuple[Any, dict[str, Any]]:
    """Construct the model: ``(model, config)`` with config ready for ``config.json``."""
    import mlx.core as mx

    from claimcheck.models.arrays import named_parameters

    if variant not in VARIANTS:
        raise ValueError(f"model `{model_id}` has no variant `{variant}`; expected one of {', '.join(VARIANTS)}")
    config = model_config(model_id, variant)
    module = importlib.import_module(f"mlx_lm.models.{config['model_type']}")
    model = module.Model(module.ModelArgs.from_dict(config))  # lazy: the default init is never evaluated
    float_dtype = mx.float32 if variant == "fp32" else mx.bfloat16
    if variant != "fp32":
        model.set_dtype(mx.bfloat16)
    if variant == "4bit":
        config["quantization"] = _quantize(model)
        config["quantization_config"] = config["quantization"]
        # Keep norms in float32 (see the module docstring).
        norms = [(name, value) for name, value in named_parameters(model) if value.ndim == 1]
        model.load_weights([(name, value.astype(mx.float32)) for name, value in norms], strict=False)
    model.eval()
    _fill(model, seed, float_dtype)
    return model, config


def _quantize(model: Any) -> dict[str, Any]:
    """Quantize like ``mlx_lm.utils.quantize_model``; return the mlx-lm ``quantization`` config."""
    import mlx.nn as nn

    quantization: dict[str, Any] = {"group_size": GROUP_SIZE, "bits": BITS, "mode": "affine"}
    model_predicate = getattr(model, "quant_predicate", None)

    def predicate(path: str, module: Any) -> bool | dict[str, Any]:
        if not hasattr(module, "to_quantized") or module.weight.shape[-1] % GROUP_SIZE != 0:
            return False
        decision = model_predicate(path, module) if model_predicate else True
        if isinstance(decision, dict):
            quantization[path] = decision
        elif not decision:
            quantization[path] = False
        return decision

    nn.quantize(model, group_size=GROUP_SIZE, bits=BITS, class_predicate=predicate)
    return quantization


def _fill(model: Any, seed: int, float_dtype: mx.Dtype) -> None:
    """Replace every parameter with deterministic random values, one layer at a time (bounded memory)."""
    import mlx.core as mx

    from claimcheck.models.arrays import named_parameters

    groups: dict[str, list[tuple[str, mx.array]]] = {}
    for name, value in named_parameters(model):
        parts = name.split(".")
        group = ".".join(parts[:3]) if len(parts) > 3 and parts[1] == "layers" else ".".join(parts[:-1])
        groups.setdefault(group, []).append((name, value))
    for members in groups.values():
        new = [(name, _random_parameter(name, value, seed, float_dtype)) for name, value in members]
        model.load_weights(new, strict=False)
        mx.eval([value for _, value in new])


def load_synthetic(model_id: str, variant: str | None) -> LoadedModel:
    variant = variant or "fp32"
    started = time.perf_counter()
    model, config = build(model_id, variant)
    return LoadedModel(
        model=model,
        tokenizer=None,
        model_id=model_id,
        variant=variant,
        path=None,
        weights_hash=recipe_hash(model_id, variant),
        config=config,
        reads_text=False,
        extra={"weights": "random", "seed": 0, "shape_source": shape_of(model_id).source},
        timings={"build_seconds": round(time.perf_counter() - started, 3)},
    )


def save(loaded: LoadedModel, destination: str | Path) -> Path:
    """Write a synthetic model as an mlx-lm directory (safetensors + config.json + claimcheck.json).

    There is no tokenizer; header-reading probes and ``mlx_lm.utils.load_model`` work on it.
    """
    from mlx_lm.utils import save_config, save_model

    from claimcheck.models._files import MANIFEST, weights_hash
    from claimcheck.models.arrays import mlx_version

    destination = Path(destination)
    save_model(destination, loaded.model)
    save_config(dict(loaded.config), config_path=destination / "config.json")
    manifest = {
        "kind": "synthetic",
        "model_id": loaded.model_id,
        "variant": loaded.variant,
        "seed": loaded.extra.get("seed", 0),
        "recipe_sha256": loaded.weights_hash,
        "generator_version": GENERATOR_VERSION,
        "weights_sha256": weights_hash(destination),
        "mlx": mlx_version(),
    }
    (destination / MANIFEST).write_text(json.dumps(manifest, indent=2))
    return destination


def saved_dir(model_id: str, variant: str) -> Path:
    """Build (once) and save a synthetic model under the cache; return its directory."""
    from claimcheck.models._files import atomic_directory, models_dir, read_manifest

    arch, name = parse_id(model_id)
    final = models_dir() / f"synthetic-{arch}-{name}-{variant}-{recipe_hash(model_id, variant)[:12]}"
    if read_manifest(final) is not None:
        return final
    if final.exists():  # no manifest (it is written last): a damaged directory
        shutil.rmtree(final)
    loaded = load_synthetic(model_id, variant)
    with atomic_directory(final) as temporary:
        save(loaded, temporary)
    return final


def prompt_tokens(vocab_size: int, length: int, seed: int = 0) -> list[int]:
    """A deterministic random prompt (token ids) for models without a tokenizer."""
    import numpy as np

    return np.random.default_rng([seed, length]).integers(0, vocab_size, length).tolist()


def _locate(model_id: str) -> str:
    shape = shape_of(model_id)
    return f"random weights ({shape.approx_params} parameters): {shape.source}"


register(
    PREFIX,
    load_synthetic,
    reads_text=False,
    variants=VARIANTS,
    locate=_locate,
    description="random-weight models at named shapes: " + ", ".join(f"synthetic:{a}:{n}" for a, n in SHAPES),
)
