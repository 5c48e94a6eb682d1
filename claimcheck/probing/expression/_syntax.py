"""The grammar of an op written in a claim file: a Python expression over declared arrays and ``mx.`` calls.

The text is parsed with :func:`ast.parse` and every node is checked against a whitelist before
anything runs: only arithmetic and comparison operators, calls of listed ``mx.``, ``mx.fast.`` and
``nn.`` functions or listed array methods, the declared names, numbers, tuples and slices. Nothing
is ever passed to ``eval``: :mod:`._evaluate` walks the checked tree itself. This module imports
no MLX, so ``claimcheck validate`` checks an op on a machine without it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from claimcheck.suggest import did_you_mean

#: ``mx.<name>`` functions an expression may call (each is tested to exist in MLX).
MX_FUNCTIONS = frozenset("""
abs exp log log1p log2 log10 expm1 sqrt rsqrt square sin cos tan tanh sinh cosh arcsin arccos arctan sigmoid
erf erfinv negative reciprocal sign floor ceil round maximum minimum add subtract multiply divide power
logaddexp where sum mean var std max min prod logsumexp argmax argmin softmax matmul transpose swapaxes
reshape concatenate stack expand_dims squeeze broadcast_to clip cumsum cumprod tril triu outer einsum arange
zeros_like ones_like full zeros ones isnan isinf nan_to_num quantize dequantize quantized_matmul addmm inner
tensordot take take_along_axis sort flatten moveaxis repeat tile
""".split())
#: ``mx.fast.<name>`` kernels.
FAST_FUNCTIONS = frozenset({"rms_norm", "layer_norm", "rope", "scaled_dot_product_attention"})
#: ``nn.<name>`` (``mlx.nn``) activations and normalisers.
NN_FUNCTIONS = frozenset("""
gelu gelu_approx gelu_fast_approx silu relu relu6 leaky_relu softplus softsign mish sigmoid log_sigmoid
log_softmax elu selu celu hard_tanh hardswish tanh glu softmin step
""".split())
#: ``mx.<name>`` values that are not functions.
MX_CONSTANTS = frozenset({"pi", "e", "inf", "float32", "float16", "bfloat16", "int32", "int8", "uint32", "uint8",
                          "bool_"})
#: Methods and attributes of an array an expression may use.
ARRAY_METHODS = frozenset("""
astype sum mean max min var std prod logsumexp argmax argmin reshape transpose swapaxes square sqrt rsqrt exp
log abs flatten squeeze cumsum moveaxis round
""".split())
ARRAY_ATTRIBUTES = frozenset({"T", "shape", "ndim", "size", "dtype"})
NAMESPACES = {"mx": MX_FUNCTIONS | MX_CONSTANTS, "mx.fast": FAST_FUNCTIONS, "nn": NN_FUNCTIONS}

_BINARY = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)
_UNARY = (ast.USub, ast.UAdd)
_COMPARE = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
MAX_LENGTH = 2000


class ExpressionError(ValueError):
    """One problem of an expression, with the column it is at (1-based)."""

    def __init__(self, message: str, column: int = 0) -> None:
        super().__init__(f"{message} (column {column})" if column else message)
        self.column = column


@dataclass(frozen=True)
class Parsed:
    """A checked expression: its tree and the declared names it reads."""

    text: str
    tree: ast.Expression
    names: frozenset[str]


def qualified(node: ast.expr) -> str | None:
    """``mx.fast.rms_norm`` for an attribute chain rooted at a plain name, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def parse(text: str, declared: frozenset[str] | set[str]) -> Parsed:
    """Parse ``text`` and check every node; raise :class:`ExpressionError` at the first problem."""
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError("expected an expression such as `x * mx.sigmoid(x)`")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as error:
        raise ExpressionError(f"not an expression: {error.msg}", error.offset or 0) from None
    names: set[str] = set()
    _Checker(frozenset(declared), names).check(tree.body)
    return Parsed(text.strip(), tree, frozenset(names))


def problems(text: str, declared: frozenset[str] | set[str]) -> list[str]:
    """Every problem :func:`parse` would raise, as messages (at most the first: a tree stops at one)."""
    try:
        parse(text, declared)
    except ExpressionError as error:
        return [str(error)]
    return []


class _Checker:
    def __init__(self, declared: frozenset[str], names: set[str]) -> None:
        self.declared, self.names = declared, names

    def fail(self, node: ast.AST, message: str) -> ExpressionError:
        return ExpressionError(message, getattr(node, "col_offset", -1) + 1)

    def check(self, node: ast.expr) -> None:
        if isinstance(node, ast.BinOp):
            if not isinstance(node.op, _BINARY):
                raise self.fail(node, f"operator `{type(node.op).__name__}` is not allowed")
            self.check(node.left)
            self.check(node.right)
        elif isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, _UNARY):
                raise self.fail(node, f"operator `{type(node.op).__name__}` is not allowed")
            self.check(node.operand)
        elif isinstance(node, ast.Compare):
            if len(node.ops) != 1 or not isinstance(node.ops[0], _COMPARE):
                raise self.fail(node, "only one comparison (<, <=, >, >=, ==, !=) at a time is allowed")
            self.check(node.left)
            self.check(node.comparators[0])
        elif isinstance(node, ast.Call):
            self.call(node)
        elif isinstance(node, ast.Name):
            self.name(node)
        elif isinstance(node, ast.Attribute):
            self.attribute(node, call=False)
        elif isinstance(node, ast.Constant):
            if not (node.value is None or isinstance(node.value, (int, float, str))) or \
                    isinstance(node.value, complex):
                raise self.fail(node, f"constant {node.value!r} is not allowed")
        elif isinstance(node, (ast.Tuple, ast.List)):
            for item in node.elts:
                self.check(item)
        elif isinstance(node, ast.Subscript):
            self.check(node.value)
            self.index(node.slice)
        else:
            raise self.fail(node, f"`{type(node).__name__}` is not allowed in an op expression "
                                  "(arithmetic, comparisons, mx./nn. calls, array methods, indexing)")

    def index(self, node: ast.expr) -> None:
        if isinstance(node, ast.Slice):
            for part in (node.lower, node.upper, node.step):
                if part is not None:
                    self.check(part)
        elif isinstance(node, ast.Tuple):
            for item in node.elts:
                self.index(item)
        elif isinstance(node, ast.Constant) and node.value is Ellipsis:
            return
        else:
            self.check(node)

    def name(self, node: ast.Name) -> None:
        if node.id in NAMESPACES:
            raise self.fail(node, f"`{node.id}` alone is not a value; call one of its functions")
        if node.id not in self.declared:
            hint = did_you_mean(node.id, sorted(self.declared))
            known = ", ".join(sorted(self.declared)) or "none"
            raise self.fail(node, f"unknown name `{node.id}`{hint}; declared arrays: {known}")
        self.names.add(node.id)

    def attribute(self, node: ast.Attribute, *, call: bool) -> None:
        name = qualified(node)
        root = name.rpartition(".")[0] if name else None
        if root in NAMESPACES:
            allowed = NAMESPACES[root]
            if node.attr not in allowed:
                hint = did_you_mean(node.attr, sorted(allowed))
                raise self.fail(node, f"`{name}` is not an allowed function{hint}; "
                                      "`claimcheck probes op_expr` lists them")
            if call and node.attr in MX_CONSTANTS and root == "mx":
                raise self.fail(node, f"`{name}` is a value, not a function")
            if not call and node.attr not in MX_CONSTANTS:
                raise self.fail(node, f"`{name}` is a function: call it")
            return
        if name is not None and name.split(".")[0] in NAMESPACES:
            raise self.fail(node, f"`{name}` is not an allowed function; `claimcheck probes op_expr` lists them")
        allowed = ARRAY_METHODS if call else ARRAY_ATTRIBUTES
        if node.attr not in allowed:
            hint = did_you_mean(node.attr, sorted(allowed))
            kind = "method" if call else "attribute"
            raise self.fail(node, f"array {kind} `.{node.attr}` is not allowed{hint}")
        self.check(node.value)

    def call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Attribute):
            self.attribute(node.func, call=True)
        else:
            raise self.fail(node, "only mx./nn. functions and array methods may be called")
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise self.fail(arg, "`*` arguments are not allowed")
            self.check(arg)
        for keyword in node.keywords:
            if keyword.arg is None:
                raise self.fail(keyword.value, "`**` arguments are not allowed")
            self.check(keyword.value)
