"""An op declared in a claim file: typed arrays (inputs and weights) and two expression arms, read and checked.

:func:`read` turns the ``op_expr`` probe's params into an :class:`ExprOp`, or lists every problem as
``(field, message)`` so ``claimcheck validate`` can place each at its line: an unknown name, a
dtype MLX has no float type for, a distribution setting that does not belong, a shape the
expression rules out (``@`` of mismatched sizes, arrays that do not broadcast, a row-by-row arm
whose inputs differ in rows). No MLX is imported here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from claimcheck.suggest import did_you_mean

from ._shapes import Shape, ShapeOf
from ._syntax import NAMESPACES, ExpressionError, Parsed, parse

DTYPES = ("float32", "float16", "bfloat16")
DISTRIBUTIONS = {"normal": ("mean", "std"), "uniform": ("low", "high")}
ARRAY_KEYS = ("shape", "dtype", "dist", "mean", "std", "low", "high")
ARM_KEYS = ("expr", "compile", "rows", "dtype")
MAX_ELEMENTS = 1 << 28

Problems = list[tuple[str, str]]


@dataclass(frozen=True)
class ArraySpec:
    """One declared array: drawn per round (``input``) or once per item (``weight``)."""

    name: str
    role: str
    shape: Shape
    dtype: str
    dist: str = "normal"
    mean: float = 0.0
    std: float = 1.0
    low: float = 0.0
    high: float = 1.0


@dataclass(frozen=True)
class Arm:
    """One side of the comparison: the expression, and how it runs."""

    expr: Parsed
    compile: bool = False
    rows: bool = False
    dtype: str | None = None  # compute in this dtype (arrays cast to it), the result cast back

    def describe(self) -> str:
        options = [word for word, on in (("compiled", self.compile), ("row by row", self.rows)) if on]
        options += [f"in {self.dtype}"] if self.dtype else []
        return self.expr.text + (f" ({', '.join(options)})" if options else "")


@dataclass(frozen=True)
class ExprOp:
    """Both arms over one set of declared arrays; ``dtype`` is the arrays' default and the outputs' dtype."""

    arrays: tuple[ArraySpec, ...]
    a: Arm
    b: Arm
    dtype: str

    @property
    def inputs(self) -> tuple[ArraySpec, ...]:
        return tuple(spec for spec in self.arrays if spec.role == "input")

    @property
    def weights(self) -> tuple[ArraySpec, ...]:
        return tuple(spec for spec in self.arrays if spec.role == "weight")


def read(params: Mapping[str, Any]) -> tuple[ExprOp | None, Problems]:
    """The declared op, or ``None`` with every problem found."""
    found: Problems = []
    dtype = params.get("dtype", "float32")
    if dtype not in DTYPES:
        found.append(("dtype", f"`dtype` must be one of {', '.join(DTYPES)}; got {dtype!r}{_hint(dtype, DTYPES)}"))
        dtype = "float32"
    dims = _dims(params.get("dims"), found)
    arrays: list[ArraySpec] = []
    declared: set[str] = set()  # an array with a bad setting is still declared: no "unknown name" for it
    for role, key in (("input", "inputs"), ("weight", "weights")):
        section = params.get(key)
        if section is None:
            continue
        if not isinstance(section, Mapping):
            found.append((key, f"`{key}` must map array names to {{shape: [...], dtype, dist}}; got {section!r}"))
            continue
        for name, body in section.items():
            declared.add(str(name))
            spec = _array(str(name), role, body, dims, str(dtype), f"{key}.{name}", found)
            if spec is not None:
                if any(other.name == spec.name for other in arrays):
                    found.append((f"{key}.{name}", f"array `{name}` is declared twice (in inputs and weights)"))
                arrays.append(spec)
    if not params.get("inputs"):
        found.append(("inputs", "declare at least one input array: `inputs: {x: {shape: [64, 256]}}`"))
    arms = {side: _arm(params.get(side), side, declared, found) for side in ("a", "b")}
    shapes = {side: _shape_of(arm, arrays, side, found) for side, arm in arms.items() if arm is not None}
    if None not in (shapes.get("a"), shapes.get("b")) and len(shapes) == 2 and shapes["a"] != shapes["b"]:
        found.append(("b", f"`a` gives shape {list(shapes['a'] or ())} and `b` gives {list(shapes['b'] or ())}: "
                           "the outputs must have one shape to be compared"))
    a, b = arms["a"], arms["b"]
    if found or a is None or b is None:
        return None, found
    return ExprOp(tuple(arrays), a, b, str(dtype)), []


def problems(params: Mapping[str, Any]) -> Problems:
    """Every problem of one param set (``check_params`` of the ``op_expr`` probe)."""
    return read(params)[1]


def _hint(value: Any, choices: Any) -> str:
    return did_you_mean(value, list(choices)) if isinstance(value, str) else ""


def _dims(value: Any, found: Problems) -> dict[str, int]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        found.append(("dims", f"`dims` must map size names to whole numbers, e.g. {{m: 64, k: 256}}; got {value!r}"))
        return {}
    out: dict[str, int] = {}
    for name, size in value.items():
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            found.append((f"dims.{name}", f"size `{name}` must be a whole number >= 1; got {size!r}"))
        else:
            out[str(name)] = size
    return out


def _array(name: str, role: str, body: Any, dims: dict[str, int], dtype: str, where: str,
           found: Problems) -> ArraySpec | None:
    before = len(found)
    if not name.isidentifier() or name in NAMESPACES:
        found.append((where, f"array name `{name}` must be a plain identifier other than mx or nn"))
    if not isinstance(body, Mapping):
        found.append((where, f"`{where}` must be a mapping such as {{shape: [64, 256], dist: normal}}; got {body!r}"))
        return None
    for key in body:
        if key not in ARRAY_KEYS:
            found.append((f"{where}.{key}", f"unknown key `{key}`{_hint(key, ARRAY_KEYS)}; an array takes: "
                                            f"{', '.join(ARRAY_KEYS)}"))
    shape = _shape(body.get("shape"), dims, f"{where}.shape", found)
    own = body.get("dtype", dtype)
    if own not in DTYPES:
        found.append((f"{where}.dtype", f"`dtype` must be one of {', '.join(DTYPES)}; got {own!r}{_hint(own, DTYPES)}"))
    dist = body.get("dist", "normal")
    settings = {key: body[key] for key in ("mean", "std", "low", "high") if key in body}
    if dist not in DISTRIBUTIONS:
        found.append((f"{where}.dist", f"`dist` must be one of {', '.join(DISTRIBUTIONS)}; got {dist!r}"
                                        f"{_hint(dist, DISTRIBUTIONS)}"))
    else:
        for key, value in settings.items():
            if key not in DISTRIBUTIONS[dist]:
                found.append((f"{where}.{key}", f"`{key}` is not a setting of `dist: {dist}` (it takes: "
                                                f"{', '.join(DISTRIBUTIONS[dist])})"))
            elif isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                found.append((f"{where}.{key}", f"`{key}` must be a finite number; got {value!r}"))
    numbers = {k: float(v) for k, v in settings.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    if dist == "uniform" and not numbers.get("low", 0.0) < numbers.get("high", 1.0):
        found.append((where, f"`{where}` needs low < high; got low {numbers.get('low', 0.0):g}, "
                             f"high {numbers.get('high', 1.0):g}"))
    if dist == "normal" and numbers.get("std", 1.0) <= 0:
        found.append((f"{where}.std", f"`std` must be positive; got {numbers['std']:g}"))
    if len(found) > before or shape is None:
        return None
    return ArraySpec(name, role, shape, str(own), str(dist), **numbers)


def _shape(value: Any, dims: dict[str, int], where: str, found: Problems) -> Shape | None:
    if value is None:
        found.append((where, "missing `shape`: a list of sizes (numbers, or names from `dims`)"))
        return None
    if not isinstance(value, list):
        found.append((where, f"`shape` must be a list of sizes; got {value!r}"))
        return None
    out: list[int] = []
    for size in value:
        if isinstance(size, str) and size in dims:
            out.append(dims[size])
        elif isinstance(size, str):
            hint = did_you_mean(size, sorted(dims))
            found.append((where, f"size `{size}` is not in `dims`{hint}; dims: {', '.join(sorted(dims)) or 'none'}"))
            return None
        elif isinstance(size, bool) or not isinstance(size, int) or size < 1:
            found.append((where, f"sizes must be whole numbers >= 1 or names from `dims`; got {size!r}"))
            return None
        else:
            out.append(size)
    if math.prod(out) > MAX_ELEMENTS:
        found.append((where, f"shape {out} has more than {MAX_ELEMENTS} elements"))
        return None
    return tuple(out)


def _arm(value: Any, side: str, declared: set[str], found: Problems) -> Arm | None:
    if value is None:
        found.append((side, f"missing `{side}`: an expression such as \"x * mx.sigmoid(x)\" or {{expr: ..., "
                            "compile: true}"))
        return None
    body: Mapping[str, Any] = {"expr": value} if isinstance(value, str) else value if isinstance(value, Mapping) else {}
    if not body:
        found.append((side, f"`{side}` must be an expression or {{expr, compile, rows, dtype}}; got {value!r}"))
        return None
    where = side if isinstance(value, str) else f"{side}.expr"
    bad = False
    for key in body:
        if key not in ARM_KEYS:
            found.append((f"{side}.{key}", f"unknown key `{key}`{_hint(key, ARM_KEYS)}; an op takes: {', '.join(ARM_KEYS)}"))
            bad = True
    for key in ("compile", "rows"):
        if key in body and not isinstance(body[key], bool):
            found.append((f"{side}.{key}", f"`{key}` must be true or false; got {body[key]!r}"))
            bad = True
    dtype = body.get("dtype")
    if dtype is not None and dtype not in DTYPES:
        found.append((f"{side}.dtype", f"`dtype` must be one of {', '.join(DTYPES)}; got {dtype!r}{_hint(dtype, DTYPES)}"))
        bad = True
    try:
        parsed = parse(body.get("expr"), declared)  # type: ignore[arg-type]
    except ExpressionError as error:
        found.append((where, f"`{side}`: {error}"))
        return None
    if bad:
        return None
    return Arm(parsed, bool(body.get("compile", False)), bool(body.get("rows", False)), dtype)


def _shape_of(arm: Arm | None, arrays: list[ArraySpec], side: str, found: Problems) -> Shape | None:
    """The arm's output shape (None: unknown), after checking a row-by-row arm's inputs."""
    if arm is None:
        return None
    where = side
    shapes = {spec.name: spec.shape for spec in arrays}
    if arm.rows:
        if not any(spec.role == "input" for spec in arrays):
            return None  # the inputs' own errors are reported
        rows = {spec.shape[0] if spec.shape else 0 for spec in arrays if spec.role == "input"}
        if len(rows) != 1 or 0 in rows:
            found.append((f"{side}.rows", "a row-by-row op needs inputs that share their first dimension (the rows); "
                                          f"got inputs of shapes {[list(s.shape) for s in arrays if s.role == 'input']}"))
            return None
        one_row = {**shapes, **{s.name: (1, *s.shape[1:]) for s in arrays if s.role == "input"}}
        try:
            row = ShapeOf(one_row)(arm.expr.tree.body)
        except ExpressionError as error:
            found.append((where, f"`{side}`: {error}"))
            return None
        if row is not None and (not row or row[0] != 1):
            found.append((f"{side}.rows", f"one row gives shape {list(row)}: a row-by-row op must keep the row axis "
                                          "first (rows are stacked back along it)"))
            return None
    try:
        return ShapeOf(shapes)(arm.expr.tree.body)
    except ExpressionError as error:
        found.append((where, f"`{side}`: {error}"))
        return None
