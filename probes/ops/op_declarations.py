"""What ``op_pair`` declares about its params: the registered ops by family, and a check of a claim's choice.

``claimcheck probes op_pair`` lists the ops (with what ``shape`` means for each family) and
``claimcheck validate`` runs :func:`op_pair_problems` on every param set a claim runs, so a
mistyped op name, two ops of different families, a shape of the wrong rank or an unknown input
distribution is a ``file:line`` error before anything runs. Nothing here imports MLX.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from claimcheck.api import did_you_mean

from .op_inputs import distribution_problem
from .op_registry import registered_ops

#: What ``shape`` means per family, and its rank (None: any rank of at least one).
FAMILY_SHAPES: dict[str, tuple[str, int | None]] = {
    "unary": ("any shape", None),
    "rms_norm": ("[..., dims]", None),
    "layer_norm": ("[..., dims]", None),
    "attention": ("[batch, heads, length, head_dim]", 4),
    "rope": ("[batch, heads, length, head_dim], even head_dim", 4),
    "matmul": ("[m, k, n]", 3),
    "quantized_linear": ("[m, k, n], k divisible by 64", 3),
    "qmm4": ("[m, k, n], k divisible by 64", 3),
    "qmm8": ("[m, k, n], k divisible by 64", 3),
}
DTYPES = ("float32", "float16", "bfloat16")


def op_catalogue() -> list[str]:
    """The registered ops, one family per block: the family, what ``shape`` means, each op and what it is."""
    families: dict[str, list[Any]] = {}
    for entry in sorted(registered_ops().values(), key=lambda e: (e.family, e.name)):
        families.setdefault(entry.family, []).append(entry)
    lines = ["ops (a and b must be of one family):"]
    for family, entries in families.items():
        meaning = FAMILY_SHAPES.get(family, ("as its input maker reads it", None))[0]
        lines.append(f"    family {family}: shape {meaning}")
        lines += [f"        {entry.name}: {entry.description}" for entry in entries]
    lines.append("inputs: {dist: normal, mean: 0, std: 1} (default) or {dist: uniform, low: 0, high: 1}: "
                 "how the data arrays are drawn")
    return lines


def op_pair_problems(params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Problems of one param set of ``op_pair``: op names, one family, the shape's rank, dtype, inputs."""
    ops = registered_ops()
    found: list[tuple[str, str]] = []
    families = {}
    for name in ("a", "b"):
        op = params.get(name)
        if not isinstance(op, str):
            continue
        if op not in ops:
            hint = did_you_mean(op, sorted(ops))
            found.append((name, f"unknown op `{op}`{hint}; `claimcheck probes op_pair` lists the registered ops"))
        else:
            families[name] = ops[op].family
    if len(families) == 2 and families["a"] != families["b"]:
        found.append(("b", f"ops `{params['a']}` ({families['a']}) and `{params['b']}` ({families['b']}) take "
                           "different inputs; pair ops of one family"))
    shape = params.get("shape")
    family = families.get("a")
    if family is not None and isinstance(shape, list):
        meaning, rank = FAMILY_SHAPES.get(family, ("", None))
        if rank is not None and len(shape) != rank:
            found.append(("shape", f"family `{family}` takes shape {meaning}; got {list(shape)}"))
    dtype = params.get("dtype")
    if isinstance(dtype, str) and dtype not in DTYPES:
        found.append(("dtype", f"`dtype` must be one of {', '.join(DTYPES)}; got {dtype!r}"))
    if params.get("inputs") is not None:
        problem = distribution_problem(params["inputs"])
        if problem:
            found.append(("inputs", problem))
    return found
