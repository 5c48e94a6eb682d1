"""The conversion recipe both GGUF models share: convert once, reuse, redo a damaged directory; one name table."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from claimcheck.models import gemma3, gguf, gguf_recipe, smollm2
from claimcheck.models.gguf_recipe import GgufConversion

SHA = "ab" * 32


class _FakeConverter:
    """Writes a tiny directory the way the real converters do: files first, the manifest last."""

    def __init__(self, converter_version: int) -> None:
        self.calls: list[tuple[Path, str, str]] = []
        self.converter_version = converter_version

    def __call__(self, source: Path, destination: Path, /, *, variant: str, source_sha256: str) -> dict:
        self.calls.append((source, variant, source_sha256))
        (destination / "model.safetensors").write_bytes(b"weights")
        manifest = {"kind": "gguf-conversion", "converter_version": self.converter_version, "variant": variant,
                    "source_sha256": source_sha256, "weights_sha256": "0" * 64}
        (destination / "claimcheck.json").write_text(json.dumps(manifest))
        return manifest


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLAIMCHECK_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _recipe(tmp_path: Path, converter: _FakeConverter) -> GgufConversion:
    source = tmp_path / "model.gguf"
    source.write_bytes(b"GGUF")
    return GgufConversion("toy-model", ("4bit", "fp32"), converter.converter_version, lambda: SHA,
                          lambda: source, converter)


def test_converts_once_then_reuses_the_finished_directory(cache, tmp_path):
    converter = _FakeConverter(3)
    recipe = _recipe(tmp_path, converter)
    directory, manifest, converted_now = recipe.ensure("4bit")
    assert converted_now and directory == cache / "models" / f"toy-model-4bit-{SHA[:12]}-c3"
    assert manifest["variant"] == "4bit" and manifest["source_sha256"] == SHA
    again = recipe.ensure("4bit")
    assert again == (directory, manifest, False)
    assert len(converter.calls) == 1
    # Only finished directories in the models folder: no temporary sibling, no lock file.
    assert [p.name for p in (cache / "models").iterdir()] == [directory.name]


def test_a_directory_without_its_manifest_is_removed_and_converted_again(cache, tmp_path):
    converter = _FakeConverter(1)
    recipe = _recipe(tmp_path, converter)
    damaged = recipe.directory("fp32")
    damaged.mkdir(parents=True)
    (damaged / "model.safetensors").write_bytes(b"half a file")
    (damaged / "leftover.tmp").write_bytes(b"")
    directory, manifest, converted_now = recipe.ensure("fp32")
    assert converted_now and directory == damaged
    assert sorted(p.name for p in directory.iterdir()) == ["claimcheck.json", "model.safetensors"]
    assert (directory / "model.safetensors").read_bytes() == b"weights"
    assert len(converter.calls) == 1


def test_a_manifest_of_another_converter_version_counts_as_unfinished(cache, tmp_path):
    converter = _FakeConverter(1)
    recipe = _recipe(tmp_path, converter)
    directory = recipe.directory("4bit")
    directory.mkdir(parents=True)
    (directory / "claimcheck.json").write_text(json.dumps({"converter_version": 0}))
    assert recipe.ensure("4bit")[2] and len(converter.calls) == 1
    assert json.loads((directory / "claimcheck.json").read_text())["converter_version"] == 1


def test_a_failed_conversion_leaves_nothing_behind(cache, tmp_path):
    def broken(source: Path, destination: Path, /, *, variant: str, source_sha256: str) -> dict:
        (destination / "model.safetensors").write_bytes(b"partial")
        raise RuntimeError("disk full")

    recipe = GgufConversion("toy-model", ("4bit",), 1, lambda: SHA, lambda: tmp_path / "x.gguf", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        recipe.ensure("4bit")
    assert list((cache / "models").iterdir()) == []


def test_an_unknown_variant_names_the_choices(cache, tmp_path):
    recipe = _recipe(tmp_path, _FakeConverter(1))
    with pytest.raises(ValueError, match="model `toy-model` has no variant `bf16`; expected one of 4bit, fp32"):
        recipe.ensure("bf16")


@pytest.mark.parametrize("module", [smollm2, gemma3], ids=["smollm2", "gemma3"])
def test_both_models_redo_a_damaged_directory_through_their_own_entry_point(cache, tmp_path, monkeypatch, module):
    """Each model's ``ensure_converted`` goes through the shared recipe, with its own id, version and hash."""
    converter = _FakeConverter(module.CONVERSION.converter_version)
    source = tmp_path / "model.gguf"
    source.write_bytes(b"GGUF")
    monkeypatch.setattr(module, "CONVERSION", dataclasses.replace(
        module.CONVERSION, source=lambda: source, source_sha256=lambda: SHA, convert=converter))
    damaged = module.converted_dir("4bit")
    assert damaged.name == f"{module.MODEL_ID}-4bit-{SHA[:12]}-c{module.CONVERSION.converter_version}"
    damaged.mkdir(parents=True)
    (damaged / "config.json").write_text("{}")  # a crash after the first file, before the manifest
    directory, _, converted_now = module.ensure_converted("4bit")
    assert converted_now and directory == damaged and not (directory / "config.json").exists()
    assert converter.calls == [(source, "4bit", SHA)]


def test_gemma3_finds_a_finished_conversion_without_assembling_its_gguf(cache, monkeypatch):
    """Its directory is named by the published checksum, so reuse needs neither the chunks nor a hash."""
    def no_source() -> Path:
        raise AssertionError("the GGUF was assembled for a finished conversion")

    monkeypatch.setattr(gemma3, "CONVERSION", dataclasses.replace(gemma3.CONVERSION, source=no_source))
    finished = gemma3.converted_dir("fp32")
    finished.mkdir(parents=True)
    (finished / "claimcheck.json").write_text(json.dumps({"converter_version": gemma3.CONVERTER_VERSION}))
    assert gemma3.ensure_converted("fp32") == (finished, {"converter_version": gemma3.CONVERTER_VERSION}, False)


def test_both_architectures_extend_one_tensor_name_table():
    shared = gguf_recipe.LAYER_NAMES
    assert gguf.LLAMA_LAYER_NAMES.items() >= shared.items() and gemma3.LAYER_NAMES.items() >= shared.items()
    # The one kind whose meaning differs: llama's norm before the MLP vs Gemma's pre-feed-forward norm.
    assert gguf.mlx_lm_name("blk.2.ffn_norm.weight") == "model.layers.2.post_attention_layernorm.weight"
    assert gemma3.mlx_lm_name("blk.2.ffn_norm.weight") == "model.layers.2.pre_feedforward_layernorm.weight"
    for name in ("blk.7.attn_q.weight", "blk.0.ffn_down.weight", "token_embd.weight", "output_norm.weight"):
        assert gguf.mlx_lm_name(name) == gemma3.mlx_lm_name(name)
    with pytest.raises(KeyError):
        gguf.mlx_lm_name("blk.0.post_ffw_norm.weight")  # a Gemma-only tensor is not a llama one
