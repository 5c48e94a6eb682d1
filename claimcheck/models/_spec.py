"""What a model is, loaded or not: the types the registry, the loaders and the file helpers share.

They live apart from the registry so that the loaders (``local``, ``_files``) can build them without
importing the registry that imports them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable


@dataclass
class LoadedModel:
    """A model ready to run, with the facts a probe records about it.

    Attributes:
        model: the mlx-lm ``nn.Module``.
        tokenizer: mlx-lm ``TokenizerWrapper``; ``None`` for random-weight models.
        model_id: canonical id (``smollm2-135m-instruct``, ``synthetic:llama:1b``, a path, ...).
        variant: ``4bit``, ``fp32``, ``bf16``, ... (for a local directory: what it stores).
        path: the mlx-lm model directory it was loaded from (``None`` if built in memory).
        weights_hash: sha256 of the safetensors file(s); for in-memory random models, of the recipe.
        config: the mlx-lm config dict.
        reads_text: whether generated text means anything (False for random weights).
        extra: further facts for ``ctx.info`` (e.g. the GGUF a conversion came from).
        timings: how long preparing the model took (``convert_seconds``, ``load_seconds``, ...).
    """

    model: Any
    tokenizer: Any
    model_id: str
    variant: str
    path: Path | None
    weights_hash: str
    config: dict[str, Any]
    reads_text: bool
    extra: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    def info(self) -> dict[str, Any]:
        """The facts a probe puts into ``ctx.info`` about the model it measured."""
        return {
            "model": self.model_id,
            "variant": self.variant,
            "weights_hash": self.weights_hash,
            "model_path": str(self.path) if self.path else None,
            **self.extra,
        }


Loader = Callable[[str, str | None], LoadedModel]
Locator = Callable[[str], str]


@dataclass(frozen=True)
class ModelSpec:
    """What is known about a model id without loading it.

    Attributes:
        model_id: the id as resolved.
        key: the registration key that matched (the id itself or a prefix like ``synthetic:``).
        reads_text: False for random-weight models; text-reading probes refuse them.
        variants: the variants the loader accepts; empty means "only what is stored".
        default_variant: variant used when none is asked for; ``None`` -> :func:`default_variant`.
        source: one line on where the weights come from (a file, a directory, a recipe).
    """

    model_id: str
    key: str
    reads_text: bool
    variants: tuple[str, ...]
    default_variant: str | None
    source: str
    loader: Loader = field(repr=False, compare=False)

    def choose_variant(self, variant: str | None, backend: str | None = None) -> str | None:
        """The variant a load will use: the one asked for, checked, or this model's default."""
        if variant is None:
            if self.default_variant is not None:
                return self.default_variant
            if not self.variants:
                return None
            preferred = default_variant(backend)
            return preferred if preferred in self.variants else self.variants[0]
        if self.variants and variant not in self.variants:
            raise ValueError(f"model `{self.model_id}` has no variant `{variant}`; expected one of {', '.join(self.variants)}")
        return variant


def default_variant(backend: str | None = None) -> str:
    """``fp32`` on CPU (fp16/bf16 and 4-bit kernels are slow there), ``4bit`` on a GPU backend.

    ``backend`` is ``cpu``/``metal``/``cuda``; ``None`` asks MLX for its default device.
    """
    if backend is None:
        from claimcheck.machine import fingerprint

        backend = fingerprint()["backend"]
    return "fp32" if backend == "cpu" else "4bit"
