"""Model aliases: ``[tool.claimcheck.models]`` maps a claim's model name to a directory or a cached repo."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from claimcheck.errors import NotApplicable
from claimcheck.models import aliases, clear_loaded, load, resolve
from claimcheck.project_config import ProjectConfigError

from ._hub import hub_snapshot

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def no_aliases():
    aliases.clear()
    clear_loaded()
    yield
    aliases.clear()
    clear_loaded()


def _project(tmp_path: Path, table: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "x"\n\n[tool.claimcheck.models]\n{table}')
    return tmp_path


@pytest.fixture
def tiny_dir(model_cache: Path) -> Path:
    """A real mlx-lm directory (random weights, no tokenizer): what an alias points at."""
    from claimcheck.models import synthetic

    return synthetic.saved_dir("synthetic:llama:tiny", "fp32")


def test_each_entry_kind_is_read_with_its_line(tmp_path):
    (tmp_path / "models" / "cpm5").mkdir(parents=True)
    project = _project(tmp_path, 'cpm5-1b = "models/cpm5"\n'
                                 'e4b = "mlx-community/gemma-4-e4b-it-OptiQ-4bit"\n'
                                 '"gemma-4-12b" = { path = "weights/gemma-12b" }\n'
                                 'tiny = { repo = "someorg/tiny-model" }\n'
                                 'home = "~/models/x"\n')
    found = aliases.read_aliases(project)
    assert {name: (alias.kind, alias.target) for name, alias in found.items()} == {
        "cpm5-1b": ("directory", "models/cpm5"),  # looks like org/name, but the folder exists
        "e4b": ("huggingface", "mlx-community/gemma-4-e4b-it-OptiQ-4bit"),
        "gemma-4-12b": ("directory", "weights/gemma-12b"),  # says so, though it does not exist yet
        "tiny": ("huggingface", "someorg/tiny-model"),
        "home": ("directory", "~/models/x"),
    }
    assert found["cpm5-1b"].path == (tmp_path / "models" / "cpm5").resolve()
    assert found["home"].path == (Path.home() / "models" / "x").resolve()
    assert found["e4b"].path is None
    pyproject = tmp_path / "pyproject.toml"
    assert [found[name].declared_at for name in ("cpm5-1b", "gemma-4-12b", "home")] == [
        f"{pyproject}:5", f"{pyproject}:7", f"{pyproject}:9"]


@pytest.mark.parametrize("entry, expected", [
    ("bad = 3", "bad: expected a directory or Hugging Face repo id (a string)"),
    ('bad = { path = 3 }', "bad: `path` must be a string"),
    ('bad = { url = "x/y" }', "bad: expected a directory or Hugging Face repo id"),
    ('bad = "not a repo id"', "bad: `not a repo id` is neither an existing directory nor a Hugging Face repo id"),
    ('bad = ""', "bad: empty target"),
])
def test_a_malformed_entry_is_one_line_naming_file_line_and_name(tmp_path, entry, expected):
    project = _project(tmp_path, f'fine = "org/name"\n{entry}\n')
    with pytest.raises(ProjectConfigError) as caught:
        aliases.read_aliases(project)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'pyproject.toml'}:6: [tool.claimcheck.models] ") and expected in message
    assert "\n" not in message


def test_models_must_be_a_table(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.claimcheck]\nmodels = "x"\n')
    with pytest.raises(ProjectConfigError, match=r"\[tool.claimcheck.models\] must be a table"):
        aliases.read_aliases(tmp_path)


def test_no_pyproject_or_no_table_means_no_aliases(tmp_path):
    assert aliases.read_aliases(tmp_path) == {}
    (tmp_path / "pyproject.toml").write_text('[tool.claimcheck]\nprobes = ["probes"]\n')
    assert aliases.use_project(tmp_path) == {} and aliases.active() == {}


def test_an_alias_to_a_directory_resolves_and_loads_under_the_claims_name(tmp_path, tiny_dir):
    with pytest.raises(NotApplicable, match="not a registered id"):
        resolve("cpm5-1b")
    aliases.use_project(_project(tmp_path, f'cpm5-1b = "{tiny_dir}"\n'))
    spec = resolve("cpm5-1b")
    assert spec.model_id == "cpm5-1b" and spec.key == "<alias>"
    assert spec.source == f"alias ({tmp_path / 'pyproject.toml'}:5) -> directory {tiny_dir}"
    loaded = load("cpm5-1b")
    assert loaded.model_id == "cpm5-1b" and loaded.path == tiny_dir and loaded.variant == "fp32"


def test_an_alias_to_a_missing_directory_says_where_it_looked(tmp_path):
    aliases.use_project(_project(tmp_path, 'cpm5-1b = "./models/cpm5"\n'))
    with pytest.raises(NotApplicable) as caught:
        resolve("cpm5-1b")
    assert str(caught.value) == (f"model cpm5-1b not installed: {(tmp_path / 'models' / 'cpm5').resolve()} "
                                 "is not a directory")


def test_an_alias_to_a_cached_repo_resolves_without_a_download(tmp_path, monkeypatch, tiny_dir):
    snapshot = hub_snapshot(tmp_path, monkeypatch, tiny_dir, "someorg/tiny-model")
    aliases.use_project(_project(tmp_path, 'e4b = { repo = "someorg/tiny-model" }\n'))
    spec = resolve("e4b")
    assert spec.model_id == "e4b" and spec.source.endswith(f"Hugging Face repo someorg/tiny-model, cached at {snapshot}")
    assert load("e4b").path == snapshot


def test_an_alias_to_a_repo_not_in_the_cache_names_the_cache_and_a_close_cached_repo(tmp_path, monkeypatch, tiny_dir):
    hub_snapshot(tmp_path, monkeypatch, tiny_dir, "someorg/tiny-model")
    aliases.use_project(_project(tmp_path, 'e4b = { repo = "someorg/tiny-modle" }\n'))
    with pytest.raises(NotApplicable) as caught:
        resolve("e4b")
    message = str(caught.value)
    assert f"not in the local Hugging Face cache {tmp_path / 'hub'}" in message
    assert "did you mean `someorg/tiny-model`?" in message and "nothing is downloaded" in message


def test_without_huggingface_hub_no_repo_counts_as_cached(tmp_path, monkeypatch, tiny_dir):
    hub_snapshot(tmp_path, monkeypatch, tiny_dir, "someorg/tiny-model")
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # import fails as if not installed
    aliases.use_project(_project(tmp_path, 'e4b = { repo = "someorg/tiny-model" }\n'))
    with pytest.raises(NotApplicable, match="huggingface_hub is not installed"):
        resolve("e4b")


def test_an_alias_may_not_reuse_a_registered_id(tmp_path, tiny_dir):
    aliases.use_project(_project(tmp_path, f'smollm2-135m-instruct = "{tiny_dir}"\n'))
    with pytest.raises(ProjectConfigError, match=r"pyproject.toml:5: \[tool.claimcheck.models\] smollm2-135m-instruct: "
                                                 r"`smollm2-135m-instruct` is a registered model id"):
        resolve("smollm2-135m-instruct")


def test_an_unknown_name_suggests_a_close_alias(tmp_path):
    aliases.use_project(_project(tmp_path, 'gemma-4-e4b = "org/name"\n'))
    with pytest.raises(NotApplicable, match="did you mean `gemma-4-e4b`") as caught:
        resolve("gemma-4-e4")
    assert "aliases: gemma-4-e4b" in str(caught.value)


def test_a_bad_table_keeps_the_previous_aliases(tmp_path):
    good = tmp_path / "good"
    good.mkdir()
    aliases.use_project(_project(good, 'e4b = "org/name"\n'))
    bad = tmp_path / "bad"
    bad.mkdir()
    with pytest.raises(ProjectConfigError):
        aliases.use_project(_project(bad, "e4b = 1\n"))
    assert set(aliases.active()) == {"e4b"}


def test_an_as_stated_claim_on_an_aliased_model_is_measured(tmp_path, tiny_dir):
    """Through the runner, as the plugin runs an item: not applicable without the alias, decided with it."""
    from claimcheck.claims.loader import load_claims_text
    from claimcheck.probing.registry import get_probe, load_probe_modules
    from claimcheck.engine.runner import RunOptions, run_claim_item
    from claimcheck.verdict import Verdict

    load_probe_modules(str(ROOT))
    (claim,) = load_claims_text(
        "id: cpm5-weights-streamed\n"
        "title: CPM5 streams its weights\n"
        "statement: Decoding one token of CPM5 streams more than a kilobyte of weights.\n"
        "source: {doc: notes.md, section: '1', figure: '> 1 kB'}\n"
        "scope: {kind: as-stated, backend: any, model: 'cpm5*'}\n"
        "probe: {name: weight_bytes, params: {model: cpm5-1b}}\n"
        "check: {rule: at_least, output: bytes_per_token, threshold: 1000}\n", "claims/weights.yaml")
    probe = get_probe("weight_bytes")

    def run() -> tuple[Verdict, str]:
        result = run_claim_item(claim, claim.id, dict(claim.probe.params), probe, options=RunOptions(), machine={})
        return result.verdict, result.reason

    verdict, reason = run()
    assert verdict is Verdict.NOT_APPLICABLE and "not a registered id" in reason
    aliases.use_project(_project(tmp_path, f'cpm5-1b = "{tiny_dir}"\n'))
    clear_loaded()
    verdict, reason = run()
    assert verdict is Verdict.HOLDS, reason
