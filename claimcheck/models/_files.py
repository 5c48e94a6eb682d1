"""File helpers for model directories: where they live, how they are hashed, how they are written."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

from claimcheck.engine.cache import cache_root, write_json_atomic
from claimcheck.models._spec import LoadedModel

MANIFEST = "claimcheck.json"


def models_dir() -> Path:
    """``<cache root>/models``: converted and saved model directories."""
    return cache_root() / "models"


def sha256_file(path: str | os.PathLike[str], *, chunk: int = 1 << 22) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _memo_file() -> Path:
    return models_dir() / "file-hashes.json"


def sha256_file_memo(path: str | os.PathLike[str]) -> str:
    """sha256 of a large file, remembered per (real path, size, mtime) so it is read once per change."""
    real = os.path.realpath(path)
    stat = os.stat(real)
    # Hugging Face cache blobs are named by the sha256 of their content already.
    name = os.path.basename(real)
    if len(name) == 64 and all(c in "0123456789abcdef" for c in name):
        return name
    key = f"{real}|{stat.st_size}|{stat.st_mtime_ns}"
    memo_path = _memo_file()
    try:
        memo = json.loads(memo_path.read_text())
    except (OSError, ValueError):
        memo = {}
    if isinstance(memo, dict) and isinstance(memo.get(key), str):
        return memo[key]
    digest = sha256_file(real)
    memo = memo if isinstance(memo, dict) else {}
    memo[key] = digest
    with contextlib.suppress(OSError):
        write_json_atomic(memo_path, memo)
    return digest


def weights_files(directory: Path) -> list[Path]:
    """The safetensors files mlx-lm loads from a model directory (``model*.safetensors``), sorted."""
    return sorted(directory.glob("model*.safetensors"))


def weights_hash(directory: Path) -> str:
    """sha256 of a model's safetensors: the file's own for one file, a hash of per-file hashes for shards."""
    files = weights_files(directory)
    if not files:
        raise FileNotFoundError(f"no model*.safetensors in {directory}")
    if len(files) == 1:
        return sha256_file_memo(files[0])
    combined = hashlib.sha256()
    for file in files:
        combined.update(f"{file.name}:{sha256_file_memo(file)}\n".encode())
    return combined.hexdigest()


def write_manifest(destination: Path, *, converter_version: int | str, source: str | Path, source_sha256: str | None,
                   variant: str, started: float, **facts: object) -> dict[str, Any]:
    """Write a conversion's manifest last, so a directory without one is known to be unfinished.

    Args:
        started: ``time.perf_counter()`` at the start of the conversion.
        facts: converter-specific entries (e.g. the model id).
    """
    import platform
    import time

    from claimcheck.models.arrays import mlx_version

    manifest = {
        "kind": "gguf-conversion",
        **facts,
        "converter_version": converter_version,
        "source": str(source),
        "source_sha256": source_sha256,
        "variant": variant,
        "weights_sha256": sha256_file(destination / "model.safetensors"),
        "convert_seconds": round(time.perf_counter() - started, 3),
        "mlx": mlx_version(),
        "platform": platform.platform(),
        "created": time.time(),
    }
    (destination / MANIFEST).write_text(json.dumps(manifest, indent=2))
    return manifest


def read_manifest(directory: Path) -> dict[str, Any] | None:
    try:
        manifest = json.loads((directory / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


@contextlib.contextmanager
def atomic_directory(final: Path) -> Iterator[Path]:
    """Yield a temporary sibling of ``final`` to fill; rename it into place when the block succeeds.

    If another process finished the same directory first, its copy is kept and ours discarded (both
    hold the same content). On error the temporary directory is removed.
    """
    final.parent.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(temporary, 0o777 & ~umask)  # mkdtemp makes it private; the result is an ordinary folder
    try:
        yield temporary
        try:
            os.rename(temporary, final)
        except OSError:
            if not final.is_dir():
                raise
            shutil.rmtree(temporary, ignore_errors=True)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise


def load_converted(model_id: str, variant: str, converted: tuple[Path, dict[str, Any], bool], **extra: object) -> LoadedModel:
    """``mlx_lm.load`` a directory made by one of the converters, with its manifest's facts.

    Args:
        converted: what the converter's ``ensure_converted`` returned: the
            directory, its manifest, and whether it was converted just now.
        extra: model facts to record beside the source hash (e.g. a licence).
    """
    import time

    from mlx_lm import load as mlx_lm_load

    directory, manifest, converted_now = converted
    started = time.perf_counter()
    # mlx_lm annotates load() as one of two tuple lengths; return_config=True is the 3-tuple.
    loaded: tuple[Any, ...] = mlx_lm_load(str(directory), return_config=True)
    model, tokenizer, config = loaded
    load_seconds = time.perf_counter() - started
    timings = {"load_seconds": round(load_seconds, 3)}
    if converted_now:
        timings["convert_seconds"] = float(manifest.get("convert_seconds", 0.0))
    return LoadedModel(
        model=model, tokenizer=tokenizer, model_id=model_id, variant=variant, path=directory,
        weights_hash=manifest["weights_sha256"], config=config, reads_text=True,
        extra={"source_sha256": manifest.get("source_sha256"), **extra}, timings=timings,
    )
