"""Models that are already on disk: an mlx-lm model directory, or a repo in the local Hugging Face cache.

Nothing here touches the network: Hugging Face ids are looked up in the cache folder with
``huggingface_hub.try_to_load_from_cache`` (and loaded with ``HF_HUB_OFFLINE=1``), so a repo that was
never downloaded is simply "not installed".
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import time
from pathlib import Path
from typing import Any, Iterator

from claimcheck.errors import NotApplicable
from claimcheck.models._spec import LoadedModel, ModelSpec

_HF_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "tokenizer_config.json")


def looks_like_hf_id(model_id: str) -> bool:
    return bool(_HF_ID.match(model_id))


@contextlib.contextmanager
def _offline() -> Iterator[None]:
    previous = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = previous


def stored_variant(config: dict[str, Any], directory: Path | None = None) -> str:
    """Name what a directory stores: ``4bit``/``8bit``/... when quantized, else its float dtype."""
    quantization = config.get("quantization") or config.get("quantization_config") or {}
    if isinstance(quantization, dict) and quantization.get("bits"):
        return f"{quantization['bits']}bit"
    dtype = str(config.get("torch_dtype") or config.get("dtype") or "")
    names = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}
    if dtype in names:
        return names[dtype]
    if directory is not None:
        from claimcheck.models._files import weights_files

        for file in weights_files(directory)[:1]:
            return _dtype_from_header(file)
    return "unknown"


def _dtype_from_header(path: Path) -> str:
    """The most common float dtype in a safetensors header (header only, no tensor data)."""
    with open(path, "rb") as handle:
        size = int.from_bytes(handle.read(8), "little")
        header = json.loads(handle.read(size))
    counts: dict[str, int] = {}
    for name, entry in header.items():
        if name != "__metadata__" and isinstance(entry, dict):
            counts[entry["dtype"]] = counts.get(entry["dtype"], 0) + 1
    names = {"F32": "fp32", "F16": "fp16", "BF16": "bf16"}
    floats = {names[dtype]: count for dtype, count in counts.items() if dtype in names}
    return max(floats, key=floats.__getitem__) if floats else "unknown"


def _read_config(directory: Path) -> dict[str, Any]:
    try:
        return json.loads((directory / "config.json").read_text())
    except (OSError, ValueError) as error:
        raise NotApplicable(f"model {directory} not installed: no readable config.json ({type(error).__name__})") from None


def _check_directory(directory: Path, model_id: str) -> dict[str, Any]:
    if not directory.is_dir():
        raise NotApplicable(f"model {model_id} not installed: {directory} is not a directory")
    config = _read_config(directory)
    if not list(directory.glob("model*.safetensors")):
        raise NotApplicable(f"model {model_id} not installed: no model*.safetensors in {directory}")
    return config


def _reads_text(directory: Path) -> bool:
    from claimcheck.models._files import read_manifest

    manifest = read_manifest(directory) or {}
    if manifest.get("kind") == "synthetic":
        return False
    return any((directory / name).exists() for name in _TOKENIZER_FILES)


def spec_for(model_id: str, directory: Path, source: str, *, key: str = "<alias>") -> ModelSpec:
    """Spec for an mlx-lm directory loaded under ``model_id`` (a path, a repo id, or an alias's name).

    Args:
        source: one line on where the directory came from, for listings and records.
        key: what matched, as a registration key would (``<directory>``, ``<huggingface-cache>``, ``<alias>``).
    """
    config = _check_directory(directory, model_id)
    variant = stored_variant(config, directory)

    def loader(requested_id: str, requested: str | None) -> LoadedModel:
        return load_directory(directory, model_id=requested_id, variant=requested)

    return ModelSpec(
        model_id=model_id,
        key=key,
        reads_text=_reads_text(directory),
        variants=(),  # as stored; asking for another variant is NotApplicable in the loader
        default_variant=variant,
        source=source,
        loader=loader,
    )


def directory_spec(model_id: str) -> ModelSpec:
    """Spec for a local mlx-lm model directory named by path."""
    directory = Path(model_id).expanduser().resolve()
    return spec_for(model_id, directory, f"directory {directory}", key="<directory>")


def hub_cache() -> str | None:
    """The Hugging Face cache folder as the environment says now (the library reads it only at import)."""
    if folder := os.environ.get("HF_HUB_CACHE"):
        return folder
    if home := os.environ.get("HF_HOME"):
        return os.path.join(home, "hub")
    return None  # the library's default


def huggingface_hub_installed() -> bool:
    return importlib.util.find_spec("huggingface_hub") is not None


def hf_cache_path(repo_id: str, revision: str | None = None) -> Path | None:
    """The local snapshot of ``repo_id`` if its ``config.json`` is in the Hugging Face cache, else None.

    Read with ``huggingface_hub.try_to_load_from_cache``, which only looks at the cache folder: nothing is
    ever downloaded, and without huggingface_hub no repo counts as cached.
    """
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    with _offline():
        try:
            found = try_to_load_from_cache(repo_id, "config.json", cache_dir=hub_cache(), revision=revision)
        except Exception:  # an invalid repo id, an unreadable cache folder
            return None
    return Path(found).parent if isinstance(found, str) else None


def hf_cache_spec(repo_id: str) -> ModelSpec:
    directory = hf_cache_path(repo_id)
    if directory is None:
        raise NotApplicable(f"model {repo_id} not installed: not in the local Hugging Face cache (nothing is downloaded)")
    return spec_for(repo_id, directory, f"huggingface cache {directory}", key="<huggingface-cache>")


def load_directory(directory: Path, *, model_id: str | None = None, variant: str | None = None) -> LoadedModel:
    """Load an mlx-lm directory; without tokenizer files, the model alone (``tokenizer=None``)."""
    from claimcheck.models._files import read_manifest, weights_hash

    model_id = model_id or str(directory)
    config_on_disk = _check_directory(directory, model_id)
    stored = stored_variant(config_on_disk, directory)
    if variant is not None and variant != stored:
        raise NotApplicable(f"model {model_id} stores variant {stored}; variant {variant} is not available from a directory")
    started = time.perf_counter()
    with _offline():
        if _reads_text(directory) or any((directory / name).exists() for name in _TOKENIZER_FILES):
            from mlx_lm import load as mlx_lm_load

            # mlx_lm annotates load() as one of two tuple lengths; return_config=True is the 3-tuple.
            loaded: tuple[Any, ...] = mlx_lm_load(str(directory), return_config=True)
            model, tokenizer, config = loaded
        else:
            from mlx_lm.utils import load_model

            model, config = load_model(directory)
            tokenizer = None
    load_seconds = time.perf_counter() - started
    manifest = read_manifest(directory) or {}
    digest = manifest.get("weights_sha256") or weights_hash(directory)
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        model_id=model_id,
        variant=stored,
        path=directory,
        weights_hash=digest,
        config=config,
        reads_text=_reads_text(directory),
        timings={"load_seconds": round(load_seconds, 3)},
    )
