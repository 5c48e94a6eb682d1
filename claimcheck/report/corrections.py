"""One correction file per refuted claim (and one note per inconclusive claim), in markdown and JSON.

File names come from claim ids, which are validated slugs; anything else is
refused so a crafted id can never write outside the report folder.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from claimcheck.claim import Claim
from claimcheck.errors import ClaimcheckError
from claimcheck.report import banner, text
from claimcheck.report.claim_paths import display_path
from claimcheck.report.model import ClaimItems, RunReport
from claimcheck.claims.schema import ID_PATTERN
from claimcheck.store import Commit, StoredResult, StoredRun
from claimcheck.outcome import policy
from claimcheck.verdict import Verdict

SLUG = re.compile(ID_PATTERN)
# An arithmetic figure that holds for some of its source's printed inputs and not others is corrected too.
#: The folders report files go to (one per report kind of the verdict policy).
FOLDERS = tuple(sorted(set(policy.REPORT_FOLDERS.values())))


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


def _umask() -> int:
    """The process umask (read by setting it, then put back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_text(path: Path, content: str | bytes) -> None:
    """Write through a temporary file and rename, so a reader never sees half a report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8") if isinstance(content, str) else content
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a report is read by others (0644 under umask 022)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def link(claim_id: str, verdict: Verdict) -> str | None:
    """Relative link from the index to a claim's correction or note, if it gets one."""
    kind = policy.report_kind(verdict)
    folder = policy.REPORT_FOLDERS[kind] if kind is not None else None
    if folder is None or not SLUG.match(str(claim_id)):
        return None
    return f"{folder}/{claim_id}.md"


@dataclass(frozen=True)
class Correction:
    """A correction for a refuted claim, or a note for an inconclusive one, with the evidence behind it.

    Attributes:
        kind: ``correction`` (refuted) or ``inconclusive``.
        claim: the claim as the run recorded it.
        claimed: the claimed band in words.
        items: the claim's items with this verdict.
        stands: what of the claim still stands.
        replacement: the suggested dated banner for the doc.
    """

    kind: str
    claim: Claim
    claimed: str
    run: StoredRun
    items: tuple[StoredResult, ...]
    stands: tuple[str, ...]
    replacement: str

    @property
    def claim_id(self) -> str:
        return self.claim.id

    def to_json(self) -> dict[str, Any]:
        """The ``.json`` file's content (for tools; the markdown is for people)."""
        claim, run = self.claim, self.run
        return {
            "kind": self.kind,
            "claim_id": claim.id,
            "claim": {
                "title": claim.title, "statement": claim.statement, "source": dataclasses.asdict(claim.source),
                "scope": dataclasses.asdict(claim.scope), "check": claim.check.to_record(),
                "path": display_path(claim.path) if claim.path else None, "line": claim.line,
                "content_hash": claim.content_hash,
            },
            "claimed": self.claimed,
            "run": {
                "run_id": run.run_id, "started": run.started, "status": run.effective_status,
                "machine_class": run.machine_class, "machine": dict(run.machine),
                "suite_commit": run.suite_commit, "claims_commit": run.claims_commit,
            },
            "items": [item_json(item) for item in self.items],
            "stands": list(self.stands),
            "replacement": self.replacement,
        }


def item_json(item: StoredResult) -> dict[str, Any]:
    """One item's figures and verdict path in JSON form (the index and the correction files share it)."""
    result = item.result
    decision = result.decision
    numbers = decision.to_dict() if decision is not None else {}
    family = result.adjustment("family")
    data = {key: numbers.get(key) for key in ("statistic", "low", "high", "confidence_level", "n", "alpha", "pvalue",
                                               "mde", "estimate_label")}
    data.update(
        item_id=item.item_id, claim_id=item.claim_id, params=dict(item.params), verdict=item.verdict.value,
        raw_verdict=result.raw_verdict.value, reason=item.reason, rule=decision.rule if decision else result.claim.check.rule,
        unit=text.unit(item), adjusted_pvalue=family.adjusted_pvalue if family else None,
        adjustments=[a.to_record() for a in result.adjustments], verdict_path=text.verdict_steps(item),
        measured=text.measured(item), computed=text.is_computed(item), why=text.why(item), info=dict(result.info),
        probe=result.claim.probe.name or None, duration_s=result.duration_s,
        started=result.started, finished=result.finished,
    )
    return data


def correction(report: RunReport, group: ClaimItems, verdict: Verdict) -> Correction:
    """The correction (or inconclusive note) for one claim."""
    claim = report.claims.get(group.claim_id) or group.claim
    stands = tuple(report.stands(group.claim_id, verdict))
    return Correction(
        kind=policy.REPORT_WORDS[policy.report_kind(verdict) or "note"], claim=claim,
        claimed=text.claimed(group.items[0]).text, run=report.run, items=tuple(group.items), stands=stands,
        replacement=banner.banner(verdict=verdict, run=report.run, items=group.items, stands=stands),
    )


def markdown(data: Correction) -> str:
    """The markdown form of a correction."""
    claim, run = data.claim, data.run
    md = text_md
    heading = "Correction" if data.kind == "correction" else "Inconclusive"
    lines = [
        f"# {heading}: {md(claim.title or data.claim_id)}",
        "",
        f"Claim `{data.claim_id}`" + (f" ({md(display_path(claim.path))}:{claim.line})" if claim.path else ""),
        "",
        "## Suggested replacement",
        "",
        md(data.replacement, blockquote=True),
        "",
        "## The claim as stated",
        "",
        f"> {md(claim.statement)}",
        "",
        f"- Source: {md(text.source_text(claim.source))}",
        f"- Claimed: {md(data.claimed)}",
        f"- Scope: {md(text.scope_text(claim.scope))}",
        "",
        "## What was measured",
        "",
    ]
    for item in data.items:
        decision = item.decision
        rule = decision.rule if decision else claim.check.rule
        lines += [
            f"### {md(item.item_id)} — {item.verdict.value}",
            "",
            f"- Estimate: {md(text.measured(item))}",
            f"- Rule: `{rule}`, computed from the params (no sampling)" if text.is_computed(item) else
            f"- Rule: `{rule}`, α={text.number(decision.alpha if decision else None)}, "
            f"p={text.number(decision.pvalue if decision else None)}, MDE={text.number(decision.mde if decision else None)}",
            f"- Verdict, raw → final: {md(text.verdict_steps(item))}",
            f"- Params: {md(text.params_label(item.params) or '—')}",
        ]
        model = text.model_text(item.result.info)
        if model:
            lines.append(f"- Model: {md(model)}")
        lines += [f"- Why: {md(text.why(item))}", ""]
    lines += [
        "## Where",
        "",
        f"- Run `{run.run_id}` ({run.effective_status}), started {md(run.started)}",
        f"- Machine class: {md(run.machine_class)}",
        f"- Machine: {md(text.machine_text(run.machine))}",
        f"- Suite commit: {_commit(run.suite_ref)}; claims commit: {_commit(run.claims_ref)}",
        "",
    ]
    if data.stands:
        lines += ["## What stands", ""] + [f"- {md(s)}" for s in data.stands] + [""]
    return "\n".join(lines)


def text_md(value: Any, *, blockquote: bool = False) -> str:
    """Text made inert for markdown: one line, HTML escaped, markdown punctuation escaped outside code spans.

    ``blockquote`` is for our own banner: it keeps the leading ``> `` and the
    bold markers, escaping only HTML and table pipes.
    """
    line = text.one_line(value)
    if blockquote:
        out = _html_escaped(line)
        if out.startswith("&gt; "):
            out = "> " + out[5:]
        return out.replace("|", "\\|")
    # Code spans (`at_least`) stay code: their text is shown literally, so escaping it would print the backslashes.
    pieces = CODE_SPAN.split(line)
    return "".join(piece if index % 2 else _inert(piece) for index, piece in enumerate(pieces))


CODE_SPAN = re.compile(r"(`[^`]+`)")


def _commit(commit: Commit | None) -> str:
    """``abc123… (dirty)`` in code, or ``not recorded``."""
    return "not recorded" if commit is None else f"`{commit.sha}`" + (" (dirty)" if commit.dirty else "")


def _html_escaped(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _inert(value: str) -> str:
    """Prose with HTML and markdown punctuation escaped (outside code spans)."""
    out = _html_escaped(value)
    for char in "\\`*_[]|#":
        out = out.replace(char, "\\" + char)
    return out


def write_all(report: RunReport, out_dir: Path) -> tuple[list[Correction], list[Path]]:
    """Write every correction and inconclusive note; returns them and the files written."""
    written: list[Path] = []
    made: list[Correction] = []
    for verdict in policy.reported():
        kind = policy.report_kind(verdict)
        assert kind is not None
        folder = out_dir / policy.REPORT_FOLDERS[kind]
        for group in report.with_verdict(verdict):
            try:
                md_path = report_path(folder, group.claim_id, ".md")
                json_path = report_path(folder, group.claim_id, ".json")
            except ReportError as error:
                report.warnings.append(str(error))
                continue
            data = correction(report, group, verdict)
            write_text(json_path, json.dumps(data.to_json(), indent=2, ensure_ascii=False, sort_keys=True) + "\n")
            write_text(md_path, markdown(data))
            made.append(data)
            written += [md_path, json_path]
    return made, written


def clear_old(out_dir: Path) -> None:
    """Remove correction files of an earlier build (only files this module names), so none linger."""
    for folder_name in FOLDERS:
        folder = out_dir / folder_name
        if not folder.is_dir():
            continue
        for path in folder.iterdir():
            if path.is_file() and path.suffix in (".md", ".json") and SLUG.match(path.stem):
                path.unlink()
