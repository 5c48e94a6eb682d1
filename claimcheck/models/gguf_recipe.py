"""What the two GGUF converters share: llama.cpp's tensor names, and converting once into the model cache.

Both embedded models (SmolLM2 from a llama GGUF, Gemma 3 from a gemma3 GGUF) become standard mlx-lm
directories under ``<cache root>/models/<model id>-<variant>-<GGUF sha256 prefix>-c<converter version>``.
:class:`GgufConversion` is that recipe, written once so both get the same guarantees:

- a finished directory is recognised by its manifest, which the converter writes last;
- a directory without one (a crash, a full disk, a manual edit) is damaged: it is removed and converted
  again instead of being handed to ``mlx_lm.load``;
- the conversion fills a temporary sibling that is renamed into place, under a per-directory lock, so
  parallel workers convert once and never see half a directory.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

from claimcheck.errors import ClaimcheckError

#: llama.cpp per-layer tensor kinds -> mlx-lm module names, common to the llama and gemma3 layouts.
LAYER_NAMES: dict[str, str] = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
    "attn_norm": "input_layernorm",
}
#: llama.cpp model-level tensors -> mlx-lm names (the same in every architecture here).
GLOBAL_NAMES: dict[str, str] = {
    "token_embd": "model.embed_tokens",
    "output_norm": "model.norm",
    "output": "lm_head",
}
_BLOCK = re.compile(r"^blk\.(\d+)\.([a-z_]+)\.([a-z_]+)$")
_GLOBAL = re.compile(r"^([a-z_]+)\.([a-z_]+)$")


def mlx_lm_name(gguf_name: str, layer_names: dict[str, str]) -> str:
    """``blk.3.attn_q.scales`` -> ``model.layers.3.self_attn.q_proj.scales`` under ``layer_names``.

    Raises:
        KeyError: a tensor kind the table does not name (a layout this converter does not know).
    """
    if match := _BLOCK.match(gguf_name):
        layer, kind, part = match.groups()
        return f"model.layers.{int(layer)}.{layer_names[kind]}.{part}"
    if match := _GLOBAL.match(gguf_name):
        module, part = match.groups()
        return f"{GLOBAL_NAMES[module]}.{part}"
    raise KeyError(gguf_name)


class Converter(Protocol):
    """Writes the mlx-lm directory for ``variant`` into ``destination`` (which exists), manifest last."""

    def __call__(self, source: Path, destination: Path, /, *, variant: str, source_sha256: str) -> dict[str, Any]: ...


class DamagedConversion(ClaimcheckError):
    """A converted directory is still unfinished after converting it (something else writes there)."""


@dataclass(frozen=True)
class GgufConversion:
    """How one model's GGUF becomes a cached mlx-lm directory per variant.

    Attributes:
        model_id: the registered id, the first part of the directory name.
        variants: the variants the converter writes.
        converter_version: bumped when the directory's content changes, so old conversions are not reused.
        source_sha256: ``() -> sha256`` of the GGUF, cheap (a known constant, or a remembered hash).
        source: ``() -> path`` of the GGUF, called only to convert (it may assemble the file first).
        convert: the converter itself.
    """

    model_id: str
    variants: tuple[str, ...]
    converter_version: int
    source_sha256: Callable[[], str]
    source: Callable[[], Path]
    convert: Converter

    def check_variant(self, variant: str) -> None:
        if variant not in self.variants:
            raise ValueError(f"model `{self.model_id}` has no variant `{variant}`; expected one of "
                             f"{', '.join(self.variants)}")

    def directory(self, variant: str) -> Path:
        """Where the converted directory for ``variant`` lives (it may not exist yet)."""
        from claimcheck.models._files import models_dir

        return models_dir() / f"{self.model_id}-{variant}-{self.source_sha256()[:12]}-c{self.converter_version}"

    def finished(self, directory: Path) -> dict[str, Any] | None:
        """The manifest of a finished conversion by this converter version, else None."""
        from claimcheck.models._files import read_manifest

        manifest = read_manifest(directory)
        if manifest is None or manifest.get("converter_version") != self.converter_version:
            return None
        return manifest

    def ensure(self, variant: str) -> tuple[Path, dict[str, Any], bool]:
        """Convert for ``variant`` unless a finished conversion exists; remove a damaged one first.

        Returns:
            ``(directory, manifest, converted_now)``.
        """
        from claimcheck.engine import exclusive as locking
        from claimcheck.engine.cache import cache_root
        from claimcheck.models._files import atomic_directory

        self.check_variant(variant)
        final = self.directory(variant)
        manifest = self.finished(final)
        if manifest is not None:
            return final, manifest, False
        # The lock lives outside the models folder, so that folder holds only finished directories.
        with locking.hold(cache_root() / "locks" / f"{final.name}.lock", mode="exclusive"):
            manifest = self.finished(final)
            if manifest is not None:  # another process converted it while this one waited
                return final, manifest, False
            if final.exists():
                remove_damaged(final)
            with atomic_directory(final) as temporary:
                self.convert(self.source(), temporary, variant=variant, source_sha256=self.source_sha256())
        manifest = self.finished(final)
        if manifest is None:
            raise DamagedConversion(f"{final}: still has no manifest after converting; remove the folder and retry")
        return final, manifest, True


def remove_damaged(directory: Path) -> None:
    """Delete a directory left without a manifest (only ever called under the directory's lock)."""
    if directory.is_dir() and not directory.is_symlink():
        shutil.rmtree(directory)
    else:
        directory.unlink()
