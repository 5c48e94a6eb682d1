"""How a project's probes are found: a folder with or without ``__init__.py``, configured modules and
paths, one function per probe name, and a one-line error for each way the setup can be wrong."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from claimcheck.probing import registry as probe_module
from claimcheck.probing.registry import DuplicateProbeError, ProbeLoadError, get_probe, load_probe_modules
from claimcheck.project_config import ProjectConfigError, probe_sources, read_tool_table

REPO = Path(__file__).resolve().parents[2]


def _probe_file(name: str, *, body: str = "", function: str = "measure") -> str:
    return textwrap.dedent(f'''\
        from claimcheck.probing.registry import Output, ProbeContext, probe
        {body}

        @probe("{name}", outputs={{"x": Output("")}}, deterministic=True)
        def {function}(ctx: ProbeContext) -> dict[str, list[float]]:
            return {{"x": [1.0]}}
        ''')


def _write(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.mark.parametrize("with_init", [True, False], ids=["with-init", "without-init"])
def test_project_probes_folder_loads_with_or_without_init(tmp_path: Path, isolated: None, with_init: bool) -> None:
    files = {
        "probes/_units.py": "SCALE = 2.0\n",
        "probes/first.py": _probe_file("first", body="from ._units import SCALE"),
        "probes/second.py": _probe_file("second", body="from probes.first import measure as _first"),
    }
    if with_init:
        files["probes/__init__.py"] = ""
    _write(tmp_path, files)
    imported = load_probe_modules(str(tmp_path))
    assert imported == ["probes", "probes.first", "probes.second"]
    assert get_probe("first").module == "probes.first"
    assert get_probe("second").file == str((tmp_path / "probes" / "second.py").resolve())


def test_probes_grouped_in_family_subpackages_load_as_the_shipped_ones_do(tmp_path: Path, isolated: None) -> None:
    """A sub-folder with an ``__init__.py`` is a family: its modules load, and import across families; a folder
    without one (data, scripts) and ``_``-helpers do not."""
    _write(tmp_path, {
        "probes/__init__.py": "",
        "probes/top.py": _probe_file("top"),
        "probes/timing/__init__.py": '"""Timing probes."""\n',
        "probes/timing/_shared.py": "K = 1\n",
        "probes/timing/loop.py": _probe_file("loop", body="from ._shared import K; from ..text.score import measure as _score"),
        "probes/text/__init__.py": "",
        "probes/text/score.py": _probe_file("score"),
        "probes/data/not_a_probe.py": "raise RuntimeError('data is not imported')\n",
        "probes/_helpers/__init__.py": "raise RuntimeError('a helper package is not imported on its own')\n",
    })
    imported = load_probe_modules(str(tmp_path))
    assert imported == ["probes", "probes.text", "probes.text.score", "probes.timing", "probes.timing.loop", "probes.top"]
    assert get_probe("loop").module == "probes.timing.loop" and get_probe("score").module == "probes.text.score"
    # a package named by module (an entry point, `probes = ["userpkg"]`) stands for its families' modules too
    _write(tmp_path / "site", {"userpkg/__init__.py": "", "userpkg/fam/__init__.py": "",
                               "userpkg/fam/deep.py": _probe_file("deep_in_package")})
    sys.path.insert(0, str(tmp_path / "site"))
    assert load_probe_modules(None, ["userpkg"]) == ["userpkg", "userpkg.fam", "userpkg.fam.deep"]
    assert get_probe("deep_in_package").module == "userpkg.fam.deep"


def test_configured_sources_replace_the_default_folder(tmp_path: Path, isolated: None) -> None:
    _write(tmp_path, {
        "pyproject.toml": '[tool.claimcheck]\nprobes = ["tools/probes", "extra_probe.py", "userpkg.measures"]\n',
        "probes/ignored.py": _probe_file("ignored"),
        "tools/probes/helper.py": "K = 3\n",
        "tools/probes/folder_probe.py": _probe_file("from_folder", body="from .helper import K"),
        "extra_probe.py": _probe_file("from_file"),
        "site/userpkg/__init__.py": "",
        "site/userpkg/measures/__init__.py": "",
        "site/userpkg/measures/one.py": _probe_file("from_package"),
    })
    sys.path.insert(0, str(tmp_path / "site"))
    assert probe_sources(tmp_path) == ("tools/probes", "extra_probe.py", "userpkg.measures")
    imported = load_probe_modules(str(tmp_path))
    assert "tools.probes.folder_probe" in imported and "extra_probe" in imported
    assert "userpkg.measures.one" in imported
    for name in ("from_folder", "from_file", "from_package"):
        assert get_probe(name).name == name
    with pytest.raises(LookupError, match="unknown probe `ignored`"):
        get_probe("ignored")


def test_ini_sources_take_precedence_over_pyproject(tmp_path: Path, isolated: None) -> None:
    _write(tmp_path, {
        "pyproject.toml": '[tool.claimcheck]\nprobes = ["probes"]\n',
        "probes/a.py": _probe_file("from_pyproject"),
        "elsewhere/b.py": _probe_file("from_ini"),
    })
    load_probe_modules(str(tmp_path), ["elsewhere"])
    assert get_probe("from_ini").module == "elsewhere.b"
    with pytest.raises(LookupError):
        get_probe("from_pyproject")


def test_duplicate_probe_name_names_both_definitions(tmp_path: Path, isolated: None) -> None:
    # The same function name in two files: the old qualname check accepted this silently.
    _write(tmp_path, {"probes/a.py": _probe_file("twice"), "probes/b.py": _probe_file("twice")})
    with pytest.raises(DuplicateProbeError) as caught:
        load_probe_modules(str(tmp_path))
    message = str(caught.value)
    assert "probe `twice` is defined twice" in message
    assert f"probes.a ({(tmp_path / 'probes' / 'a.py').resolve()})" in message
    assert f"probes.b ({(tmp_path / 'probes' / 'b.py').resolve()})" in message
    assert "\n" not in message


def test_one_file_under_two_module_names_is_one_probe(tmp_path: Path, isolated: None) -> None:
    _write(tmp_path, {"probes/x.py": _probe_file("shared")})
    load_probe_modules(str(tmp_path))
    first = get_probe("shared").function
    load_probe_modules(str(tmp_path / "probes"), ["x.py"])  # the same file again, as the module `x`
    assert sys.modules["x"].measure is not first  # imported twice, registered once: the first stands
    assert get_probe("shared").function is first and get_probe("shared").module == "probes.x"


def test_another_projects_probes_are_replaced(tmp_path: Path, isolated: None) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    _write(first, {"probes/p.py": _probe_file("mine"), "probes/q.py": _probe_file("only_first")})
    _write(second, {"probes/p.py": _probe_file("mine")})
    load_probe_modules(str(first))
    load_probe_modules(str(second))
    assert get_probe("mine").file == str((second / "probes" / "p.py").resolve())
    assert "probes.q" not in sys.modules


def test_a_live_package_cannot_take_a_name_from_another(tmp_path: Path, isolated: None) -> None:
    """Two packages both imported: the second definition of a name is an error, whichever loads first."""
    _write(tmp_path, {"site/pkg_one/__init__.py": "", "site/pkg_one/a.py": _probe_file("taken"),
                      "site/pkg_two/__init__.py": "", "site/pkg_two/a.py": _probe_file("taken")})
    sys.path.insert(0, str(tmp_path / "site"))
    with pytest.raises(DuplicateProbeError, match=r"in pkg_one\.a \(.*\) and in pkg_two\.a"):
        load_probe_modules(str(tmp_path), ["pkg_one", "pkg_two"])


@pytest.mark.parametrize(("files", "sources", "expected"), [
    ({}, ["tools/missing"], "probe source `tools/missing` (from the claims_probes ini option): no such file or folder"),
    ({}, ["no_such_probe_module"], "cannot import probe module `no_such_probe_module`: ModuleNotFoundError"),
    ({"probes/bad.py": "import math\nraise RuntimeError('no device')\n"}, None,
     "bad.py:2: cannot import probe module `probes.bad`: RuntimeError: no device"),
    ({"probes/bad.py": "def broken(:\n"}, None, "bad.py:1: cannot import probe module `probes.bad`: SyntaxError"),
], ids=["missing-path", "missing-module", "raises", "syntax"])
def test_a_broken_probe_source_is_one_line(tmp_path: Path, isolated: None, files: dict[str, str],
                                           sources: list[str] | None, expected: str) -> None:
    _write(tmp_path, files)
    with pytest.raises(ProbeLoadError) as caught:
        load_probe_modules(str(tmp_path), sources)
    assert expected in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(("text", "expected"), [
    ("[tool.claimcheck]\nprobes = 'probes'\n", "probes must be a list of module names or paths"),
    ("[tool.claimcheck\n", "not valid TOML"),
    ("[tool]\nclaimcheck = 3\n", "[tool.claimcheck] must be a table"),
])
def test_malformed_tool_table_is_one_line(tmp_path: Path, text: str, expected: str) -> None:
    (tmp_path / "pyproject.toml").write_text(text)
    with pytest.raises(ProjectConfigError, match="pyproject.toml: ") as caught:
        probe_sources(tmp_path)
    assert expected in str(caught.value)


def test_tool_table_is_read_whole(tmp_path: Path) -> None:
    assert read_tool_table(tmp_path) == {} and probe_sources(tmp_path) is None
    (tmp_path / "pyproject.toml").write_text('[tool.claimcheck]\nprobes = ["a"]\n[tool.claimcheck.models]\nm = "d"\n')
    assert read_tool_table(tmp_path) == {"probes": ["a"], "models": {"m": "d"}}


def test_the_repository_loads_its_probes_once() -> None:
    """Installed editable, the shipped package and ``<repo>/probes`` are the same files: one copy, one name."""
    imported = load_probe_modules(str(REPO))
    shipped = {p.name for p in probe_module.registered_probes().values() if _under(p.file, REPO / "probes")}
    assert {"qmv", "weight_bytes", "implied_bandwidth"} <= shipped
    assert "probes.decode.bandwidth" in imported and not [name for name in imported if name.startswith("claimcheck_probes")]


def _under(file: str, folder: Path) -> bool:
    return bool(file) and Path(file).is_relative_to(folder.resolve())
