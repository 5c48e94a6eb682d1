"""Correction reports, the run index (markdown, HTML, JSON) and plots, all rebuilt from the evidence store.

Layout written under ``out_dir`` (default ``reports/``)::

    index.md, index.html, index.json   the run at a glance (HTML is self-contained: items table, one
                                       section per claim with its history and doc anchors)
    forest/<pack>.png                  every decided figure against its claim, one picture per claims pack
                                       (``<pack>-1.png``, ``<pack>-2.png``, ... when a pack is too tall for one)
    plots/<name>.png                   the plots the run's probes declare, only when it has their items
    corrections/<claim-id>.md|.json    one per claim with refuted items
    inconclusive/<claim-id>.md|.json   one per claim with inconclusive items

Use :func:`build_reports` after a run (the pytest plugin does) or through
``claimcheck report``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping

from claimcheck.report.corrections import ReportError, clear_old, write_all, write_text
from claimcheck.report.model import RunReport, gather
from claimcheck.store import Drift, EvidenceStore

if TYPE_CHECKING:
    from claimcheck.report.plots import Plot, PlotSource

#: The report's folder of forest pictures (one per claims pack).
FOREST_DIR = "forest"

#: Where the docs citing claims live, relative to the working directory, when none are named.
DEFAULT_DOCS = ("README.md", "docs")

__all__ = ["ReportError", "ReportResult", "RunReport", "build_reports", "gather"]


@dataclass
class ReportResult:
    """What :func:`build_reports` wrote."""

    run_id: str
    out_dir: Path
    index_md: Path
    index_html: Path
    index_json: Path
    forests: list[Path] = field(default_factory=list)
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
    probes: Mapping[str, PlotSource] | None = None,
    docs: Iterable[str | Path] | None = None,
    links_from: str | Path | None = None,
) -> ReportResult:
    """Write every report of one run (the latest when ``run_id`` is None).

    Correction files of an earlier build are removed first, so a claim that
    now holds no longer has one. ``plots=False`` skips matplotlib entirely.

    Args:
        probes: probe name -> the plot declaration to draw its items with; default the declarations
            the run stored (a run recorded before they were kept has no probe plots).
        docs: Markdown files or folders whose claim anchors each claim's section links
            (default :data:`DEFAULT_DOCS`, where they exist).
        links_from: the folder the pages' links to the docs are relative to, when they are written
            elsewhere first (``publish --dry-run`` builds in a scratch copy of ``out_dir``); default ``out_dir``.
    """
    if isinstance(store, EvidenceStore):
        report = gather(store, run_id)
        declared: Mapping[str, PlotSource] = store.plots(report.run.run_id)
    else:
        opened = EvidenceStore(store, readonly=True)  # ours to open, ours to close; reading never writes
        try:
            report = gather(opened, run_id)
            declared = opened.plots(report.run.run_id)
        finally:
            opened.close()
    from claimcheck.report.anchors import doc_links

    report.links, notes = doc_links(DEFAULT_DOCS if docs is None else docs)
    report.warnings.extend(notes)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    clear_old(out)
    made, written = write_all(report, out)

    forests: list[Plot] = []
    pack: list[Plot] = []
    _clear_forest(out)
    if plots:
        from claimcheck.report import plots as pictures

        forests = _forests(report, out)
        for plot in forests:
            write_text(plot.path, plot.png)
        plot_dir = out / "plots"
        if plot_dir.is_dir():
            for old in plot_dir.glob("*.png"):
                old.unlink()  # the folder is the report's own: a plot this run does not draw must not linger
        pack, notes = pictures.pack_plots(report.items, plot_dir, declared if probes is None else probes)
        report.warnings.extend(notes)
        for plot in pack:
            write_text(plot.path, plot.png)

    from claimcheck.report import html, index

    result = ReportResult(
        run_id=report.run.run_id,
        out_dir=out,
        index_md=out / "index.md",
        index_html=out / "index.html",
        index_json=out / "index.json",
        forests=[p.path for p in forests],
        plots=[p.path for p in pack],
        corrections=written,
        drift=report.drift,
        counts=report.counts,
        warnings=report.warnings,
    )
    files = {
        "index_md": "index.md",
        "index_html": "index.html",
        "forest": [f"{FOREST_DIR}/{p.path.name}" for p in forests],
        "plots": [f"plots/{p.path.name}" for p in pack],
        "corrections": [str(p.relative_to(out)) for p in written],
    }
    write_text(result.index_md, index.markdown(report, made, forests, pack))
    write_text(result.index_html, html.page(report, made, forests, pack, out_dir=Path(links_from or out)))
    write_text(
        result.index_json,
        json.dumps(index.summary(report, made, files), indent=2, ensure_ascii=False, sort_keys=True, default=str)
        + "\n",
    )
    return result


def _clear_forest(out: Path) -> None:
    """Remove the forest pictures of an earlier build: the single ``forest.png`` and the per-pack folder's PNGs."""
    (out / "forest.png").unlink(missing_ok=True)
    folder = out / FOREST_DIR
    if folder.is_dir():
        for old in folder.glob("*.png"):
            old.unlink()


def _forests(report: RunReport, out: Path) -> list[Plot]:
    """One forest picture per claims pack (or part of one); a picture that fails is noted, never fatal."""
    from claimcheck.report.forest import draw
    from claimcheck.report.forest_pages import pages
    from claimcheck.report.plots import Plot

    try:
        laid_out = pages(report.items)
    except Exception as error:  # noqa: BLE001 - a picture must never sink the report
        report.warnings.append(f"forest plot skipped: {' '.join(str(error).split())}")
        return []
    drawn = []
    for page in laid_out:
        try:
            png = draw(page.panels)
        except Exception as error:  # noqa: BLE001 - a picture must never sink the report
            report.warnings.append(f"forest plot {page.name} skipped: {' '.join(str(error).split())}")
            continue
        caption = (f"{page.rows} decided figure(s) of the claims in the {page.pack} pack"
                   + (f", part {page.part} of {page.parts}" if page.parts > 1 else ""))
        drawn.append(Plot(f"forest-{page.name}", f"Forest plot: {page.title}", caption,
                          out / FOREST_DIR / f"{page.name}.png", png))
    return drawn
