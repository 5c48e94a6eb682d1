"""The expected-verdict lines of a run's summary, rendered from its findings."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from claimcheck.engine.expectations import Agreement
from claimcheck.outcome.finding import Finding
from claimcheck.outcome.policy import Role

#: Agreements a reviewer must act on before the run can pass.
ALARMING = frozenset({Agreement.CHANGED, Agreement.UNREVIEWED})


def expectation_lines(findings: Mapping[str, Finding], lock: Path, unlocked: str | None = None) -> list[tuple[str, bool]]:
    """``(line, alarming)`` pairs: the agreement counts, then each item a reviewer must look at.

    Args:
        findings: by node id.
        unlocked: a machine class this run measured that the lock has no section for.
    """
    if unlocked:
        return [(f"expected verdicts ({lock}): none for machine class {unlocked}; judged without them "
                 "(refuted fails). `claimcheck accept` adds them once the run is reviewed", False)]
    judged = {nodeid: f for nodeid, f in findings.items() if f.agreement is not None}
    if not judged:
        return []
    counts: dict[str, int] = {}
    for finding in judged.values():
        assert finding.agreement is not None
        counts[finding.agreement.value] = counts.get(finding.agreement.value, 0) + 1
    lines = [(f"expected verdicts ({lock}): " + ", ".join(f"{n} {name}" for name, n in sorted(counts.items())), False)]
    for nodeid, finding in sorted(judged.items()):
        if finding.agreement is Agreement.NEWLY_DECIDED and finding.role is Role.NOT_SHOWN:
            lines.append((f"{finding.agreement.value}: {nodeid} (unsettled when accepted; it holds, but its control "
                          "was not refuted here, so `claimcheck accept` keeps it undecided)", False))
        elif finding.agreement is Agreement.NEWLY_DECIDED:
            lines.append((f"{finding.agreement.value}: {nodeid} (unsettled when accepted; review it, then: "
                          "claimcheck accept)", False))
        elif finding.agreement in ALARMING:
            assert finding.agreement is not None
            expected = f" (expected {finding.expected.value})" if finding.expected is not None else ""
            lines.append((f"{finding.agreement.value}: {nodeid}{expected}", True))
    return lines
