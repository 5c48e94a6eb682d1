"""The plot declarations a rebuilt report draws with: the run's own, else today's probes' for older runs.

Runs store each probe's plot declaration (:class:`claimcheck.store.StoredPlot`), and reports read
only that. A run recorded before declarations were kept has none; for it, the command that
rebuilds reports (not the report code) loads the probe registry, as reports once did, so older
committed evidence keeps its pictures.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from claimcheck.store import EvidenceStore, OutputUnit, StoredPlot


def for_report(store: EvidenceStore, run_id: str, root: Path | None = None) -> Mapping[str, StoredPlot]:
    """The run's stored declarations; for a run that stored none, those of the probes found from ``root``."""
    stored = store.plots(run_id)
    if stored:
        return stored
    from claimcheck.errors import ClaimcheckError
    from claimcheck.probing.registry import load_probe_modules, registered_probes

    if not registered_probes():
        try:
            load_probe_modules(str(root or Path.cwd()))
        except ClaimcheckError:
            return {}
    return {name: StoredPlot(name, probe.plot, {out: OutputUnit(o.unit) for out, o in probe.outputs.items()})
            for name, probe in registered_probes().items() if probe.plot is not None}
