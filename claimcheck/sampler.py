"""Collect a claim item's samples from its probe, per decision group, across sequential looks.

The sampler is the one place that calls a probe for samples: it knows the
item's ``over:`` levels and the outputs its rule reads, and checks that every
returned value is a finite number before anything is decided on it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from claimcheck.claim import Claim
from claimcheck.errors import ProbeError
from claimcheck.probe import ProbeContext, RegisteredProbe

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


class Sampler:
    """Collects samples per decision group across sequential looks."""

    def __init__(self, claim: Claim, probe: RegisteredProbe, params: dict[str, Any], ctx: ProbeContext) -> None:
        self.claim, self.probe, self.params, self.ctx = claim, probe, params, ctx
        check = claim.check
        if check.over:
            self.levels = [(f"{check.over}={value}", {**params, check.over: value}) for value in params[check.over]]
        else:
            self.levels = [("", params)]
        if check.outputs:
            self.outputs = list(check.outputs)
        else:
            self.outputs = [name for name in (check.output, check.reference) if name]
        self.data: dict[str, dict[str, list[float]]] = {label: {} for label, _ in self.levels}

    def draw(self, n: int, look: int) -> None:
        for label, params in self.levels:
            self.ctx.n, self.ctx.look = n, look
            result = self.probe(self.ctx, **params)
            if not isinstance(result, Mapping):
                raise ProbeError(f"probe returned {type(result).__name__}, expected a mapping of output -> samples")
            for name in self.outputs:
                if name not in result:
                    raise ProbeError(f"probe returned no output `{name}` (it gave: {', '.join(map(str, result)) or 'nothing'})")
            store = self.data[label]
            for name, values in result.items():
                store.setdefault(str(name), []).extend(check_numbers(str(name), values))

    def count(self) -> int:
        return min((len(self.data[label].get(name, [])) for label, _ in self.levels for name in self.outputs), default=0)

    def groups(self) -> Groups:
        if self.claim.check.over:
            name = self.outputs[0]
            return [(label, self.data[label].get(name, [])) for label, _ in self.levels]
        only = self.data[""]
        return [(name, only.get(name, [])) for name in self.outputs]

    def samples(self) -> dict[str, list[float]]:
        if not self.claim.check.over:
            return dict(self.data[""])
        return {f"{name}@{label}": values for label, outputs in self.data.items() for name, values in outputs.items()}
