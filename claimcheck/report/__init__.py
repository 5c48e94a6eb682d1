"""Correction reports, the run index (markdown, HTML, JSON) and plots, all rebuilt from the evidence store.

Layout written under ``out_dir`` (default ``reports/``)::

    index.md, index.html, index.json   the run at a glance (HTML is self-contained)
    forest.png                         every decided figure against its claim
    plots/<name>.png                   per-pack plots, only when the run has such items
    corrections/<claim-id>.md|.json    one per claim with refuted items
    inconclusive/<claim-id>.md|.json   one per claim with inconclusive items

Use :func:`build_reports` after a run (the pytest plugin does) or through
``claimcheck report``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from claimcheck.report.corrections import ReportError, clear_old, write_all, write_text
from claimcheck.report.model import RunReport, gather
from claimcheck.store import Drift, EvidenceStore

if TYPE_CHECKING:
    from claimcheck.report.plots import Plot

__all__ = ["ReportError", "ReportResult", "RunReport", "build_reports", "gather"]


@dataclass
class ReportResult:
    """What :func:`build_reports` wrote."""

    run_id: str
    out_dir: Path
    index_md: Path
    index_html: Path
    index_json: Path
    forest: Path | None = None
    plots: list[Path] = field(default_factory=list)
    corrections: list[Path] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    drift: list[Drift] = field(default_factory=list)


def build_reports(
    store: EvidenceStore | str | Path,
    run_id: str | None = None,
    out_dir: str | Path = "reports",
    *,
    plots: bool = True,
) -> ReportResult:
    """Write every report of one run (the latest when ``run_id`` is None).

    Correction files of an earlier build are removed first, so a claim that
    now holds no longer has one. ``plots=False`` skips matplotlib entirely.
    """
    if isinstance(store, EvidenceStore):
        report = gather(store, run_id)
    else:
        opened = EvidenceStore(store, readonly=True)  # ours to open, ours to close; reading never writes
        try:
            report = gather(opened, run_id)
        finally:
            opened.close()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    clear_old(out)
    made, written = write_all(report, out)

    forest = None
    pack: list[Plot] = []
    if plots:
        from claimcheck.report import plots as pictures

        try:
            png = pictures.forest(report.items)
        except Exception as error:  # noqa: BLE001 - a picture must never sink the report
            report.warnings.append(f"forest plot skipped: {' '.join(str(error).split())}")
            png = None
        if png is not None:
            forest = pictures.Plot("forest", "Forest plot", "", out / "forest.png", png)
            write_text(forest.path, png)
        plot_dir = out / "plots"
        if plot_dir.is_dir():
            for old in plot_dir.glob("*.png"):
                if old.stem in {name for name, *_ in pictures.PACK_PLOTS}:
                    old.unlink()
        pack, notes = pictures.pack_plots(report.items, plot_dir)
        report.warnings.extend(notes)
        for plot in pack:
            write_text(plot.path, plot.png)
    elif (out / "forest.png").exists():
        (out / "forest.png").unlink()

    from claimcheck.report import html, index

    result = ReportResult(
        run_id=report.run.run_id,
        out_dir=out,
        index_md=out / "index.md",
        index_html=out / "index.html",
        index_json=out / "index.json",
        forest=forest.path if forest else None,
        plots=[p.path for p in pack],
        corrections=written,
        drift=report.drift,
        counts=report.counts,
        warnings=report.warnings,
    )
    files = {
        "index_md": "index.md",
        "index_html": "index.html",
        "forest": "forest.png" if forest else None,
        "plots": [f"plots/{p.path.name}" for p in pack],
        "corrections": [str(p.relative_to(out)) for p in written],
    }
    write_text(result.index_md, index.markdown(report, made, forest, pack))
    write_text(result.index_html, html.page(report, made, forest, pack))
    write_text(
        result.index_json,
        json.dumps(index.summary(report, made, files), indent=2, ensure_ascii=False, sort_keys=True, default=str)
        + "\n",
    )
    return result
