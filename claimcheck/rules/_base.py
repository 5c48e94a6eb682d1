"""What every decision rule is: its fields, validation, two decisions and its words.

A rule object is the only place that knows a rule. The loader asks it which
``check`` fields are valid, the JSON schema is generated from its fields, the
runner asks it for a decision (sampled, or exact for a deterministic probe),
and reports and the docs gate ask it what the claim says in words and as a band.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar, Literal

import numpy as np

from claimcheck.claim import Check, ParamValue
from claimcheck.rules.figure import VALUE, Figure
from claimcheck.stats import Boundary, Decision, Hypothesis
from claimcheck.verdict import Verdict

Groups = Sequence[tuple[str, Sequence[float]]]
ArrayGroups = list[tuple[str, np.ndarray]]
Selector = Literal["output", "reference", "outputs", "over"]


@dataclass(frozen=True)
class FieldProblem:
    """One thing wrong with a check: the field (``check.threshold``) and a one-line message."""

    field: str
    message: str


def positive(value: float) -> str | None:
    """Domain check: strictly above zero."""
    return None if value > 0 else f"must be positive; got {value:g}"


def non_negative(value: float) -> str | None:
    """Domain check: zero or more."""
    return None if value >= 0 else f"must be non-negative; got {value:g}"


def open_unit(value: float) -> str | None:
    """Domain check: a rate strictly between 0 and 1 (0 and 1 are not claims a sample can support)."""
    return None if 0 < value < 1 else f"must lie in (0, 1); got {value:g}"


@dataclass(frozen=True)
class Param:
    """One rule parameter as written under ``check:``.

    Attributes:
        name: the key under ``check``.
        kind: ``number``, ``choice`` or ``bool``.
        description: one line for the schema and listings.
        default: the value when omitted; ``None`` makes it required.
        choices: allowed words for ``choice``.
        domain: extra check on a number; returns the problem or None.
    """

    name: str
    kind: Literal["number", "choice", "bool"]
    description: str
    default: ParamValue | None = None
    choices: tuple[str, ...] = ()
    domain: Callable[[float], str | None] | None = None

    @property
    def required(self) -> bool:
        """A parameter without a default must be written."""
        return self.default is None

    def problem(self, value: object) -> str | None:
        """Why ``value`` is not acceptable, or None."""
        if self.kind == "choice":
            if value not in self.choices:
                return f"must be one of {', '.join(self.choices)}; got {value!r}"
            return None
        if self.kind == "bool":
            return None if isinstance(value, bool) else f"must be true or false; got {value!r}"
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return f"must be a finite number; got {value!r}"
        return self.domain(float(value)) if self.domain else None


@dataclass(frozen=True)
class Claimed:
    """What a claim asserts about its figure, as a bound an interval can be compared with.

    ``kind`` is ``min`` (figure >= low), ``max`` (figure <= high), ``band`` (low..high) or
    ``None`` for rules with no single bound (ordering, monotone).
    """

    kind: Literal["min", "max", "band"] | None
    low: float | None = None
    high: float | None = None
    text: str = ""


class Rule(abc.ABC):
    """Base of every decision rule; subclasses declare their fields and decide.

    Class attributes:
        name: the value of ``check.rule``.
        summary: one line for listings, the schema and error messages.
        params: the rule's own parameters.
        required_selectors / optional_selectors: which sample selectors it reads.
        min_groups / max_groups: how many sample groups a decision reads.
        spends_alpha: False when repeated looks cannot inflate its error rate (:meth:`boundary` ``none``).
        assumed_spread: for a timing item, the between-run SD assumed on a first run, in within-run SEs
            (:attr:`claimcheck.stats.Hypothesis.assumed_spread`); None: its figure takes no between-run
            component. A rule that declares it in :meth:`hypothesis` is widened between runs and, on a
            median, decided on its effective n under dependence, with no other module naming it.
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    params: ClassVar[tuple[Param, ...]] = ()
    required_selectors: ClassVar[frozenset[Selector]] = frozenset({"output"})
    optional_selectors: ClassVar[frozenset[Selector]] = frozenset()
    min_groups: ClassVar[int] = 1
    max_groups: ClassVar[int | None] = 1
    spends_alpha: ClassVar[bool] = True
    figure: ClassVar[Figure] = VALUE
    assumed_spread: ClassVar[float | None] = None
    picks_groups: ClassVar[bool] = False  # :meth:`groups` selects some of the drawn groups (levels of a sweep)

    # -- fields ---------------------------------------------------------------------------
    def param(self, name: str) -> Param | None:
        """The parameter called ``name``, if this rule has one."""
        return next((p for p in self.params if p.name == name), None)

    def fields(self) -> frozenset[str]:
        """Every ``check`` key this rule reads, selectors included."""
        return frozenset(p.name for p in self.params) | self.required_selectors | self.optional_selectors

    def problems(self, check: Mapping[str, object]) -> list[FieldProblem]:
        """Every problem of a ``check`` mapping for this rule (empty when valid): missing fields first."""
        found = [FieldProblem("check.rule", f"rule `{self.name}` needs `check.{name}`") for name in self.missing(check)]
        accepted = self.fields()
        for key in check:
            if key not in accepted | COMMON_FIELDS:
                found.append(FieldProblem(f"check.{key}", f"`check.{key}` is not used by rule `{self.name}` "
                                                          f"(it uses: {', '.join(sorted(accepted))})"))
        found.extend(p for p in self.param_problems(check) if p.field != "check.rule")
        found.extend(self.cross_problems(check))
        return found

    def missing(self, check: Mapping[str, object]) -> list[str]:
        """Required selectors and parameters the check leaves out, by name."""
        required = set(self.required_selectors) | {p.name for p in self.params if p.required}
        return sorted(name for name in required if check.get(name) is None)

    def param_problems(self, check: Mapping[str, object]) -> list[FieldProblem]:
        """Missing required parameters and values outside a parameter's domain."""
        found: list[FieldProblem] = []
        for param in self.params:
            value = check.get(param.name)
            if value is None:
                if param.required:
                    found.append(FieldProblem("check.rule", f"rule `{self.name}` needs `check.{param.name}`"))
                continue
            problem = param.problem(value)
            if problem:
                found.append(FieldProblem(f"check.{param.name}", f"`{param.name}` {problem} (rule `{self.name}`)"))
        return found

    def cross_problems(self, check: Mapping[str, object]) -> list[FieldProblem]:
        """Problems that involve several fields at once; rules override this."""
        return []

    def level_problems(self, check: Mapping[str, object], levels: Sequence[object]) -> list[FieldProblem]:
        """Problems of the check against the values its ``over`` param sweeps; rules that name levels override this."""
        return []

    def values(self, given: Mapping[str, object]) -> dict[str, ParamValue]:
        """The rule's parameters taken from ``given`` (a check's fields), defaults filled, numbers as floats."""
        out: dict[str, ParamValue] = {}
        for param in self.params:
            value = given.get(param.name, param.default)
            if isinstance(value, (bool, str)) or (isinstance(value, (int, float)) and param.kind != "number"):
                out[param.name] = value
            elif isinstance(value, (int, float)):
                out[param.name] = float(value)
        return out

    def needs_repeats(self, check: Check) -> str | None:
        """Why this check cannot be decided from a deterministic probe's values, or None."""
        if check.params.get("paired"):
            return "`paired: true` compares interleaved repeated measurements; a deterministic probe has none"
        return None

    # -- decisions ------------------------------------------------------------------------
    def boundary(self, check: Check) -> Boundary:
        """How the sequential plan sets this check's per-look level: exact for t and sign tests."""
        return "union" if self.spends_alpha else "none"

    def tested_quantity(self, groups: ArrayGroups, check: Check) -> ArrayGroups:
        """The samples whose noise matters to the decision, for the noise gate: the groups themselves
        unless the rule compares paired rounds (then the per-round contrast)."""
        return groups

    def groups(self, groups: Groups, check: Check) -> ArrayGroups:
        """Sample groups as float arrays; ValueError on a wrong count, an empty group or a non-finite value."""
        try:
            pairs = [(str(label), samples) for label, samples in groups]
        except (TypeError, ValueError):
            raise ValueError("`groups` must be a sequence of (label, samples) pairs") from None
        lo, hi = self.min_groups, self.max_groups
        if len(pairs) < lo or (hi is not None and len(pairs) > hi):
            want = str(lo) if lo == hi else f"at least {lo}" if hi is None else f"{lo} to {hi}"
            raise ValueError(f"rule `{self.name}` needs {want} sample groups; got {len(pairs)}")
        out = []
        for label, samples in pairs:
            try:
                x = np.asarray(samples, dtype=float)
            except (TypeError, ValueError):
                raise ValueError(f"group {label!r}: samples must be numbers") from None
            if x.ndim != 1 or x.size == 0:
                raise ValueError(f"group {label!r}: samples must be a non-empty flat sequence; got shape {x.shape}")
            bad = np.flatnonzero(~np.isfinite(x))
            if bad.size:
                raise ValueError(f"group {label!r}: sample {bad[0]} is {x[bad[0]]!r}; samples must be finite")
            out.append((label, x))
        if check.params.get("paired") and len({len(x) for _, x in out}) > 1:
            raise ValueError(f"`paired: true` needs groups of equal length; got {', '.join(str(len(x)) for _, x in out)}")
        return out

    def hypothesis(self, check: Check) -> Hypothesis | None:
        """What a decision of ``check`` tests, for the corrections that re-read it; None: nothing they can re-read.

        The rule hands it to its procedure, which puts it on every decision it read off an interval.
        """
        return None

    @abc.abstractmethod
    def decide(self, groups: ArrayGroups, alpha: float, check: Check) -> Decision:
        """Decide from repeated samples with error rates at most ``alpha`` each way."""

    @abc.abstractmethod
    def decide_exactly(self, groups: ArrayGroups, check: Check) -> Decision:
        """Decide from a deterministic probe: every returned value is evidence, none is noise."""

    # -- words ----------------------------------------------------------------------------
    @abc.abstractmethod
    def expectation(self, check: Check) -> str:
        """The check in words, e.g. ``mean gbps / mean raw_gbps >= 0.74``."""

    @abc.abstractmethod
    def claimed(self, check: Check) -> Claimed:
        """The claimed bound on the item's figure (reports, forest plots)."""

    def stated_band(self, check: Check) -> tuple[float, float] | None:
        """The values a doc sentence may quote for this claim (the docs gate): the band, or the bound itself."""
        claimed = self.claimed(check)
        if claimed.kind == "band" and claimed.low is not None and claimed.high is not None:
            return claimed.low, claimed.high
        bound = claimed.low if claimed.kind == "min" else claimed.high if claimed.kind == "max" else None
        return None if bound is None else (bound, bound)


COMMON_FIELDS = frozenset({"rule", "alpha", "unit"})

STATISTIC = Param(
    "statistic", "choice",
    "summary the claim is about: auto (the median for timing outputs, the mean otherwise), mean or median",
    default="auto", choices=("auto", "mean", "median"),
)


def statistic(check: Check) -> Literal["mean", "median"]:
    """The statistic a check decides on: ``median`` when named, else ``mean`` (``auto`` outside timing)."""
    return "median" if check.params.get("statistic") == "median" else "mean"


def two_group_boundary(check: Check) -> Boundary:
    """The look boundary of a two-output rule: exact t for means, the exact sign test for paired
    medians, the union bound for an unpaired (Hodges–Lehmann) median."""
    if statistic(check) == "mean":
        return "t"
    return "sign" if check.params.get("paired") else "union"


def statistic_word(check: Check) -> str:
    """``"mean "``/``"median "`` for the expectation's words; nothing for ``auto`` (decided per output)."""
    named = check.params.get("statistic", "auto")
    return "" if named == "auto" else f"{named} "


def for_timing(check: Check, timing: bool) -> Check:
    """The check with ``statistic: auto`` resolved: the median for a timing output, else the mean."""
    if check.params.get("statistic") != "auto":
        return check
    return replace(check, params={**check.params, "statistic": "median" if timing else "mean"})


def exact_decision(check: Check, value: float, n: int, holds: bool, reason: str, label: str = "") -> Decision:
    """A deterministic decision: the value is the evidence; no interval, no sampling error."""
    return Decision(
        rule=check.rule, statistic=value, low=value, high=value, confidence_level=1.0, n=n,
        verdict=Verdict.HOLDS if holds else Verdict.REFUTED, reason=reason,
        pvalue=1.0 if holds else 0.0, hold_pvalue=0.0 if holds else 1.0, alpha=check.alpha, mde=None, estimate_label=label,
        details={"deterministic": True},
    )


def pairs_or_all(a: np.ndarray, b: np.ndarray, combine: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """Pairwise values for equal-length arms (one call, both outputs), else every combination."""
    if len(a) == len(b):
        return np.asarray(combine(a, b), dtype=float)
    return np.asarray(combine(a[:, None], b[None, :]), dtype=float).ravel()
