"""The verdict policy: what a final verdict means to the run and to every surface that shows it.

One table maps (final verdict, its agreement with the expected verdicts, the item's role) to a
:class:`Treatment`; ``--claims-strict`` and ``--claims-cascade=fail`` turn an undecided or stale row into a
failing one in one place (:func:`treat`). The terminal, JUnit, the reports, the docs gate and the CI
summary read a treatment and never decide anything of their own, so they cannot disagree.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Literal

from claimcheck.engine.expectations import Agreement
from claimcheck.verdict import Verdict

JunitKind = Literal["passed", "skipped", "failure", "error"]
ReportKind = Literal["correction", "note"]
CiLevel = Literal["error", "warning", "notice"]
Markup = Literal["green", "red", "yellow"]


class Role(enum.Enum):
    """What an item is for: a claim, a claim's positive control, or a claim holding without a refuted control."""

    CLAIM = "claim"
    CONTROL = "control"
    NOT_SHOWN = "not shown able to fail"


@dataclass(frozen=True)
class Treatment:
    """How one final verdict is shown everywhere, and whether it fails the run.

    Attributes:
        fails_run: the run's exit status counts this item as a failure.
        category: pytest's summary word (``3 inconclusive``) and terminal-stats key.
        letter: the progress character.
        word: the verbose status word (``EXPECTED REFUTATION``).
        markup: terminal colour of the word.
        junit: the JUnit element: ``failure`` only where the run fails, ``skipped`` for undecided items.
        report: ``correction`` (the figure is overturned or contradicted), ``note`` (it could not be
            confirmed) or None (no report file).
        ci_level: the GitHub annotation level, or None for no annotation.
        listed: how the terminal summary lists the item under its word: ``chain`` (with the premise chain
            that made it stale) or ``reason`` (with its reason: the source's readings disagree), or None.
    """

    fails_run: bool
    category: str
    letter: str
    word: str
    markup: Markup
    junit: JunitKind
    report: ReportKind | None
    ci_level: CiLevel | None
    listed: Literal["chain", "reason"] | None = None

    @property
    def skips(self) -> bool:
        """The item measured nothing here (outside its scope): pytest reports it skipped, with the reason."""
        return self.category == "skipped"


def _row(category: str, letter: str, word: str, markup: Markup, junit: JunitKind, report: ReportKind | None,
         ci_level: CiLevel | None, *, fails: bool = False, listed: Literal["chain", "reason"] | None = None
         ) -> Treatment:
    return Treatment(fails, category, letter, word, markup, junit, report, ci_level, listed)


_PASS = _row("passed", ".", "PASSED", "green", "passed", None, None)
_REFUTED = _row("failed", "F", "REFUTED", "red", "failure", "correction", "error", fails=True)
_INCONCLUSIVE = _row("inconclusive", "?", "INCONCLUSIVE", "yellow", "skipped", "note", "warning")
_INCONSISTENT = _row("inconsistent", "~", "INCONSISTENT", "yellow", "skipped", "correction", "warning",
                     listed="reason")
# Letters: one meaning each, except `F` (every outcome that fails the run) and `.` (every one that passes);
# `s` is pytest's skip (not applicable here), so a stale item is `S`.
_STALE = _row("stale", "S", "STALE", "yellow", "skipped", None, "warning", listed="chain")
_NOT_APPLICABLE = _row("skipped", "s", "NOT APPLICABLE", "yellow", "skipped", None, None)
_ERROR = _row("error", "E", "ERROR", "red", "error", None, "error", fails=True)

#: Final verdict -> treatment, without expectations (no lock, or a machine class it has no section for).
PLAIN: dict[Verdict, Treatment] = {
    Verdict.HOLDS: _PASS,
    Verdict.REFUTED: _REFUTED,
    Verdict.INCONCLUSIVE: _INCONCLUSIVE,
    Verdict.INCONSISTENT: _INCONSISTENT,
    Verdict.STALE: _STALE,
    Verdict.NOT_APPLICABLE: _NOT_APPLICABLE,
    Verdict.ERROR: _ERROR,
}

#: (final verdict, agreement with the lock) -> treatment; pairs not listed fall back to :data:`PLAIN`.
JUDGED: dict[tuple[Verdict, Agreement], Treatment] = {
    (Verdict.HOLDS, Agreement.AS_EXPECTED): _PASS,
    (Verdict.INCONCLUSIVE, Agreement.AS_EXPECTED): _INCONCLUSIVE,
    (Verdict.INCONSISTENT, Agreement.AS_EXPECTED): _INCONSISTENT,
    (Verdict.REFUTED, Agreement.EXPECTED_REFUTATION):
        _row("expected refutation", "x", "EXPECTED REFUTATION", "yellow", "skipped", "correction", "notice"),
    (Verdict.HOLDS, Agreement.CHANGED): _row("failed", "F", "VERDICT CHANGED", "red", "failure", None, "error",
                                             fails=True),
    (Verdict.REFUTED, Agreement.CHANGED): _row("failed", "F", "VERDICT CHANGED", "red", "failure", "correction",
                                               "error", fails=True),
    (Verdict.HOLDS, Agreement.UNREVIEWED): _row("failed", "F", "NO EXPECTATION", "red", "failure", None, "error",
                                                fails=True),
    (Verdict.REFUTED, Agreement.UNREVIEWED): _row("failed", "F", "NO EXPECTATION", "red", "failure", "correction",
                                                  "error", fails=True),
    (Verdict.INCONCLUSIVE, Agreement.UNDECIDED): _INCONCLUSIVE,
    (Verdict.INCONSISTENT, Agreement.UNDECIDED): _INCONSISTENT,
    (Verdict.HOLDS, Agreement.NEWLY_DECIDED): _row("passed", ".", "NEWLY DECIDED", "yellow", "passed", None,
                                                   "warning"),
    (Verdict.REFUTED, Agreement.NEWLY_DECIDED): _row("newly decided", "N", "NEWLY DECIDED", "yellow", "skipped",
                                                     "correction", "warning"),
}

#: Treatments of the two other roles, by final verdict (anything else: the plain row).
ROLES: dict[tuple[Role, Verdict], Treatment] = {
    (Role.CONTROL, Verdict.REFUTED): _row("controls", "c", "CONTROL REFUTED", "green", "passed", None, None),
    (Role.CONTROL, Verdict.HOLDS): _row("controls", "C", "CONTROL NOT REFUTED", "yellow", "skipped", None, "warning"),
    (Role.CONTROL, Verdict.INCONCLUSIVE): _row("controls", "C", "CONTROL NOT REFUTED", "yellow", "skipped", None,
                                               "warning"),
    (Role.NOT_SHOWN, Verdict.HOLDS): _row("not shown able to fail here", "n", "NOT SHOWN ABLE TO FAIL HERE", "yellow",
                                          "skipped", None, "warning"),
}

#: Verdict -> the colour of its marks in every picture and in the HTML report.
COLOURS: dict[Verdict, str] = {
    Verdict.HOLDS: "#2e7d32",
    Verdict.REFUTED: "#c62828",
    Verdict.INCONCLUSIVE: "#ef8f00",
    Verdict.STALE: "#6a1b9a",
    Verdict.INCONSISTENT: "#ad1457",
    Verdict.ERROR: "#616161",
    Verdict.NOT_APPLICABLE: "#9e9e9e",
}


@dataclass(frozen=True)
class Flags:
    """The run options that change what a verdict means: ``--claims-strict`` and ``--claims-cascade``."""

    strict: bool = False
    cascade_fails: bool = False


def _failing(treatment: Treatment, word: str) -> Treatment:
    return replace(treatment, fails_run=True, category="failed", letter="F", word=word, markup="red",
                   junit="failure", ci_level="error")


def treat(verdict: Verdict, agreement: Agreement | None = None, *, role: Role = Role.CLAIM,
          flags: Flags = Flags()) -> Treatment:
    """The treatment of one final verdict.

    Args:
        verdict: the item's final verdict.
        agreement: how it compares with the lock; None without one (the plain rule: a refutation fails).
        role: a claim, a positive control, or a claim whose control was not refuted.
        flags: ``--claims-strict`` fails undecided and stale items; ``--claims-cascade=fail`` fails stale ones.
    """
    found = ROLES.get((role, verdict)) if role is not Role.CLAIM else None
    if found is not None:
        return found
    if role is Role.CONTROL:  # a control that errored or was out of scope shows as such; nothing else fails
        return PLAIN[verdict] if verdict in (Verdict.ERROR, Verdict.NOT_APPLICABLE) else ROLES[(Role.CONTROL,
                                                                                                Verdict.HOLDS)]
    treatment = JUDGED.get((verdict, agreement), PLAIN[verdict]) if agreement is not None else PLAIN[verdict]
    if verdict in (Verdict.INCONCLUSIVE, Verdict.INCONSISTENT) and flags.strict:
        return _failing(treatment, treatment.word)
    if verdict is Verdict.STALE and (flags.strict or flags.cascade_fails):
        return _failing(treatment, "STALE")
    return treatment


def colour(verdict: Verdict) -> str:
    """The picture colour of a verdict."""
    return COLOURS[verdict]


def failing_premise(verdict: Verdict) -> bool:
    """Whether a premise with this verdict fails its dependants (they become stale)."""
    return verdict not in (Verdict.HOLDS, Verdict.NOT_APPLICABLE)


def cites_badly(verdict: Verdict) -> bool:
    """Whether a doc sentence citing an item with this verdict cites something that does not stand here."""
    return verdict not in (Verdict.HOLDS, Verdict.NOT_APPLICABLE)


#: Report kind -> the folder of the run's reports its files go to, and the word its JSON ``kind`` says.
REPORT_FOLDERS: dict[ReportKind, str] = {"correction": "corrections", "note": "inconclusive"}
REPORT_WORDS: dict[ReportKind, str] = {"correction": "correction", "note": "inconclusive"}


def report_kind(verdict: Verdict) -> ReportKind | None:
    """Whether an item with this final verdict gets a correction, a note, or no report file."""
    return PLAIN[verdict].report


def reported() -> list[Verdict]:
    """The verdicts that get a report file, most severe first (the order reports are written in)."""
    from claimcheck.verdict import SEVERITY

    return [verdict for verdict in SEVERITY if PLAIN[verdict].report is not None]


def undecided(verdict: Verdict) -> bool:
    """A verdict that neither confirms nor overturns the figure (its report is a note, not a correction)."""
    return PLAIN[verdict].report == "note"


def overturned(verdict: Verdict) -> bool:
    """A verdict whose report corrects the figure: refuted, or contradicted by the source's own readings."""
    return PLAIN[verdict].report == "correction"


def control_refuted(verdict: Verdict) -> bool:
    """Whether a positive control with this verdict showed its claim's measurement able to fail."""
    return verdict is Verdict.REFUTED


def standing(verdict: Verdict) -> bool:
    """A verdict under which the figure stands."""
    return verdict is Verdict.HOLDS


def not_checked(verdict: Verdict) -> bool:
    """A verdict under which nothing was checked here (outside the claim's scope)."""
    return verdict is Verdict.NOT_APPLICABLE
