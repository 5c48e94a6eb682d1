"""One correction file per refuted claim (and one note per inconclusive claim), in markdown and JSON.

File names come from claim ids, which are validated slugs; anything else is
refused so a crafted id can never write outside the report folder.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from claimcheck.errors import ClaimcheckError
from claimcheck.report import text
from claimcheck.schema import ID_PATTERN
from claimcheck.report.model import ClaimItems, RunReport

SLUG = re.compile(ID_PATTERN)
FOLDERS = {"refuted": "corrections", "inconclusive": "inconclusive"}


class ReportError(ClaimcheckError):
    """A report cannot be written as asked; ``str()`` is one line."""


def safe_name(claim_id: str) -> str:
    """The claim id itself, once checked to be a slug (``[a-z0-9][a-z0-9-]*``)."""
    if not isinstance(claim_id, str) or not SLUG.match(claim_id):
        raise ReportError(f"claim id {claim_id!r} is not a slug ([a-z0-9][a-z0-9-]*); no report file written for it")
    return claim_id


def report_path(folder: Path, claim_id: str, suffix: str) -> Path:
    """``folder/<claim-id><suffix>``, guaranteed to lie inside ``folder``."""
    path = folder / f"{safe_name(claim_id)}{suffix}"
    if path.resolve().parent != folder.resolve():
        raise ReportError(f"claim id {claim_id!r} would leave {folder}; refused")
    return path


def write_text(path: Path, content: str | bytes) -> None:
    """Write through a temporary file and rename, so a reader never sees half a report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8") if isinstance(content, str) else content
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def display_path(path: str) -> str:
    """A claim file path relative to the working directory when it lies inside it (reports travel)."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def link(claim_id: str, verdict: str) -> str | None:
    """Relative link from the index to a claim's correction or note, if it gets one."""
    folder = FOLDERS.get(verdict)
    if folder is None or not SLUG.match(str(claim_id)):
        return None
    return f"{folder}/{claim_id}.md"


def _item_json(item: dict[str, Any]) -> dict[str, Any]:
    keys = ("item_id", "params", "verdict", "raw_verdict", "adjusted_verdict", "reason", "statistic", "low",
            "high", "confidence_level", "n", "rule", "alpha", "pvalue", "adjusted_pvalue", "mde", "unit", "estimate_label", "probe",
            "duration_s", "started", "finished")
    data = {key: item.get(key) for key in keys}
    data["measured"] = text.measured(item)
    data["computed"] = text.is_computed(item)
    data["why"] = text.why(item)
    data["info"] = item.get("info") or {}
    return data


def correction(report: RunReport, group: ClaimItems, verdict: str) -> dict[str, Any]:
    """The JSON form of a correction (or inconclusive note) for one claim."""
    claim = report.claims.get(group.claim_id) or group.claim
    run = report.run
    stands = report.stands(group.claim_id, verdict)
    return {
        "kind": "correction" if verdict == "refuted" else "inconclusive",
        "claim_id": group.claim_id,
        "claim": {
            "title": claim.get("title"),
            "statement": claim.get("statement"),
            "source": claim.get("source") or {},
            "scope": claim.get("scope") or {},
            "check": claim.get("check") or {},
            "path": display_path(claim["path"]) if claim.get("path") else None,
            "line": claim.get("line"),
            "content_hash": claim.get("content_hash"),
        },
        "claimed": text.claimed(group.items[0]).text,
        "run": {
            "run_id": run["run_id"],
            "started": run.get("started"),
            "status": run.get("effective_status"),
            "machine_class": run.get("machine_class"),
            "machine": run.get("machine") or {},
            "suite_commit": run.get("suite_commit"),
            "claims_commit": run.get("claims_commit"),
        },
        "items": [_item_json(item) for item in group.items],
        "stands": stands,
        "replacement": text.banner(kind=verdict, run=run, items=group.items, stands=stands),
    }


def markdown(data: dict[str, Any]) -> str:
    """The markdown form of :func:`correction`'s output."""
    claim, run = data["claim"], data["run"]
    md = text_md
    heading = "Correction" if data["kind"] == "correction" else "Inconclusive"
    lines = [
        f"# {heading}: {md(claim.get('title') or data['claim_id'])}",
        "",
        f"Claim `{data['claim_id']}`" + (f" ({md(display_path(claim['path']))}:{claim.get('line')})"
                                         if claim.get("path") else ""),
        "",
        "## Suggested replacement",
        "",
        md(data["replacement"], blockquote=True),
        "",
        "## The claim as stated",
        "",
        f"> {md(claim.get('statement') or '')}",
        "",
        f"- Source: {md(text.source_text(claim.get('source')))}",
        f"- Claimed: {md(data['claimed'])}",
        f"- Scope: {md(text.scope_text(claim.get('scope')))}",
        "",
        "## What was measured",
        "",
    ]
    for item in data["items"]:
        lines += [
            f"### {md(item['item_id'])} — {item['verdict']}",
            "",
            f"- Estimate: {md(item['measured'])}",
            f"- Rule: `{item.get('rule')}`, computed from the params (no sampling)" if item["computed"] else
            f"- Rule: `{item.get('rule')}`, α={text.number(item.get('alpha'))}, p={text.number(item.get('pvalue'))},"
            f" MDE={text.number(item.get('mde'))}",
            f"- Verdict, raw → final: {md(text.verdict_steps(item))}",
            f"- Params: {md(text.params_label(item.get('params')) or '—')}",
        ]
        model = text.model_text(item.get("info"))
        if model:
            lines.append(f"- Model: {md(model)}")
        lines += [f"- Why: {md(item['why'])}", ""]
    lines += [
        "## Where",
        "",
        f"- Run `{run['run_id']}` ({run.get('status')}), started {md(str(run.get('started')))}",
        f"- Machine class: {md(str(run.get('machine_class')))}",
        f"- Machine: {md(text.machine_text(run.get('machine')))}",
        f"- Suite commit: {md(str(run.get('suite_commit')))}; claims commit: {md(str(run.get('claims_commit')))}",
        "",
    ]
    if data["stands"]:
        lines += ["## What stands", ""] + [f"- {md(s)}" for s in data["stands"]] + [""]
    return "\n".join(lines)


def text_md(value: Any, *, blockquote: bool = False) -> str:
    """Text made inert for markdown: one line, HTML escaped, markdown punctuation escaped.

    ``blockquote`` is for our own banner: it keeps the leading ``> `` and the
    bold markers, escaping only HTML and table pipes.
    """
    out = text.one_line(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if blockquote:
        if out.startswith("&gt; "):
            out = "> " + out[5:]
        return out.replace("|", "\\|")
    for char in "\\`*_[]|#":
        out = out.replace(char, "\\" + char)
    return out


def write_all(report: RunReport, out_dir: Path) -> tuple[dict[str, dict[str, Any]], list[Path]]:
    """Write every correction and inconclusive note; returns them by ``(verdict)`` → claim id, and the files."""
    written: list[Path] = []
    made: dict[str, dict[str, Any]] = {}
    for verdict, folder_name in FOLDERS.items():
        folder = out_dir / folder_name
        for group in report.with_verdict(verdict):
            try:
                md_path = report_path(folder, group.claim_id, ".md")
                json_path = report_path(folder, group.claim_id, ".json")
            except ReportError as error:
                report.warnings.append(str(error))
                continue
            data = correction(report, group, verdict)
            write_text(json_path, json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n")
            write_text(md_path, markdown(data))
            made[f"{verdict}:{group.claim_id}"] = data
            written += [md_path, json_path]
    return made, written


def clear_old(out_dir: Path) -> None:
    """Remove correction files of an earlier build (only files this module names), so none linger."""
    for folder_name in FOLDERS.values():
        folder = out_dir / folder_name
        if not folder.is_dir():
            continue
        for path in folder.iterdir():
            if path.is_file() and path.suffix in (".md", ".json") and SLUG.match(path.stem):
                path.unlink()
