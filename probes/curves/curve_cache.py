"""How the curve probes share their expensive results: one stored value per prompt, computed in batches.

A fork map or a route is generated per prompt, but generation is cheapest in one batch over every
prompt a claim asks for, and several claims (and ``pytest -n`` workers) ask for overlapping prompt
sets. :func:`cached_many` reuses the stored prompts, computes the missing ones together under a
per-probe file lock (so parallel workers compute a trace once), and stores each. Every curve probe
returns its whole design on the first look (:func:`whole_on_first_look`), since its samples come
from that cache and a later look would add nothing.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Mapping, Sequence

from claimcheck.api import Output, ProbeContext, ProbeFunction, cached, hold, lookup, results_dir


def stored(ctx: ProbeContext, keys: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The stored values among ``keys`` (respecting ``--claims-fresh``); computes nothing."""
    found = {}
    for name, key in keys.items():
        hit, value = lookup(key, fresh=ctx.fresh, cache_dir=ctx.cache_dir)
        if hit:
            found[name] = value
    return found


def cached_many(
    ctx: ProbeContext,
    keys: Mapping[str, Mapping[str, Any]],
    compute_missing: Callable[[list[str]], Mapping[str, Any]],
) -> dict[str, Any]:
    """Values for every key: stored ones reused, the missing ones computed together, then stored.

    Computing holds a per-probe file lock, and the cache is read again once it is held, so
    parallel workers that need the same trace compute it once, not once each. Which keys were
    computed and which reused goes into the probe's info.
    """
    values: dict[str, Any] = {}

    def still_missing(names: Sequence[str]) -> list[str]:
        found = stored(ctx, {name: keys[name] for name in names})
        values.update(found)
        return [name for name in names if name not in found]

    missing = still_missing(list(keys))
    if missing:
        probe_name = str(next(iter(keys.values()))["probe"])
        with hold(results_dir(ctx.cache_dir) / f".{probe_name}.lock", mode="exclusive"):
            missing = still_missing(missing)
            if missing:
                computed = compute_missing(missing)
                for name in missing:
                    values[name], _ = cached(keys[name], functools.partial(computed.__getitem__, name), fresh=True,
                                             cache_dir=ctx.cache_dir)
    hits = ctx.info.setdefault("cache", {})
    for name in keys:
        hits[f"{keys[name]['probe']}:{name}"] = "computed" if name in missing else "reused"
    return values


def whole_on_first_look(outputs: Mapping[str, Output]) -> Callable[[ProbeFunction], ProbeFunction]:
    """Make a probe return no samples on every look after the first (its design came whole on the first)."""

    def decorate(function: ProbeFunction) -> ProbeFunction:
        @functools.wraps(function)
        def first_look_only(ctx: ProbeContext, **params: Any) -> Any:
            if ctx.look > 0:
                return {name: [] for name in outputs}
            return function(ctx, **params)

        return first_look_only

    return decorate
