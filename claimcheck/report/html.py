"""``reports/index.html``: the run in one self-contained page a reader can navigate.

Order: the run, a table of contents, the items table (sortable and filterable), the forest plots (one
per claims pack), corrections and notes, controls, one section per claim (its doc anchors, machines side
by side and history, charted and tabled), the machine comparison, then what was not checked, drift and
the plots. Images are linked from the report folder (``plots/``, ``forest/``), history charts are inline
SVG, styles and the one script are inline (the script allowed by its hash), so the page opens from the
report folder (a CI artifact) with no network access. Every piece of claim or run text goes through :func:`html.escape`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from claimcheck.report import text
from claimcheck.report.corrections import Correction
from claimcheck.report.html_assets import SCRIPT, STYLE, script_hash
from claimcheck.report.html_claims import badge, claim_anchor, claim_sections, e, machine_comparison
from claimcheck.report.index import (
    FOREST_INTRO,
    claims_without_items,
    drift_heading,
    ordered_items,
    run_lines,
)
from claimcheck.report.model import VERDICT_ORDER, RunReport
from claimcheck.report.plots import Plot
from claimcheck.outcome import policy

#: The anchor of the section listing items outside their scope here.
NOT_CHECKED_ANCHOR = "not-checked"


def image(plot: Plot, alt: str) -> str:
    """A link to the plot's file beside the page (``plots/NAME.png``, ``forest/NAME.png``), never the bytes inlined:
    inlined PNGs made the published page megabytes, once per plot."""
    return f'<img alt="{e(alt)}" loading="lazy" src="{e(plot.path.parent.name)}/{e(plot.path.name)}">'

def _banner(replacement: str) -> str:
    """Our banner is ``> **date KIND (class)** — rest``: render the bold head, escape everything."""
    body = replacement[2:] if replacement.startswith("> ") else replacement
    if body.startswith("**") and "**" in body[2:]:
        end = body.index("**", 2)
        return f"<strong>{e(body[2:end])}</strong>{e(body[end + 2:])}"
    return e(body)


def _anchor(kind: str, claim_id: str) -> str:
    return f"{kind}-{claim_id}"


def _head(report: RunReport) -> list[str]:
    run = report.run
    csp = (f"default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; script-src {script_hash()}")
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta http-equiv="Content-Security-Policy" content="{e(csp)}">',
        f"<title>claimcheck report — run {e(run.run_id)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>claimcheck report — run <code>{e(run.run_id)}</code></h1>",
        '<dl class="run">',
    ]
    out += [f"<dt>{e(label)}</dt><dd>{e(value)}</dd>" for label, value in run_lines(report)]
    counts = ", ".join(f"{report.counts.get(v, 0)} {v}" for v in VERDICT_ORDER if report.counts.get(v, 0))
    controls = report.controls
    refuted = sum(1 for c in controls if policy.control_refuted(c.verdict))
    out += [f"<dt>Verdicts</dt><dd>{e(counts or 'no items')} ({len(report.claim_items)} claim items)</dd>"]
    out += [f"<dt>Controls</dt><dd>{refuted} of {len(controls)} refuted, as they must be (not counted above)</dd>"
            ] if controls else []
    out += ["</dl>"]
    return out


def _toc(entries: Sequence[tuple[str, str]], children: Mapping[str, Sequence[tuple[str, str]]]) -> list[str]:
    """The contents: one line per section, with ``children[anchor]`` (e.g. the forest packs) listed under it."""
    out = ['<nav class="toc" id="contents"><b>Contents</b><ol>']
    for anchor, title in entries:
        below = "".join(f'<li><a href="#{e(a)}">{e(t)}</a></li>' for a, t in children.get(anchor, ()))
        out.append(f'<li><a href="#{e(anchor)}">{e(title)}</a>' + (f"<ol>{below}</ol>" if below else "") + "</li>")
    return out + ["</ol></nav>"]


def _items_table(report: RunReport, made: Sequence[Correction]) -> list[str]:
    """Every item, worst first; sortable by any column and filterable by text and verdict."""
    rank = {verdict: i for i, verdict in enumerate(VERDICT_ORDER)}
    every = {v: report.counts.get(v, 0) + report.control_counts.get(v, 0) for v in VERDICT_ORDER}  # the table lists both
    options = "".join(f'<option value="{e(v)}">{e(v)} ({every[v]})</option>' for v in VERDICT_ORDER if every[v])
    out = [
        '<h2 id="items">Claim items</h2>',
        '<div class="filters"><label>Filter <input id="items-filter" type="search" '
        'placeholder="claim id, reason, figure…"></label>'
        f'<label>Verdict <select id="items-verdict"><option value="">all</option>{options}</select></label>'
        f'<span><span id="items-shown">{len(report.items)}</span> of {len(report.items)} shown; '
        "click a heading to sort</span></div>",
        '<div class="scroll"><table id="items-table"><thead><tr>'
        + "".join(f'<th class="sortable" tabindex="0">{e(h)}</th>' for h in (
            "claim item", "verdict", "outcome", "figure [interval]", "n", "raw → adjusted", "MDE", "reason"))
        + "<th>report</th></tr></thead><tbody>",
    ]
    written = {(d.kind, d.claim_id) for d in made}
    for item in ordered_items(report):
        kind = policy.report_kind(item.verdict)
        section = policy.REPORT_WORDS[kind] if kind is not None else None
        target = ""
        if section and (section, item.claim_id) in written:
            words = "correction" if section == "correction" else "note"
            target = f'<a href="#{e(_anchor(section, item.claim_id))}">{words}</a>'
        decision = item.decision
        estimate = text.statistic(item)
        treatment = report.finding(item).treatment
        out.append(
            f'<tr data-verdict="{e(item.verdict.value)}" data-outcome="{e(treatment.category)}">'
            f'<td><a href="#{e(claim_anchor(item.claim_id))}"><code>{e(item.item_id)}</code></a></td>'
            f'<td data-sort="{rank.get(item.verdict.value, len(rank))}">{badge(item.verdict.value)}</td>'
            f'<td class="outcome">{e(treatment.word.lower())}</td>'
            f'<td class="fig" data-sort="{e("" if estimate is None else repr(estimate))}">{e(text.figure(item))}</td>'
            f"<td class=\"num\">{e(decision.n if decision is not None else '—')}</td>"
            f"<td>{e(text.verdict_steps(item))}</td>"
            f"<td class=\"num\">{e(text.number(decision.mde if decision is not None else None))}</td>"
            f"<td>{e(text.one_line(item.reason))}</td><td class=\"link\">{target}</td></tr>"
        )
    out.append("</tbody></table></div>")
    return out


def _corrections(made: Sequence[Correction], kind: str, heading: str, css: str) -> list[str]:
    chosen = [d for d in made if d.kind == kind]
    if not chosen:
        return []
    out = [f'<h2 id="{kind}s">{heading}</h2>']
    for data in chosen:
        claim = data.claim
        out += [
            f'<section id="{e(_anchor(kind, data.claim_id))}">',
            f'<h3><a href="#{e(claim_anchor(data.claim_id))}"><code>{e(data.claim_id)}</code></a> — {e(claim.title)}</h3>',
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
    return out


def _controls(report: RunReport) -> list[str]:
    out: list[str] = []
    if report.controls:
        out += ['<h2 id="controls">Positive controls</h2>', '<div class="scroll">',
                "<table><tr><th>control</th><th>for claim</th><th>verdict</th><th>figure</th><th>reason</th></tr>"]
        out += [f"<tr><td><code>{e(c.item_id)}</code></td><td><code>{e(c.result.control_for)}</code></td>"
                f"<td>{badge(c.verdict.value)}</td><td class=\"fig\">{e(text.figure(c))}</td>"
                f"<td>{e(text.one_line(c.reason))}</td></tr>" for c in report.controls]
        out.append("</table></div>")
    if report.not_shown_able_to_fail:
        out += ['<h2 id="not-shown">Not shown able to fail here</h2>',
                "<p>These items hold, but their claim's control was not refuted on this machine.</p><ul>"]
        for item in report.not_shown_able_to_fail:
            control = item.result.control
            assert control is not None
            out.append(f"<li><code>{e(item.item_id)}</code>: control <code>{e(control.item_id)}</code> was "
                       f"{badge(control.verdict.value)} ({e(text.one_line(control.reason))})</li>")
        out.append("</ul>")
    return out


def _rest(report: RunReport, plots: Sequence[Plot]) -> list[str]:
    """Not checked here, claims without items, drift, plots and warnings."""
    out: list[str] = []
    not_applicable = [i for i in report.items if policy.not_checked(i.verdict)]
    if not_applicable:
        out += [
            f'<h2 id="{NOT_CHECKED_ANCHOR}">Not checked on this machine</h2>',
            "<p>These items are outside what this machine can check; their scope says where they apply.</p>",
            '<div class="scroll"><table><tr><th>claim item</th><th>scope</th><th>why not here</th></tr>',
        ]
        out += [f'<tr><td><a href="#{e(claim_anchor(i.claim_id))}"><code>{e(i.item_id)}</code></a></td>'
                f"<td>{e(text.scope_text(i.claim.scope))}</td><td>{e(text.one_line(i.reason))}</td></tr>"
                for i in not_applicable]
        out.append("</table></div>")
    missing = claims_without_items(report)
    if missing:
        out += ['<h2 id="no-items">Claims with no item in this run</h2><ul>']
        out += [f'<li><a href="#{e(claim_anchor(c))}"><code>{e(c)}</code></a></li>' for c in missing] + ["</ul>"]
    out += ['<h2 id="drift">Drift</h2>', f"<p>{e(drift_heading(report))}</p>"]
    if report.drift:
        out += ["<ul>"] + [f"<li>{e(d.message())}</li>" for d in report.drift] + ["</ul>"]
    if plots:
        out.append('<h2 id="plots">Plots</h2>')
        for plot in plots:
            out += [f'<h3 id="plot-{e(plot.name)}">{e(plot.title)}</h3>', image(plot, plot.title),
                    f'<p class="muted">{e(plot.caption)}</p>']
    if report.warnings:
        out += ['<h2 id="warnings">Report warnings</h2><ul>'] + [f"<li>{e(w)}</li>" for w in report.warnings]
        out.append("</ul>")
    return out


def _forests(forests: Sequence[Plot]) -> list[str]:
    """The forest section: one sub-heading and picture per claims pack (or part of one)."""
    out = ['<h2 id="forest">Forest plots</h2>', f"<p>{e(FOREST_INTRO)}</p>"]
    for plot in forests:
        out += [f'<h3 id="{e(plot.name)}">{e(plot.title)}</h3>', image(plot, plot.title),
                f'<p class="muted">{e(plot.caption)}</p>']
    return out


def page(report: RunReport, made: Sequence[Correction], forests: Sequence[Plot], plots: Sequence[Plot], *,
         out_dir: Path | None = None) -> str:
    """The complete HTML document; ``out_dir`` is where it is written, for relative links to the docs."""
    order = list(dict.fromkeys([i.claim_id for i in ordered_items(report)] + list(report.claims)))
    entries = [("items", "Claim items")]
    entries += [("forest", "Forest plots")] if forests else []
    packs = {"forest": [(p.name, p.title.removeprefix("Forest plot: ")) for p in forests]}
    sections = ((policy.REPORT_WORDS["correction"], "Corrections"), (policy.REPORT_WORDS["note"], "Inconclusive"))
    entries += [(f"{kind}s", title) for kind, title in sections if any(d.kind == kind for d in made)]
    entries += [("controls", "Positive controls")] if report.controls else []
    entries += [("not-shown", "Not shown able to fail here")] if report.not_shown_able_to_fail else []
    entries += [("claims", f"Claims ({len(order)}): doc anchors, machines, history"),
                ("machines", "Across machine classes")]
    entries += [(NOT_CHECKED_ANCHOR, "Not checked on this machine")] if any(
        policy.not_checked(i.verdict) for i in report.items) else []
    entries += [("no-items", "Claims with no item in this run")] if claims_without_items(report) else []
    entries += [("drift", "Drift")] + ([("plots", "Plots")] if plots else [])
    entries += [("warnings", "Report warnings")] if report.warnings else []

    out = _head(report) + _toc(entries, packs) + _items_table(report, made)
    out += _forests(forests) if forests else []
    out += _corrections(made, "correction", "Corrections", "")
    out += _corrections(made, policy.REPORT_WORDS["note"], "Inconclusive", "note")
    out += _controls(report)
    out += ['<h2 id="claims">Claims</h2>',
            "<p>Each claim with the doc sentences citing it, its latest result on every machine class and every "
            "stored result across runs. Click a claim to open it.</p>"]
    out += claim_sections(report, order, out_dir)
    out += ['<h2 id="machines">Across machine classes</h2>'] + machine_comparison(report)
    out += _rest(report, plots)
    out += [f"<script>{SCRIPT}</script>", "</body></html>"]
    return "\n".join(out) + "\n"
