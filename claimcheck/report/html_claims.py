"""The HTML report's claim sections and machine comparison: each claim with its doc anchors and its history.

A claim's history is every stored item of it, across runs and machine classes, as the evidence
store's reading API returns it, charted (:mod:`claimcheck.report.html_history`) above its table;
figures from different machine classes sit in separate columns, rows or series labelled with their
class and are never pooled.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any, Sequence

from claimcheck.report import text
from claimcheck.report.canvas import COLOURS
from claimcheck.report.claim_paths import display_path
from claimcheck.report.html_history import history_charts
from claimcheck.report.model import RunReport
from claimcheck.store import StoredResult
from claimcheck.verdict import Verdict, worst


def e(value: Any) -> str:
    """Escape for element text and attribute values alike."""
    return html.escape("" if value is None else str(value), quote=True)


def badge(verdict: str) -> str:
    colour = COLOURS.get(verdict, "#000000")
    return f'<span class="verdict" style="background:{colour}">{e(verdict)}</span>'


def claim_anchor(claim_id: str) -> str:
    return f"claim-{claim_id}"


def _doc_href(path: Path, line: int, out_dir: Path | None) -> str:
    """A link from the report folder to a doc line (``#L12`` is the line anchor code hosts use)."""
    target = path.resolve()
    href = os.path.relpath(target, out_dir.resolve()) if out_dir is not None else str(target)
    return f"{Path(href).as_posix()}#L{line}"


def _cell(row: StoredResult | None) -> str:
    if row is None:
        return '<td class="muted">—</td>'
    return (f'<td>{badge(row.verdict.value)} <span class="fig">{e(text.figure(row))}</span><br>'
            f'<span class="muted">run {e(row.run_id)}, {e(text.run_date(row.run_started))}</span></td>')


def comparison_table(report: RunReport, claim_id: str, classes: Sequence[str]) -> list[str]:
    """Items down, machine classes across: each cell the latest result of that item on that class."""
    latest = report.latest_by_class(claim_id)
    if not latest:
        return []
    head = "".join(f"<th>{e(klass)}{' (this run)' if klass == report.run.machine_class else ''}</th>"
                   for klass in classes)
    out = ['<div class="scroll"><table class="compare">', f"<thead><tr><th>item</th>{head}</tr></thead><tbody>"]
    for item_id, by_class in latest.items():
        out.append(f"<tr><td><code>{e(item_id)}</code></td>" + "".join(_cell(by_class.get(k)) for k in classes)
                   + "</tr>")
    out.append("</tbody></table></div>")
    return out


def history_table(rows: Sequence[StoredResult]) -> list[str]:
    """Every stored item of the claim, grouped by machine class, oldest run first in each."""
    ordered = sorted(rows, key=lambda r: (r.machine_class, r.run_started, r.item_id))
    out = ['<div class="scroll"><table class="history"><thead><tr><th>machine class</th><th>run</th><th>started</th>'
           "<th>item</th><th>verdict</th><th>estimate [interval]</th><th>n</th></tr></thead><tbody>"]
    for row in ordered:
        decision = row.decision
        carried = (f'<br><span class="muted">carried from <code>{e(row.result.carried_from)}</code></span>'
                   if row.result.carried_from else "")  # not measured in this run: where it was
        out.append(
            f"<tr><td>{e(row.machine_class or '—')}</td><td><code>{e(row.run_id)}</code>{carried}</td>"
            f"<td>{e(text.run_date(row.run_started))}</td><td><code>{e(row.item_id)}</code></td>"
            f"<td>{badge(row.verdict.value)}</td><td class=\"fig\">{e(text.figure(row))}</td>"
            f"<td class=\"num\">{e(decision.n if decision is not None else '—')}</td></tr>")
    out.append("</tbody></table></div>")
    return out


def claim_sections(report: RunReport, order: Sequence[str], out_dir: Path | None) -> list[str]:
    """One collapsible section per claim: statement, doc anchors, machines side by side, full history."""
    classes = report.classes
    out: list[str] = []
    for claim_id in order:
        claim = report.claims.get(claim_id)
        if claim is None:
            continue
        items = report.items_of(claim_id)
        verdict = worst([i.verdict for i in items]) if items else None
        shown = badge(verdict.value) if isinstance(verdict, Verdict) else '<span class="muted">no item</span>'
        out += [
            f'<details class="claim" id="{e(claim_anchor(claim_id))}">',
            f"<summary><code>{e(claim_id)}</code> {shown} {e(claim.title)}</summary>",
            f"<p>{e(claim.statement)}</p>",
            f"<p><b>Source:</b> {e(text.source_text(claim.source))} &nbsp; <b>Scope:</b> "
            f"{e(text.scope_text(claim.scope))} &nbsp; <b>Claim file:</b> <code>{e(display_path(claim.path))}:{e(claim.line)}</code></p>",
            "<h4>Cited in the docs</h4>",
        ]
        links = report.links.get(claim_id, [])
        if links:
            out.append("<ul>")
            out += [f'<li><a href="{e(_doc_href(link.path, link.line, out_dir))}"><code>{e(link.where)}</code></a>: '
                    f"“{e(link.sentence)}”</li>" for link in links]
            out.append("</ul>")
        else:
            out.append('<p class="muted">No doc sentence anchors this claim.</p>')
        out.append("<h4>Across machine classes</h4>")
        out += comparison_table(report, claim_id, classes) or ['<p class="muted">No stored result.</p>']
        history = report.history.get(claim_id, [])
        out.append(f"<h4>History ({len(history)} stored item(s), {len({r.run_id for r in history})} run(s))</h4>")
        out += history_charts(history, classes)
        out += history_table(history) if history else ['<p class="muted">No stored result.</p>']
        out.append("</details>")
    return out


def machine_comparison(report: RunReport) -> list[str]:
    """Every item stored on more than one machine class: the latest result per class side by side."""
    classes = report.classes
    rows = []
    for claim_id in report.claims:
        for item_id, by_class in report.latest_by_class(claim_id).items():
            if len(by_class) > 1:
                rows.append((claim_id, item_id, by_class))
    if len(classes) < 2 or not rows:
        return ["<p>No item of this run has a stored result on another machine class.</p>"]
    head = "".join(f"<th>{e(k)}</th>" for k in classes)
    out = [f"<p>{len(rows)} item(s) measured on more than one machine class; each column is that class's latest "
           "result. Figures from different machines are shown side by side, never pooled.</p>",
           '<div class="scroll"><table class="compare">', f"<thead><tr><th>claim item</th>{head}</tr></thead><tbody>"]
    for claim_id, item_id, by_class in rows:
        out.append(f'<tr><td><a href="#{e(claim_anchor(claim_id))}"><code>{e(item_id)}</code></a></td>'
                   + "".join(_cell(by_class.get(k)) for k in classes) + "</tr>")
    out.append("</tbody></table></div>")
    return out
