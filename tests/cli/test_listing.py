"""``claimcheck probes`` and ``claimcheck models``: what a project's claims can use, and what their models are."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from claimcheck import cli
from claimcheck.models import aliases, registered_models

ROOT = Path(__file__).resolve().parents[2]
TOY_PROBE = '''\
from claimcheck.probing.registry import Output, probe


@probe("toy_timer", outputs={"ms": Output("ms", False, "time per call"), "count": Output()})
def toy_timer(ctx, *, size: int = 4, dtype: str = "float32", scales: list[float] | None = None, label: str) -> dict:
    """Times a toy loop.

    More text that the listing leaves out.

    Args:
        size: elements in the loop,
            counted once.
        dtype, label: what the loop is made of.
    """
    return {"ms": [1.0] * ctx.n, "count": [1.0] * ctx.n}
'''


def _claimcheck(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "claimcheck.cli", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=900)


def test_probes_lists_params_with_types_and_defaults_and_outputs_with_units(tmp_path):
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "toy.py").write_text(TOY_PROBE)
    done = _claimcheck("probes", "toy_timer", "--root", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "toy_timer -- probes/toy.py",
        "    Times a toy loop.",
        "    params:",
        "        size: int = 4",
        "            elements in the loop, counted once.",
        "        dtype: str = 'float32'",
        "            what the loop is made of.",
        "        scales: list[float] | None = None",
        "            (undocumented: the probe's docstring has no `Args:` line for it)",
        "        label: str required",
        "            what the loop is made of.",
        "    outputs:",
        "        ms [ms, lower is better]: time per call",
        "        count [no unit]",
    ]


def test_probes_without_names_lists_every_registered_probe(capsys):
    assert cli.main(["probes", "--root", str(ROOT)]) == 0
    out = capsys.readouterr().out
    blocks = [block for block in out.split("\n\n") if block.strip()]
    from claimcheck.probing.registry import registered_probes

    assert [block.splitlines()[0].split(" -- ")[0] for block in blocks] == sorted(registered_probes())
    weight_bytes = next(block for block in blocks if block.startswith("weight_bytes -- "))
    assert "weight_bytes -- probes/figures/weight_bytes.py (deterministic)" in weight_bytes
    assert "        model: str | None = None" in weight_bytes
    assert "        bytes_per_token [B]: weights streamed per decode token" in weight_bytes


def test_an_unknown_probe_name_gets_a_did_you_mean(capsys):
    assert cli.main(["probes", "weight_byte", "--root", str(ROOT)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown probe `weight_byte` (did you mean `weight_bytes`?)" in err


CLAIM = """\
id: {id}
title: A claim on {model}
statement: It streams bytes.
source: {{doc: notes.md, section: "1", figure: "1 B"}}
scope: {{kind: as-stated, backend: any}}
probe: {{name: weight_bytes, params: {{model: {model}}}}}
check: {{rule: at_least, output: bytes_per_token, threshold: 1}}
"""


@pytest.fixture
def project(tmp_path):
    """Claims naming a registered id, a resolving alias, a broken alias and a bare name; one alias unused."""
    claims = tmp_path / "claims"
    claims.mkdir()
    docs = [CLAIM.format(id=f"claim-{index}", model=model) for index, model in
            enumerate(["smollm2-135m-instruct", "local-model", "local-model", "gone-model", "gemma-4-12b"])]
    (claims / "all.yaml").write_text("---\n".join(docs))
    weights = tmp_path / "weights" / "local"
    weights.mkdir(parents=True)
    (weights / "config.json").write_text(json.dumps({"model_type": "llama", "torch_dtype": "float32"}))
    (weights / "model.safetensors").write_bytes(b"")  # resolving only reads config.json and looks for the file
    (tmp_path / "pyproject.toml").write_text('[tool.claimcheck.models]\nlocal-model = "weights/local"\n'
                                             'gone-model = "./weights/gone"\nspare = "org/spare"\n')
    yield tmp_path
    aliases.clear()


def test_models_lists_each_name_the_claims_use_and_what_it_resolves_to(project, capsys):
    assert cli.main(["models", "--root", str(project)]) == 0
    lines = capsys.readouterr().out.splitlines()
    by_name = {line.split()[0]: line for line in lines if not line.startswith(" ")}
    pyproject = project / "pyproject.toml"
    assert by_name["local-model"].split(None, 1)[1] == (
        f"-> alias ({pyproject}:2) -> directory {project / 'weights' / 'local'}")
    assert by_name["gone-model"].split(None, 1)[1] == (
        f"unresolved: {project / 'weights' / 'gone'} is not a directory")
    assert re.search(r"^gemma-4-12b +unresolved: not a registered id, an alias, a directory or a cached Hugging Face "
                     rf"repo; .*map it in \[tool.claimcheck.models\] of {re.escape(str(pyproject))}$",
                     by_name["gemma-4-12b"])
    assert by_name["smollm2-135m-instruct"].split(None, 1)[1].startswith(("-> registered id: ", "unresolved: "))
    used = lines[lines.index(by_name["local-model"]) + 1]
    assert used.strip() == "used by 2 claim(s): claim-1, claim-2"
    assert f"alias `spare` ({pyproject}:4) is not used by any claim" in lines
    assert lines[-1].startswith("4 model name(s): ")


def test_models_with_a_malformed_alias_table_is_one_line(project, capsys):
    (project / "pyproject.toml").write_text('[tool.claimcheck.models]\nlocal-model = 7\n')
    assert cli.main(["models", "--root", str(project)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{project / 'pyproject.toml'}:2: [tool.claimcheck.models] local-model" in err


def test_models_without_claims_naming_a_model_is_an_error(tmp_path, capsys):
    (tmp_path / "claims").mkdir()
    assert cli.main(["models", "--root", str(tmp_path)]) == 2
    assert "no claim under" in capsys.readouterr().err


def test_the_shipped_claims_name_models_one_way():
    """Registered ids, or the short lowercase name the source uses; a repo id belongs in the alias table."""
    from claimcheck.cli._listing import model_uses
    from claimcheck.claims.loader import load_claims

    uses = model_uses(load_claims([ROOT / "claims"]))
    registered = registered_models()
    names = [use.name for use in uses if use.name not in registered
             and not any(key.endswith(":") and use.name.startswith(key) for key in registered)]
    assert names, "the as-stated claims name the source's models"
    assert [name for name in names if not re.fullmatch(r"[a-z0-9][a-z0-9.-]*", name)] == []
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["claimcheck"]["models"]
    assert set(table) <= set(names), "every shipped alias is a name some claim uses"


def test_probes_takes_a_shipped_probe_by_the_qualified_name_claims_accept(capsys):
    assert cli.main(["probes", "claimcheck:weight_bytes", "--root", str(ROOT)]) == 0
    assert capsys.readouterr().out.startswith("weight_bytes -- probes/figures/weight_bytes.py (deterministic)")
