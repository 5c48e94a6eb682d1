"""MoE expert reads at decode (M=1): ``gather_qmm`` against the same bytes through other paths (methods notes, section I).

One "layer" is a SwitchGLU-shaped expert MLP for one token, as mlx-lm runs it:
``down(silu(gate(x)) * up(x))`` over ``top_k`` experts picked from a stack of
``n_experts``, all 4-bit. Arms, on identical shapes:

- ``gather``: ``gather_qmm`` with ``top_k`` distinct experts (what decode runs);
- ``repeated``: ``gather_qmm`` with one expert repeated ``top_k`` times (1/top_k of the unique bytes);
- ``dense``: the same experts' bytes as separate contiguous matrices through ``quantized_matmul``;
- ``merged``: gate and up stacked into one ``[n_experts, 2*expert, hidden]`` tensor, one ``gather_qmm`` for both.

Layers are chained (each layer's output feeds the next, each with its own
weights) inside one evaluation, so the figure is the in-step cost per layer.
Effective GB/s uses the nominal bytes the math reads (``top_k`` experts x 3
matrices) for every arm; the lazy-eval guard uses the unique bytes.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Sequence

from claimcheck.api import (
    Output,
    ProbeContext,
    Timer,
    check_bandwidth,
    gbps,
    mlx_core,
    probe,
    read_ceiling_gbps,
    reuse,
    spin,
)

ARMS = ("gather", "repeated", "dense", "merged")


def last_level_cache_bytes(cpu_dir: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> int | None:
    """The host's last-level cache size, from sysfs (None where sysfs does not say, e.g. macOS).

    The repeated-expert comparison only means something when the distinct arm's experts do not fit
    in this cache: otherwise both arms read from cache and unique bytes cannot matter.
    """
    best: tuple[int, int] | None = None
    for index in sorted(cpu_dir.glob("index*")):
        try:
            level = int((index / "level").read_text())
            if (index / "type").read_text().strip() == "Instruction":
                continue
            text = (index / "size").read_text().strip()
        except (OSError, ValueError):
            continue
        units = {"K": 2**10, "M": 2**20, "G": 2**30}
        size = int(text[:-1]) * units[text[-1]] if text[-1:] in units else int(text)
        if best is None or level > best[0]:
            best = (level, size)
    return best[1] if best else None


def _quantized_stack(mx: Any, experts: int, rows: int, cols: int, *, bits: int, group_size: int, scale_dtype: str) -> tuple[Any, Any, Any]:
    """Random packed 4-bit weights [experts, rows, cols] with scales and biases (no full-precision detour)."""
    words = (experts, rows, cols * bits // 32)
    w = (mx.random.randint(0, 2**16, words, dtype=mx.uint32) << 16) | mx.random.randint(0, 2**16, words, dtype=mx.uint32)
    groups = (experts, rows, cols // group_size)
    dtype = getattr(mx, scale_dtype)
    scales = (mx.random.normal(groups) * 1e-2).astype(dtype)
    biases = (mx.random.normal(groups) * 1e-2).astype(dtype)
    return w, scales, biases


def _layer_weights(hidden: int, expert: int, n_experts: int, chosen: Sequence[int], *, bits: int, group_size: int, scale_dtype: str) -> dict[str, Any]:
    """One layer's expert stacks, the merged gate+up stack, and contiguous copies of the chosen experts."""
    mx = mlx_core()
    gate = _quantized_stack(mx, n_experts, expert, hidden, bits=bits, group_size=group_size, scale_dtype=scale_dtype)
    up = _quantized_stack(mx, n_experts, expert, hidden, bits=bits, group_size=group_size, scale_dtype=scale_dtype)
    down = _quantized_stack(mx, n_experts, hidden, expert, bits=bits, group_size=group_size, scale_dtype=scale_dtype)
    merged = tuple(mx.concatenate([g, u], axis=1) for g, u in zip(gate, up))
    dense = [tuple(tuple(mx.contiguous(a[e]) for a in stack) for stack in (gate, up, down)) for e in chosen]
    layer = {"gate": gate, "up": up, "down": down, "merged": merged, "dense": dense}
    mx.eval(layer)
    return layer


def _expert_bytes(layer: dict[str, Any], expert_index: int) -> int:
    return sum(a[expert_index].nbytes for name in ("gate", "up", "down") for a in layer[name])


def _switch(mx: Any, x: Any, stack: tuple[Any, Any, Any], idx: Any, *, bits: int, group_size: int) -> Any:
    w, scales, biases = stack
    return mx.gather_qmm(x, w, scales, biases, rhs_indices=idx, transpose=True, group_size=group_size, bits=bits)


def _qmm(mx: Any, x: Any, weight: tuple[Any, Any, Any], *, bits: int, group_size: int) -> Any:
    w, scales, biases = weight
    return mx.quantized_matmul(x, w, scales, biases, transpose=True, group_size=group_size, bits=bits)


def _silu(mx: Any, x: Any) -> Any:
    return x * mx.sigmoid(x)


def expert_layer(mx: Any, arm: str, x: Any, layer: dict[str, Any], idx: Any, *, expert: int, bits: int, group_size: int) -> Any:
    """One token through one expert MLP by ``arm``; returns the summed expert outputs [1, hidden]."""
    q = dict(bits=bits, group_size=group_size)
    if arm == "dense":
        outs = []
        for gate, up, down in layer["dense"]:
            gate_out = _qmm(mx, x, gate, **q)
            outs.append(_qmm(mx, _silu(mx, gate_out) * _qmm(mx, x, up, **q), down, **q))
        return mx.stack(outs).sum(axis=0)
    xe = mx.expand_dims(x, (-2, -3))  # [1, 1, 1, hidden], as SwitchGLU feeds gather_qmm
    if arm == "merged":
        both = _switch(mx, xe, layer["merged"], idx, **q)
        gate_out, up_out = both[..., :expert], both[..., expert:]
    else:
        gate_out = _switch(mx, xe, layer["gate"], idx, **q)
        up_out = _switch(mx, xe, layer["up"], idx, **q)
    hidden_out = _silu(mx, gate_out) * up_out
    y = _switch(mx, hidden_out, layer["down"], idx, **q)  # [1, top_k, 1, hidden]
    return y.squeeze(-2).sum(axis=-2)


def _one_layer(params: dict[str, Any]) -> dict[str, Any]:
    """Warm an item on one layer: every layer has the same shapes, so it compiles the same kernels, and a
    CUDA profile's eight layers of 128 experts are tens of GB to build beside the run."""
    return {**params, "layers": 1}


@probe(
    "moe_gather",
    warm_up=_one_layer,
    outputs={
        **{f"{arm}_ms": Output("ms", False, f"{arm} arm, per layer") for arm in ARMS},
        **{f"{arm}_gbps": Output("GB/s", True, f"{arm} arm, top_k experts' bytes / time") for arm in ARMS},
    },
)
def moe_gather(
    ctx: ProbeContext,
    *,
    arms: Sequence[str] = ARMS,
    hidden: int = 2816,
    expert: int = 704,
    n_experts: int = 128,
    top_k: int = 8,
    layers: int = 1,
    bits: int = 4,
    group_size: int = 64,
    scale_dtype: str = "bfloat16",
    spin_arm: str = "",
    spin_ms: float = 0.0,
) -> dict[str, list[float]]:
    """Per-layer time of a decode token's expert MLP through gather_qmm and the comparison arms.

    Args:
        arms: which of ``gather``, ``repeated``, ``dense``, ``merged`` to run, interleaved.
        hidden, expert, n_experts, top_k: the MoE shape (defaults: the 26B-A4B's).
        layers: chained layers per timed sample, each with its own weights.
        bits: bits per quantized expert weight, any width MLX's quantized matmuls accept (e.g. 2, 3, 4, 6, 8).
        group_size: weights sharing one scale and bias (32, 64 or 128); ``hidden`` and ``expert`` must be
            multiples of it.
        scale_dtype: dtype of scales and biases (and of the activations).
        spin_arm, spin_ms: host spin injected into one arm's timed region (a positive control:
            an arm made slower on purpose must be told apart).
    """
    unknown = [a for a in arms if a not in ARMS]
    if unknown or not arms:
        raise ValueError(f"`arms` must be a non-empty subset of {list(ARMS)}, got {list(arms)}")
    if spin_arm and spin_arm not in arms:
        raise ValueError(f"`spin_arm` must be one of the arms {list(arms)}, got {spin_arm!r}")
    if top_k > n_experts:
        raise ValueError(f"`top_k`={top_k} exceeds `n_experts`={n_experts}")
    mx = mlx_core()
    chosen = [i * n_experts // top_k for i in range(top_k)]  # distinct, spread over the stack
    shape_key = ("moe", hidden, expert, n_experts, top_k, layers, bits, group_size, scale_dtype)
    stacks = reuse(shape_key, lambda: [
        _layer_weights(hidden, expert, n_experts, chosen, bits=bits, group_size=group_size, scale_dtype=scale_dtype)
        for _ in range(layers)
    ])
    x0 = (mx.random.normal((1, hidden)) * 1e-1).astype(getattr(mx, scale_dtype))
    distinct = mx.array([chosen], dtype=mx.uint32)
    repeated = mx.array([[chosen[0]] * top_k], dtype=mx.uint32)
    mx.eval(x0, distinct, repeated)

    def run(arm: str) -> Any:
        idx = repeated if arm == "repeated" else distinct
        if arm == spin_arm and spin_ms > 0:
            spin(spin_ms)
        x = x0
        for layer in stacks:
            x = x + expert_layer(mx, arm, x, layer, idx, expert=expert, bits=bits, group_size=group_size)
        return x

    runs = Timer().interleave({arm: functools.partial(run, arm) for arm in arms}, ctx.n)
    nominal = sum(_expert_bytes(layer, e) for layer in stacks for e in chosen)
    unique = {arm: nominal // top_k if arm == "repeated" else nominal for arm in arms}
    out: dict[str, list[float]] = {}
    for arm in arms:
        seconds = runs.samples[arm]
        ceiling = read_ceiling_gbps(unique[arm] / 2**20)
        check_bandwidth([gbps(unique[arm], s) for s in seconds], ceiling, what=f"moe `{arm}` arm")
        out[f"{arm}_ms"] = [s / layers * 1e3 for s in seconds]
        out[f"{arm}_gbps"] = [gbps(nominal, s) for s in seconds]
    ctx.artifacts["order"] = runs.order
    cache = last_level_cache_bytes()
    ctx.info.update(
        {
            "experts": chosen,
            "bytes_per_layer": nominal // layers,
            "distinct_bytes_per_sample": nominal,
            "host_last_level_cache_bytes": cache,
            "distinct_experts_exceed_host_cache": None if cache is None else nominal > cache,
            "layers": layers,
            "shape": {"hidden": hidden, "expert": expert, "n_experts": n_experts, "top_k": top_k},
            "quantization": f"{bits}-bit, group {group_size}, {scale_dtype} scales",
            **({"spin": {"arm": spin_arm, "ms": spin_ms}} if spin_arm and spin_ms > 0 else {}),
        }
    )
    return out
