"""One measurement for several checks: the probe calls of a ``checks:`` list, made once and served to each check.

The checks of one claim document draw one seed (:func:`claimcheck.engine.runner.measurement_key`) and
ask the probe the same calls (same params, look, offset and count) as far as their sequential plans
agree. The first check to make a call measures; every later check of the same measurement gets
that call's samples, and what the probe recorded in ``ctx.info`` and ``ctx.artifacts``, without
calling it again. A check that needs a look the others never took measures that look itself.
"""

from __future__ import annotations

import copy
import json
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from claimcheck.probing.registry import ProbeContext, RegisteredProbe

MAX_CALLS = 256

_CALLS: "OrderedDict[tuple[Any, ...], tuple[Mapping[str, Any], dict[str, Any], dict[str, Any]]]" = OrderedDict()


def _key(measurement: str, probe: RegisteredProbe, ctx: ProbeContext, params: Mapping[str, Any]) -> tuple[Any, ...]:
    shown = json.dumps(params, sort_keys=True, default=repr)
    return (measurement, id(probe.function), ctx.seed, ctx.n, ctx.look, ctx.offset, ctx.looks, ctx.fresh, shown)


def call(measurement: str, probe: RegisteredProbe, ctx: ProbeContext, params: Mapping[str, Any]) -> Mapping[str, Any]:
    """``probe(ctx, **params)``, or the samples of the same call made earlier for this measurement."""
    key = _key(measurement, probe, ctx, params)
    if key in _CALLS:
        _CALLS.move_to_end(key)
        result, info, artifacts = _CALLS[key]
        ctx.info.update(copy.deepcopy(info))
        ctx.artifacts.update(copy.deepcopy(artifacts))
        return result
    result = probe(ctx, **params)
    if isinstance(result, Mapping):
        _CALLS[key] = ({name: list(values) if isinstance(values, (list, tuple)) else values
                        for name, values in result.items()}, copy.deepcopy(ctx.info), copy.deepcopy(ctx.artifacts))
        while len(_CALLS) > MAX_CALLS:
            _CALLS.popitem(last=False)
    return result


def forget() -> None:
    """Drop every kept call (a new run starts)."""
    _CALLS.clear()
