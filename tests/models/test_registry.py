"""Model ids: resolution without loading, registration, variants, refusals, local directories."""

from __future__ import annotations

import subprocess
import sys

import pytest

from claimcheck.errors import NotApplicable
from claimcheck.models import (
    LoadedModel,
    check_text_capable,
    clear_loaded,
    default_variant,
    load,
    register,
    registered_models,
    resolve,
)
from claimcheck.models import _registry

from ._hub import hub_snapshot


def _fake_loader(calls: list):
    def loader(model_id: str, variant: str | None) -> LoadedModel:
        calls.append((model_id, variant))
        return LoadedModel(model=object(), tokenizer=None, model_id=model_id, variant=variant or "", path=None,
                           weights_hash="0" * 64, config={}, reads_text=True)

    return loader


@pytest.fixture
def scratch_registry(monkeypatch):
    """Registrations made in a test disappear after it."""
    monkeypatch.setattr(_registry, "_REGISTRY", dict(_registry._REGISTRY))
    clear_loaded()
    yield
    clear_loaded()


def test_resolving_and_importing_the_registry_does_not_import_mlx():
    code = (
        "import sys\n"
        "from claimcheck.models import resolve\n"
        "spec = resolve('synthetic:llama:1b')\n"
        "assert not spec.reads_text\n"
        "try:\n    resolve('smollm2-135m-instruct')\nexcept Exception:\n    pass\n"
        "assert 'mlx.core' not in sys.modules, 'mlx imported'\n"
        "assert 'mlx_lm' not in sys.modules, 'mlx_lm imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr


def test_builtin_ids_are_registered():
    known = registered_models()
    assert "smollm2-135m-instruct" in known
    assert "synthetic:" in known


def test_missing_model_is_not_applicable_with_one_line():
    with pytest.raises(NotApplicable) as caught:
        resolve("gemma-4-e4b-it")
    message = str(caught.value)
    assert message.startswith("model gemma-4-e4b-it not installed: ")
    assert "\n" not in message


def test_hugging_face_id_absent_from_the_local_cache_is_not_applicable(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(NotApplicable, match=r"^model someone/not-downloaded-model not installed: not in the local Hugging Face cache"):
        load("someone/not-downloaded-model")


def test_missing_directory_is_not_applicable(tmp_path):
    with pytest.raises(NotApplicable, match="not installed"):
        load(str(tmp_path / "absent"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(NotApplicable, match="config.json"):
        load(str(tmp_path / "empty"))


def test_register_exact_id_and_prefix_longest_prefix_wins(scratch_registry):
    exact, short, long = [], [], []
    register("fake-model", _fake_loader(exact), variants=("a", "b"), default_variant="b")
    register("fake:", _fake_loader(short), variants=())
    register("fake:deep:", _fake_loader(long), variants=())
    assert load("fake-model").variant == "b"
    assert load("fake-model", variant="a").variant == "a"
    load("fake:x")
    load("fake:deep:y")
    assert exact == [("fake-model", "b"), ("fake-model", "a")]
    assert short == [("fake:x", None)]
    assert long == [("fake:deep:y", None)]
    assert resolve("fake:deep:z").key == "fake:deep:"


def test_unknown_variant_is_a_value_error_naming_the_choices(scratch_registry):
    register("fake-model", _fake_loader([]), variants=("4bit", "fp32"))
    with pytest.raises(ValueError, match=r"has no variant `int3`; expected one of 4bit, fp32"):
        load("fake-model", variant="int3")


def test_default_variant_is_fp32_on_cpu_and_4bit_on_gpus(scratch_registry):
    assert default_variant("cpu") == "fp32"
    assert default_variant("metal") == "4bit"
    assert default_variant("cuda") == "4bit"
    calls = []
    register("fake-model", _fake_loader(calls))  # standard variants, backend-dependent default
    from claimcheck.machine import fingerprint

    load("fake-model")
    assert calls == [("fake-model", default_variant(fingerprint()["backend"]))]


def test_loads_are_reused_unless_asked_not_to(scratch_registry):
    calls = []
    register("fake-model", _fake_loader(calls), variants=("a",))
    first = load("fake-model")
    assert load("fake-model") is first
    assert load("fake-model", reuse=False) is not first
    assert len(calls) == 2


def test_locate_failure_makes_resolve_not_applicable(scratch_registry):
    def locate(model_id):
        raise NotApplicable(f"model {model_id} not installed: weights file missing")

    register("fake-model", _fake_loader([]), locate=locate)
    with pytest.raises(NotApplicable, match="weights file missing"):
        resolve("fake-model")


def test_random_weight_models_are_refused_for_text_claims_before_building(scratch_registry):
    spec = resolve("synthetic:llama:1b")
    with pytest.raises(NotApplicable, match=r"^model synthetic:llama:1b has random weights; probe `chat` reads generated text$"):
        check_text_capable(spec, "chat")
    # A registered probe's own flag decides.
    from claimcheck.probing.registry import RegisteredProbe

    timing = RegisteredProbe(name="decode_arms", function=lambda ctx: {}, outputs={}, reads_text=False)
    texty = RegisteredProbe(name="route", function=lambda ctx: {}, outputs={}, reads_text=True)
    check_text_capable(spec, timing)
    with pytest.raises(NotApplicable, match="probe `route` reads generated text"):
        check_text_capable(spec, texty)
    check_text_capable(resolve("smollm2-135m-instruct"), texty)
    # needs_text refuses at resolution: a 4-GB build never starts.
    with pytest.raises(NotApplicable, match="random weights"):
        load("synthetic:llama:4b", variant="fp32", needs_text=True)


def test_known_modules_include_the_gemma3_module_name():
    # A model module that exists is imported on first resolution; one that does not is skipped.
    assert "claimcheck.models.gemma3" in _registry.KNOWN_MODULES


def test_hugging_face_id_in_the_local_cache_loads_offline(model_cache, tmp_path, monkeypatch):
    """A repo laid out as the Hugging Face cache does it: refs/main -> snapshots/<commit> -> blobs/<sha256>."""
    from claimcheck.models import synthetic
    from claimcheck.models._files import sha256_file

    source = synthetic.saved_dir("synthetic:llama:tiny", "4bit")
    snapshot = hub_snapshot(tmp_path, monkeypatch, source, "someorg/tiny-model")

    spec = resolve("someorg/tiny-model")
    assert spec.source == f"huggingface cache {snapshot}"
    loaded = load("someorg/tiny-model", reuse=False)
    assert loaded.variant == "4bit" and loaded.tokenizer is None and not loaded.reads_text
    # The blob's name is its sha256, so the weights hash needs no re-read.
    assert loaded.weights_hash == sha256_file(source / "model.safetensors")
