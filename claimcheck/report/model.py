"""Everything a report shows about one run, gathered from the evidence store once.

The markdown index, the HTML page, the correction files and the plots all
render this one object, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from claimcheck.claim import Claim
from claimcheck.outcome import Finding
from claimcheck.outcome.run import RunOutcome
from claimcheck.report import banner, text
from claimcheck.report.anchors import DocLink
from claimcheck.store import VERDICTS, Drift, EvidenceStore, StoredResult, StoredRun
from claimcheck.verdict import SEVERITY, Verdict

VERDICT_ORDER = tuple(verdict.value for verdict in SEVERITY)


@dataclass
class ClaimItems:
    """The items of one claim that share a verdict kind (grid items share the claim id)."""

    claim_id: str
    claim: Claim
    items: list[StoredResult]


@dataclass
class RunReport:
    """One run with its items, claims, drift and the evidence from other machine classes."""

    run: StoredRun
    items: list[StoredResult]
    claims: dict[str, Claim]
    drift: list[Drift]
    previous_run_id: str | None
    elsewhere: dict[str, list[StoredResult]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    history: dict[str, list[StoredResult]] = field(default_factory=dict)
    links: dict[str, list[DocLink]] = field(default_factory=dict)
    outcome: RunOutcome | None = None

    def finding(self, item: StoredResult) -> Finding:
        """The item's finding as the run recorded it (its judgement: flags, lock, expected verdict)."""
        if self.outcome is None:
            raise ValueError(f"run {self.run.run_id}: the report has no outcome")
        return self.outcome.finding(item.item_id)

    @property
    def judged(self) -> str:
        """What the run's items were judged against, in words (``judged against claims/verdicts.lock (…)``)."""
        return self.outcome.judgement.describe() if self.outcome is not None else ""

    @property
    def classes(self) -> list[str]:
        """Every machine class the claims' history has a run of, this run's first."""
        found = {row.machine_class for rows in self.history.values() for row in rows if row.machine_class}
        return [self.run.machine_class] * (self.run.machine_class in found) + sorted(found - {self.run.machine_class})

    def latest_by_class(self, claim_id: str) -> dict[str, dict[str, StoredResult]]:
        """Item id -> machine class -> the latest stored result of that item there (this run's, for its class)."""
        out: dict[str, dict[str, StoredResult]] = {}
        for row in self.history.get(claim_id, []):
            if row.machine_class == self.run.machine_class and row.run_id != self.run.run_id:
                continue
            out.setdefault(row.item_id, {})[row.machine_class] = row
        return out

    @property
    def counts(self) -> dict[str, int]:
        """Verdicts of the claims' own items; positive controls (which must refute) are counted apart."""
        return _count(item for item in self.items if item.result.control_for is None)

    @property
    def control_counts(self) -> dict[str, int]:
        """Verdicts of the positive controls alone (refuted is what each must be)."""
        return _count(self.controls)

    @property
    def claim_items(self) -> list[StoredResult]:
        """The items that are claims, not positive controls."""
        return [item for item in self.items if item.result.control_for is None]

    @property
    def not_shown_able_to_fail(self) -> list[StoredResult]:
        """Items that hold although their claim's positive control was not refuted here."""
        return [item for item in self.items if item.verdict is Verdict.HOLDS and item.result.control is not None
                and not item.result.control.shown_able_to_fail]

    @property
    def controls(self) -> list[StoredResult]:
        """The positive controls that ran (each a claim's check under parameters where it must be refuted)."""
        return [item for item in self.items if item.result.control_for is not None]

    def with_verdict(self, verdict: Verdict) -> list[ClaimItems]:
        """Claims having items of ``verdict``, in recording order, each with those items."""
        groups: dict[str, ClaimItems] = {}
        for item in self.items:
            if item.verdict is not verdict:
                continue
            group = groups.setdefault(item.claim_id, ClaimItems(item.claim_id, item.claim, []))
            group.items.append(item)
        return list(groups.values())

    def items_of(self, claim_id: str) -> list[StoredResult]:
        return [item for item in self.items if item.claim_id == claim_id]

    def stands(self, claim_id: str, verdict: Verdict) -> list[str]:
        """What of a claim still stands, to say beside what is overturned."""
        lines = []
        holding = [i for i in self.items_of(claim_id) if i.verdict is Verdict.HOLDS]
        if holding:
            labels = "; ".join(f"{text.grid_label(i) or i.item_id} ({text.figure(i)})" for i in holding)
            lines.append(f"It stands here for {labels}")
        for row in self.elsewhere.get(claim_id, []):
            lines.append(
                f"On another machine class ({row.machine_class}, run {row.run_id}, "
                f"{text.run_date(row.run_started)}) it held: "
                f"{row.item_id} measured {text.measured(row)}"
            )
        claim = self.claims.get(claim_id)
        items = [i for i in self.items_of(claim_id) if i.verdict is verdict]
        if verdict is Verdict.INCONSISTENT and items:
            lines.append("Every printed input stands, and so does the figure for the readings that give it; "
                         "what is open is which input the source computed it from")
        elif verdict is Verdict.REFUTED and items and all(text.is_computed(i) for i in items):
            inputs = text.params_label(items[0].params)
            if inputs:
                lines.append(f"The inputs as printed ({inputs}) stand; only the figure derived from them is overturned")
        elif verdict is Verdict.REFUTED and claim is not None and not holding and not self.elsewhere.get(claim_id):
            if claim.scope.kind == "as-stated":
                lines.append(
                    f"It was checked inside its stated scope ({text.scope_text(claim.scope)}), "
                    "so it does not stand as written"
                )
            else:
                doc = claim.source.doc or "the source"
                setup, model_named = banner.measured_setup(items, self.run.machine)
                if model_named:
                    lines.append(f"It may still stand as stated for the model and machine {doc} measured on; "
                                 f"it does not carry over to {setup}")
                else:
                    lines.append(
                        f"It may still stand as stated for the machine {doc} measured on only; "
                        "it is not portable to this one"
                    )
        return lines


def _elsewhere(history: Mapping[str, list[StoredResult]], run: StoredRun, claim_ids: set[str]) -> dict[str, list[StoredResult]]:
    """Latest holding item per claim and other machine class, labelled as such (never compared)."""
    found: dict[str, list[StoredResult]] = {}
    for claim_id in sorted(claim_ids):
        latest: dict[tuple[str, str], StoredResult] = {}
        for row in history.get(claim_id, []):
            if row.machine_class == run.machine_class or row.run_id == run.run_id:
                continue
            latest[(row.machine_class, row.item_id)] = row
        holding = [row for row in latest.values() if row.verdict is Verdict.HOLDS]
        if holding:
            found[claim_id] = holding
    return found


def gather(store: EvidenceStore, run_id: str | None = None) -> RunReport:
    """Collect a run (the latest when ``run_id`` is None), its recorded outcome and everything shown beside it.

    Beside the run, only runs that are evidence of their class (whole, finished, adjudicated) are shown:
    a shard or a run of one item is not a class's latest figure.
    """
    run = store.resolve_run(run_id)
    items = store.results(run.run_id)
    claims = store.claims(run.run_id)
    for item in items:
        claims.setdefault(item.claim_id, item.claim)
    previous = store.previous_run(run.run_id)
    troubled = {i.claim_id for i in items if i.verdict in (Verdict.REFUTED, Verdict.INCONCLUSIVE)}
    shown = {found.run_id for found in store.evidence_runs()} | {run.run_id}
    history = {claim_id: [row for row in store.history(claim_id) if row.run_id in shown] for claim_id in claims}
    return RunReport(
        run=run,
        items=items,
        outcome=store.outcome(run.run_id),
        claims=claims,
        drift=store.drift(run.run_id),
        previous_run_id=previous.run_id if previous else None,
        elsewhere=_elsewhere(history, run, troubled),
        history=history,
    )


def _count(items: Iterable[StoredResult]) -> dict[str, int]:
    counts = {verdict: 0 for verdict in VERDICTS}
    for item in items:
        counts[item.verdict.value] = counts.get(item.verdict.value, 0) + 1
    return counts
