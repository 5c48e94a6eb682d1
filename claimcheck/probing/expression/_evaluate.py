"""Run a checked op expression on MLX arrays by walking its tree (never ``eval``).

Every name, function and method it reaches was checked by :mod:`._syntax`; the walker only maps
nodes to the operators and the ``mx``/``nn`` attributes they name. ``mx`` and ``nn`` are passed in,
so this module imports no MLX itself.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._spec import Arm, ExprOp
from ._syntax import Parsed, qualified

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.MatMult: operator.matmul,
}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}


def evaluate(parsed: Parsed, values: Mapping[str, Any], mx: Any, nn: Any) -> Any:
    """The expression's value with ``values`` bound to its declared names."""
    roots = {"mx": mx, "nn": nn}

    def walk(node: ast.expr) -> Any:
        if isinstance(node, ast.Name):
            return values[node.id]
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.BinOp):
            return _BINARY[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp):
            operand = walk(node.operand)
            return -operand if isinstance(node.op, ast.USub) else +operand
        if isinstance(node, ast.Compare):
            return _COMPARE[type(node.ops[0])](walk(node.left), walk(node.comparators[0]))
        if isinstance(node, (ast.Tuple, ast.List)):
            items = [walk(item) for item in node.elts]
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Attribute):
            name = qualified(node)
            if name is not None and name.split(".")[0] in roots:
                target = roots[name.split(".")[0]]
                for part in name.split(".")[1:]:
                    target = getattr(target, part)
                return target
            return getattr(walk(node.value), node.attr)
        if isinstance(node, ast.Subscript):
            return walk(node.value)[index(node.slice)]
        if isinstance(node, ast.Call):
            function = walk(node.func)
            return function(*(walk(arg) for arg in node.args), **{k.arg: walk(k.value) for k in node.keywords if k.arg})
        raise TypeError(f"unchecked node {type(node).__name__}")  # parse() admits none

    def index(node: ast.expr) -> Any:
        if isinstance(node, ast.Slice):
            return slice(*(None if part is None else walk(part) for part in (node.lower, node.upper, node.step)))
        if isinstance(node, ast.Tuple):
            return tuple(index(item) for item in node.elts)
        if isinstance(node, ast.Constant) and node.value is Ellipsis:
            return Ellipsis
        return walk(node)

    return walk(parsed.tree.body)


def arm_function(op: ExprOp, arm: Arm, mx: Any, nn: Any) -> Callable[..., Any]:
    """``(*arrays in op.arrays order) -> output``: the arm's expression with its options applied."""
    names = [spec.name for spec in op.arrays]
    rows_of = {spec.name for spec in op.inputs}
    target = getattr(mx, op.dtype)

    def once(*arrays: Any) -> Any:
        bound = dict(zip(names, arrays))
        if arm.dtype is not None:
            compute = getattr(mx, arm.dtype)
            bound = {name: array.astype(compute) for name, array in bound.items()}
            return evaluate(arm.expr, bound, mx, nn).astype(target)
        return evaluate(arm.expr, bound, mx, nn)

    function: Callable[..., Any] = mx.compile(once) if arm.compile else once
    if not arm.rows:
        return function

    def by_rows(*arrays: Any) -> Any:
        count = next(int(a.shape[0]) for name, a in zip(names, arrays) if name in rows_of)
        parts = [function(*(a[i: i + 1] if name in rows_of else a for name, a in zip(names, arrays)))
                 for i in range(count)]
        return mx.concatenate(parts, axis=0)

    return by_rows


def draw(op: ExprOp, mx: Any, input_key: Any, weight_key: Any, weights: Sequence[Any] | None = None) -> list[Any]:
    """The declared arrays in order: inputs from ``input_key``, weights from ``weight_key`` (or ``weights``)."""
    keys = iter(mx.random.split(input_key, max(2, len(op.inputs))))
    weight_keys = iter(mx.random.split(weight_key, max(2, len(op.weights))))
    given = iter(weights) if weights is not None else None
    out = []
    for spec in op.arrays:
        if spec.role == "weight" and given is not None:
            out.append(next(given))
            continue
        key = next(keys) if spec.role == "input" else next(weight_keys)
        if spec.dist == "uniform":
            values = mx.random.uniform(spec.low, spec.high, spec.shape, key=key)
        else:
            values = spec.mean + spec.std * mx.random.normal(spec.shape, key=key)
        out.append(values.astype(getattr(mx, spec.dtype)))
    mx.eval(*out)
    return out
