"""The verdict policy written out as a table (``docs/outcomes.md``), from the policy itself.

``python -m claimcheck.outcome.table > docs/outcomes.md`` regenerates it; a test keeps the file current,
so what the docs say a verdict does is what it does.
"""

from __future__ import annotations

from claimcheck.engine.expectations import ACCEPTED, Agreement, compare
from claimcheck.outcome.policy import Flags, Role, treat
from claimcheck.verdict import SEVERITY, Verdict

HEADER = """# What each verdict does

Generated from `claimcheck/outcome/policy.py` by `python -m claimcheck.outcome.table`; do not edit by hand.
One row per final verdict and what the expected verdicts (`claims/verdicts.lock`) say of it. The
terminal, JUnit, the reports, the docs gate and the CI summary all read this one table.

- **letter / word**: pytest's progress character and verbose word; **category**: the word counted in
  pytest's summary line.
- **fails the run**: plain / with `--claims-strict` / with `--claims-cascade=fail`.
- **JUnit**: `failure` and `error` only where the run fails; `skipped` (with the verdict and reason as
  its message) for an item that is not decided, so a dashboard never shows it green.
- **report**: `correction` (`corrections/<id>.md`), `note` (`inconclusive/<id>.md`) or none.
- **CI**: the GitHub annotation level of the item in the run's summary.
"""


def _cell(flag: bool) -> str:
    return "yes" if flag else "no"


def _row(verdict: Verdict, expected: str, agreement: Agreement | None, role: Role = Role.CLAIM) -> str:
    plain = treat(verdict, agreement, role=role)
    strict = treat(verdict, agreement, role=role, flags=Flags(strict=True))
    cascade = treat(verdict, agreement, role=role, flags=Flags(cascade_fails=True))
    fails = " / ".join(_cell(t.fails_run) for t in (plain, strict, cascade))
    return (f"| {verdict.value} | {expected} | `{plain.letter}` {plain.word} | {plain.category} | {fails} | "
            f"{plain.junit} | {plain.report or '—'} | {plain.ci_level or '—'} |")


def markdown() -> str:
    """The whole table, as ``docs/outcomes.md`` holds it."""
    lines = [HEADER, "## Claims", "",
             "| verdict | expected | letter / word | category | fails the run | JUnit | report | CI |",
             "|---|---|---|---|---|---|---|---|"]
    seen: set[tuple[Verdict, Agreement | None]] = set()
    for verdict in SEVERITY:
        judged = any(compare(verdict, expected) is not Agreement.NOT_COMPARED for expected in (None, *ACCEPTED))
        lines.append(_row(verdict, "no lock for the class" if judged else "any (the lock does not judge it)", None))
        for expected in (None, *ACCEPTED):
            agreement = compare(verdict, expected)
            if agreement is Agreement.NOT_COMPARED or (verdict, agreement) in seen:
                continue
            seen.add((verdict, agreement))
            label = f"{agreement.value} ({expected.value if expected else 'none accepted'})"
            lines.append(_row(verdict, label, agreement))
    lines += ["", "## Positive controls and the claims they test", "",
              "| verdict | item | letter / word | category | fails the run | JUnit | report | CI |",
              "|---|---|---|---|---|---|---|---|"]
    for verdict in SEVERITY:
        lines.append(_row(verdict, "a claim's control", None, Role.CONTROL))
    lines.append(_row(Verdict.HOLDS, "a claim whose control was not refuted", None, Role.NOT_SHOWN))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(markdown(), end="")
