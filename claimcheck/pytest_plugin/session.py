"""Run-level state of one pytest session, with every field declared.

The plugin creates one :class:`ClaimSession` per pytest process. Items and
run-level steps read what they need from it; the steps return values that the
plugin stores back here, so nothing is attached to it on the fly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pytest

from claimcheck.engine.expectations import LOCK_NAME, Expectations
from claimcheck.claim import Claim
from claimcheck.errors import ClaimError

if TYPE_CHECKING:  # pragma: no cover
    from claimcheck.engine.families import FamilySlot
    from claimcheck.engine.result import ItemResult
    from claimcheck.outcome import Finding
    from claimcheck.outcome.run import RunOutcome
    from claimcheck.store import EvidenceStore


@dataclass
class ClaimSession:
    """What the controller knows about this run.

    Attributes:
        config: pytest's configuration.
        rootdir: the project root (claims, probes and reports are found from it).
        results: each claim item's result by pytest node id, in arrival order.
        reports: the pytest call report of each claim item, so the summary can be corrected.
        store, run_id: the evidence store and this run's id (opened on the first result).
        stale: claim id -> the premise chain that made it stale (after the run).
        drift_lines: what moved since the previous run on this machine class.
        report_paths: the report files written at the end.
        family: the lines on the multiplicity families the run was adjusted over.
        findings: each item's final finding by node id (after the run-level steps).
        provisional: each item's finding as it finished (its own verdict against the lock), for its
            progress letter before the run-level steps.
        unlocked_class: this run's machine class when the lock file has no section for it.
        outcome: the run's outcome once the run-level steps ran (what every surface renders).
        interrupted: the run was cut short (Ctrl-C, ``-x``, ``--maxfail``).
    """

    config: pytest.Config
    rootdir: Path
    results: dict[str, ItemResult] = field(default_factory=dict)
    reports: dict[str, pytest.TestReport] = field(default_factory=dict)
    store: EvidenceStore | None = None
    run_id: str | None = None
    stale: dict[str, list[str]] = field(default_factory=dict)
    drift_lines: list[str] = field(default_factory=list)
    report_paths: list[str] = field(default_factory=list)
    family: list[str] = field(default_factory=list)
    findings: dict[str, Finding] = field(default_factory=dict)
    provisional: dict[str, Finding] = field(default_factory=dict)
    unlocked_class: str | None = None
    outcome: RunOutcome | None = None
    interrupted: bool = False
    suite_broken: bool = False
    _probes_loaded: bool = False
    _all_claims: dict[str, Claim] | None = None
    _profile: str | None = None
    _expectations: Expectations | None = None
    _expectations_read: bool = False
    _stop_alphas: dict[str, float] | None = None
    _provisional_from: dict[str, ItemResult] = field(default_factory=dict)

    @property
    def lock_path(self) -> Path:
        """The lock file that keeps exclusive (timing) items apart, also across xdist workers."""
        return self.rootdir / ".claimcheck" / "exclusive.lock"

    @property
    def expectations_path(self) -> Path:
        """The expected verdicts: ``--claims-lock``, else ``<rootdir>/claims/verdicts.lock``."""
        chosen = self.config.getoption("--claims-lock")
        return Path(chosen) if chosen else self.rootdir / "claims" / LOCK_NAME

    def expectations(self) -> Expectations | None:
        """The expected verdicts, read once (None without a lock file)."""
        if not self._expectations_read:
            from claimcheck.engine import expectations

            path = self.expectations_path
            self._expectations = expectations.read(path) if path.exists() else None
            self._expectations_read = True
        return self._expectations

    def provisional_finding(self, nodeid: str, result: ItemResult) -> Finding:
        """An item's finding as it finishes: its own verdict judged against the lock, cached by node id.

        What the source itself withdrew is applied already: a figure on a withdrawn decomposition, or
        a claim whose premise the source retracted, is stale whatever the run-level steps find, so its
        progress letter says so rather than a verdict the summary will not count.
        """
        found = self.provisional.get(nodeid)
        if found is None or self._provisional_from.get(nodeid) != result:
            from claimcheck.engine.adjudicate import cascade, stale_chains
            from claimcheck.outcome import find
            from claimcheck.pytest_plugin.adapter import flags_of

            judged = result
            if result.control_for is None and (result.claim.retracted or result.claim.depends_on):
                withdrawn = stale_chains([result], self.premises(), retracted=self.retractions())
                judged = cascade([result], withdrawn)[0] if withdrawn else result
            self._provisional_from[nodeid] = result
            found = self.provisional[nodeid] = find(judged, self.expectations(), flags_of(self.config))
        return found

    def current_findings(self) -> dict[str, Finding]:
        """The final findings once the run-level steps ran, else each item's provisional one."""
        return dict(self.findings) if self.findings else dict(self.provisional)

    def claims_dirs(self) -> list[Path]:
        """The configured claims folders (``claims_dirs`` ini) that exist."""
        folders = [self.rootdir / d for d in self.config.getini("claims_dirs")]
        return [folder for folder in folders if folder.is_dir()]

    def profile(self) -> str:
        """The active machine profile: the option, else this machine's backend (cpu, cuda, metal).

        The backend is detected without importing MLX, so collecting claims stays light.
        """
        if self._profile is None:
            chosen = self.config.getoption("--claims-profile")
            if not chosen:
                from claimcheck.machine import detect_backend

                chosen = detect_backend()
            self._profile = str(chosen)
        return self._profile

    def ensure_probes(self) -> None:
        """Import the probe modules once per process."""
        if self._probes_loaded:
            return
        from claimcheck.probing.registry import load_probe_modules

        load_probe_modules(str(self.rootdir), self.config.getini("claims_probes") or None)
        self._probes_loaded = True

    def all_claims(self) -> dict[str, Claim]:
        """Every claim of the suite (not just those collected), for premises."""
        if self._all_claims is None:
            from claimcheck.claims.loader import load_claims

            try:
                self._all_claims = {claim.id: claim for claim in load_claims(self.claims_dirs())}
            except ClaimError:
                self._all_claims = {}  # the broken file reports its own collection error
                self.suite_broken = True
        return self._all_claims

    def file_claims(self, path: Path) -> list[Claim]:
        """The claims of one file, reusing the suite-wide parse when it covered that file."""
        from claimcheck.claims.loader import read_claim_file

        known = [claim for claim in self.all_claims().values() if claim.path == str(path)]
        return known if known else [c for c in read_claim_file(path) if isinstance(c, Claim)]

    def family_items(self, machine: Mapping[str, Any], alpha: float | None = None) -> dict[str, float]:
        """Item id -> alpha of every sampled item of the suite that is in scope on ``machine``.

        This is the multiplicity family: it depends on the suite and the machine, not on what
        ``-k`` selected or which items errored, so a p-value means the same in every run.
        Items of deterministic probes are left out (they have no sampling error), and so are
        items whose probe is unknown (their file reports that at collection).

        Args:
            machine: the fingerprint the items ran on (scope is checked against it).
            alpha: ``--claims-alpha`` when given (it replaces every claim's alpha).
        """
        from claimcheck.claims.loader import expand_grid, item_id
        from claimcheck.probing.registry import UnknownProbeError, get_probe
        from claimcheck.engine.runner import scope_problem

        self.ensure_probes()
        claims = dict(self.all_claims())
        for result in self.results.values():
            if result.control_for is None:
                claims.setdefault(result.claim_id, result.claim)
        items: dict[str, float] = {}
        for claim in claims.values():
            try:
                if get_probe(claim.probe.name).deterministic:
                    continue
            except UnknownProbeError:
                continue
            if claim.profiles:
                claim = claim.for_profile(self.profile())
            for name, params in expand_grid(claim):
                if scope_problem(claim, params, machine) is None:
                    items[item_id(claim.id, name)] = claim.check.alpha if alpha is None else alpha
        return items

    def family_slots(self, machine: Mapping[str, Any], alpha: float | None = None) -> dict[str, FamilySlot]:
        """Item id -> family and alpha of every member of the run's families on ``machine``.

        The members are the sampled, in-scope items of the claims tree, of the claims collected
        here (a claim file named on the command line outside the claims folders) and of the claims
        that ran, so deselecting an item (``-k``, a path) does not shrink its family.
        """
        from claimcheck.engine.family_tree import tree_slots
        from claimcheck.pytest_plugin.collection import collected_key

        self.ensure_probes()
        claims = [*self.all_claims().values(), *self.config.stash.get(collected_key, []),
                  *(r.claim for r in self.results.values() if r.control_for is None)]
        return tree_slots(claims, self.profile(), machine, [*self.claims_dirs(), self.rootdir], alpha,
                          unavailable=unavailable_model)

    def stop_alpha(self, item_id: str, machine: Mapping[str, Any]) -> float | None:
        """The level an item's sequential stopping aims at: its first test in its family (None: its own alpha).

        Computed once per process from the claims tree, before any item has run.
        """
        if self._stop_alphas is None:
            from claimcheck.engine.families import stop_levels

            config = self.config
            slots = self.family_slots(machine, config.getoption("--claims-alpha"))
            self._stop_alphas = stop_levels(slots, config.getoption("--claims-family"),
                                            config.getoption("--claims-family-alpha"))
        return self._stop_alphas.get(item_id)

    def premises(self) -> dict[str, tuple[str, ...]]:
        """Claim id -> premise ids for the whole suite and for every claim that ran."""
        graph = {claim_id: claim.depends_on for claim_id, claim in self.all_claims().items()}
        for result in self.results.values():
            graph.setdefault(result.claim_id, result.claim.depends_on)
        return graph

    def retractions(self) -> dict[str, str]:
        """Claim id -> why its source withdrew it, for every claim the source retracted."""
        claims = dict(self.all_claims())
        for result in self.results.values():
            claims.setdefault(result.claim_id, result.claim)
        return {claim_id: claim.retracted.text() for claim_id, claim in claims.items() if claim.retracted}


def unavailable_model(params: Mapping[str, Any]) -> str | None:
    """Why an item's model is not installed on this machine (it would be not applicable), or None.

    The resolution the item itself does before loading, without loading: such an item never
    decides here, so it leaves its multiplicity family instead of counting at p = 1.
    """
    model = params.get("model")
    if not isinstance(model, str) or not model:
        return None
    from claimcheck.errors import NotApplicable
    from claimcheck.models import resolve

    try:
        resolve(model)
    except NotApplicable as why:
        return str(why)
    return None
