"""Typed form of a claim as written in YAML (schema v1).

The loader builds these objects after validating every field, so the rest of
the code never sees raw dictionaries or guesses at types.
"""

from __future__ import annotations

import dataclasses

from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any, Literal

Backend = Literal["metal", "cuda", "cpu", "any"]
ScopeKind = Literal["as-stated", "portable"]

ParamValue = float | str | bool


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
class PointValues:
    """A rule parameter whose value depends on one grid axis: grid value (as text) -> number.

    Written ``threshold: {by: size_mib, values: {32: 0.5, 128: 0.7}}``; the loader checked that
    every grid value of the axis has one.
    """

    axis: str
    values: tuple[tuple[str, float], ...]

    def at(self, value: object) -> float | None:
        """The number for one grid value, or None when the mapping has none."""
        return next((number for key, number in self.values if key == str(value)), None)

    def to_record(self) -> dict[str, object]:
        """The YAML form, ``{by: axis, values: {grid value: number}}``."""
        return {"by": self.axis, "values": dict(self.values)}


@dataclass(frozen=True)
class Check:
    """The decision rule, the samples it reads and its parameters.

    The selectors (``output``, ``reference``, ``outputs``, ``over``) choose which samples
    the rule sees; ``params`` holds the rule's own parameters (``threshold``, ``margin``,
    ...) with the rule's defaults filled in. Which parameters exist is the rule object's
    knowledge (:mod:`claimcheck.rules`); the loader validated them against it.
    """

    rule: str
    output: str | None = None
    reference: str | None = None
    outputs: tuple[str, ...] | None = None
    over: str | None = None
    unit: str | None = None
    alpha: float = 0.05
    params: Mapping[str, ParamValue] = field(default_factory=dict)
    by_point: Mapping[str, PointValues] = field(default_factory=dict)  # parameters set per grid point

    def number(self, name: str, default: float | None = None) -> float:
        """A numeric parameter; KeyError when it is absent and has no default."""
        value = self.params.get(name, default)
        if name in self.by_point and name not in self.params:
            raise KeyError(f"`{name}` is set per `{self.by_point[name].axis}`: it has a value only at a grid point")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise KeyError(f"check has no numeric `{name}`")
        return float(value)

    def at_point(self, params: Mapping[str, object]) -> "Check":
        """The check at one grid point: each per-point parameter takes that point's value.

        A point the mapping does not cover keeps the mapping (the rule then says which value is missing).
        """
        if not self.by_point:
            return self
        resolved = dict(self.params)
        left = {}
        for name, points in self.by_point.items():
            value = points.at(params.get(points.axis))
            if value is None:
                left[name] = points
            else:
                resolved[name] = value
        return dataclasses.replace(self, params=resolved, by_point=left)

    def reads(self) -> tuple[str, ...]:
        """The outputs the rule decides on, in order: ``outputs``, else ``output`` and ``reference``."""
        return self.outputs if self.outputs else tuple(name for name in (self.output, self.reference) if name)

    def to_record(self) -> dict[str, ParamValue | list[str] | dict[str, object]]:
        """The check as written (flat, like the YAML), without unset selectors."""
        record: dict[str, ParamValue | list[str] | dict[str, object]] = {"rule": self.rule, "alpha": self.alpha}
        for name in ("output", "reference", "over", "unit"):
            value = getattr(self, name)
            if value is not None:
                record[name] = value
        if self.outputs is not None:
            record["outputs"] = list(self.outputs)
        record.update(self.params)
        record.update({name: points.to_record() for name, points in self.by_point.items()})
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, object]) -> "Check":
        """Inverse of :meth:`to_record`; every key that is not a selector is a rule parameter."""
        selectors = {"rule", "output", "reference", "outputs", "over", "unit", "alpha"}
        params = {k: v for k, v in record.items() if k not in selectors and isinstance(v, (bool, int, float, str))}
        outputs = record.get("outputs")
        alpha = record.get("alpha", 0.05)
        return cls(
            rule=str(record.get("rule", "")),
            output=_text(record.get("output")), reference=_text(record.get("reference")),
            outputs=tuple(map(str, outputs)) if isinstance(outputs, (list, tuple)) else None,
            over=_text(record.get("over")), unit=_text(record.get("unit")),
            alpha=float(alpha) if isinstance(alpha, (int, float)) else 0.05, params=params,
            by_point={k: points for k, v in record.items() if k not in selectors and (points := _points(v)) is not None},
        )


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _points(value: object) -> PointValues | None:
    """A per-point parameter read back from its record form, or None for anything else."""
    if not isinstance(value, Mapping) or not isinstance(value.get("by"), str) or not isinstance(value.get("values"), Mapping):
        return None
    pairs = tuple((str(k), float(v)) for k, v in value["values"].items()
                  if isinstance(v, (int, float)) and not isinstance(v, bool))
    return PointValues(value["by"], pairs)


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
class Control:
    """A positive control: probe parameters under which the claim must be refuted.

    Running the claim's unchanged check there shows that its measurement can fail; a claim
    whose control is not refuted has not been shown able to fail on that machine. ``budget``
    replaces budget fields for the control alone: a large effect in serially dependent timings
    needs enough rounds for its effective n to form an interval, and the claim's budget is the
    claim's.
    """

    params: dict[str, Any]
    why: str
    budget: dict[str, Any] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        """The control as stated, in the claim's stored record (``budget`` only when it has one)."""
        return {"params": dict(self.params), "why": self.why} | ({"budget": dict(self.budget)} if self.budget else {})


CONTROL_SUFFIX = "--control"


@dataclass(frozen=True)
class Retraction:
    """Where the source itself withdrew a claim (its own later correction), in the source's words.

    A claim the source retracted is no premise to rest on anywhere: its dependants are stale
    on every machine, even where this suite's own measurement of it holds. Two kinds:

    - the claim itself was withdrawn (``decomposition`` unset): its own verdict stands, since
      this suite's measurement of a withdrawn claim is still evidence about it;
    - the claim's figure rests on a decomposition the source withdrew (``decomposition:
      "§4(b)/(c)"``, with the source's banner as ``section``/``figure``): the figure itself is
      stale too, refuted or not, because a figure derived from withdrawn reasoning is no finding.
    """

    section: str
    figure: str
    decomposition: str | None = None

    def text(self) -> str:
        """``retracted by its source (§7: "premise gone")``, for stale reasons."""
        if self.decomposition:
            return (f"retracted by its source: rests on the {self.decomposition} decomposition it withdrew "
                    f"({self.section}: \u201c{self.figure}\u201d)")
        return f"retracted by its source ({self.section}: \u201c{self.figure}\u201d)"

    @property
    def withdraws_the_figure(self) -> bool:
        """True when the figure itself is withdrawn (it rests on a withdrawn decomposition)."""
        return bool(self.decomposition)


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
    control: Control | None = None
    no_control: str | None = None  # ``control: {none: true, why: ...}``: why no positive control exists
    retracted: Retraction | None = None
    family: str | None = None  # declared multiplicity family; None: the claim file (see claimcheck.claims.families)
    indifference: float | None = None  # margin of indifference at the edge, in the threshold's units (a ratio's relative)
    # the id of the claim document whose `checks:` this check is one of: its checks share one measurement
    measurement: str | None = None
    path: str = "<memory>"
    line: int = 0
    content_hash: str = ""
    field_lines: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)

    def line_of(self, field_path: str) -> int:
        """The line of ``field_path`` (e.g. ``probe.params.bits``), else of its nearest parent, else the claim's."""
        parts = field_path.split(".")
        while parts:
            line = self.field_lines.get(".".join(parts))
            if line:
                return line
            parts.pop()
        return self.line

    @property
    def timing(self) -> bool:
        """Its outputs time something: decided on the median, gated for spikes and drift, widened between runs.

        Read off ``budget.exclusive`` (an item that must run alone is one whose figure the machine's load
        moves); the readers ask this name, so "times something" and "runs alone" can part in one place.
        """
        return self.budget.exclusive

    def to_record(self) -> dict[str, Any]:
        """The claim as stated, in the JSON form stored beside its results."""
        return {
            "id": self.id, "title": self.title, "statement": self.statement,
            "source": dataclasses.asdict(self.source), "scope": dataclasses.asdict(self.scope),
            "probe": {"name": self.probe.name, "params": dict(self.probe.params), "grid": dict(self.probe.grid)},
            "check": self.check.to_record(), "budget": dataclasses.asdict(self.budget),
            "tags": list(self.tags), "depends_on": list(self.depends_on), "notes": self.notes,
            "path": self.path, "line": self.line, "content_hash": self.content_hash,
            **({"control": self.control.to_record()} if self.control else {}),
            **({"no_control": self.no_control} if self.no_control else {}),
            **({"family": self.family} if self.family else {}),
            **({"indifference": self.indifference} if self.indifference is not None else {}),
            **({"measurement": self.measurement} if self.measurement else {}),
            **({"retracted": {k: v for k, v in dataclasses.asdict(self.retracted).items() if v is not None}}
               if self.retracted else {}),
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> "Claim":
        """Inverse of :meth:`to_record`, tolerant of records written before a field existed."""
        source = record.get("source") or {}
        scope = record.get("scope") or {}
        probe = record.get("probe") or {}
        budget = record.get("budget") or {}
        control = record.get("control")
        retracted = record.get("retracted")
        known_scope = {f.name for f in dataclasses.fields(Scope)}
        known_budget = {f.name for f in dataclasses.fields(Budget)}
        return cls(
            id=str(record.get("id", "")), title=str(record.get("title", "")),
            statement=str(record.get("statement", "")),
            source=Source(str(source.get("doc", "")), str(source.get("section", "")), str(source.get("figure", ""))),
            scope=Scope(**{k: v for k, v in scope.items() if k in known_scope}),
            probe=ProbeSpec(str(probe.get("name", "")), dict(probe.get("params") or {}), dict(probe.get("grid") or {})),
            check=Check.from_record(record.get("check") or {}),
            budget=Budget(**{k: v for k, v in budget.items() if k in known_budget}),
            tags=tuple(record.get("tags") or ()), depends_on=tuple(record.get("depends_on") or ()),
            notes=record.get("notes"), path=str(record.get("path", "<memory>")), line=int(record.get("line") or 0),
            content_hash=str(record.get("content_hash", "")),
            control=Control(dict(control.get("params") or {}), str(control.get("why", "")),
                            {k: v for k, v in (control.get("budget") or {}).items() if k in known_budget})
            if isinstance(control, Mapping) else None,
            no_control=str(record["no_control"]) if record.get("no_control") else None,
            indifference=float(record["indifference"]) if isinstance(record.get("indifference"), (int, float)) else None,
            family=str(record["family"]) if record.get("family") else None,
            measurement=str(record["measurement"]) if record.get("measurement") else None,
            retracted=Retraction(str(retracted.get("section", "")), str(retracted.get("figure", "")),
                                 str(retracted["decomposition"]) if retracted.get("decomposition") else None)
            if isinstance(retracted, Mapping) else None,
        )

    def at_point(self, params: Mapping[str, Any]) -> "Claim":
        """This claim at one grid point: a check with per-point parameters takes the point's values."""
        if not self.check.by_point:
            return self
        return dataclasses.replace(self, check=self.check.at_point(params))

    def for_control(self) -> "Claim":
        """The claim under its control's params, as its own claim ``<id>--control`` (same check and scope).

        Grid axes the control does not set take their first value: one control per claim. The
        control's own budget fields, if any, replace the claim's.
        The control has no premises, so a failed premise never makes it stale.
        """
        if self.control is None:
            raise ValueError(f"claim `{self.id}` declares no control")
        params = {axis: values[0] for axis, values in self.probe.grid.items()}
        params.update(self.probe.params)
        params.update(self.control.params)
        return dataclasses.replace(self, id=self.id + CONTROL_SUFFIX, probe=ProbeSpec(self.probe.name, params, {}),
                                   budget=dataclasses.replace(self.budget, **self.control.budget),
                                   depends_on=(), control=None, profiles={})

    def for_profile(self, name: str | None) -> "Claim":
        """This claim with the named profile's params, grid and budget applied (itself if none)."""
        profile = self.profiles.get(name or "")
        if profile is None:
            return self
        probe = ProbeSpec(self.probe.name, {**self.probe.params, **profile.params},
                          {**self.probe.grid, **profile.grid})
        budget = dataclasses.replace(self.budget, **profile.budget)
        return dataclasses.replace(self, probe=probe, budget=budget)
