"""``claimcheck validate`` finds a project's probes where ``pytest claims/`` does: the ``claims_probes``
ini option first, then ``[tool.claimcheck] probes``, then ``<root>/probes``."""

from __future__ import annotations

from pathlib import Path

import pytest

from claimcheck import cli
from claimcheck.cli._claims import ini_probe_sources

from .test_probe_discovery import _probe_file, _write

CLAIM = """\
id: ini-probe
title: t
statement: s
source: {doc: d.md, section: "1", figure: "f"}
scope: {kind: portable, backend: any}
probe: {name: ini_named_probe}
check: {rule: exact, output: x, expected: 1, tolerance: 0}
"""


def _project(root: Path, config: dict[str, str]) -> Path:
    """A claim on a probe that lives in ``tools/measures``, which only the given config names."""
    return _write(root, {"tools/measures/m.py": _probe_file("ini_named_probe"), "claims/one.yaml": CLAIM, **config})


@pytest.mark.parametrize("config", [
    {"pytest.ini": "[pytest]\nclaims_probes = tools/measures\n"},
    {"pyproject.toml": '[tool.pytest.ini_options]\nclaims_probes = ["tools/measures"]\n'},
    {"setup.cfg": "[tool:pytest]\nclaims_probes = tools/measures\n"},
])
def test_validate_reads_the_claims_probes_ini_option(tmp_path: Path, isolated: None, capsys,
                                                     config: dict[str, str]) -> None:
    root = _project(tmp_path, config)
    assert cli.main(["validate", str(root / "claims"), "--root", str(root)]) == 0, capsys.readouterr()
    assert "1 claim file(s) valid" in capsys.readouterr().out


def test_the_ini_option_wins_over_tool_claimcheck_probes_as_in_the_plugin(tmp_path: Path, isolated: None,
                                                                          capsys) -> None:
    """The plugin passes the ini option to the loader, which then never reads ``[tool.claimcheck] probes``."""
    root = _project(tmp_path, {"pytest.ini": "[pytest]\nclaims_probes = tools/measures\n",
                               "pyproject.toml": '[tool.claimcheck]\nprobes = ["nowhere"]\n'})
    assert cli.main(["validate", str(root / "claims"), "--root", str(root)]) == 0, capsys.readouterr()
    (root / "pytest.ini").write_text("[pytest]\n")  # unset: the pyproject setting is read, and names nothing
    assert cli.main(["validate", str(root / "claims"), "--root", str(root)]) == 2
    assert "cannot import probe module `nowhere`" in capsys.readouterr().err


def test_ini_sources_come_from_the_file_pytest_would_pick(tmp_path: Path) -> None:
    _write(tmp_path, {"pytest.ini": "[pytest]\nclaims_probes = a 'b c'\n",
                      "tox.ini": "[pytest]\nclaims_probes = ignored\n"})
    assert ini_probe_sources(str(tmp_path)) == (str(tmp_path), ["a", "b c"])
    (tmp_path / "pytest.ini").unlink()
    assert ini_probe_sources(str(tmp_path)) == (str(tmp_path), ["ignored"])
    (tmp_path / "tox.ini").write_text("[pytest]\n")
    assert ini_probe_sources(str(tmp_path)) is None


@pytest.mark.parametrize("name, text", [
    ("pytest.ini", "[pytest]\nclaims_probes = lib/probes\n"),
    ("pyproject.toml", '[tool.pytest.ini_options]\nclaims_probes = ["lib/probes"]\n'),
    ("tox.ini", "[pytest]\nclaims_probes = lib/probes\n"),
    ("setup.cfg", "[tool:pytest]\nclaims_probes = lib/probes\n"),
])
def test_without_pytest_validate_finds_the_config_pytest_would(tmp_path, name, text) -> None:
    import importlib

    from claimcheck.cli._claims import _locate_config_without_pytest

    (tmp_path / name).write_text(text)
    inner = tmp_path / "claims"
    inner.mkdir()
    ours = _locate_config_without_pytest(inner, None)
    theirs = importlib.import_module("_pytest.config.findpaths").locate_config(inner, [inner])
    assert (ours[0], ours[1]) == (theirs[0], theirs[1])
    value = theirs[2]["claims_probes"]
    assert ours[2]["claims_probes"] == getattr(value, "value", value)
