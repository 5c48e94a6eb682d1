"""Probe registry: named functions that measure something and return samples.

A probe is a plain function registered with :func:`probe`. It receives a
:class:`ProbeContext` (how many samples are wanted now, the seed, a place for
artifacts) plus the claim's params as keyword arguments, and returns a mapping
of output name to a list of numbers. Probes live in the repository's
``probes/`` folder (or any module imported through the ``claimcheck.probes``
entry point group), so adding a probe means writing one registered function.
"""

from __future__ import annotations

import difflib
import random
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

Samples = Mapping[str, Sequence[float]]


@dataclass(frozen=True)
class Output:
    """Metadata for one probe output: its unit and which direction is better."""

    unit: str = ""
    higher_is_better: bool | None = None
    description: str = ""


@dataclass
class ProbeContext:
    """What a probe may use besides its params.

    Attributes:
        n: samples wanted in this call (a probe may return more or fewer; the
            runner counts what came back).
        look: 0-based index of this call within the item's sequential run.
        seed: the run seed combined with the item id, stable across runs.
        rng: a ``random.Random`` seeded from ``seed`` for pure-Python choices.
        artifacts: JSON-serialisable evidence the probe wants kept (e.g. a
            trace); saved next to the verdict.
        info: facts about the measurement to record (model variant, BLAS, ...).
        fresh: which cached expensive results to ignore: ``False`` none, a timestamp those
            stored before it (``--claims-fresh`` passes the run's start), ``True`` all; pass it
            on to :func:`claimcheck.cache.cached`.
        progress: callback for a one-line progress message on long probes.
    """

    n: int = 1
    look: int = 0
    seed: int = 0
    rng: random.Random = field(default_factory=random.Random)
    artifacts: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    fresh: bool | float = False
    cache_dir: str | None = None
    progress: Callable[[str], None] = lambda message: None


# A probe takes the context and its own keyword parameters; their names and types vary per probe.
ProbeFunction = Callable[..., Samples]


@dataclass(frozen=True)
class RegisteredProbe:
    """A probe with the metadata declared at registration."""

    name: str
    function: ProbeFunction
    outputs: Mapping[str, Output]
    reads_text: bool = False
    deterministic: bool = False
    description: str = ""

    def __call__(self, ctx: ProbeContext, **params: Any) -> Samples:
        return self.function(ctx, **params)


class UnknownProbeError(LookupError):
    """Raised for a probe name nobody registered; the message lists what exists."""


_REGISTRY: dict[str, RegisteredProbe] = {}


def probe(
    name: str,
    *,
    outputs: Mapping[str, Output] | None = None,
    reads_text: bool = False,
    deterministic: bool = False,
) -> Callable[[ProbeFunction], ProbeFunction]:
    """Register ``function`` as the probe ``name``.

    Args:
        name: the name claims use in ``probe.name``.
        outputs: output name -> :class:`Output`; claims may only read these.
        reads_text: the probe's result depends on generated text, so random
            weight models are refused for it.
        deterministic: one sample decides (arithmetic, header reads).
    """

    def decorate(function: ProbeFunction) -> ProbeFunction:
        existing = _REGISTRY.get(name)
        if existing is not None and existing.function.__qualname__ != function.__qualname__:
            raise ValueError(f"probe `{name}` is registered twice ({existing.function.__module__} and {function.__module__})")
        _REGISTRY[name] = RegisteredProbe(
            name=name,
            function=function,
            outputs=dict(outputs or {}),
            reads_text=reads_text,
            deterministic=deterministic,
            description=(function.__doc__ or "").strip().splitlines()[0] if function.__doc__ else "",
        )
        return function

    return decorate


def get_probe(name: str) -> RegisteredProbe:
    """Look up a probe, or fail with the known names and a did-you-mean."""
    try:
        return _REGISTRY[name]
    except KeyError:
        known = sorted(_REGISTRY)
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" (did you mean `{close[0]}`?)" if close else ""
        raise UnknownProbeError(f"unknown probe `{name}`{hint}; known probes: {', '.join(known) or 'none'}") from None


def registered_probes() -> dict[str, RegisteredProbe]:
    """A snapshot of the registry, for listings and validation."""
    return dict(_REGISTRY)


def load_probe_modules(root: str | None = None) -> list[str]:
    """Import the probe modules so their ``@probe`` registrations run.

    Looks in ``<root>/probes/*.py`` (imported as the package ``probes``, with
    ``root`` on ``sys.path``) and in the ``claimcheck.probes`` entry point group
    for probes shipped by other packages. Returns the module names imported.
    """
    import importlib
    import sys
    from importlib.metadata import entry_points
    from pathlib import Path

    imported: list[str] = []
    if root is not None:
        folder = Path(root) / "probes"
        if (folder / "__init__.py").is_file():
            top = str(Path(root).resolve())
            loaded = sys.modules.get("probes")
            if loaded is not None and Path(getattr(loaded, "__file__", "") or ".").resolve().parent != folder.resolve():
                # Another project's `probes` package was imported earlier in this process.
                for name in [n for n in sys.modules if n == "probes" or n.startswith("probes.")]:
                    del sys.modules[name]
            if top in sys.path:
                sys.path.remove(top)
            sys.path.insert(0, top)
            for module_path in sorted(folder.glob("*.py")):
                if module_path.stem.startswith("_"):
                    continue
                name = f"probes.{module_path.stem}"
                importlib.import_module(name)
                imported.append(name)
    for entry in entry_points(group="claimcheck.probes"):
        entry.load()
        imported.append(entry.value)
    return imported
