"""Two registered ops on the same inputs: interleaved time, and how far B's output is from A's.

Claims about MLX ops come in two kinds, and both need the two ops run on identical inputs: speed
("the fused kernel is faster than the composition", "compile speeds this up") and agreement ("the
fast kernel matches the reference within 1e-5", "compiled output is bit-identical"). Each round
draws fresh inputs from a seeded key, times A and B on them interleaved (ABBA within the round, the
first arm alternating between rounds, so drift hits both arms alike), and compares the two outputs element by element in float64.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Sequence

from claimcheck.api import Output, ProbeContext, ProbeError, Timer, interleaved_order, mlx_core, probe

from .op_declarations import op_catalogue, op_pair_problems
from .op_inputs import distribution, drawn_from
from .op_registry import OpEntry, get_op

EXAMPLE = """\
id: compiled-gelu-bit-identical
title: mx.compile leaves the exact GELU bit-identical
statement: The compiled exact GELU returns the same bits as the uncompiled one on inputs in [0, 1].
source:
  doc: https://ml-explore.github.io/mlx/build/html/usage/compile.html
  section: Basics of Compile
  figure: "The output of both the regular function and the compiled function is the same up to numerical precision."
scope: {kind: portable, backend: cpu}
probe:
  name: op_pair
  params: {a: gelu_erf, b: gelu_erf_compiled, shape: [64, 256], inputs: {dist: uniform, low: 0, high: 1}}
check: {rule: zero_rate, output: bitwise_differs, threshold: 0.05}
budget: {min_samples: 80, max_samples: 80, looks: 1}
"""


@dataclass(frozen=True)
class Agreement:
    """How B's output differs from A's on one set of inputs."""

    max_abs_error: float
    max_rel_error: float
    bitwise_mismatch: int


def compare_outputs(a: Any, b: Any, *, rel_floor: float) -> Agreement:
    """Element-wise difference of two MLX arrays of one shape and dtype, in float64.

    The relative error of an element is ``|b - a| / max(|a|, rel_floor)``: the floor keeps
    elements where A is (nearly) zero from dominating it. Bitwise mismatches compare the raw
    bits, so ``-0.0`` against ``0.0`` or two different NaNs count as mismatches.
    """
    import numpy as np

    mx = mlx_core()
    if a.shape != b.shape:
        raise ProbeError(f"the two ops return different shapes: {tuple(a.shape)} and {tuple(b.shape)}")
    if a.dtype != b.dtype:
        raise ProbeError(f"the two ops return different dtypes: {a.dtype} and {b.dtype}")
    x = np.asarray(a.astype(mx.float32), dtype=np.float64)
    y = np.asarray(b.astype(mx.float32), dtype=np.float64)
    diff = np.abs(y - x)
    rel = diff / np.maximum(np.abs(x), rel_floor)
    word = {1: mx.uint8, 2: mx.uint16, 4: mx.uint32, 8: mx.uint64}[a.dtype.size]
    mismatch = int(mx.sum(a.view(word) != b.view(word)).item())
    return Agreement(float(diff.max(initial=0.0)), float(rel.max(initial=0.0)), mismatch)


def _pair(a: str, b: str) -> tuple[OpEntry, OpEntry]:
    first, second = get_op(a), get_op(b)
    if first.family != second.family:
        raise ValueError(
            f"ops `{a}` ({first.family} inputs) and `{b}` ({second.family} inputs) take different inputs; "
            "pair ops of one family"
        )
    return first, second


def round_order(index: int, repeats: int) -> list[str]:
    """The calls of round ``index``: ``repeats`` of each arm, ABBA within the round, B first in odd rounds.

    Within a round every arm sits at the same mean position, so drift inside the round adds
    the same to both; across rounds the first call alternates, so neither arm is always first.
    """
    arms = ["a", "b"] if index % 2 == 0 else ["b", "a"]
    return [name for pair in interleaved_order(arms, repeats) for name in pair]


def _round_key(seed: int, look: int, index: int) -> Any:
    """A key per (item seed, look, round): rounds draw different inputs, reruns the same ones."""
    mx = mlx_core()
    return mx.random.key((seed * 1_000_003 + look * 10_007 + index) % 2**63)


OP_PAIR_OUTPUTS = {
    "a_ms": Output("ms", False, "op A, per call, one value per round"),
    "b_ms": Output("ms", False, "op B, per call, same round and inputs as A"),
    "max_abs_error": Output("", False, "max |B - A| over the elements of one round's output"),
    "max_rel_error": Output("", False, "max |B - A| / max(|A|, rel_floor) over one round's output"),
    "bitwise_mismatch": Output("elements", False, "elements whose bits differ between A and B, per round"),
    "bitwise_equal": Output("", True, "1 when every element of B has A's bits, else 0, per round"),
    "bitwise_differs": Output("", False, "1 when any element's bits differ (1 - bitwise_equal), per round"),
}


@probe(
    "op_pair",
    warm_up=True,
    outputs=OP_PAIR_OUTPUTS,
    example=EXAMPLE,
    check_params=op_pair_problems,
    catalogue=op_catalogue,
)
def op_pair(
    ctx: ProbeContext,
    *,
    a: str,
    b: str,
    shape: Sequence[int] = (64, 512),
    dtype: str = "float32",
    repeats: int = 1,
    rel_floor: float = 1e-6,
    warmup: int = 1,
    inputs: Mapping[str, Any] | None = None,
) -> dict[str, list[float]]:
    """Time two registered ops on the same inputs, interleaved, and measure B's error against A.

    Args:
        a, b: op names from ``op_registry`` (see its docstring for the families and shapes).
        shape: input shape, read as the family defines it (e.g. ``[m, k, n]`` for matmul).
        dtype: input dtype (``float32``, ``float16``, ``bfloat16``).
        repeats: calls of each op per round, interleaved (see :func:`round_order`), each built,
            evaluated and timed on its own; the round's figure is the mean per call. Every call
            pays MLX's evaluation overhead (tens of µs on a CPU), so time tiny ops at larger shapes.
        rel_floor: smallest ``|A|`` a relative error is divided by.
        warmup: untimed calls of each op before the first round (compiles, first-use kernels).
        inputs: how the data arrays are drawn: ``{dist: normal, mean, std}`` (N(0, 1) by default)
            or ``{dist: uniform, low, high}``; weights, scales and biases keep their own draws.
    """
    if repeats < 1:
        raise ValueError(f"`repeats` must be >= 1, got {repeats}")
    first, second = _pair(a, b)
    drawn = distribution(inputs)
    with drawn_from(drawn):
        out = _rounds(ctx, first, second, shape=shape, dtype=dtype, repeats=repeats, rel_floor=rel_floor, warmup=warmup)
    ctx.info["inputs"] = {"dist": drawn.dist, **({"low": drawn.low, "high": drawn.high} if drawn.dist == "uniform"
                                                 else {"mean": drawn.mean, "std": drawn.std})}
    return out


def _rounds(ctx: ProbeContext, first: OpEntry, second: OpEntry, *, shape: Sequence[int], dtype: str, repeats: int,
            rel_floor: float, warmup: int) -> dict[str, list[float]]:
    """``ctx.n`` rounds of the two ops on fresh seeded inputs: times and agreement per round."""
    mx = mlx_core()
    if not isinstance(getattr(mx, dtype, None), mx.Dtype):
        raise ValueError(f"`dtype` must name an MLX dtype (float32, float16, bfloat16), got {dtype!r}")
    timer = Timer()
    arms = {"a": first, "b": second}
    names = ("a_ms", "b_ms", "max_abs_error", "max_rel_error", "bitwise_mismatch", "bitwise_equal", "bitwise_differs")
    out: dict[str, list[float]] = {name: [] for name in names}
    order: list[str] = []
    if ctx.look == 0 and warmup:
        inputs = first.make_inputs(shape, dtype, _round_key(ctx.seed, -1, 0))
        for entry in arms.values():
            for _ in range(warmup):
                timer.evaluate(entry.fn(*inputs))
    for index in range(ctx.n):
        # keyed on the sample's index in the look: a swept look's second call draws inputs of its own
        inputs = first.make_inputs(shape, dtype, _round_key(ctx.seed, ctx.look, ctx.offset + index))
        results: dict[str, Any] = {}
        seconds: dict[str, list[float]] = {"a": [], "b": []}
        for name in round_order(ctx.offset + index, repeats):
            entry = arms[name]
            start = timer.clock()
            output = entry.fn(*inputs)
            timer.evaluate(output)
            seconds[name].append(timer.clock() - start)
            results.setdefault(name, output)
            order.append(name)
        for name in arms:
            out[f"{name}_ms"].append(sum(seconds[name]) / repeats * 1e3)
        agreement = compare_outputs(results["a"], results["b"], rel_floor=rel_floor)
        out["max_abs_error"].append(agreement.max_abs_error)
        out["max_rel_error"].append(agreement.max_rel_error)
        out["bitwise_mismatch"].append(float(agreement.bitwise_mismatch))
        out["bitwise_equal"].append(0.0 if agreement.bitwise_mismatch else 1.0)
        out["bitwise_differs"].append(1.0 if agreement.bitwise_mismatch else 0.0)
        del results, inputs
    ctx.artifacts["order"] = order
    ctx.info.update(
        {"a": first.name, "b": second.name, "family": first.family, "shape": [int(d) for d in shape], "dtype": dtype,
         "repeats": repeats, "a_op": first.description, "b_op": second.description}
    )
    return out


#: The rounds of two ops on the same inputs, shared with the ``op_expr`` probe.
run_rounds = _rounds
