"""op_expr: an op written in the claim file is parsed and checked before anything runs (no eval, no MLX),
and runs through op_pair's rounds with the expected numbers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from claimcheck.probing.expression import ExpressionError, parse, problems, read
from probes.ops.op_expr import op_expr  # at import: a later test may put another project's `probes` in its place

ROOT = Path(__file__).resolve().parents[2]
X = {"x": {"shape": [4, 8]}}


@pytest.mark.parametrize("text, words", [
    ("__import__('os').system('true')", "`.system` is not allowed"),
    ("__import__('os')", "only mx./nn. functions"),
    ("x.__class__", "`.__class__` is not allowed"),
    ("(lambda: x)()", "only mx./nn. functions"),
    ("[v for v in x]", "ListComp"),
    ("mx.sigmod(x)", "did you mean `sigmoid`"),
    ("mx.load('f')", "`mx.load` is not an allowed function"),
    ("mx.random.normal((2,))", "`mx.random.normal` is not an allowed function"),
    ("y * 2", "unknown name `y`"),
    ("x if x else x", "IfExp"),
    ("x +", "not an expression"),
    ("mx.sigmoid(*x)", "`*` arguments"),
])
def test_an_expression_outside_the_whitelist_is_refused_before_running(text: str, words: str) -> None:
    with pytest.raises(ExpressionError) as error:
        parse(text, {"x"})
    assert words in str(error.value)


def test_allowed_expressions_parse_and_name_the_arrays_they_read() -> None:
    parsed = parse("mx.fast.rms_norm(x, w, 1e-5) + nn.gelu(x)[..., :4].sum(axis=-1, keepdims=True) * mx.pi", {"x", "w"})
    assert parsed.names == {"x", "w"}


def test_every_problem_of_a_param_set_is_listed_with_its_field() -> None:
    found = dict(problems({
        "dims": {"m": 8, "k": 256, "n": 128},
        "inputs": {"x": {"shape": ["m", "kk"], "dtype": "float64", "dist": "uniform", "std": 1}},
        "weights": {"w": {"shape": ["n", "k"]}},
        "a": "x @ q", "b": {"expr": "x", "compile": "yes"},
    }))
    assert "did you mean `k`" in found["inputs.x.shape"]
    assert "float64" in found["inputs.x.dtype"]
    assert "not a setting of `dist: uniform`" in found["inputs.x.std"]
    assert "unknown name `q`" in found["a"]
    assert "true or false" in found["b.compile"]


@pytest.mark.parametrize("params, field, words", [
    ({"inputs": {"x": {"shape": [8, 256]}}, "weights": {"w": {"shape": [128, 256]}}, "a": "x @ w", "b": "x @ w.T"},
     "a", "inner sizes 256 and 128 differ"),
    ({"inputs": {"x": {"shape": [8, 6]}, "y": {"shape": [8, 4]}}, "a": "x + y", "b": "x"}, "a", "do not broadcast"),
    ({"inputs": X, "weights": {"w": {"shape": [4]}}, "a": "mx.fast.rms_norm(x, w, 1e-5)", "b": "x"}, "a",
     "must be of shape [8]"),
    ({"inputs": X, "a": "x.sum(axis=-1)", "b": "x"}, "b", "must have one shape"),
    ({"inputs": X, "a": "x.reshape(3, 5)", "b": "x"}, "a", "cannot reshape"),
    ({"inputs": {"x": {"shape": [4, 8]}, "y": {"shape": [2, 8]}}, "a": "x", "b": {"expr": "x", "rows": True}},
     "b.rows", "share their first dimension"),
    ({"inputs": X, "a": "x.sum(axis=0, keepdims=True)", "b": {"expr": "x.sum(axis=0)", "rows": True}},
     "b.rows", "keep the row axis"),
])
def test_a_shape_the_op_rules_out_is_an_error_before_running(params: dict, field: str, words: str) -> None:
    found = dict(problems(params))
    assert field in found and words in found[field], found


def test_shapes_that_fit_give_no_problem() -> None:
    assert problems({"dims": {"m": 8, "k": 64, "n": 32}, "inputs": {"x": {"shape": ["m", "k"]}},
                     "weights": {"w": {"shape": ["n", "k"]}, "g": {"shape": ["n"]}},
                     "a": "mx.fast.rms_norm(x @ w.T, g, 1e-5)", "b": {"expr": "mx.fast.rms_norm(x @ w.T, g, 1e-5)",
                                                                    "rows": True, "compile": True}}) == []


def test_checking_an_expression_never_imports_mlx(tmp_path: Path) -> None:
    stub = tmp_path / "mlx"
    stub.mkdir()
    (stub / "__init__.py").write_text('raise ImportError("mlx must not be imported to check an op")\n')
    code = ("from claimcheck.probing.expression import problems; "
            "print(problems({'inputs': {'x': {'shape': [2, 3]}}, 'a': 'x @ x', 'b': 'x'}))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "inner sizes 3 and 2 differ" in run.stdout


def test_every_whitelisted_function_exists_in_mlx() -> None:
    import mlx.core as mx
    import mlx.nn as nn

    from claimcheck.probing import expression as e

    assert not [n for n in e.MX_FUNCTIONS | e.MX_CONSTANTS if not hasattr(mx, n)]
    assert not [n for n in e.FAST_FUNCTIONS if not hasattr(mx.fast, n)]
    assert not [n for n in e.NN_FUNCTIONS if not hasattr(nn, n)]
    assert not [n for n in e.ARRAY_METHODS | e.ARRAY_ATTRIBUTES if not hasattr(mx.array, n)]


def test_the_arms_compute_what_their_options_say() -> None:
    import mlx.core as mx
    import mlx.nn as nn

    from claimcheck.probing.expression import arm_function, draw

    op, found = read({"dims": {"m": 5, "k": 16, "n": 3}, "dtype": "float16", "inputs": {"x": {"shape": ["m", "k"]}},
                      "weights": {"w": {"shape": ["k", "n"], "dist": "uniform", "low": -1, "high": 1}},
                      "a": "x @ w", "b": {"expr": "x @ w", "rows": True, "compile": True, "dtype": "float32"}})
    assert op is not None, found
    x, w = draw(op, mx, mx.random.key(1), mx.random.key(2))
    assert x.dtype == mx.float16 and tuple(w.shape) == (16, 3)
    assert float(w.min()) >= -1 and float(w.max()) <= 1
    a = arm_function(op, op.a, mx, nn)(x, w)
    b = arm_function(op, op.b, mx, nn)(x, w)
    assert a.dtype == b.dtype == mx.float16
    expected = (x.astype(mx.float32) @ w.astype(mx.float32)).astype(mx.float16)
    assert mx.array_equal(b, expected).item()
    again = draw(op, mx, mx.random.key(3), mx.random.key(2))
    assert mx.array_equal(again[1], w).item() and not mx.array_equal(again[0], x).item()


def test_the_probe_measures_a_known_difference_through_the_op_pair_rounds() -> None:
    from claimcheck.probing.registry import ProbeContext

    ctx = ProbeContext(n=3, seed=5)
    out = op_expr(ctx, inputs={"x": {"shape": [4, 8], "dist": "uniform", "low": 1, "high": 2}},
                  a="x", b="x + 0.25", warmup=0)
    assert out["max_abs_error"] == pytest.approx([0.25] * 3)
    assert out["bitwise_differs"] == [1.0] * 3 and len(out["a_ms"]) == 3
    same = op_expr(ProbeContext(n=2, seed=5), inputs=X, a="x * mx.sigmoid(x)",
                   b={"expr": "x * mx.sigmoid(x)", "compile": True}, warmup=0)
    assert same["max_abs_error"] == pytest.approx([0.0, 0.0], abs=1e-6)
    assert ctx.info["b_op"] == "x + 0.25" and ctx.info["arrays"]["x"]["dist"] == "uniform"


def test_validate_reports_every_op_error_of_a_file_at_its_line(tmp_path: Path, capsys) -> None:
    from claimcheck import cli

    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "claims").mkdir()
    (tmp_path / "claims" / "ops.yaml").write_text('''id: ops
title: t
statement: s
source: {doc: d.md, section: s, figure: "1"}
scope: {kind: portable, backend: cpu}
probe:
  name: op_expr
  params:
    inputs:
      y: {shape: [2], dtype: float8}
    weights:
      w: {shape: [32, 64]}
      x: {shape: [8, 64]}
    a: x @ w
    b: {expr: mx.sofmax(x), compile: true}
check: {rule: at_most, output: max_abs_error, threshold: 1.0e-6}
control: {params: {b: "x @ q"}, why: "another op"}
''')
    code = cli.main(["validate", str(tmp_path / "claims"), "--root", str(ROOT)])
    out = [line for line in capsys.readouterr().out.splitlines() if "ops.yaml" in line]
    assert code == 1
    assert any(":10: probe.params.inputs.y.dtype:" in line and "float8" in line for line in out), out
    assert any(":14: probe.params.a:" in line and "inner sizes 64 and 32 differ" in line for line in out), out
    assert any(":15: probe.params.b.expr:" in line and "did you mean `softmax`" in line for line in out), out
    assert any(":17: control.params.b:" in line and "unknown name `q`" in line for line in out), out
