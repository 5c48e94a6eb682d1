"""The shape an op expression gives, worked out from the declared shapes before anything runs.

Covers what a shape mismatch usually hides in: broadcasting, ``@``, reductions over an axis,
transposes, reshapes, concatenation and the ``mx.fast`` kernels' argument shapes. Anything it does
not model has an unknown shape (``None``), which checks nothing further, so an unmodelled call
never produces a false error.
"""

from __future__ import annotations

import ast
import math
from typing import Any

from ._syntax import ExpressionError, qualified

Shape = tuple[int, ...]

_ELEMENTWISE = frozenset("""
abs exp log log1p log2 log10 expm1 sqrt rsqrt square sin cos tan tanh sinh cosh arcsin arccos arctan sigmoid
erf erfinv negative reciprocal sign floor ceil round softmax isnan isinf nan_to_num astype clip cumsum cumprod
tril triu gelu gelu_approx gelu_fast_approx silu relu relu6 leaky_relu softplus softsign mish log_sigmoid
log_softmax elu selu celu hard_tanh hardswish step softmin zeros_like ones_like
""".split())
_BROADCAST = frozenset({"maximum", "minimum", "add", "subtract", "multiply", "divide", "power", "logaddexp", "where"})
_REDUCE = frozenset({"sum", "mean", "var", "std", "max", "min", "prod", "logsumexp", "argmax", "argmin"})


def broadcast(node: ast.AST, *shapes: Shape) -> Shape:
    """NumPy broadcasting of ``shapes``, or an error naming both sides."""
    rank = max((len(s) for s in shapes), default=0)
    out: list[int] = []
    for axis in range(-rank, 0):
        sizes = {s[axis] for s in shapes if len(s) >= -axis} - {1}
        if len(sizes) > 1:
            shown = " and ".join(str(list(s)) for s in shapes)
            raise ExpressionError(f"shapes {shown} do not broadcast", node.col_offset + 1)  # type: ignore[attr-defined]
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def matmul(node: ast.AST, a: Shape, b: Shape) -> Shape:
    if not a or not b:
        raise ExpressionError("`@` needs arrays of at least one dimension", node.col_offset + 1)  # type: ignore[attr-defined]
    left, right = (a if len(a) > 1 else (1, *a)), (b if len(b) > 1 else (*b, 1))
    if left[-1] != right[-2]:
        raise ExpressionError(f"`@` of shapes {list(a)} and {list(b)}: inner sizes {left[-1]} and {right[-2]} differ",
                              node.col_offset + 1)  # type: ignore[attr-defined]
    batch = broadcast(node, left[:-2], right[:-2])
    out = (*batch, left[-2], right[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


class ShapeOf:
    """Infers shapes over a checked tree; ``values`` holds declared shapes."""

    def __init__(self, shapes: dict[str, Shape]) -> None:
        self.shapes = shapes

    def __call__(self, node: ast.expr) -> Shape | None:
        if isinstance(node, ast.Name):
            return self.shapes.get(node.id)
        if isinstance(node, ast.Constant):
            return None if node.value is None else ()
        if isinstance(node, ast.UnaryOp):
            return self(node.operand)
        if isinstance(node, (ast.BinOp, ast.Compare)):
            left = self(node.left)
            right = self(node.right if isinstance(node, ast.BinOp) else node.comparators[0])
            if left is None or right is None:
                return None
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
                return matmul(node, left, right)
            return broadcast(node, left, right)
        if isinstance(node, ast.Attribute):
            if node.attr == "T":
                inner = self(node.value)
                return None if inner is None else inner[::-1]
            return () if node.attr in ("ndim", "size") else None
        if isinstance(node, ast.Subscript):
            if isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
                return ()
            return None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            return self.call(node)
        return None

    def call(self, node: ast.Call) -> Shape | None:
        func = node.func
        assert isinstance(func, ast.Attribute)
        name = qualified(func) or ""
        method = name.split(".")[0] not in ("mx", "nn")
        args: list[ast.expr] = [func.value, *node.args] if method else list(node.args)
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        leaf = func.attr
        shapes = [self(arg) for arg in args if not isinstance(arg, (ast.List, ast.Tuple))]
        if name.startswith("mx.fast."):
            return self.fast(node, leaf, [self(arg) for arg in args])
        if leaf in _ELEMENTWISE and shapes:
            return shapes[0]
        if leaf in _BROADCAST:
            return None if any(s is None for s in shapes) or not shapes else broadcast(node, *(s for s in shapes if s is not None))
        if leaf == "matmul" and len(shapes) == 2:
            a, b = shapes
            return None if a is None or b is None else matmul(node, a, b)
        if not args:
            return None
        first = self(args[0])
        if first is None:
            return None
        rest = args[1:]
        if leaf in _REDUCE:
            axis = _literal(keywords.get("axis", rest[0] if rest else None))
            keep = bool(_literal(keywords.get("keepdims", rest[1] if len(rest) > 1 else None)))
            return _reduced(node, first, axis, keep)
        if leaf in ("transpose", "swapaxes"):
            axes = [_literal(a) for a in rest] or [_literal(keywords.get("axes"))]
            if leaf == "transpose" and (not rest or axes == [None]):
                return first[::-1]
            flat = axes[0] if len(axes) == 1 and isinstance(axes[0], (list, tuple)) else axes
            if not all(isinstance(a, int) for a in flat):
                return None
            dims = [_axis(node, first, int(a)) for a in flat]
            if leaf == "swapaxes" and len(dims) == 2:
                out = list(first)
                out[dims[0]], out[dims[1]] = out[dims[1]], out[dims[0]]
                return tuple(out)
            return tuple(first[d] for d in dims) if len(dims) == len(first) else None
        if leaf == "reshape":
            target = [_literal(a) for a in rest]
            if len(target) == 1 and isinstance(target[0], (list, tuple)):
                target = list(target[0])
            return _reshaped(node, first, target)
        return None

    def fast(self, node: ast.Call, leaf: str, shapes: list[Shape | None]) -> Shape | None:
        x = shapes[0] if shapes else None
        if x is None:
            return None
        if leaf in ("rms_norm", "layer_norm"):
            for weight in shapes[1:2 if leaf == "rms_norm" else 3]:
                if weight is not None and weight != (x[-1],):
                    raise ExpressionError(f"mx.fast.{leaf}: weight and bias must be of shape [{x[-1]}] (the last "
                                          f"dimension of {list(x)}), got {list(weight)}", node.col_offset + 1)
            return x
        if leaf == "scaled_dot_product_attention" and len(shapes) >= 3 and None not in shapes[:3]:
            q, k, v = shapes[0], shapes[1], shapes[2]
            assert q is not None and k is not None and v is not None
            if len(q) != 4 or len(k) != 4 or len(v) != 4:
                raise ExpressionError("mx.fast.scaled_dot_product_attention takes q, k, v of [batch, heads, length, "
                                      "head_dim]", node.col_offset + 1)
            if q[-1] != k[-1] or k[:3] != v[:3]:
                raise ExpressionError(f"mx.fast.scaled_dot_product_attention: q {list(q)}, k {list(k)}, v {list(v)} "
                                      "do not fit (q and k share head_dim; k and v share batch, heads, length)",
                                      node.col_offset + 1)
            return (*q[:3], v[-1])
        return x if leaf == "rope" else None


def _literal(node: ast.expr | None) -> Any:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


def _axis(node: ast.AST, shape: Shape, axis: int) -> int:
    if not -len(shape) <= axis < len(shape):
        raise ExpressionError(f"axis {axis} is out of range for shape {list(shape)}", node.col_offset + 1)  # type: ignore[attr-defined]
    return axis % len(shape)


def _reduced(node: ast.AST, shape: Shape, axis: Any, keep: bool) -> Shape | None:
    if axis is None:
        return tuple(1 for _ in shape) if keep else ()
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    if not all(isinstance(a, int) for a in axes):
        return None
    chosen = {_axis(node, shape, int(a)) for a in axes}
    return tuple(1 if i in chosen else d for i, d in enumerate(shape) if keep or i not in chosen)


def _reshaped(node: ast.AST, shape: Shape, target: list[Any]) -> Shape | None:
    if not all(isinstance(d, int) for d in target):
        return None
    total, known = math.prod(shape), math.prod(d for d in target if d != -1)
    if target.count(-1) == 1 and known and total % known == 0:
        return tuple(total // known if d == -1 else d for d in target)
    if -1 not in target and known == total:
        return tuple(target)
    raise ExpressionError(f"cannot reshape {list(shape)} ({total} elements) into {target}",
                          node.col_offset + 1)  # type: ignore[attr-defined]
