"""Expected verdicts, committed: what each claim item is known to conclude on each machine class.

A known refutation (the source doc's own arithmetic, a figure that is Metal-only)
is a finding, not a regression; a run that reports it again is as expected. What
must fail a run is a *change*: holds becoming refuted or the reverse, or a
decided item nobody has reviewed yet. ``claimcheck accept`` writes the verdicts
of a run into ``claims/verdicts.lock`` (YAML, one section per machine class, so
CPU, CUDA and Metal expectations live side by side), and the change is reviewed
in the pull request like a snapshot.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from claimcheck.errors import ClaimcheckError
from claimcheck.verdict import Verdict

if TYPE_CHECKING:
    from claimcheck.engine.result import ItemResult

LOCK_NAME = "verdicts.lock"
LOCK_VERSION = 1
DECIDED = (Verdict.HOLDS, Verdict.REFUTED)
# An item the machine cannot decide is expected to stay undecided; an arithmetic figure the source
# contradicts (some readings hold, some do not) is expected to stay so on every machine.
UNSETTLED = (Verdict.INCONCLUSIVE, Verdict.INCONSISTENT)
ACCEPTED = (*DECIDED, *UNSETTLED)
HEADER = ("# Expected verdicts per machine class, written by `claimcheck accept` from a run.\n"
          "# A run passes when every decided item matches; review changes here like a snapshot.\n"
          "# `all-classes`: expectations no machine can change (each says why), applied on every class.\n")
#: The lock's section of expectations that apply on every machine class.
EVERY_CLASS = "all-classes"


class LockError(ClaimcheckError):
    """The lock file cannot be read or written; ``str()`` is one line naming the file."""


@dataclass(frozen=True)
class ClassExpectations:
    """Expected verdicts of one machine class, and the run they were accepted from."""

    run_id: str
    items: Mapping[str, Verdict]
    #: the run each item was accepted from, where it is not ``run_id`` (``accept --update`` of a few items)
    provenance: Mapping[str, str] = field(default_factory=dict)

    def run_of(self, item_id: str) -> str:
        """The run an item's expectation was accepted from."""
        return self.provenance.get(item_id, self.run_id)


@dataclass(frozen=True)
class Independent:
    """An expectation no machine can change, and why: it holds on every class (of ``backend``, when named).

    Arithmetic on a source's printed figures is the same everywhere; a seeded, deterministic
    curve result or numerical check is the same wherever the backend is (``backend: cpu``).
    """

    verdict: Verdict
    why: str
    backend: str = "any"
    run_id: str = ""  # the run it was accepted from, when ``claimcheck accept`` wrote it

    def applies(self, machine_class: str) -> bool:
        """Whether this expectation holds on ``machine_class`` (``backend/device/memory``)."""
        return self.backend == "any" or machine_class.split("/", 1)[0] == self.backend


@dataclass
class Expectations:
    """Every machine class's expected verdicts, and those that hold on every class."""

    classes: dict[str, ClassExpectations] = field(default_factory=dict)
    every_class: dict[str, Independent] = field(default_factory=dict)

    def expected(self, machine_class: str, item_id: str) -> Verdict | None:
        """The accepted verdict of an item on a machine class (its own section first), or ``None``."""
        found = self.classes.get(machine_class)
        if found is not None and item_id in found.items:
            return found.items[item_id]
        independent = self.every_class.get(item_id)
        return independent.verdict if independent is not None and independent.applies(machine_class) else None

    def covers(self, machine_class: str, item_id: str | None = None) -> bool:
        """Whether the lock judges ``machine_class`` (or, given ``item_id``, that item there); else the plain rule.

        A class without a section of its own is still judged on the items of the every-class section.
        """
        if machine_class in self.classes:
            return True
        return item_id is not None and item_id in self.every_class and self.every_class[item_id].applies(machine_class)


class Agreement(Enum):
    """How a final verdict compares with its expectation."""

    AS_EXPECTED = "as expected"
    EXPECTED_REFUTATION = "expected refutation"  # refuted, and accepted as refuted: shown like a strict xfail
    CHANGED = "changed"  # holds <-> refuted: fails the run
    UNREVIEWED = "no expectation"  # decided, never accepted: fails the run
    UNDECIDED = "undecided"  # inconclusive or inconsistent against another expectation: a warning (a failure
    # under --claims-strict)
    NEWLY_DECIDED = "newly decided"  # decided where inconclusive/inconsistent was accepted: a warning; accept it
    NOT_COMPARED = "not compared"  # nothing to compare: not applicable, error, stale, or nothing expected


def compare(verdict: Verdict, expected: Verdict | None) -> Agreement:
    """The agreement of one final verdict with its expectation."""
    if verdict in DECIDED:
        if expected is None:
            return Agreement.UNREVIEWED
        if expected is verdict:
            return Agreement.EXPECTED_REFUTATION if verdict is Verdict.REFUTED else Agreement.AS_EXPECTED
        if expected in DECIDED:
            return Agreement.CHANGED
        if expected in UNSETTLED:
            return Agreement.NEWLY_DECIDED
        return Agreement.UNREVIEWED
    if verdict in UNSETTLED and expected is verdict:
        return Agreement.AS_EXPECTED
    if verdict in UNSETTLED and expected in ACCEPTED:
        return Agreement.UNDECIDED
    return Agreement.NOT_COMPARED


def read(path: Path) -> Expectations:
    """The lock file at ``path``; an empty set of expectations when it does not exist."""
    if not path.exists():
        return Expectations()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as error:
        raise LockError(f"{path}: cannot read the expected verdicts ({' '.join(str(error).split())})") from None
    if not isinstance(data, dict) or data.get("version") != LOCK_VERSION or not isinstance(data.get("classes"), dict):
        raise LockError(f"{path}: not a version-{LOCK_VERSION} verdict lock (write it with `claimcheck accept`)")
    out = Expectations(every_class=_read_every_class(path, data.get(EVERY_CLASS)))
    for machine_class, section in data["classes"].items():
        if not isinstance(section, dict) or not isinstance(section.get("items"), dict):
            raise LockError(f"{path}: machine class {machine_class!r} has no `items` mapping")
        items: dict[str, Verdict] = {}
        for item_id, value in section["items"].items():
            try:
                items[str(item_id)] = Verdict(value)
            except ValueError:
                raise LockError(f"{path}: {machine_class} / {item_id}: {value!r} is not a verdict") from None
        runs = section.get("runs") or {}
        if not isinstance(runs, dict):
            raise LockError(f"{path}: machine class {machine_class!r}: `runs` is not a mapping of item to run id")
        out.classes[str(machine_class)] = ClassExpectations(str(section.get("run", "")), items,
                                                            {str(k): str(v) for k, v in runs.items() if k in items})
    return out


def _read_every_class(path: Path, section: object) -> dict[str, Independent]:
    if section is None:
        return {}
    items = section.get("items") if isinstance(section, dict) else None
    if not isinstance(items, dict):
        raise LockError(f"{path}: `{EVERY_CLASS}` has no `items` mapping")
    out: dict[str, Independent] = {}
    for item_id, entry in items.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("why"), str) or not entry["why"].strip():
            raise LockError(f"{path}: {EVERY_CLASS} / {item_id}: expected {{verdict: ..., why: ...}} (the reason "
                            "the item cannot depend on the machine)")
        try:
            out[str(item_id)] = Independent(Verdict(entry.get("verdict")), entry["why"].strip(),
                                            str(entry.get("backend", "any")), str(entry.get("run", "")))
        except ValueError:
            raise LockError(f"{path}: {EVERY_CLASS} / {item_id}: {entry.get('verdict')!r} is not a verdict") from None
    return out


def accepted(current: Expectations, machine_class: str, run_id: str,
             verdicts: Iterable[tuple[str, Verdict]], *, update: bool = False,
             independent: Mapping[str, tuple[str, str]] | None = None) -> Expectations:
    """``current`` with one machine class's section replaced by a run's verdicts (others kept).

    Holds, refuted, inconclusive and inconsistent are accepted; not-applicable, error and stale are not
    expectations. With ``update`` the run may be part of the suite (``pytest claims/ -k NEW``): items it
    did not run keep their expectation and the run they came from, so accepting a few new claims drops
    nothing; the items it adds record this run as theirs. ``independent`` maps the items no machine can
    change (decided exactly by a deterministic probe) to ``(backend, why)``: they go to the every-class
    section, so the next machine class does not have to accept its own arithmetic again.
    """
    ran = list(verdicts)
    independent = independent or {}
    old = current.classes.get(machine_class)
    keep = bool(update and old)
    items = dict(old.items) if keep and old else {}
    provenance = {k: old.run_of(k) for k in items} if keep and old else {}
    every = dict(current.every_class)
    for item_id, verdict in ran:
        items.pop(item_id, None)
        provenance.pop(item_id, None)
        known = every.get(item_id)
        if item_id in independent and verdict in DECIDED:
            backend, why = independent[item_id]
            if known is None or known.backend == backend:
                if known is None or known.verdict is not verdict:
                    every[item_id] = Independent(verdict, why, backend, run_id)
                continue
            # the every-class entry is another backend's (a model's kernels differ between backends):
            # this class keeps its own expectation, and the other backend's stays as it is
        if known is not None and known.applies(machine_class) and known.verdict is verdict:
            continue  # the every-class section already says so
        if verdict in ACCEPTED:
            items[item_id] = verdict
            provenance[item_id] = run_id
    section_run = old.run_id if keep and old and old.run_id else run_id
    provenance = {k: v for k, v in sorted(provenance.items()) if v != section_run and k in items}
    classes = dict(current.classes)
    classes[machine_class] = ClassExpectations(section_run, dict(sorted(items.items())), provenance)
    return Expectations(dict(sorted(classes.items())), every)


def machine_independent(result: ItemResult, machine_class: str) -> tuple[str, str] | None:
    """``(backend, why)`` for an item decided exactly by a deterministic probe, else ``None``.

    Arithmetic without a model is the same on every machine; a deterministic probe over a model's
    weights is the same wherever the backend is (the kernels differ between backends).
    """
    if not result.deterministic:
        return None
    claim = result.claim
    name = claim.probe.name
    if claim.scope.model is None and claim.scope.backend == "any":
        return "any", f"arithmetic on the source's printed figures (deterministic probe `{name}`): the same on every " \
                      "machine"
    backend = machine_class.split("/", 1)[0]
    return backend, f"decided exactly by the deterministic probe `{name}`: the same wherever the backend is {backend}"


def render(expectations: Expectations) -> str:
    """The lock file's text: sorted, one line per item, so a change reads as a small diff."""
    data: dict[str, object] = {"version": LOCK_VERSION}
    if expectations.every_class:
        data[EVERY_CLASS] = {"items": {
            item_id: {"verdict": entry.verdict.value, "backend": entry.backend, "why": entry.why,
                      **({"run": entry.run_id} if entry.run_id else {})}
            for item_id, entry in sorted(expectations.every_class.items())}}
    classes: dict[str, object] = {}
    for machine_class, section in sorted(expectations.classes.items()):
        body: dict[str, object] = {"run": section.run_id,
                                   "items": {k: v.value for k, v in sorted(section.items.items())}}
        if section.provenance:
            body["runs"] = dict(sorted(section.provenance.items()))  # items accepted from another run
        classes[machine_class] = body
    data["classes"] = classes
    return HEADER + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=200)


def write(path: Path, expectations: Expectations) -> None:
    """Write the lock file (:func:`render`)."""
    text = render(expectations)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise LockError(f"{path}: cannot write the expected verdicts ({error.strerror})") from None
