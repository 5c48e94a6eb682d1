"""A run judged against the expected verdicts: which items fail pytest, and the summary lines.

With a lock file (:mod:`claimcheck.expectations`) a decided item passes when its final
verdict is the accepted one, and a known refutation shows as an expected failure
instead of failing the run again; a holds ↔ refuted change, or a decided item that
nobody accepted, fails the run. Without a lock the run keeps the plain rule
(a refutation fails).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from claimcheck.expectations import Agreement, Expectations, compare
from claimcheck.result import ItemResult
from claimcheck.verdict import Verdict

#: pytest's (category, letter, word) for each judged agreement, and whether it fails the run.
OUTCOMES: dict[Agreement, tuple[tuple[str, str, Any], bool]] = {
    Agreement.AS_EXPECTED: (("passed", ".", "PASSED"), False),
    Agreement.EXPECTED_REFUTATION: (("expected refutation", "x", ("EXPECTED REFUTATION", {"yellow": True})), False),
    Agreement.CHANGED: (("failed", "F", ("VERDICT CHANGED", {"red": True})), True),
    Agreement.UNREVIEWED: (("failed", "F", ("NO EXPECTATION", {"red": True})), True),
    Agreement.UNDECIDED: (("inconclusive", "?", ("INCONCLUSIVE", {"yellow": True})), False),
    Agreement.NEWLY_DECIDED: (("passed", ".", ("NEWLY DECIDED", {"yellow": True})), False),
}

INCONSISTENT_CATEGORY: tuple[str, str, Any] = ("inconsistent", "~", ("INCONSISTENT", {"yellow": True}))


@dataclass(frozen=True)
class Judged:
    """One item's final verdict against its expectation."""

    agreement: Agreement
    expected: str | None
    category: tuple[str, str, Any]
    failing: bool

    def message(self, result: ItemResult, lock: Path) -> str:
        """The failure text of an item the lock fails."""
        if self.agreement is Agreement.CHANGED:
            return (f"{result.item_id}: verdict changed: expected {self.expected} ({lock}), now {result.verdict.value}: "
                    f"{result.reason}. If the change is right, accept it: claimcheck accept")
        return (f"{result.item_id}: {result.verdict.value} on {result.machine_class}, with no expected verdict in {lock}: "
                f"{result.reason}. Review it, then: claimcheck accept")


def judge(result: ItemResult, expectations: Expectations, *, strict: bool) -> Judged | None:
    """How the lock judges one final result; ``None`` when it has nothing to say (n/a, error, stale, controls)."""
    if result.control_for is not None or not expectations.covers(result.machine_class, result.item_id):
        return None  # a machine class with no section yet is judged by the plain rule (the summary says so)
    expected = expectations.expected(result.machine_class, result.item_id)
    agreement = compare(result.verdict, expected)
    if agreement is Agreement.NOT_COMPARED:
        return None
    category, failing = OUTCOMES[agreement]
    if agreement is Agreement.AS_EXPECTED and result.verdict is Verdict.INCONCLUSIVE:
        category, failing = OUTCOMES[Agreement.UNDECIDED]  # still undecided, as accepted: shown as inconclusive
    if result.verdict is Verdict.INCONSISTENT:
        category, failing = INCONSISTENT_CATEGORY, False  # the source contradicts itself: its own count
    if result.verdict in (Verdict.INCONCLUSIVE, Verdict.INCONSISTENT) and strict:
        word = "INCONCLUSIVE" if result.verdict is Verdict.INCONCLUSIVE else "INCONSISTENT"
        category, failing = ("failed", "F", (word, {"red": True})), True
    return Judged(agreement, expected.value if expected else None, category, failing)


def summary_lines(judged: Mapping[str, Judged], lock: Path, unlocked: str | None = None) -> list[str]:
    """The expectation lines of the terminal summary.

    Args:
        unlocked: a machine class this run measured that the lock has no section for.
    """
    if unlocked:
        return [f"expected verdicts ({lock}): none for machine class {unlocked}; judged without them "
                "(refuted fails). `claimcheck accept` adds them once the run is reviewed"]
    if not judged:
        return []
    counts: dict[Agreement, int] = {}
    for item in judged.values():
        counts[item.agreement] = counts.get(item.agreement, 0) + 1
    parts = [f"{n} {agreement.value}" for agreement, n in sorted(counts.items(), key=lambda kv: kv[0].value)]
    lines = [f"expected verdicts ({lock}): " + ", ".join(parts)]
    for nodeid, item in sorted(judged.items()):
        if item.agreement is Agreement.NEWLY_DECIDED:
            lines.append(f"{item.agreement.value}: {nodeid} (unsettled when accepted; review it, then: claimcheck accept)")
        elif item.agreement in (Agreement.CHANGED, Agreement.UNREVIEWED):
            lines.append(f"{item.agreement.value}: {nodeid}" + (f" (expected {item.expected})" if item.expected else ""))
    return lines
