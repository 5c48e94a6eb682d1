"""``reports/index.md`` and ``reports/index.json``: the run at a glance."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

from claimcheck.report import text
from claimcheck.report.corrections import Correction, item_json, link, text_md
from claimcheck.report.model import VERDICT_ORDER, RunReport
from claimcheck.report.plots import Plot
from claimcheck.store import StoredResult
from claimcheck.outcome import policy


#: What every forest picture shows, said once above them.
FOREST_INTRO = ("Every decided figure against its claim, one picture per claims pack: the dot is the estimate, the "
                "bar its interval, the colour its verdict; black marks or grey bands are what the claim asserts.")


def ordered_items(report: RunReport) -> list[StoredResult]:
    """Items with the ones needing attention first (refuted, error, inconclusive, ...), else as recorded."""
    rank = {verdict: i for i, verdict in enumerate(VERDICT_ORDER)}
    return [item for _, _, item in sorted(
        ((rank.get(item.verdict.value, len(rank)), index, item) for index, item in enumerate(report.items)),
        key=lambda t: (t[0], t[1]),
    )]


def run_lines(report: RunReport) -> list[tuple[str, str]]:
    """``(label, value)`` pairs describing the run, shared by markdown and HTML."""
    run = report.run
    status = run.effective_status
    return [
        ("Run", run.run_id),
        ("Status", status + ("" if status != "incomplete" else " (not every item finished)")),
        ("Started", run.started),
        ("Finished", run.finished or "—"),
        ("Machine class", run.machine_class or "—"),
        ("Machine", text.machine_text(run.machine) or "—"),
        ("Suite commit", run.suite_commit or "—"),
        ("Claims commit", run.claims_commit or "—"),
        ("Expected verdicts", report.judged or "—"),
    ]


def claims_without_items(report: RunReport) -> list[str]:
    seen = {item.claim_id for item in report.items}
    return [claim_id for claim_id in report.claims if claim_id not in seen]


def control_lines(report: RunReport, md: Any) -> list[str]:
    """The positive controls and the holding items not shown able to fail here (markdown)."""
    lines: list[str] = []
    if report.controls:
        refuted = sum(1 for c in report.controls if policy.control_refuted(c.verdict))
        lines += ["## Positive controls", "",
                  f"{refuted} of {len(report.controls)} control(s) refuted, as they must be: each runs its claim's "
                  "check under parameters where the claim is false.", "",
                  "| control | for claim | verdict | figure | reason |", "|---|---|---|---|---|"]
        lines += [f"| {md(c.item_id)} | `{md(c.result.control_for)}` | {c.verdict.value} | {md(text.figure(c))} | "
                  f"{md(c.reason)} |" for c in report.controls]
        lines.append("")
    if report.not_shown_able_to_fail:
        lines += ["## Not shown able to fail here", "",
                  "These items hold, but their claim's control was not refuted on this machine: the measurement "
                  "was not shown able to refute the claim, so the hold says little.", ""]
        for item in report.not_shown_able_to_fail:
            control = item.result.control
            assert control is not None
            lines.append(f"- {md(item.item_id)}: control {md(control.item_id)} was {control.verdict.value} "
                         f"({md(control.reason)})")
        lines.append("")
    return lines


def drift_heading(report: RunReport) -> str:
    if report.previous_run_id is None:
        return "First run on this machine class; nothing to compare with."
    if not report.drift:
        return f"Nothing moved since run {report.previous_run_id} on the same machine class."
    return f"Since run {report.previous_run_id} on the same machine class:"


def markdown(report: RunReport, made: Sequence[Correction], forests: Sequence[Plot], plots: Sequence[Plot]) -> str:
    """The index page in markdown (images referenced by relative path, forest pictures under ``forest/``)."""
    md = text_md
    counts = report.counts
    lines = [f"# claimcheck report — run {md(report.run.run_id)}", ""]
    lines += [f"- **{label}:** {md(value)}" for label, value in run_lines(report)]
    lines += ["", "## Verdicts", "", "| verdict | items |", "|---|---:|"]
    lines += [f"| {verdict} | {counts.get(verdict, 0)} |" for verdict in VERDICT_ORDER]
    lines += [f"| **total** | {len(report.claim_items)} |", ""]
    if report.controls:  # controls must refute: counted apart, never among the claims
        refuted = sum(1 for c in report.controls if policy.control_refuted(c.verdict))
        lines += [f"Positive controls, counted apart: {refuted} of {len(report.controls)} refuted, as they must be.",
                  ""]
    lines += control_lines(report, md)
    corrections = [d for d in made if d.kind == "correction"]
    notes = [d for d in made if d.kind == policy.REPORT_WORDS["note"]]
    if corrections:
        lines += ["## Corrections", ""]
        for data in corrections:
            lines += [f"[`{data.claim_id}`](corrections/{data.claim_id}.md) — {md(data.claim.title)}", "",
                      md(data.replacement, blockquote=True), ""]
    if notes:
        lines += ["## Inconclusive", ""]
        for data in notes:
            lines += [f"[`{data.claim_id}`](inconclusive/{data.claim_id}.md) — {md(data.claim.title)}", "",
                      md(data.replacement, blockquote=True), ""]
    if forests:
        lines += ["## Forest plots", "", FOREST_INTRO, ""]
        for plot in forests:
            lines += [f"### {md(plot.title)}", "", f"![{md(plot.title)}]({plot.path.parent.name}/{plot.path.name})", "",
                      md(plot.caption), ""]
    lines += [
        "## Claim items",
        "",
        "| claim item | verdict | outcome | figure [interval] | n | raw → adjusted | MDE | reason | report |",
        "|---|---|---|---|---:|---|---:|---|---|",
    ]
    for item in ordered_items(report):
        target = link(item.claim_id, item.verdict)
        decision = item.decision
        cells = [
            md(item.item_id),
            item.verdict.value,
            report.finding(item).treatment.word.lower(),  # as the run showed it (e.g. an expected refutation)
            md(text.figure(item)),
            str(decision.n) if decision is not None else "—",
            md(text.verdict_steps(item)),
            md(text.number(decision.mde if decision is not None else None)),
            md(item.reason),
            f"[{policy.report_kind(item.verdict) or 'note'}]({target})"
            if target else "",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    not_applicable = [i for i in report.items if policy.not_checked(i.verdict)]
    if not_applicable:
        lines += [
            "## Not checked on this machine",
            "",
            "These items are outside what this machine can check; their scope says where they apply.",
            "",
            "| claim item | scope | why not here |",
            "|---|---|---|",
        ]
        for item in not_applicable:
            scope = text.scope_text(item.claim.scope)
            lines.append(f"| {md(item.item_id)} | {md(scope)} | {md(item.reason)} |")
        lines.append("")
    missing = claims_without_items(report)
    if missing:
        lines += ["## Claims with no item in this run", ""] + [f"- `{md(c)}`" for c in missing] + [""]
    lines += ["## Drift", "", md(drift_heading(report)), ""]
    lines += [f"- {md(d.message())}" for d in report.drift]
    lines.append("")
    if plots:
        lines += ["## Plots", ""]
        for plot in plots:
            lines += [f"### {md(plot.title)}", "", f"![{md(plot.title)}](plots/{plot.path.name})", "",
                      md(plot.caption), ""]
    if report.warnings:
        lines += ["## Report warnings", ""] + [f"- {md(w)}" for w in report.warnings] + [""]
    return "\n".join(lines)


def summary(report: RunReport, made: Sequence[Correction], files: Mapping[str, Any]) -> dict[str, Any]:
    """Machine-readable twin of the index (``reports/index.json``), e.g. for CI annotations."""
    run = {k: v for k, v in dataclasses.asdict(report.run).items() if k not in ("pid", "host")}
    return {
        "run": run,
        "counts": report.counts,
        "control_counts": report.control_counts,
        "items": [dict(item_json(item), report=link(item.claim_id, item.verdict),
                       scope=dataclasses.asdict(item.claim.scope)) for item in report.items],
        "corrections": [{"claim_id": d.claim_id, "kind": d.kind, "replacement": d.replacement} for d in made],
        "controls": [dict(item_json(c), control_for=c.result.control_for) for c in report.controls],
        "not_shown_able_to_fail": [item.item_id for item in report.not_shown_able_to_fail],
        "drift": [dict(d.__dict__, message=d.message()) for d in report.drift],
        "previous_run_id": report.previous_run_id,
        "files": files,
        "warnings": report.warnings,
    }
