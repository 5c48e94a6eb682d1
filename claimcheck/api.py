"""The one import a probe author needs.

>>> from claimcheck.api import Output, ProbeContext, probe, ProbeError
>>> @probe("my_probe", outputs={"ms": Output("ms", higher_is_better=False)})
... def my_probe(ctx: ProbeContext, size: int = 64) -> dict[str, list[float]]:
...     ...

Everything here is re-exported from where it lives, so the names stay put when the package's
insides move. ``register_op`` and ``OpEntry`` (the ``op_pair`` probe's registry of operations) belong
to the shipped probes and are loaded on first use, so importing this module never imports MLX.
"""

from __future__ import annotations

from typing import Any

from claimcheck.errors import ClaimcheckError, NotApplicable, ProbeError, Undecidable
from claimcheck.models import DEFAULT_MODEL, LoadedModel, load
from claimcheck.probing.registry import Output, PackPlot, ProbeContext, probe

__all__ = [
    "DEFAULT_MODEL", "ClaimcheckError", "LoadedModel", "NotApplicable", "OpEntry", "Output", "PackPlot",
    "ProbeContext", "ProbeError", "Undecidable", "load", "load_model", "probe", "register_op",
]

#: Load a model by the name a claim gives it (``smollm2-135m-instruct``, an alias, a local path).
load_model = load

_FROM_SHIPPED_PROBES = {"register_op", "OpEntry"}


def __getattr__(name: str) -> Any:
    """``register_op`` and ``OpEntry`` come from the shipped ``op_pair`` registry, imported on first use."""
    if name in _FROM_SHIPPED_PROBES:
        import importlib

        return getattr(importlib.import_module("claimcheck_probes.op_registry"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
