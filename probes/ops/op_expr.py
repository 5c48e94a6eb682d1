"""Two ops written in the claim file as MLX expressions, on the same declared arrays: ``op_pair`` without Python.

The claim declares its arrays (``inputs``, drawn afresh each round; ``weights``, drawn once per item),
each with a shape, a dtype and a distribution, and two expressions ``a`` and ``b`` over them, each
optionally under ``mx.compile`` (``compile: true``), row by row (``rows: true``) or computed in
another dtype (``dtype: float32``, cast back). The rounds, the timing and the comparison are
``op_pair``'s own, so its outputs, rules and statistics apply unchanged. The expressions are parsed
and checked (names, functions, dtypes, shapes) by ``claimcheck validate`` before anything runs, and
never passed to ``eval``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Sequence

from claimcheck.api import ProbeContext, ProbeError, mlx_core, op_expression, probe

from .op_pair import OP_PAIR_OUTPUTS, run_rounds
from .op_registry import OpEntry

EXAMPLE = """\
id: silu-compiled-bit-identical
title: mx.compile leaves a written-out SiLU bit-identical
statement: On the CPU the compiled x * sigmoid(x) returns the same bits as the uncompiled one.
source:
  doc: https://ml-explore.github.io/mlx/build/html/usage/compile.html
  section: Basics of Compile
  figure: "The output of both the regular function and the compiled function is the same up to numerical precision."
scope: {kind: portable, backend: cpu}
probe:
  name: op_expr
  params:
    inputs: {x: {shape: [64, 256], dist: uniform, low: -4, high: 4}}
    a: x * mx.sigmoid(x)
    b: {expr: x * mx.sigmoid(x), compile: true}
check: {rule: zero_rate, output: bitwise_differs, threshold: 0.1}
control: {params: {b: "nn.gelu(x)"}, why: "GELU is another function: its bits must differ"}
budget: {min_samples: 80, max_samples: 80, looks: 1}
"""


def _catalogue() -> list[str]:
    e = op_expression
    return [
        "expressions (a, b) may use the declared arrays, numbers, + - * / // % ** @, one comparison, "
        "indexing and slices, and:",
        "    mx.: " + ", ".join(sorted(e.MX_FUNCTIONS)),
        "    mx. values: " + ", ".join(sorted(e.MX_CONSTANTS)),
        "    mx.fast.: " + ", ".join(sorted(e.FAST_FUNCTIONS)),
        "    nn. (mlx.nn): " + ", ".join(sorted(e.NN_FUNCTIONS)),
        "    array methods: " + ", ".join(sorted(e.ARRAY_METHODS)) + "; attributes: "
        + ", ".join(sorted(e.ARRAY_ATTRIBUTES)),
        "arrays: {shape: [sizes or names from dims], dtype: " + " | ".join(e.DTYPES)
        + ", dist: normal (mean, std) | uniform (low, high)}",
    ]


def _entry(op: Any, side: str, make: Any) -> OpEntry:
    arm = getattr(op, side)
    mx = mlx_core()
    import mlx.nn as nn

    return OpEntry(side, "expression", make, op_expression.arm_function(op, arm, mx, nn), arm.describe())


@probe(
    "op_expr",
    warm_up=True,
    outputs=OP_PAIR_OUTPUTS,
    example=EXAMPLE,
    check_params=op_expression.problems,
    catalogue=_catalogue,
)
def op_expr(
    ctx: ProbeContext,
    *,
    a: str | Mapping[str, Any],
    b: str | Mapping[str, Any],
    inputs: Mapping[str, Any],
    weights: Mapping[str, Any] | None = None,
    dims: Mapping[str, int] | None = None,
    dtype: str = "float32",
    repeats: int = 1,
    rel_floor: float = 1e-6,
    warmup: int = 1,
) -> dict[str, list[float]]:
    """Time two expression ops on the same declared arrays, interleaved, and measure B's error against A.

    Args:
        a: op A: an MLX expression over the declared arrays (``x * mx.sigmoid(x)``), or
            ``{expr, compile, rows, dtype}``: ``compile`` runs it under ``mx.compile``; ``rows`` runs it
            on one row of every input at a time (weights whole) and stacks the rows back; ``dtype``
            computes it with every array cast to that dtype, the result cast back to ``dtype``.
        b: op B, written as ``a`` (the op compared against A: a reference, or A compiled).
        inputs: data arrays drawn afresh each round, name -> ``{shape, dtype, dist, mean, std, low, high}``;
            ``shape`` lists sizes or names from ``dims``; ``dist`` is ``normal`` (default N(0, 1)) or ``uniform``.
        weights: arrays drawn once per item and reused every round, declared as ``inputs`` are.
        dims: named sizes the shapes may use (``{m: 64, k: 256}``); a grid axis may vary them.
        dtype: dtype of every array that names none, and of both outputs.
        repeats: calls of each op per round, interleaved as in ``op_pair``; the round's figure is the mean.
        rel_floor: smallest ``|A|`` a relative error is divided by.
        warmup: untimed calls of each op before the first round (compiles, first-use kernels).
    """
    op, found = op_expression.read({"a": a, "b": b, "inputs": inputs, "weights": weights, "dims": dims,
                                    "dtype": dtype})
    if op is None:
        raise ProbeError(f"probe.params.{found[0][0]}: {found[0][1]}")
    mx = mlx_core()
    weight_key = mx.random.key((ctx.seed * 7_919 + 17) % 2**63)
    held: list[Any] = []

    def make(shape: Sequence[int], name: str, key: Any) -> tuple[Any, ...]:
        arrays = op_expression.draw(op, mx, key, weight_key, held or None)
        if not held:
            held.extend(array for spec, array in zip(op.arrays, arrays) if spec.role == "weight")
        return tuple(arrays)

    first, second = _entry(op, "a", make), _entry(op, "b", make)
    out = run_rounds(ctx, first, second, shape=list(op.inputs[0].shape), dtype=dtype, repeats=repeats,
                     rel_floor=rel_floor, warmup=warmup)
    ctx.info.update({"family": "expression", "a_op": first.description, "b_op": second.description,
                     "arrays": {spec.name: {"role": spec.role, "shape": list(spec.shape), "dtype": spec.dtype,
                                            "dist": spec.dist} for spec in op.arrays}})
    return out
