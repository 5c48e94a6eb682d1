"""The probe reference (``docs/probes.md``) is generated from the probes' declarations and kept current;
every shipped probe has a worked claim that validates, and op_pair lists and checks its ops."""

from __future__ import annotations

from pathlib import Path

import pytest

from claimcheck import cli
from claimcheck.cli._listing import probe_markdown, worked_example
from claimcheck.claims.loader import load_claims_text, probe_problems
from claimcheck.probing.registry import load_probe_modules, registered_probes

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "probes.md"


@pytest.fixture(scope="module")
def shipped() -> dict:
    load_probe_modules(str(ROOT))
    folder = ROOT / "probes"
    return {name: p for name, p in registered_probes().items() if p.file and Path(p.file).is_relative_to(folder)}


def test_docs_probes_md_is_current(shipped: dict) -> None:
    expected = probe_markdown([shipped[name] for name in sorted(shipped)], ROOT)
    assert REFERENCE.read_text(encoding="utf-8") == expected, (
        "docs/probes.md is stale: run `claimcheck probes --markdown --output docs/probes.md` from the repository root")


def test_every_shipped_probe_has_a_worked_claim_that_validates_against_it(shipped: dict) -> None:
    assert len(shipped) >= 30
    for name, registered in sorted(shipped.items()):
        example = worked_example(registered)
        assert example, f"probe `{name}` has no worked claim (declare `example=` or add one to probes/data/examples.yaml)"
        (claim,) = load_claims_text(example, f"example of {name}")
        assert claim.probe.name == name
        assert [str(problem) for problem in probe_problems(claim)[1]] == [], name


def test_the_markdown_lists_each_probe_with_its_worked_claim(shipped: dict) -> None:
    text = REFERENCE.read_text(encoding="utf-8")
    for name in shipped:
        assert f"\n## `{name}`\n" in text
    assert text.count("**Worked claim**") == len(shipped)
    assert "family qmm4: shape [m, k, n], k divisible by 64" in text


def test_probes_name_lists_op_pair_ops_by_family(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["probes", "op_pair", "--root", str(ROOT)]) == 0
    out = capsys.readouterr().out
    assert "    ops (a and b must be of one family):" in out
    assert "        family attention: shape [batch, heads, length, head_dim]" in out
    assert "            gelu_erf_compiled: the same GELU under mx.compile" in out
    assert "bitwise_equal [no unit, higher is better]" in out


def test_validate_checks_op_names_families_shapes_and_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             shipped: dict) -> None:
    claim = ("id: c{n}\ntitle: t\nstatement: s\nsource: {{doc: d, section: s, figure: f}}\nscope: {{kind: portable}}\n"
             "probe: {{name: op_pair, params: {{{params}}}}}\n"
             "check: {{rule: at_most, output: max_abs_error, threshold: 0.1}}\n")
    bad = ["a: gelu, b: gelu_aprox", "a: gelu, b: rms_norm_fast", "a: matmul, b: matmul_rows, shape: [4, 8]",
           "a: gelu, b: silu, inputs: {dist: beta}", "a: gelu, b: silu, dtype: float64"]
    (tmp_path / "c.yaml").write_text("---\n".join(claim.format(n=i, params=p) for i, p in enumerate(bad)))
    assert cli.main(["validate", str(tmp_path / "c.yaml"), "--root", str(ROOT)]) == 1
    out = capsys.readouterr().out
    for line, message in [(6, "probe.params.b: unknown op `gelu_aprox` (did you mean `gelu_approx`?)"),
                          (14, "probe.params.b: ops `gelu` (unary) and `rms_norm_fast` (rms_norm) take different "
                               "inputs; pair ops of one family"),
                          (22, "probe.params.shape: family `matmul` takes shape [m, k, n]; got [4, 8]"),
                          (30, "probe.params.inputs: `inputs.dist` must be one of normal, uniform; got 'beta'"),
                          (38, "probe.params.dtype: `dtype` must be one of float32, float16, bfloat16; got 'float64'")]:
        assert f"c.yaml:{line}: {message}" in out, out


def test_every_param_shows_its_meaning_type_and_default(shipped: dict, capsys) -> None:
    """`claimcheck probes NAME` and the reference give each param's meaning, read from the probe's docstring."""
    assert cli.main(["probes", "op_expr", "--root", str(ROOT)]) == 0
    out = capsys.readouterr().out
    assert "dims: collections.abc.Mapping[str, int] | None = None\n            named sizes the shapes may use" in out
    assert "repeats: int = 1\n            calls of each op per round" in out
    reference = REFERENCE.read_text(encoding="utf-8")
    assert "- `rel_floor: float = 1e-06`: smallest ``|A|`` a relative error is divided by." in reference
    assert "(undocumented" not in out


def test_the_shipped_name_of_a_probe_is_listed_as_claims_write_it(capsys) -> None:
    assert cli.main(["probes", "claimcheck:op_pair", "--root", str(ROOT)]) == 0
    assert capsys.readouterr().out.startswith("op_pair -- ")


def test_every_shipped_param_has_a_meaning_in_its_docstring(shipped: dict) -> None:
    """Each param a claim may set has an `Args:` line in its probe's docstring, so the reference shows its meaning."""
    from claimcheck.cli._listing import UNDOCUMENTED, parameter_meanings

    missing = [f"{name}.{line.split(':')[0]}" for name, registered in sorted(shipped.items())
               for line, meaning in parameter_meanings(registered) if meaning == UNDOCUMENTED]
    assert not missing, "shipped params without an `Args:` line in their probe's docstring: " + ", ".join(missing)
    assert UNDOCUMENTED not in REFERENCE.read_text(encoding="utf-8")
