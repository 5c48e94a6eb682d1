"""Model registry: ids -> loaders, resolved without loading, loaded on demand.

An id is resolved in this order:

1. an exact registered id (``smollm2-135m-instruct``, ``gemma3-270m``, ...);
2. the longest registered prefix (keys that end with ``:``, e.g. ``synthetic:``);
3. a project alias (``[tool.claimcheck.models]``, see :mod:`claimcheck.models.aliases`): a name mapped to a
   directory or a cached repo; an alias may not reuse a registered id;
4. a local mlx-lm model directory (a path);
5. a Hugging Face repo id (``org/name``) that is already in the local Hugging Face cache.

Model modules register themselves on import. The modules named in :data:`KNOWN_MODULES` and those
exposed through the ``claimcheck.models`` entry-point group are imported the first time an id is
resolved, so a module that is absent is simply not there, and none of them may import MLX at top level.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from claimcheck.errors import NotApplicable
from claimcheck.project_config import ProjectConfigError
from claimcheck.models._spec import Loader, LoadedModel, Locator, ModelSpec, default_variant
from claimcheck.suggest import did_you_mean

#: Model modules imported lazily on first resolution (absent ones are skipped).
KNOWN_MODULES: tuple[str, ...] = (
    "claimcheck.models.smollm2",
    "claimcheck.models.synthetic",
    "claimcheck.models.gemma3",
)
ENTRY_POINT_GROUP = "claimcheck.models"

#: Variants a converted or generated model can be asked for.
STANDARD_VARIANTS: tuple[str, ...] = ("4bit", "fp32")


@dataclass(frozen=True)
class _Registration:
    key: str
    loader: Loader
    reads_text: bool
    variants: tuple[str, ...]
    default_variant: str | None
    locate: Locator | None
    description: str


_REGISTRY: dict[str, _Registration] = {}
_LOCK = threading.RLock()
_discovered = False
_import_failures: dict[str, str] = {}


def register(
    model_id_or_prefix: str,
    loader: Loader,
    *,
    reads_text: bool = True,
    variants: Sequence[str] = STANDARD_VARIANTS,
    default_variant: str | None = None,
    locate: Locator | None = None,
    description: str = "",
) -> None:
    """Make ``load(model_id)`` call ``loader(model_id, variant)``.

    Args:
        model_id_or_prefix: an exact id, or a prefix ending in ``:`` that claims every id starting with it.
        loader: ``(model_id, variant) -> LoadedModel``; ``variant`` is already checked against
            ``variants`` (``None`` only when ``variants`` is empty).
        reads_text: False for models whose generated text is meaningless (random weights).
        variants: accepted variant names; empty means "as stored".
        default_variant: fixed default; ``None`` picks :func:`default_variant` for the backend.
        locate: ``model_id -> source line``, cheap (no loading); raises ``NotApplicable`` when the
            model is not installed here. Without it the model counts as always available.
        description: shown in listings.
    """
    if not model_id_or_prefix:
        raise ValueError("model id must not be empty")
    with _LOCK:
        _REGISTRY[model_id_or_prefix] = _Registration(
            key=model_id_or_prefix,
            loader=loader,
            reads_text=reads_text,
            variants=tuple(variants),
            default_variant=default_variant,
            locate=locate,
            description=description,
        )


def _discover() -> None:
    """Import the known model modules and entry points once."""
    global _discovered
    with _LOCK:
        if _discovered:
            return
        _discovered = True
        names = list(KNOWN_MODULES)
        try:
            from importlib.metadata import entry_points

            names += [entry.value.split(":")[0] for entry in entry_points(group=ENTRY_POINT_GROUP)]
        except Exception as error:  # a broken distribution must not hide the built-in models
            _import_failures[ENTRY_POINT_GROUP] = f"{type(error).__name__}: {error}"
        for name in names:
            if importlib.util.find_spec(name) is None:
                continue
            try:
                importlib.import_module(name)
            except ImportError as error:
                _import_failures[name] = " ".join(f"{type(error).__name__}: {error}".split())  # one line


def registered_models() -> dict[str, str]:
    """Registered ids and prefixes with their descriptions (after discovery)."""
    _discover()
    return {key: registration.description for key, registration in sorted(_REGISTRY.items())}


def _match(model_id: str) -> _Registration | None:
    if model_id in _REGISTRY:
        return _REGISTRY[model_id]
    prefixes = [key for key in _REGISTRY if key.endswith(":") and model_id.startswith(key)]
    return _REGISTRY[max(prefixes, key=len)] if prefixes else None


def _spec_from(registration: _Registration, model_id: str) -> ModelSpec:
    source = registration.locate(model_id) if registration.locate else (registration.description or registration.key)
    return ModelSpec(
        model_id=model_id,
        key=registration.key,
        reads_text=registration.reads_text,
        variants=registration.variants,
        default_variant=registration.default_variant,
        source=source,
        loader=registration.loader,
    )


def _looks_like_path(model_id: str) -> bool:
    if model_id.startswith((".", "/", "~")):
        return True
    return os.sep in model_id and Path(model_id).expanduser().exists()


def resolve(model_id: str) -> ModelSpec:
    """Find how ``model_id`` would be loaded, without loading it.

    Raises:
        NotApplicable: the model is not installed here (one line naming what was looked for).
        ProjectConfigError: a project alias reuses a registered id.
    """
    from claimcheck.models import aliases, local

    _discover()
    with _LOCK:
        registration = _match(model_id)
    alias = aliases.lookup(model_id)
    if registration is not None:
        if alias is not None:
            raise ProjectConfigError(f"{alias.declared_at}: [{aliases.TABLE}] {model_id}: `{model_id}` is a registered "
                                     "model id; give the alias another name")
        return _spec_from(registration, model_id)
    if alias is not None:
        return aliases.spec(alias)

    if _looks_like_path(model_id):
        return local.directory_spec(model_id)
    if local.looks_like_hf_id(model_id):
        return local.hf_cache_spec(model_id)

    known = sorted(key for key in _REGISTRY)
    named = sorted(aliases.active())
    hint = did_you_mean(model_id, known + named)
    failed = "".join(f"; {name} failed to import ({reason})" for name, reason in _import_failures.items())
    raise NotApplicable(
        f"model {model_id} not installed: not a registered id{hint}, a project alias, a local model directory or "
        f"a cached Hugging Face repo; registered: {', '.join(_listed(key) for key in known) or 'none'}; aliases: "
        f"{', '.join(named) or f'none (map a name in [{aliases.TABLE}] of pyproject.toml)'}{failed}"
    )


def _listed(key: str) -> str:
    """A registry key as a reader can use it: a prefix key (``synthetic:``) reads ``synthetic:NAME``."""
    return f"{key}NAME" if key.endswith(":") else key


def check_text_capable(model: LoadedModel | ModelSpec, probe: Any = None) -> None:
    """Refuse a random-weight model for a probe whose result depends on generated text.

    Args:
        model: a resolved spec (refuse before loading) or a loaded model.
        probe: the probe's name, or the registered probe itself; a registered probe with
            ``reads_text=False`` accepts any model.
    """
    if probe is not None and not isinstance(probe, str) and not getattr(probe, "reads_text", True):
        return
    if not model.reads_text:
        name = probe if isinstance(probe, str) or probe is None else getattr(probe, "name", str(probe))
        what = f"probe `{name}` reads" if name else "this claim reads"
        raise NotApplicable(f"model {model.model_id} has random weights; {what} generated text")


_LOADED: OrderedDict[tuple[str, str | None], LoadedModel] = OrderedDict()
LOADED_KEEP = 2


def clear_loaded() -> None:
    """Forget the models kept for reuse (frees their memory once nothing else holds them)."""
    with _LOCK:
        _LOADED.clear()


def load(model_id: str, *, variant: str | None = None, needs_text: bool = False, reuse: bool = True) -> LoadedModel:
    """Load ``model_id`` (converting or generating it on first use).

    Args:
        model_id: see the module docstring for what an id can be.
        variant: ``4bit``, ``fp32``, ``bf16`` (where the model offers it); ``None`` = its default,
            which on CPU is ``fp32`` for models that offer it.
        needs_text: the caller reads generated text; random-weight models raise ``NotApplicable``.
        reuse: return the same ``LoadedModel`` as a recent identical call (the last
            :data:`LOADED_KEEP` are kept). Pass False when the caller will modify the model.

    Raises:
        NotApplicable: the model is not installed here, or ``needs_text`` and it has random weights.
        ValueError: ``variant`` is not one the model offers.
    """
    spec = resolve(model_id)
    if needs_text:
        check_text_capable(spec)
    chosen = spec.choose_variant(variant)
    cache_key = (spec.model_id, chosen)
    if reuse:
        with _LOCK:
            if cache_key in _LOADED:
                _LOADED.move_to_end(cache_key)
                return _LOADED[cache_key]
    from claimcheck.harness.blas import ensure_fast_blas

    ensure_fast_blas()  # before the loader's first `import mlx.core`; a no-op afterwards
    loaded = spec.loader(spec.model_id, chosen)
    if reuse:
        with _LOCK:
            _LOADED[cache_key] = loaded
            while len(_LOADED) > LOADED_KEEP:
                _LOADED.popitem(last=False)
    return loaded
