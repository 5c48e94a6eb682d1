"""The rule registry: which parameters each rule takes, how many sample groups, and validation.

Parameters are validated here, in one place, before any sampling, with messages that name the
parameter (``claimcheck.claim.Check`` field) in backticks, so the loader can reject a claim
with ``RULES[rule].validate(params)`` and the decision code can trust its inputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._bound import decide_bound
from ._decision import Decision
from ._equivalent import decide_equivalent
from ._exact import decide_exact
from ._ratio import decide_ratio
from ._rates import decide_rate_at_most, decide_zero_rate
from ._steps import decide_monotone, decide_ordering

DEFAULTS: dict[str, Any] = {
    "statistic": "mean",
    "scale": "difference",
    "paired": False,
    "direction": "increasing",
    "tolerance": 0.0,
    "unit": None,
}
CHOICES: dict[str, tuple[str, ...]] = {
    "statistic": ("mean", "median"),
    "scale": ("difference", "log-ratio"),
    "bound": ("at_least", "at_most"),
    "direction": ("increasing", "decreasing"),
}


@dataclass(frozen=True)
class RuleInfo:
    """What a rule needs.

    Attributes:
        name: rule name as written in ``check.rule``.
        required, optional: parameter names (``Check`` fields) the rule reads.
        min_groups, max_groups: how many sample groups it reads (``None``: no upper limit).
        description: one line for listings and error messages.
        spends_alpha: False when repeated looks cannot inflate its error (deterministic checks,
            and ``zero_rate``, whose HOLDS events are nested: 0 events in n implies 0 in fewer),
            so every sequential look may use the full alpha.
    """

    name: str
    decide: Callable[..., Decision]
    required: tuple[str, ...]
    optional: tuple[str, ...]
    min_groups: int
    max_groups: int | None
    description: str
    spends_alpha: bool = True

    @property
    def accepts(self) -> frozenset[str]:
        """Every parameter name the rule reads."""
        return frozenset(self.required + self.optional)

    def select(self, source: Any) -> dict[str, Any]:
        """The rule's parameters taken from a ``Check`` (or mapping), skipping unset (None) ones."""
        get = source.get if isinstance(source, Mapping) else lambda k: getattr(source, k, None)
        return {k: get(k) for k in sorted(self.accepts) if get(k) is not None}

    def validate(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Checked, normalised parameters with defaults filled in; ValueError names the bad one."""
        unknown = sorted(set(params) - self.accepts)
        if unknown:
            accepted = ", ".join(f"`{k}`" for k in sorted(self.accepts))
            raise ValueError(f"`{unknown[0]}` is not a parameter of rule `{self.name}` (it takes {accepted})")
        given = {k: v for k, v in params.items() if v is not None}
        missing = [k for k in self.required if k not in given]
        if missing:
            raise ValueError(f"rule `{self.name}` requires `{missing[0]}`")
        out = {k: DEFAULTS[k] for k in self.optional}
        out.update({k: _check(self.name, k, v) for k, v in given.items()})
        return out

    def groups(
        self, groups: Sequence[tuple[str, Sequence[float]]], *, paired: bool = False
    ) -> list[tuple[str, np.ndarray]]:
        """Sample groups as float arrays; ValueError on a wrong count, an empty group or a non-finite sample."""
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
        if paired and len({len(x) for _, x in out}) > 1:
            sizes = ", ".join(str(len(x)) for _, x in out)
            raise ValueError(f"`paired: true` needs groups of equal length; got {sizes}")
        return out


def _check(rule: str, name: str, value: Any) -> Any:
    if name in CHOICES:
        if value not in CHOICES[name]:
            raise ValueError(f"`{name}` must be one of {', '.join(map(repr, CHOICES[name]))}; got {value!r}")
        return value
    if name == "paired":
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"`paired` must be true or false; got {value!r}")
        return bool(value)
    if name == "unit":
        if not isinstance(value, str):
            raise ValueError(f"`unit` must be a string; got {value!r}")
        return value
    number = isinstance(value, (int, float, np.number)) and not isinstance(value, (bool, np.bool_))
    if not number or not math.isfinite(value):
        raise ValueError(f"`{name}` must be a finite number; got {value!r}")
    value = float(value)
    if name == "margin" and value <= 0:
        raise ValueError(f"`margin` must be positive; got {value!r}")
    if name == "tolerance" and value < 0:
        raise ValueError(f"`tolerance` must be non-negative; got {value!r}")
    if name == "threshold" and rule in ("rate_at_most", "zero_rate") and not 0 < value < 1:
        raise ValueError(f"`threshold` must lie in (0, 1) for rule `{rule}`; got {value!r}")
    if name == "threshold" and rule == "ratio" and value <= 0:
        raise ValueError(f"`threshold` must be positive for rule `ratio`; got {value!r}")
    return value


def check_alpha(alpha: float) -> float:
    """Error rates above 1/2 would let HOLDS and REFUTED both pass."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.number)) or not 0 < alpha < 0.5:
        raise ValueError(f"`alpha` must lie in (0, 0.5); got {alpha!r}")
    return float(alpha)


RULES: dict[str, RuleInfo] = {
    info.name: info
    for info in (
        RuleInfo("at_least", decide_bound, ("threshold",), ("statistic", "unit"), 1, 1,
                 "the mean (or median) of the output is at least `threshold`"),
        RuleInfo("at_most", decide_bound, ("threshold",), ("statistic", "unit"), 1, 1,
                 "the mean (or median) of the output is at most `threshold`"),
        RuleInfo("equivalent", decide_equivalent, ("margin",), ("scale", "paired", "unit"), 2, 2,
                 "output and reference agree within `margin` (difference, or relative on `log-ratio`)"),
        RuleInfo("ratio", decide_ratio, ("threshold", "bound"), ("statistic", "paired", "unit"), 2, 2,
                 "output / reference is `bound` (at_least/at_most) `threshold`"),
        RuleInfo("ordering", decide_ordering, (), ("paired", "unit"), 2, None,
                 "the groups' means decrease in the listed order (first > second > ...)"),
        RuleInfo("monotone", decide_monotone, (), ("direction", "paired", "unit"), 2, None,
                 "the mean rises (or falls) at every step through the swept levels"),
        RuleInfo("rate_at_most", decide_rate_at_most, ("threshold",), ("unit",), 1, 1,
                 "the rate of 1s among 0/1 samples is at most `threshold`"),
        RuleInfo("zero_rate", decide_zero_rate, ("threshold",), ("unit",), 1, 1,
                 "the event (1) never happens, shown to a rate below `threshold`", spends_alpha=False),
        RuleInfo("exact", decide_exact, ("expected",), ("tolerance", "unit"), 1, 1,
                 "a deterministic value equals `expected` within `tolerance`", spends_alpha=False),
    )
}


def rule_info(rule: str) -> RuleInfo:
    """``RULES[rule]`` with a readable error for an unknown name."""
    try:
        return RULES[rule]
    except (KeyError, TypeError):
        raise ValueError(f"`rule` must be one of {', '.join(map(repr, RULES))}; got {rule!r}") from None


def decide(rule: str, groups: Sequence[tuple[str, Sequence[float]]], *, alpha: float = 0.05, **params: Any) -> Decision:
    """Decide one claim from its sample groups.

    Args:
        rule: one of :data:`RULES`.
        groups: ordered ``(label, samples)`` pairs; see each rule for which groups it reads.
        alpha: false-refutation (and false-holds) rate of this single decision.
        **params: the rule's ``Check`` fields (``threshold``, ``margin``, ...).

    Returns:
        A :class:`Decision`.
    """
    info = rule_info(rule)
    p = info.validate(params)
    alpha = check_alpha(alpha)
    return info.decide(rule, info.groups(groups, paired=p.get("paired", False)), alpha, **p)
