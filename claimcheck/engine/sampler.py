"""Collect a claim item's samples from its probe, per decision group, across sequential looks.

The sampler is the one place that calls a probe for samples: it knows the
item's ``over:`` levels and the outputs its rule reads, and checks that every
returned value is a finite number before anything is decided on it.

A probe that interleaves arms may report where each sample ran in its round, as the
output ``<output>.position`` (0 = first). For a ``paired: true`` check whose two outputs
both carry positions, the groups the rule decides on have each call's position effect
removed (:func:`claimcheck.harness.position.adjust_by_positions`: medians for a median,
least squares for a mean); the recorded samples stay as measured.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

from claimcheck.claim import Claim
from claimcheck.engine import shared
from claimcheck.errors import ProbeError
from claimcheck.harness.position import POSITION, adjust_by_positions
from claimcheck.probing.registry import ProbeContext, RegisteredProbe

Groups = list[tuple[str, list[float]]]


def check_numbers(output: str, values: Any) -> list[float]:
    if isinstance(values, (int, float)) and not isinstance(values, bool):
        values = [values]
    if not isinstance(values, (list, tuple)) and not hasattr(values, "tolist"):
        raise ProbeError(f"output `{output}` is {type(values).__name__}, expected a list of numbers")
    if hasattr(values, "tolist"):
        values = values.tolist()
        if not isinstance(values, list):  # a numpy/MLX scalar or 0-d array
            values = [values]
    numbers: list[float] = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ProbeError(f"output `{output}` holds {type(value).__name__} {value!r}, expected numbers")
        if not math.isfinite(value):
            raise ProbeError(f"output `{output}` holds a non-finite value ({value})")
        numbers.append(float(value))
    return numbers


class LevelCall(NamedTuple):
    """One probe call of a swept level: when it ran within the look, and how many samples it gave."""

    look: int
    round: int
    position: int
    level: str
    samples: int


class Sampler:
    """Collects samples per decision group across sequential looks."""

    def __init__(self, claim: Claim, probe: RegisteredProbe, params: dict[str, Any], ctx: ProbeContext) -> None:
        self.claim, self.probe, self.params, self.ctx = claim, probe, params, ctx
        check = claim.check
        if check.over:
            self.levels = [(f"{check.over}={value}", {**params, check.over: value}) for value in params[check.over]]
        else:
            self.levels = [("", params)]
        self.outputs = list(check.reads())
        # what the probe may leave out; the checks of one shared measurement all read its calls, so nothing
        ctx.reads = None if claim.measurement else frozenset(self.outputs)
        self.data: dict[str, dict[str, list[float]]] = {label: {} for label, _ in self.levels}
        self.order: list[LevelCall] = []  # the calls in the order they ran (swept levels only)
        # the paired outputs with each call's position effect removed, once a probe reports positions
        self.adjusted: dict[str, list[float]] = {}
        named = check.params.get("statistic", "auto")
        self.robust = named == "median" or (named == "auto" and claim.budget.exclusive)

    def draw(self, n: int, look: int) -> None:
        """``n`` more samples of every level, the levels interleaved in a balanced order.

        With several ``over:`` levels a look is split into two rounds, the levels forward in
        the first and backward in the second, so every level sits at the same mean position
        in the look: drift within the look (thermal, other load) adds the same amount to each
        level instead of being read as a trend, and the i-th samples of all levels come from
        the same round (what ``paired: true`` compares). The second round's calls start at
        ``ctx.offset = n // 2``, so a probe drawing from (seed, look, offset + i) draws anew
        instead of repeating the first round. A probe that returns other than what was asked
        (a design that comes whole) is called once per level, as before.
        """
        if len(self.levels) < 2 or n < 2:
            self._round(self.levels, n, look, 0)
            return
        first = n // 2
        if self._round(self.levels, first, look, 0):
            self._round(self.levels[::-1], n - first, look, 1, offset=first)
        self.ctx.artifacts["level_order"] = [call._asdict() for call in self.order]

    def _round(self, levels: list[tuple[str, dict[str, Any]]], n: int, look: int, round_index: int,
               offset: int = 0) -> bool:
        """Call the probe once per level; True when every call returned ``n`` values of each output."""
        exact = True
        for position, (label, params) in enumerate(levels):
            self.ctx.n, self.ctx.look, self.ctx.offset = n, look, offset
            if self.claim.measurement:  # one of several checks on one measurement: each call is made once
                result = shared.call(self.claim.measurement, self.probe, self.ctx, params)
            else:
                result = self.probe(self.ctx, **params)
            if not isinstance(result, Mapping):
                raise ProbeError(f"probe returned {type(result).__name__}, expected a mapping of output -> samples")
            for name in self.outputs:
                if name not in result:
                    raise ProbeError(f"probe returned no output `{name}` (it gave: {', '.join(map(str, result)) or 'nothing'})")
            store = self.data[label]
            counts = set()
            for name, values in result.items():
                numbers = check_numbers(str(name), values)
                store.setdefault(str(name), []).extend(numbers)
                if name in self.outputs:
                    counts.add(len(numbers))
            exact = exact and counts == {n}
            if not self.claim.check.over:
                self._adjust_positions(result)
            if len(self.levels) > 1:
                self.order.append(LevelCall(look, round_index, position, label, max(counts, default=0)))
        return exact

    def _adjust_positions(self, result: Mapping[str, Any]) -> None:
        """Keep this call's paired outputs with their position effect removed, when the probe reported positions."""
        names = self.outputs
        if not self.claim.check.params.get("paired") or len(names) != 2:
            return
        if not all(f"{name}{POSITION}" in result for name in names):
            if self.adjusted:
                raise ProbeError(f"probe stopped reporting `{names[0]}{POSITION}` / `{names[1]}{POSITION}` after a call that did")
            return
        values = {name: check_numbers(name, result[name]) for name in names}
        positions = {name: check_numbers(f"{name}{POSITION}", result[f"{name}{POSITION}"]) for name in names}
        for name in names:
            if len(positions[name]) != len(values[name]):
                raise ProbeError(f"output `{name}{POSITION}` has {len(positions[name])} values for "
                                 f"{len(values[name])} samples of `{name}`")
        if not self.adjusted and self.data[""].get(names[0]) and len(self.data[""][names[0]]) > len(values[names[0]]):
            raise ProbeError(f"probe began reporting `{names[0]}{POSITION}` after a call that did not")
        try:
            fit = adjust_by_positions(values, positions, robust=self.robust)
        except ValueError as error:
            raise ProbeError(f"outputs `{names[0]}{POSITION}` / `{names[1]}{POSITION}`: {error}") from None
        for name in names:
            self.adjusted.setdefault(name, []).extend(fit.samples[name])
        effects = self.ctx.artifacts.setdefault("position_effects", [])
        if isinstance(effects, list):
            effects.append({"look": self.ctx.look, "rounds": len(values[names[0]]), "effects": fit.effects})

    def count(self) -> int:
        return min((len(self.data[label].get(name, [])) for label, _ in self.levels for name in self.outputs), default=0)

    def groups(self) -> Groups:
        if self.claim.check.over:
            name = self.outputs[0]
            return [(label, self.data[label].get(name, [])) for label, _ in self.levels]
        only = self.data[""]
        return [(name, self.adjusted.get(name) or only.get(name, [])) for name in self.outputs]

    def samples(self) -> dict[str, list[float]]:
        if not self.claim.check.over:
            return dict(self.data[""])
        return {f"{name}@{label}": values for label, outputs in self.data.items() for name, values in outputs.items()}
