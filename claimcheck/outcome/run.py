"""A run's outcome, made once when the run (or an adjudicated merge) ends and recorded with it.

Every surface after adjudication — the terminal, JUnit, the run's reports, ``claimcheck report``,
``publish``, the CI summary — renders a :class:`RunOutcome`. Its :class:`Judgement` keeps what the
policy was given (the run's flags, the lock's path and digest, each item's expected verdict), so a
reader rebuilding the findings from the store gets exactly what the run showed, whatever lock lies in
the tree today. Judging a run against *another* lock is the explicit :meth:`RunOutcome.rejudged`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from claimcheck.engine.expectations import Expectations
from claimcheck.engine.result import ItemResult
from claimcheck.outcome.finding import Finding, find_all
from claimcheck.outcome.policy import Flags
from claimcheck.verdict import Verdict

#: How a run stored before judgements were recorded is described: it is rendered with the plain rule.
NOT_RECORDED = "judged without a lock (recorded before judgements were kept)"


def lock_digest(path: Path) -> str | None:
    """The first 12 hex digits of the lock file's SHA-256 (``None`` without a readable file)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    except OSError:
        return None


@dataclass(frozen=True)
class RecordedExpectations:
    """The expectations a run was judged with, as recorded: item id -> expected verdict for each item judged.

    It answers the two questions :func:`~claimcheck.outcome.finding.judged` asks of a lock, so a
    finding rebuilt from the record is the one the run showed.
    """

    items: Mapping[str, Verdict | None] = field(default_factory=dict)

    def covers(self, machine_class: str, item_id: str | None = None) -> bool:  # noqa: ARG002 - the lock's signature
        return item_id is not None and item_id in self.items

    def expected(self, machine_class: str, item_id: str) -> Verdict | None:  # noqa: ARG002
        return self.items.get(item_id)


@dataclass(frozen=True)
class Judgement:
    """What the verdict policy was given for a run.

    Attributes:
        flags: ``--claims-strict`` and ``--claims-cascade`` as the run was started.
        expected: item id -> the verdict the lock expected, for each item the lock judged (absent: not judged).
        lock: the lock file's path as the run named it (None: no lock file).
        digest: the lock file's content digest when the run read it.
        unlocked_class: the run's machine class when the lock had no section for it.
        recorded: False for a run stored before judgements were kept (rendered with the plain rule).
    """

    flags: Flags = Flags()
    expected: Mapping[str, Verdict | None] = field(default_factory=dict)
    lock: str | None = None
    digest: str | None = None
    unlocked_class: str | None = None
    recorded: bool = True

    @classmethod
    def of(cls, results: Iterable[ItemResult], expectations: Expectations | None, flags: Flags,
           lock: Path | None, lock_file: Path | None = None) -> Judgement:
        """The judgement of ``results`` against ``expectations`` (the lock read from ``lock``).

        ``lock_file``: where the lock is read for its digest, when ``lock`` is named relative to a project root.
        """
        expected: dict[str, Verdict | None] = {}
        unlocked = None
        for result in results:
            if expectations is None or result.control_for is not None:
                continue
            if expectations.covers(result.machine_class, result.item_id):
                expected[result.item_id] = expectations.expected(result.machine_class, result.item_id)
            if result.machine_class and not expectations.covers(result.machine_class):
                unlocked = result.machine_class
        return cls(flags, expected, str(lock) if lock is not None and expectations is not None else None,
                   lock_digest(lock_file or lock) if lock is not None and expectations is not None else None,
                   unlocked)

    @property
    def expectations(self) -> RecordedExpectations | None:
        """The recorded expectations in the lock's shape (None: judged without a lock)."""
        return RecordedExpectations(self.expected) if self.lock is not None else None

    def describe(self) -> str:
        """``judged against claims/verdicts.lock (3f2a…)``, or why there was no lock."""
        if not self.recorded:
            return NOT_RECORDED
        if self.lock is None:
            return "judged without a lock (none was found)"
        where = f"{self.lock} ({self.digest})" if self.digest else self.lock
        if self.unlocked_class:
            return f"judged against {where}, which has no section for {self.unlocked_class} (a refutation fails)"
        return f"judged against {where}"

    def to_record(self) -> dict[str, Any]:
        return {"strict": self.flags.strict, "cascade_fails": self.flags.cascade_fails, "lock": self.lock,
                "digest": self.digest, "unlocked_class": self.unlocked_class,
                "expected": {item: verdict.value if verdict is not None else None
                             for item, verdict in self.expected.items()}}

    @classmethod
    def from_record(cls, record: Mapping[str, Any] | None, options: Mapping[str, Any]) -> Judgement:
        """The recorded judgement; a run without one is judged with its options' flags and no lock."""
        if not record:
            return cls(Flags(strict=bool(options.get("strict")), cascade_fails=options.get("cascade") == "fail"),
                       recorded=False)
        expected = {str(item): Verdict(value) if value is not None else None
                    for item, value in dict(record.get("expected") or {}).items()}
        return cls(Flags(strict=bool(record.get("strict")), cascade_fails=bool(record.get("cascade_fails"))),
                   expected, record.get("lock"), record.get("digest"), record.get("unlocked_class"))


@dataclass(frozen=True)
class RunOutcome:
    """A run's final findings with what they were judged against: the one object read after adjudication.

    Attributes:
        run_id, machine_class: the run.
        judgement: flags, lock and each item's expectation.
        findings: each item's final finding, in recording order.
        printed: item id -> the word pytest printed as the item finished, where it differs from the final one.
    """

    run_id: str
    machine_class: str
    judgement: Judgement
    findings: tuple[Finding, ...]
    printed: Mapping[str, str] = field(default_factory=dict)

    def finding(self, item_id: str) -> Finding:
        """The final finding of one item (``KeyError`` when the run has no such item)."""
        return self.by_item[item_id]

    @cached_property
    def by_item(self) -> dict[str, Finding]:
        """Item id -> its final finding."""
        return {found.item_id: found for found in self.findings}

    @property
    def fails(self) -> bool:
        """Whether the run's exit status was a failure on account of its items."""
        return any(found.fails_run for found in self.findings)

    def rejudged(self, expectations: Expectations | None, lock: Path | None = None) -> RunOutcome:
        """The same results judged against another lock (today's, say): an explicit, named re-judgement."""
        results = [found.result for found in self.findings]
        judgement = Judgement.of(results, expectations, self.judgement.flags, lock)
        return replace(self, judgement=judgement, findings=tuple(find_all(results, expectations,
                                                                          self.judgement.flags)), printed={})

    def changed_since_printed(self) -> list[tuple[str, str, str]]:
        """``(item, printed word, final word)`` for each item whose final outcome differs from what pytest printed."""
        final = self.by_item
        return [(item, word, final[item].treatment.word) for item, word in sorted(self.printed.items())
                if item in final and final[item].treatment.word != word]


def conclude(run_id: str, results: Sequence[ItemResult], expectations: Expectations | None, flags: Flags,
             lock: Path | None, printed: Mapping[str, str] | None = None, *,
             lock_file: Path | None = None) -> RunOutcome:
    """The one constructor of a run's outcome after adjudication.

    Args:
        results: the final, adjudicated results in recording order.
        printed: item id -> the word pytest printed as each item finished.
        lock_file: the lock's file when ``lock`` names it relative to the project root.
    """
    findings = tuple(find_all(results, expectations, flags))
    machine = next((r.machine_class for r in results if r.machine_class), "")
    final = {found.item_id: found.treatment.word for found in findings}
    shown = {item: word for item, word in (printed or {}).items() if final.get(item, word) != word}
    return RunOutcome(run_id, machine, Judgement.of(results, expectations, flags, lock, lock_file), findings, shown)


def recorded(run_id: str, machine_class: str, results: Sequence[ItemResult], judgement: Judgement,
             printed: Mapping[str, str] | None = None) -> RunOutcome:
    """A stored run's outcome, rebuilt from its results and its recorded judgement (what the run showed)."""
    findings = tuple(find_all(results, judgement.expectations, judgement.flags))
    return RunOutcome(run_id, machine_class, judgement, findings, dict(printed or {}))
