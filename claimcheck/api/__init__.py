"""The one import a probe author needs; every shipped probe imports claimcheck only from here.

>>> from claimcheck.api import Output, ProbeContext, probe, ProbeError
>>> @probe("my_probe", outputs={"ms": Output("ms", higher_is_better=False)})
... def my_probe(ctx: ProbeContext, size: int = 64) -> dict[str, list[float]]:
...     ...

What is here, by job:

- registering a probe: :func:`probe`, :class:`Output`, :class:`PackPlot`, :class:`ProbeContext`;
- saying why nothing was measured: :class:`ProbeError`, :class:`NotApplicable`, :class:`Undecidable`;
- models: :func:`load` (also ``load_model``), :func:`named_parameters`;
- timing: :class:`Timer` (warm-up, interleaved arms, evaluation), :func:`interleaved_order`,
  bandwidth helpers (:func:`gbps`, :func:`check_bandwidth`, ...), :func:`mlx_core` (MLX on first use),
  :data:`POSITION` / :func:`positions_of` (where each sample ran in its round);
- expensive results kept between runs: :func:`cached`, :func:`lookup`, :func:`results_dir`;
- a probe that must run alone on the machine: :func:`hold` (the exclusive lock);
- ops written in a claim file as MLX expressions: :mod:`op_expression` (parsed and checked without MLX);
- the text-sampling library of the curve probes: :mod:`claimcheck.api.sampling` (imported on its own).

Everything is re-exported from where it lives, so the names stay put when the package's insides
move. Importing this module never imports MLX, NumPy or SciPy: names whose home needs NumPy, and
``register_op`` / ``OpEntry`` (the ``op_pair`` probe's registry of operations, part of the shipped
probes), load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from claimcheck.engine.cache import cached, lookup, results_dir
from claimcheck.engine.exclusive import hold
from claimcheck.errors import ClaimcheckError, NotApplicable, ProbeError, Undecidable
from claimcheck.harness.blas import ensure_fast_blas
from claimcheck.harness.timing import (
    Clock,
    Interleaved,
    Timer,
    check_bandwidth,
    device_buffer,
    gbps,
    host_read_seconds,
    interleaved_order,
    mlx_core,
    read_ceiling_gbps,
    reuse,
    spin,
)
from claimcheck.models import DEFAULT_MODEL, LoadedModel, load
from claimcheck.models.arrays import named_parameters
from claimcheck.probing.registry import (
    Output,
    PackPlot,
    ProbeContext,
    ProbeFunction,
    definition_source,
    probe,
    same_definition,
)
from claimcheck.suggest import did_you_mean
from claimcheck.probing import expression as op_expression

if TYPE_CHECKING:
    from claimcheck.harness.position import POSITION, positions_of

__all__ = [
    "DEFAULT_MODEL", "POSITION", "ClaimcheckError", "Clock", "Interleaved", "LoadedModel", "NotApplicable", "OpEntry",
    "Output", "PackPlot", "ProbeContext", "ProbeError", "ProbeFunction", "Timer", "Undecidable", "cached",
    "check_bandwidth", "definition_source", "device_buffer", "did_you_mean", "ensure_fast_blas", "gbps", "hold",
    "host_read_seconds", "interleaved_order", "load", "load_model", "lookup", "mlx_core", "named_parameters", "op_expression",
    "positions_of", "probe", "read_ceiling_gbps", "register_op", "results_dir", "reuse", "same_definition", "spin",
]

#: Load a model by the name a claim gives it (``smollm2-135m-instruct``, an alias, a local path).
load_model = load

# name -> module it is loaded from on first use (kept out of the import: NumPy, or the shipped probes)
_ON_FIRST_USE = {
    "register_op": "claimcheck_probes.ops.op_registry",
    "OpEntry": "claimcheck_probes.ops.op_registry",
    "POSITION": "claimcheck.harness.position",
    "positions_of": "claimcheck.harness.position",
}


def __getattr__(name: str) -> Any:
    """The names of ``_ON_FIRST_USE``, imported when first asked for."""
    if name in _ON_FIRST_USE:
        import importlib

        return getattr(importlib.import_module(_ON_FIRST_USE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
