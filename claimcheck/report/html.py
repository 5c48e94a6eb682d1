"""``reports/index.html``: the index, corrections and pictures in one self-contained page.

Images are inlined as base64 ``data:`` URIs and the styles are inline, so the
page opens from a CI artifact or an e-mail with no network access. Every piece
of claim or run text goes through :func:`html.escape`.
"""

from __future__ import annotations

import base64
import html
from typing import Any, Sequence

from claimcheck.report import text
from claimcheck.report.canvas import COLOURS
from claimcheck.report.corrections import Correction
from claimcheck.report.index import (
    claims_without_items,
    drift_heading,
    ordered_items,
    run_lines,
)
from claimcheck.report.model import VERDICT_ORDER, RunReport
from claimcheck.report.plots import Plot
from claimcheck.verdict import Verdict

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:2rem auto;max-width:1200px;
     padding:0 1rem;color:#212121;line-height:1.45}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #e0e0e0}
table{border-collapse:collapse;width:100%;font-size:.88rem}
th,td{border:1px solid #e0e0e0;padding:.3rem .45rem;text-align:left;vertical-align:top}
th{background:#fafafa}td.num{text-align:right;font-variant-numeric:tabular-nums}
td.fig{white-space:nowrap}table.counts{width:auto;min-width:16rem}
.verdict{display:inline-block;padding:0 .45rem;border-radius:.6rem;color:#fff;font-size:.8rem;white-space:nowrap}
blockquote{border-left:4px solid #c62828;margin:.5rem 0;padding:.3rem .8rem;background:#fff5f5}
blockquote.note{border-color:#ef8f00;background:#fff9ef}
dl.run{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;font-size:.9rem}
dl.run dt{font-weight:600}dl.run dd{margin:0}
img{max-width:100%;height:auto;border:1px solid #eeeeee}
code{font-size:.85rem}.muted{color:#757575}
"""


def e(value: Any) -> str:
    """Escape for element text and attribute values alike."""
    return html.escape("" if value is None else str(value), quote=True)


def badge(verdict: str) -> str:
    colour = COLOURS.get(verdict, "#000000")
    return f'<span class="verdict" style="background:{colour}">{e(verdict)}</span>'


def image(plot: Plot, alt: str) -> str:
    data = base64.b64encode(plot.png).decode("ascii")
    return f'<img alt="{e(alt)}" src="data:image/png;base64,{data}">'


def _banner(replacement: str) -> str:
    """Our banner is ``> **date KIND (class)** — rest``: render the bold head, escape everything."""
    body = replacement[2:] if replacement.startswith("> ") else replacement
    if body.startswith("**") and "**" in body[2:]:
        end = body.index("**", 2)
        return f"<strong>{e(body[2:end])}</strong>{e(body[end + 2:])}"
    return e(body)


def _anchor(kind: str, claim_id: str) -> str:
    return f"{kind}-{claim_id}"


def page(report: RunReport, made: Sequence[Correction], forest: Plot | None, plots: Sequence[Plot]) -> str:
    """The complete HTML document."""
    run = report.run
    counts = report.counts
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
        "style-src 'unsafe-inline'\">",
        f"<title>claimcheck report — run {e(run.run_id)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>claimcheck report — run <code>{e(run.run_id)}</code></h1>",
        '<dl class="run">',
    ]
    out += [f"<dt>{e(label)}</dt><dd>{e(value)}</dd>" for label, value in run_lines(report)]
    out += ["</dl>", '<h2 id="verdicts">Verdicts</h2>', '<table class="counts"><tr><th>verdict</th><th>items</th></tr>']
    out += [f'<tr><td>{badge(v)}</td><td class="num">{counts.get(v, 0)}</td></tr>' for v in VERDICT_ORDER]
    out += [f'<tr><th>total</th><th class="num">{len(report.items)}</th></tr></table>']

    if report.controls:
        out += ['<h2 id="controls">Positive controls</h2>',
                "<table><tr><th>control</th><th>for claim</th><th>verdict</th><th>figure</th><th>reason</th></tr>"]
        out += [f"<tr><td><code>{e(c.item_id)}</code></td><td><code>{e(c.result.control_for)}</code></td>"
                f"<td>{badge(c.verdict.value)}</td><td class=\"fig\">{e(text.figure(c))}</td>"
                f"<td>{e(text.one_line(c.reason))}</td></tr>" for c in report.controls]
        out.append("</table>")
    if report.not_shown_able_to_fail:
        out += ['<h2 id="not-shown">Not shown able to fail here</h2>',
                "<p>These items hold, but their claim's control was not refuted on this machine.</p><ul>"]
        for item in report.not_shown_able_to_fail:
            control = item.result.control
            assert control is not None
            out.append(f"<li><code>{e(item.item_id)}</code>: control <code>{e(control.item_id)}</code> was "
                       f"{badge(control.verdict.value)} ({e(text.one_line(control.reason))})</li>")
        out.append("</ul>")

    for kind, heading, css in (("correction", "Corrections", ""), ("inconclusive", "Inconclusive", "note")):
        chosen = [d for d in made if d.kind == kind]
        if not chosen:
            continue
        out.append(f'<h2 id="{kind}s">{heading}</h2>')
        for data in chosen:
            claim = data.claim
            out += [
                f'<section id="{e(_anchor(kind, data.claim_id))}">',
                f"<h3><code>{e(data.claim_id)}</code> — {e(claim.title)}</h3>",
                f'<blockquote class="{css}">{_banner(data.replacement)}</blockquote>',
                f"<p><b>Claim as stated:</b> {e(claim.statement)}</p>",
                f"<p><b>Source:</b> {e(text.source_text(claim.source))} &nbsp; "
                f"<b>Claimed:</b> {e(data.claimed)} &nbsp; <b>Scope:</b> {e(text.scope_text(claim.scope))}</p>",
                "<ul>",
            ]
            for item in data.items:
                model = text.model_text(item.result.info)
                decision = item.decision
                how = (" computed from the params (no sampling)" if text.is_computed(item) else
                       f" α={e(text.number(decision.alpha if decision else None))}, "
                       f"MDE={e(text.number(decision.mde if decision else None))}")
                rule = decision.rule if decision else claim.check.rule
                out.append(
                    f"<li><code>{e(item.item_id)}</code> {badge(item.verdict.value)} measured {e(text.measured(item))};"
                    f" rule <code>{e(rule)}</code>,{how}"
                    + (f"; model {e(model)}" if model else "")
                    + f"<br><span class=\"muted\">{e(text.why(item))}</span></li>"
                )
            out.append("</ul>")
            if data.stands:
                out.append("<p><b>What stands:</b> " + " ".join(e(s.rstrip(".") + ".") for s in data.stands) + "</p>")
            out.append("</section>")

    if forest is not None:
        out += ['<h2 id="forest">Forest plot</h2>', image(forest, "Every decided figure against its claim")]

    out += [
        '<h2 id="items">Claim items</h2>',
        "<table><tr><th>claim item</th><th>verdict</th><th>figure [interval]</th><th>n</th>"
        "<th>raw → adjusted</th><th>MDE</th><th>reason</th><th>report</th></tr>",
    ]
    written = {(d.kind, d.claim_id) for d in made}
    for item in ordered_items(report):
        section = {Verdict.REFUTED: "correction", Verdict.INCONSISTENT: "correction",
                   Verdict.INCONCLUSIVE: "inconclusive"}.get(item.verdict)
        target = ""
        if section and (section, item.claim_id) in written:
            target = f'<a href="#{e(_anchor(section, item.claim_id))}">{"correction" if section == "correction" else "note"}</a>'
        decision = item.decision
        out.append(
            f"<tr><td><code>{e(item.item_id)}</code></td><td>{badge(item.verdict.value)}</td>"
            f"<td class=\"fig\">{e(text.figure(item))}</td>"
            f"<td class=\"num\">{e(decision.n if decision is not None else '—')}</td>"
            f"<td>{e(text.verdict_steps(item))}</td>"
            f"<td class=\"num\">{e(text.number(decision.mde if decision is not None else None))}</td>"
            f"<td>{e(text.one_line(item.reason))}</td><td>{target}</td></tr>"
        )
    out.append("</table>")

    not_applicable = [i for i in report.items if i.verdict is Verdict.NOT_APPLICABLE]
    if not_applicable:
        out += [
            '<h2 id="not-applicable">Not checked on this machine</h2>',
            "<p>These items are outside what this machine can check; their scope says where they apply.</p>",
            "<table><tr><th>claim item</th><th>scope</th><th>why not here</th></tr>",
        ]
        out += [
            f"<tr><td><code>{e(i.item_id)}</code></td><td>{e(text.scope_text(i.claim.scope))}"
            f"</td><td>{e(text.one_line(i.reason))}</td></tr>"
            for i in not_applicable
        ]
        out.append("</table>")
    missing = claims_without_items(report)
    if missing:
        out += ["<h2>Claims with no item in this run</h2><ul>"] + [f"<li><code>{e(c)}</code></li>" for c in missing]
        out.append("</ul>")

    out += ['<h2 id="drift">Drift</h2>', f"<p>{e(drift_heading(report))}</p>"]
    if report.drift:
        out += ["<ul>"] + [f"<li>{e(d.message())}</li>" for d in report.drift] + ["</ul>"]

    if plots:
        out.append('<h2 id="plots">Plots</h2>')
        for plot in plots:
            out += [f"<h3>{e(plot.title)}</h3>", image(plot, plot.title), f'<p class="muted">{e(plot.caption)}</p>']
    if report.warnings:
        out += ["<h2>Report warnings</h2><ul>"] + [f"<li>{e(w)}</li>" for w in report.warnings] + ["</ul>"]
    out.append("</body></html>")
    return "\n".join(out) + "\n"
