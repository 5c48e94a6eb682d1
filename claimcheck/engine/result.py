"""The typed result of one claim item, carried unchanged from the runner to the store and reports.

A result holds the raw decision and an ordered list of adjustments (between-run
widening, noise gate, family correction, cascade), each with its reason. The final verdict is the
last adjustment's, so every reader sees how it came about, and nothing
rewrites a verdict: a later step appends, it never edits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from claimcheck.claim import Claim
from claimcheck.stats import Decision
from claimcheck.verdict import Verdict

RECORD_VERSION = 2


@dataclass(frozen=True)
class Adjustment:
    """One change of verdict after the decision.

    Attributes:
        step: ``between-runs``, ``noise-gate``, ``family`` or ``cascade`` (applied in that order).
        before, after: the verdict going in and coming out.
        reason: one line a reader can act on.
        adjusted_pvalue: the family step's adjusted p-value.
        chain: the cascade step's premise chain, from the failing root to this claim.
    """

    step: str
    before: Verdict
    after: Verdict
    reason: str
    adjusted_pvalue: float | None = None
    chain: tuple[str, ...] = ()

    def to_record(self) -> dict[str, Any]:
        """JSON form."""
        record: dict[str, Any] = {"step": self.step, "before": self.before.value, "after": self.after.value,
                                  "reason": self.reason}
        if self.adjusted_pvalue is not None:
            record["adjusted_pvalue"] = self.adjusted_pvalue
        if self.chain:
            record["chain"] = list(self.chain)
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Adjustment:
        """Inverse of :meth:`to_record`."""
        pvalue = record.get("adjusted_pvalue")
        return cls(step=str(record["step"]), before=Verdict(record["before"]), after=Verdict(record["after"]),
                   reason=str(record.get("reason", "")),
                   adjusted_pvalue=float(pvalue) if isinstance(pvalue, (int, float)) else None,
                   chain=tuple(record.get("chain") or ()))


@dataclass(frozen=True)
class ControlOutcome:
    """What a claim's positive control showed: whether its measurement can refute it here.

    A control runs the claim's check under parameters where the claim must be false
    (``control:`` in the YAML). If the control is not refuted, a "holds" of the claim
    says nothing: the measurement was not shown able to fail on this machine.

    Attributes:
        item_id: the control's item (``claim-id[control]``).
        params: the probe parameters the control replaced.
        verdict: the control's final verdict.
        reason: the control's reason.
    """

    item_id: str
    params: Mapping[str, Any]
    verdict: Verdict
    reason: str

    @property
    def shown_able_to_fail(self) -> bool:
        """True when the control was refuted, as it must be."""
        return self.verdict is Verdict.REFUTED

    def to_record(self) -> dict[str, Any]:
        """JSON form."""
        return {"item_id": self.item_id, "params": dict(self.params), "verdict": self.verdict.value,
                "reason": self.reason, "shown_able_to_fail": self.shown_able_to_fail}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> ControlOutcome:
        """Inverse of :meth:`to_record`."""
        return cls(item_id=str(record.get("item_id", "")), params=dict(record.get("params") or {}),
                   verdict=Verdict(record.get("verdict", Verdict.ERROR.value)), reason=str(record.get("reason", "")))


def verdict_path(raw: Verdict, adjustments: Sequence[Adjustment]) -> str:
    """``refuted → noise-gate: inconclusive``: how a final verdict came about (steps that changed it)."""
    steps = [raw.value] + [f"{a.step}: {a.after.value}" for a in adjustments if a.after is not a.before]
    return " → ".join(steps)


@dataclass(frozen=True)
class ItemResult:
    """Everything known about one claim item after it ran.

    Attributes:
        claim: the claim as loaded (profile applied).
        item_id: the pytest item name, ``claim-id[grid point]``.
        params: the probe parameters of this item.
        raw_verdict, raw_reason: what the decision (or the scope check, or the probe failure) said within the run.
        decision: the statistical or exact decision; None when nothing was decided. A timing item's carries
            its between-run component (interval and p-values widened; the ``between-runs`` adjustment
            records the verdict it moved from).
        adjustments: the verdict changes after the decision, in the order applied.
        samples: every value the probe returned, by output (``output@level`` for swept levels).
        machine, machine_class: the fingerprint of where it ran and its class.
        info, artifacts: facts and evidence the probe recorded (JSON values).
        started, finished, duration_s: when it ran.
        control_for: set on a positive control's own result: the id of the claim it tests
            (the control's claim id is ``<claim-id>--control``, so it never counts as the claim).
        control: set on a claim's results when its control ran: what the control showed.
        content_key: the item's content key (:func:`claimcheck.engine.item_key.item_key`): what its
            measurement depends on; a later run whose key is the same may carry this result forward.
        carried_from: set when this result was not measured in its run but carried forward from
            an earlier one whose content key is the same: that run's id.
    """

    claim: Claim
    item_id: str
    params: Mapping[str, Any]
    raw_verdict: Verdict
    raw_reason: str
    decision: Decision | None = None
    adjustments: tuple[Adjustment, ...] = ()
    samples: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    machine: Mapping[str, Any] = field(default_factory=dict)
    machine_class: str = ""
    info: Mapping[str, Any] = field(default_factory=dict)
    artifacts: Mapping[str, Any] = field(default_factory=dict)
    started: str = ""
    finished: str = ""
    duration_s: float = 0.0
    control_for: str | None = None
    control: ControlOutcome | None = None
    content_key: str = ""
    carried_from: str | None = None

    @property
    def claim_id(self) -> str:
        """The claim's id (shared by every grid point)."""
        return self.claim.id

    @property
    def verdict(self) -> Verdict:
        """The final verdict: the last adjustment's, else the raw one."""
        return self.adjustments[-1].after if self.adjustments else self.raw_verdict

    @property
    def reason(self) -> str:
        """The reason for the final verdict."""
        return self.adjustments[-1].reason if self.adjustments else self.raw_reason

    @property
    def deterministic(self) -> bool:
        """Decided exactly from a deterministic probe: no sampling error to control."""
        return bool(self.decision is not None and self.decision.details.get("deterministic"))

    def adjusted(self, adjustment: Adjustment) -> ItemResult:
        """This result with one more adjustment; its ``before`` must be the current verdict."""
        if adjustment.before is not self.verdict:
            raise ValueError(f"{self.item_id}: adjustment from {adjustment.before.value} applied to a "
                             f"{self.verdict.value} result")
        return dataclasses.replace(self, adjustments=(*self.adjustments, adjustment))

    def adjustment(self, step: str) -> Adjustment | None:
        """The adjustment made by ``step``, if any."""
        return next((a for a in self.adjustments if a.step == step), None)

    def to_record(self) -> dict[str, Any]:
        """The one JSON form of a result (store, pytest's report, xdist)."""
        return {
            "record_version": RECORD_VERSION,
            "claim_id": self.claim.id,
            "item_id": self.item_id,
            "params": dict(self.params),
            "verdict": self.verdict.value,
            "reason": self.reason,
            "raw_verdict": self.raw_verdict.value,
            "raw_reason": self.raw_reason,
            "decision": self.decision.to_dict() if self.decision is not None else None,
            "adjustments": [a.to_record() for a in self.adjustments],
            "samples": {name: list(values) for name, values in self.samples.items()},
            "machine": dict(self.machine),
            "machine_class": self.machine_class,
            "info": dict(self.info),
            "artifacts": dict(self.artifacts),
            "started": self.started,
            "finished": self.finished,
            "duration_s": self.duration_s,
            "claim": self.claim.to_record(),
            **({"control_for": self.control_for} if self.control_for is not None else {}),
            **({"control": self.control.to_record()} if self.control is not None else {}),
            **({"content_key": self.content_key} if self.content_key else {}),
            **({"carried_from": self.carried_from} if self.carried_from else {}),
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> ItemResult:
        """Inverse of :meth:`to_record`; reads version-1 records (no adjustment list) too."""
        decision = record.get("decision")
        adjustments = tuple(Adjustment.from_record(a) for a in record.get("adjustments") or ())
        raw = record.get("raw_verdict") or (decision or {}).get("raw_verdict") or record["verdict"]
        if not adjustments and raw != record["verdict"]:  # a version-1 record changed in place
            adjustments = (Adjustment("recorded", Verdict(raw), Verdict(record["verdict"]),
                                      str(record.get("reason", ""))),)
        claim_record = record.get("claim") or {"id": record.get("claim_id", "")}
        return cls(
            claim=Claim.from_record(claim_record),
            item_id=str(record["item_id"]),
            params=dict(record.get("params") or {}),
            raw_verdict=Verdict(raw),
            raw_reason=str(record.get("raw_reason", record.get("reason", ""))),
            decision=Decision.from_dict(decision) if decision else None,
            adjustments=adjustments,
            samples={str(k): tuple(map(float, v)) for k, v in (record.get("samples") or {}).items()},
            machine=dict(record.get("machine") or {}),
            machine_class=str(record.get("machine_class") or ""),
            info=dict(record.get("info") or {}),
            artifacts=dict(record.get("artifacts") or {}),
            started=str(record.get("started") or ""),
            finished=str(record.get("finished") or ""),
            duration_s=float(record.get("duration_s") or 0.0),
            control_for=str(record["control_for"]) if record.get("control_for") else None,
            control=ControlOutcome.from_record(record["control"]) if isinstance(record.get("control"), Mapping) else None,
            content_key=str(record.get("content_key") or ""),
            carried_from=str(record["carried_from"]) if record.get("carried_from") else None,
        )
