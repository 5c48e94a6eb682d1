"""The files an item's content key reads for its probe: the module, what it imports, the data it names."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from claimcheck.engine import probe_code
from claimcheck.engine.probe_code import measurement_digest, measurement_files

FILES = {
    "userprobes/__init__.py": "",
    "userprobes/measure.py": "from .helper import schedule\nfrom userprobes import table\nimport json\n\ndef probe(): return schedule()\n",
    "userprobes/helper.py": "from . import deeper\nPROMPTS = 'prompts.yaml'\ndef schedule(): return 1\n",
    "userprobes/deeper.py": "X = 1\n",
    "userprobes/table.py": "from ..elsewhere import nothing  # beyond the top package: ignored\n",
    "userprobes/unrelated.py": "Y = 2\n",
    "userprobes/data/prompts.yaml": "a: 1\n",
    "userprobes/data/other.yaml": "b: 2\n",
}


@pytest.fixture()
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "userprobes", raising=False)
    probe_code.forget()
    yield tmp_path
    probe_code.forget()


def _labels(module: str) -> set[str]:
    return {label for label, _ in measurement_files(module) if not label.startswith("claimcheck")}


def test_the_module_its_imports_transitively_and_the_data_they_name_count(package: Path) -> None:
    assert _labels("userprobes.measure") == {"userprobes", "userprobes.measure", "userprobes.helper", "userprobes.deeper",
                                             "userprobes.table", "userprobes:data/prompts.yaml"}


def test_a_module_in_a_family_subpackage_counts_its_packages_and_their_data(package: Path) -> None:
    (package / "userprobes" / "family").mkdir()
    (package / "userprobes" / "family" / "__init__.py").write_text('"""A family."""\n')
    (package / "userprobes" / "family" / "grouped.py").write_text("PROMPTS = 'prompts.yaml'\n")
    probe_code.forget()
    assert _labels("userprobes.family.grouped") == {"userprobes", "userprobes.family", "userprobes.family.grouped",
                                                    "userprobes:data/prompts.yaml"}


@pytest.mark.parametrize("edited, changes", [
    ("userprobes/helper.py", True), ("userprobes/deeper.py", True), ("userprobes/data/prompts.yaml", True),
    ("userprobes/unrelated.py", False), ("userprobes/data/other.yaml", False),
])
def test_an_edit_changes_the_digest_only_where_the_measurement_reads(package: Path, edited: str, changes: bool) -> None:
    before = measurement_digest("userprobes.measure")
    path = package / edited
    path.write_text(path.read_text() + "\n# edited\n")
    probe_code.forget()
    assert (measurement_digest("userprobes.measure") != before) is changes


def test_the_same_tree_in_another_folder_hashes_alike(package: Path, tmp_path_factory: pytest.TempPathFactory,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    here = measurement_digest("userprobes.measure")
    elsewhere = tmp_path_factory.mktemp("checkout")
    for name, text in FILES.items():
        (elsewhere / name).parent.mkdir(parents=True, exist_ok=True)
        (elsewhere / name).write_text(text)
    monkeypatch.syspath_prepend(str(elsewhere))
    probe_code.forget()
    assert measurement_files("userprobes.measure")[0][1].is_relative_to(elsewhere)
    assert measurement_digest("userprobes.measure") == here


def test_this_repositorys_curve_and_decode_probes_read_their_helpers_and_prompts() -> None:
    """The gap this closes: an edited prompt set or decode schedule re-measures the items that use it."""
    from claimcheck.probing.registry import load_probe_modules

    load_probe_modules(str(Path(__file__).resolve().parents[2]))
    probe_code.forget()
    assert {"probes.curves.curve_prompts", "probes:data/curve-prompts.yaml", "claimcheck.probing.sampling.generate"} <= {
        label for label, _ in measurement_files("probes.curves.fork_map")}
    assert "probes.decode.decode_schedules" in {label for label, _ in measurement_files("probes.decode.decode_loop")}


def test_an_unknown_module_has_no_files() -> None:
    assert measurement_files("no_such_package_anywhere.module") == ()
    assert measurement_digest("no_such_package_anywhere.module") == ""


def test_the_item_key_reads_the_probes_measurement_files(package: Path) -> None:
    from claimcheck.engine.item_key import probe_source
    from claimcheck.probing.registry import Output, RegisteredProbe

    probe = RegisteredProbe("user", lambda ctx: {}, {"x": Output("")}, module="userprobes.measure",
                            file=str(package / "userprobes/measure.py"))
    before = probe_source(probe)
    assert before == measurement_digest("userprobes.measure")
    (package / "userprobes/data/prompts.yaml").write_text("a: 2\n")
    probe_code.forget()
    assert probe_source(probe) != before


def test_a_name_imported_from_the_facade_counts_as_the_module_it_comes_from(package: Path) -> None:
    # A probe written against claimcheck.api depends on the code behind the names it uses, as one importing
    # those modules directly would (a facade that only re-exports would otherwise end the walk).
    (package / "userprobes" / "facade_user.py").write_text(
        "from claimcheck.api import Timer, probe\nfrom claimcheck.api.sampling import content_recall\n")
    probe_code.forget()
    labels = {label for label, _ in measurement_files("userprobes.facade_user")}
    assert {"claimcheck.harness.timing", "claimcheck.probing.registry", "claimcheck.probing.sampling.runs"} <= labels
    assert "claimcheck.models" not in labels and "claimcheck.api" not in labels  # not what the facade gathers
