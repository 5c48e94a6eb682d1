"""Typed form of a claim as written in YAML (schema v1).

The loader builds these objects after validating every field, so the rest of
the code never sees raw dictionaries or guesses at types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Backend = Literal["metal", "cuda", "cpu", "any"]
ScopeKind = Literal["as-stated", "portable"]

RULES = (
    "at_least",
    "at_most",
    "equivalent",
    "ratio",
    "ordering",
    "rate_at_most",
    "zero_rate",
    "monotone",
    "exact",
)


@dataclass(frozen=True)
class Source:
    """Where the claim was written: the doc, its section, and the figure restated."""

    doc: str
    section: str
    figure: str


@dataclass(frozen=True)
class Scope:
    """Where the claim is asserted to hold; outside it the claim is not applicable."""

    kind: ScopeKind = "portable"
    backend: Backend = "any"
    device: str | None = None  # fnmatch pattern against the device/chip name
    model: str | None = None  # fnmatch pattern against the model id the claim was made on
    min_memory_gib: float | None = None


@dataclass(frozen=True)
class ProbeSpec:
    """Which registered probe measures the claim, with fixed params and grid axes."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    grid: dict[str, list[Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Check:
    """The decision rule and its numbers.

    Which fields a rule reads is listed in ``claimcheck.stats``; the loader
    rejects fields a rule does not use so that a typo cannot be silently ignored.
    """

    rule: str
    output: str | None = None
    reference: str | None = None
    outputs: tuple[str, ...] | None = None
    over: str | None = None
    statistic: Literal["mean", "median"] = "mean"
    threshold: float | None = None
    bound: Literal["at_least", "at_most"] | None = None
    margin: float | None = None
    scale: Literal["difference", "log-ratio"] = "difference"
    paired: bool = False
    direction: Literal["increasing", "decreasing"] = "increasing"
    expected: float | None = None
    tolerance: float | None = None
    unit: str | None = None
    alpha: float = 0.05


@dataclass(frozen=True)
class Budget:
    """How much measuring a claim may cost."""

    min_samples: int = 10
    max_samples: int = 200
    max_seconds: float = 120.0
    exclusive: bool = False
    looks: int = 4


@dataclass(frozen=True)
class Profile:
    """How one machine profile scales a claim's measurement (never its check)."""

    params: dict[str, Any] = field(default_factory=dict)
    grid: dict[str, list[Any]] = field(default_factory=dict)
    budget: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Claim:
    """One validated claim, with the place it was read from."""

    id: str
    title: str
    statement: str
    source: Source
    scope: Scope
    probe: ProbeSpec
    check: Check
    budget: Budget = field(default_factory=Budget)
    tags: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()
    notes: str | None = None
    profiles: dict[str, Profile] = field(default_factory=dict)
    path: str = "<memory>"
    line: int = 0
    content_hash: str = ""

    def for_profile(self, name: str | None) -> "Claim":
        """This claim with the named profile's params, grid and budget applied (itself if none)."""
        import dataclasses

        profile = self.profiles.get(name or "")
        if profile is None:
            return self
        probe = ProbeSpec(self.probe.name, {**self.probe.params, **profile.params},
                          {**self.probe.grid, **profile.grid})
        budget = dataclasses.replace(self.budget, **profile.budget)
        return dataclasses.replace(self, probe=probe, budget=budget)
