"""What reading the store returns: typed runs and results, drift and merge summaries.

Readers (reports, the docs gate, the CLI) get these objects, never rows, so the
meaning of a stored number is decided once, here and in
:class:`~claimcheck.engine.result.ItemResult`, not again by every reader.
"""

from __future__ import annotations

from collections.abc import Mapping
import dataclasses
from dataclasses import dataclass, field
from typing import Any

from claimcheck.claim import Claim
from claimcheck.probing.plots import PackPlot
from claimcheck.engine.result import Adjustment, ItemResult
from claimcheck.stats import Decision
from claimcheck.verdict import Verdict

from ._provenance import Commit


@dataclass(frozen=True)
class StoredRun:
    """One run as stored: who ran it where, with what options, and how it ended.

    Attributes:
        status: what the run recorded (``running``, ``complete``, ``incomplete``).
        effective_status: ``running`` only while its writer is alive on this host; a run whose
            process died reads ``incomplete``.
        machine: the machine fingerprint (JSON values, as the run recorded it).
        result_count: items stored for the run.
    """

    run_id: str
    started: str
    finished: str | None
    status: str
    effective_status: str
    machine_class: str
    machine: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    suite_commit: str | None = None
    claims_commit: str | None = None
    host: str | None = None
    pid: int | None = None
    result_count: int = 0
    judgement: Mapping[str, Any] | None = None  # what the verdict policy was given (None: recorded before it was kept)

    @property
    def date(self) -> str:
        """The day the run started (``YYYY-MM-DD``)."""
        return self.started[:10]

    @property
    def suite_ref(self) -> Commit | None:
        """The suite commit with its dirty flag (``None``: the run recorded none)."""
        return Commit.parse(self.suite_commit)

    @property
    def claims_ref(self) -> Commit | None:
        """The last commit of ``claims/`` with its dirty flag (``None``: the run recorded none)."""
        return Commit.parse(self.claims_commit)

    def commits_text(self) -> str:
        """``suite 1a2b3c4d5e6f, claims 9f8e7d6c5b4a (dirty)``; says so when a commit was not recorded."""
        suite, claims = self.suite_ref, self.claims_ref
        return (f"suite {suite.short() if suite else 'not recorded'}, "
                f"claims {claims.short() if claims else 'not recorded'}")


@dataclass(frozen=True)
class StoredResult:
    """One stored item: its :class:`ItemResult` and the run it belongs to.

    The result carries every adjustment the store holds for it, so ``verdict``
    is the final verdict and ``result.raw_verdict`` the decision's own.
    """

    run_id: str
    run_started: str
    run_status: str
    result: ItemResult

    @property
    def item_id(self) -> str:
        return self.result.item_id

    @property
    def claim_id(self) -> str:
        return self.result.claim_id

    @property
    def claim(self) -> Claim:
        return self.result.claim

    @property
    def verdict(self) -> Verdict:
        return self.result.verdict

    @property
    def reason(self) -> str:
        return self.result.reason

    @property
    def decision(self) -> Decision | None:
        return self.result.decision

    @property
    def machine_class(self) -> str:
        return self.result.machine_class

    @property
    def params(self) -> Mapping[str, Any]:
        return self.result.params


@dataclass(frozen=True)
class Drift:
    """One item whose verdict or figure moved since the previous run on the same machine class."""

    claim_id: str
    item_id: str
    run_id: str
    previous_run_id: str
    machine_class: str
    verdict: str
    previous_verdict: str
    statistic: float | None
    previous_statistic: float | None
    previous_low: float | None
    previous_high: float | None
    verdict_changed: bool
    figure_moved: bool
    claim_changed: bool

    def message(self) -> str:
        """One line for the index and the terminal."""
        parts = []
        if self.verdict_changed:
            parts.append(f"verdict {self.previous_verdict} → {self.verdict}")
        if self.figure_moved and self.statistic is not None:
            parts.append(
                f"figure {self.statistic:.4g} outside last run's interval "
                f"[{self.previous_low:.4g}, {self.previous_high:.4g}]"
            )
        if self.claim_changed:
            parts.append("claim text changed since then")
        return f"{self.item_id}: " + "; ".join(parts) + f" (vs run {self.previous_run_id})"


@dataclass(frozen=True)
class RunRows:
    """One run's rows exactly as stored, for copying a run between stores (merging never re-reads them).

    Attributes:
        run: the ``runs`` row by column.
        claims, results: its ``claims`` and ``results`` rows by column, in recording order.
        adjustments: every adjustment by item, in the order applied.
    """

    run: Mapping[str, Any]
    claims: tuple[Mapping[str, Any], ...]
    results: tuple[Mapping[str, Any], ...]
    adjustments: Mapping[str, tuple[Adjustment, ...]]
    plots: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class OutputUnit:
    """What a report needs of a probe output: its unit."""

    unit: str = ""


@dataclass(frozen=True)
class StoredPlot:
    """A probe's plot declaration as its run recorded it, with the units of the outputs it draws.

    Reports draw a probe's picture from this, never from the probe registry, so a report of a
    run rebuilds on a machine that has not got (or has changed) the probe's code.
    """

    probe: str
    plot: PackPlot
    outputs: Mapping[str, OutputUnit] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        return {"plot": dataclasses.asdict(self.plot), "units": {name: out.unit for name, out in self.outputs.items()}}

    @classmethod
    def from_record(cls, probe: str, record: Mapping[str, Any]) -> StoredPlot:
        fields = {f.name for f in dataclasses.fields(PackPlot)}
        spec: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v
                                for k, v in dict(record.get("plot") or {}).items() if k in fields}
        units = {str(name): OutputUnit(str(unit or "")) for name, unit in dict(record.get("units") or {}).items()}
        return cls(probe, PackPlot(**spec), units)


@dataclass
class MergeResult:
    """What :func:`merge` did: counts, and items it refused to overwrite."""

    runs_added: int = 0
    runs_updated: int = 0
    results_added: int = 0
    results_skipped: int = 0
    claims_added: int = 0
    conflicts: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
