"""Cross-machine comparison: every portable claim's verdict and figure, one column per machine class.

A figure from one machine class is never compared with another's as if they
were the same machine: each column is that class's latest whole, finished, adjudicated run across
the stores given, named with its id, date and the suite and claims commits it
was measured on, and the source doc's own figure (as quoted in the claim) stands
beside them for reference, labelled with the machine it came from. Each cell renders the run's
recorded outcome (:class:`~claimcheck.outcome.run.RunOutcome`): where the run treated a verdict as
something other than itself (an expected refutation, a hold whose control was not refuted), the cell
says so, as the run printed it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from claimcheck.outcome.finding import Finding
from claimcheck.outcome.policy import PLAIN
from claimcheck.report import text
from claimcheck.store import EvidenceStore, StoredRun


@dataclass
class Comparison:
    """Latest result per (item, machine class) for portable claims."""

    classes: list[str] = field(default_factory=list)
    runs: dict[str, StoredRun] = field(default_factory=dict)  # class -> its latest evidence run
    rows: dict[str, dict[str, Finding]] = field(default_factory=dict)  # item -> class -> its recorded finding
    figures: dict[str, str] = field(default_factory=dict)  # item -> the source doc's figure


def gather(stores: Iterable[EvidenceStore]) -> Comparison:
    """Each machine class's latest evidence run (whole, finished, adjudicated) across ``stores``.

    A shard, an interrupted run or a run of a selection is never a class's column: it would leave the
    rest of the class blank.
    """
    comparison = Comparison()
    latest: dict[str, tuple[StoredRun, EvidenceStore]] = {}
    for store in stores:
        for run in store.evidence_runs():
            klass = run.machine_class or "?"
            if klass not in latest or (run.started, run.run_id) > (latest[klass][0].started, latest[klass][0].run_id):
                latest[klass] = (run, store)
    for klass in sorted(latest):
        run, store = latest[klass]
        comparison.classes.append(klass)
        comparison.runs[klass] = run
        for found in store.outcome(run.run_id).findings:
            result = found.result
            if result.claim.scope.kind != "portable":
                continue
            if result.deterministic:
                continue  # arithmetic: identical on every machine by construction
            comparison.rows.setdefault(result.item_id, {})[klass] = found
            comparison.figures[result.item_id] = result.claim.source.figure
    return comparison


def treated_otherwise(found: Finding) -> bool:
    """Whether the run showed the item as something other than its bare verdict (an expected refutation, ...)."""
    return found.treatment.word != PLAIN[found.verdict].word


def cell(found: Finding) -> str:
    """``**refuted** (expected refutation) 0.34 ...``: the verdict, how the run treated it where that differs, the figure."""
    treated = f" ({found.treatment.word.lower()})" if treated_otherwise(found) else ""
    return f"**{found.verdict.value}**{treated} {text.measured(found.result)}"


def markdown(comparison: Comparison) -> str:
    """A table: item | source figure | one column per machine class (verdict, figure [interval])."""
    head = ["claim item", "source doc (M1 Max unless stated)"] + [f"`{k}`" for k in comparison.classes]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for item in sorted(comparison.rows):
        cells = [f"`{item}`", text.one_line(comparison.figures.get(item, ""))[:90]]
        for klass in comparison.classes:
            found = comparison.rows[item].get(klass)
            cells.append(cell(found) if found else "—")
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(["# Portable claims across machines", "", "Latest whole, finished, adjudicated run per machine class:", "",
                      *run_lines(comparison), "",
                      "Each column is one machine class; figures are never pooled across classes. "
                      "Arithmetic claims are left out (they are the same everywhere). "
                      "In brackets after a verdict: how its run treated it, where that differs from the verdict "
                      "itself (marked * in the picture). "
                      "Regenerate with `claimcheck compare STORE...` (or `claimcheck publish`).", "", *lines, ""])


def run_lines(comparison: Comparison) -> list[str]:
    """One line per machine class: its run, when, how it ended, and the commits it was measured on."""
    return [f"- `{klass}`: run `{run.run_id}` ({run.date}, {run.effective_status}, {run.result_count} items; "
            f"{run.commits_text()})" for klass, run in comparison.runs.items()]


def plot(comparison: Comparison) -> bytes | None:
    """Verdict grid: items down, machine classes across, coloured by verdict."""
    from matplotlib.patches import Rectangle

    from claimcheck.report.canvas import COLOURS, NOT_RUN_COLOUR, new_figure, png_bytes

    items = sorted(comparison.rows)
    if not items or not comparison.classes:
        return None
    fig = new_figure(3.2 + 2.6 * len(comparison.classes), 0.28 * len(items) + 1.4)
    ax = fig.add_subplot(1, 1, 1)
    for x, klass in enumerate(comparison.classes):
        for y, item in enumerate(items):
            found = comparison.rows[item].get(klass)
            colour = COLOURS[found.verdict.value] if found else NOT_RUN_COLOUR
            verdict = found.verdict.value if found else "—"  # no result: the item did not run there
            if found is not None and treated_otherwise(found):
                verdict += "*"  # treated otherwise by its run: the table says how
            ax.add_patch(Rectangle((x, y), 0.95, 0.9, color=colour, alpha=0.55))
            estimate = text.statistic(found.result) if found else None
            label = verdict if estimate is None else f"{verdict} {estimate:.3g}"
            ax.text(x + 0.47, y + 0.45, label, ha="center", va="center", fontsize=6.5)
    ax.set_xlim(0, len(comparison.classes))
    ax.set_ylim(len(items), 0)
    ax.set_xticks([x + 0.47 for x in range(len(comparison.classes))], comparison.classes, fontsize=7)
    ax.set_yticks([y + 0.45 for y in range(len(items))], items, fontsize=6.5)
    ax.tick_params(length=0)
    ax.set_title("Portable claims: verdict and estimate per machine class", fontsize=9)
    return png_bytes(fig)


def load(stores: Iterable[str | Path]) -> Comparison:
    """The comparison of the store files at ``stores`` (read in place, never written)."""
    opened: list[EvidenceStore] = []
    try:
        for path in stores:
            opened.append(EvidenceStore.open_readonly(path))
        return gather(opened)
    finally:
        for store in opened:
            store.close()


def write_files(comparison: Comparison, out_dir: str | Path) -> list[Path]:
    """Write ``comparison.md`` (and ``comparison.png``) under ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "comparison.md"]
    body = markdown(comparison)
    png = plot(comparison)
    if png is not None:
        (out / "comparison.png").write_bytes(png)
        written.append(out / "comparison.png")
        body += "\n![verdicts per machine class](comparison.png)\n"
    written[0].write_text(body, encoding="utf-8")
    return written


def write(stores: Iterable[str | Path], out_dir: str | Path) -> list[Path]:
    """Write ``comparison.md`` (and ``comparison.png``) under ``out_dir`` from the latest run of each class."""
    return write_files(load(stores), out_dir)
