"""One finding per final item: its result, what it is measured against, and how it is treated.

:func:`find_all` is the one place where a run's final results meet the expected verdicts and the
run's flags. Everything shown after adjudication (terminal, JUnit, reports, docs gate, CI summary)
renders findings, so an item reads the same on every surface.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from claimcheck.engine.expectations import Agreement, compare
from claimcheck.outcome.policy import Flags, Role, Treatment, treat
from claimcheck.engine.result import ItemResult
from claimcheck.rules.figure import VALUE, Figure
from claimcheck.verdict import Verdict


class Judge(Protocol):
    """What a finding asks of expectations: the lock itself, or the expectations a run recorded."""

    def covers(self, machine_class: str, item_id: str | None = None) -> bool: ...

    def expected(self, machine_class: str, item_id: str) -> Verdict | None: ...


@dataclass(frozen=True)
class Finding:
    """An item's final result as every surface shows it.

    Attributes:
        result: the final, adjudicated result.
        treatment: what the verdict means here (fails the run, letter, JUnit element, report, CI level).
        role: a claim, a positive control, or a claim holding without a refuted control.
        agreement: how the verdict compares with the lock (None without a lock section for its class).
        expected: the verdict the lock expects (None when it expects none).
        figure: the rule's declaration of what its figure is.
    """

    result: ItemResult
    treatment: Treatment
    role: Role = Role.CLAIM
    agreement: Agreement | None = None
    expected: Verdict | None = None
    figure: Figure = VALUE

    @property
    def item_id(self) -> str:
        return self.result.item_id

    @property
    def claim_id(self) -> str:
        return self.result.claim_id

    @property
    def verdict(self) -> Verdict:
        return self.result.verdict

    @property
    def fails_run(self) -> bool:
        return self.treatment.fails_run

    def message(self, lock: Path | None = None, tb_style: str = "auto") -> str:
        """The failure text pytest and JUnit show (the lock's words where the lock is why it fails).

        ``tb_style`` is pytest's ``--tb``: how much of a failed probe's traceback is shown.
        """
        from claimcheck.engine.explain import failure_text

        result = self.result
        where = f" ({lock})" if lock is not None else ""
        if self.agreement is Agreement.CHANGED:
            return (f"{result.item_id}: verdict changed: expected {self.expected}{where}, now {result.verdict}: "
                    f"{result.reason}. If the change is right, accept it: claimcheck accept")
        if self.agreement is Agreement.UNREVIEWED:
            return (f"{result.item_id}: {result.verdict} on {result.machine_class}, with no expected verdict"
                    f"{' in ' + str(lock) if lock is not None else ''}: {result.reason}. Review it, then "
                    "(from a run on a committed tree): claimcheck accept --update")
        return failure_text(result, tb_style)

    def properties(self) -> list[tuple[str, str]]:
        """The JUnit properties of the item: final and raw verdict, expectation, estimate, interval and n."""
        result = self.result
        found = [("verdict", result.verdict.value), ("raw_verdict", result.raw_verdict.value)]
        if self.expected is not None:
            found.append(("expected", self.expected.value))
        if self.agreement is not None:
            found.append(("agreement", self.agreement.value))
        decision = result.decision
        if decision is not None:
            for name, value in (("estimate", decision.statistic), ("low", decision.low), ("high", decision.high)):
                if math.isfinite(value):
                    found.append((name, f"{value:.6g}"))
            found.append(("n", str(decision.n)))
        return found


def figure_of(result: ItemResult) -> Figure:
    """The rule's figure declaration for a result (the plain value figure when the rule is unknown)."""
    from claimcheck import rules

    name = result.claim.check.rule or (result.decision.rule if result.decision is not None else "")
    try:
        return rules.get(name).figure
    except (KeyError, ValueError):
        return VALUE


def judged(result: ItemResult, expectations: Judge | None) -> tuple[Agreement | None, Verdict | None]:
    """The agreement of a final result with the lock, and the verdict it expects.

    ``(None, None)`` for controls, for a machine class the lock has no section for (the plain rule
    applies; the summary says so), and where the lock has nothing to compare (n/a, error, stale).
    """
    if expectations is None or result.control_for is not None or not expectations.covers(result.machine_class,
                                                                                         result.item_id):
        return None, None
    expected = expectations.expected(result.machine_class, result.item_id)
    agreement = compare(result.verdict, expected)
    if agreement is Agreement.NOT_COMPARED:
        return None, expected
    return agreement, expected


def find(result: ItemResult, expectations: Judge | None = None, flags: Flags = Flags(), *,
         not_shown: bool = False) -> Finding:
    """The finding of one final result.

    Args:
        expectations: the lock (None without one).
        flags: the run's ``--claims-strict`` and ``--claims-cascade``.
        not_shown: the claim's positive control ran and was not refuted.
    """
    role = Role.CONTROL if result.control_for is not None else Role.NOT_SHOWN if not_shown else Role.CLAIM
    agreement, expected = judged(result, expectations)
    return Finding(result, treat(result.verdict, agreement, role=role, flags=flags), role, agreement, expected,
                   figure_of(result))


def find_all(results: Sequence[ItemResult], expectations: Judge | None = None,
             flags: Flags = Flags()) -> list[Finding]:
    """The findings of a run's final results, in order; a claim whose control was not refuted is marked so."""
    unsupported = {r.control_for for r in results if r.control_for is not None and r.verdict is not Verdict.REFUTED}
    return [find(result, expectations, flags, not_shown=result.control_for is None and result.claim_id in unsupported)
            for result in results]
