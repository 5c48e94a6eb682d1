"""Subcommands over the evidence store: report, publish, accept, runs, history, merge, compare."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Sequence


from claimcheck.store import EvidenceStore, StoredRun, choose_class, not_evidence
from claimcheck.suggest import did_you_mean
from claimcheck.outcome.policy import Role
from claimcheck.verdict import Verdict

if TYPE_CHECKING:
    from claimcheck.store import RunRows, StoredResult

from ._base import FAILED, OK, _fail


def _chosen_run(store: EvidenceStore, args: argparse.Namespace) -> StoredRun:
    """``--run``, else the latest run of the chosen machine class; says which on stdout."""
    choice = choose_class(store, args.machine_class)
    run = store.resolve_run(args.run, None if args.run else choice.machine_class)
    print(f"{args.command}: run {run.run_id}" + ("" if args.run else f", the latest of {choice.describe()}"))
    return run


def cmd_report(args: argparse.Namespace) -> int:
    from claimcheck.report import build_reports

    if not Path(args.store).exists():
        return _fail(f"{args.store}: no evidence store there (run the suite first, or pass --store)")
    with EvidenceStore(args.store, readonly=True) as store:
        run = _chosen_run(store, args)
        from claimcheck.cli.plot_declarations import for_report

        result = build_reports(store, run.run_id, args.out, plots=not args.no_plots,
                               probes=for_report(store, run.run_id), links_from=getattr(args, "links_from", None))
    counts = ", ".join(f"{n} {verdict}" for verdict, n in result.counts.items() if n)
    print(f"run {result.run_id}: {counts or 'no items'}")
    print(f"wrote {result.index_md}, {result.index_html}"
          + (f", {len(result.corrections) // 2} correction/note file pair(s)" if result.corrections else ""))
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return OK


def safety_flags(parser: argparse.ArgumentParser, verb: str) -> None:
    """``--force`` and ``--dry-run``: the two ways past, or around, the checks of :func:`refusals`."""
    parser.add_argument("--force", action="store_true",
                        help=f"{verb} a run that is partial, crashed, from a dirty tree or smaller than the last "
                             f"one of its class")
    parser.add_argument("--dry-run", action="store_true", help="print the diff it would make, write nothing")
    if verb == "accept":
        parser.add_argument("--from-artifact", metavar="DIR", default=None,
                            help="accept the run of a CI job's downloaded artifact (DIR holds claimcheck.sqlite, "
                                 "e.g. the proposed expectations of a first run on a machine class)")


def artifact_store(folder: str) -> Path | None:
    """The evidence store inside a downloaded artifact folder (``claimcheck.sqlite`` at any depth)."""
    root = Path(folder)
    if root.is_file():
        return root
    found = sorted(root.rglob("claimcheck.sqlite"), key=lambda p: (len(p.parts), str(p)))
    return found[0] if found else None


def refusals(run: StoredRun, previous: int | None, *, partial_ok: bool = False, markers_ok: bool = False) -> list[str]:
    """Why a run must not become committed evidence or expectations (empty: it may).

    A run that is not evidence of its class (crashed or still running, one shard of a matrix, a run of
    part of the suite: :func:`claimcheck.store.not_evidence`), one measured on a dirty tree, or one with
    fewer items than ``previous`` (the items of the last run of its class accepted or published) would
    silently drop what was known. ``partial_ok``: a selection may update part of the lock
    (``accept --update``); ``markers_ok``: a ``-m`` selection is the suite a CI job runs on its class.
    """
    found = not_evidence(run, markers_ok=markers_ok, part_ok=partial_ok)
    dirty = [name for name, commit in (("suite", run.suite_ref), ("claims", run.claims_ref)) if commit and commit.dirty]
    if dirty:
        found.append(f"run {run.run_id} was measured on a dirty tree ({', '.join(dirty)})")
    if previous is not None and run.result_count < previous:
        found.append(f"run {run.run_id} has {run.result_count} item(s), fewer than the {previous} of the last one "
                     f"of {run.machine_class}")
    return found


def _refused(verb: str, reasons: Sequence[str], args: argparse.Namespace) -> bool:
    """Print the reasons, one line; ``True`` when they stop the command (no ``--force``, no ``--dry-run``)."""
    if not reasons:
        return False
    if args.force or args.dry_run:
        print(f"{verb}: warning: {'; '.join(reasons)}", file=sys.stderr)
        return False
    print(f"{verb}: refused: {'; '.join(reasons)}; pass --force to {verb} it anyway", file=sys.stderr)
    return True


def _last_count(path: Path, machine_class: str) -> int | None:
    """Items of the newest run of ``machine_class`` in the store at ``path`` (``None``: none there)."""
    if not path.exists():
        return None
    with EvidenceStore.open_readonly(path) as store:
        latest = store.latest_run(machine_class)
    return latest.result_count if latest is not None else None


def _tree_diff(before: Path, after: Path) -> list[str]:
    """Files added, removed and changed between two folders, with a unified diff of the text ones."""
    import difflib

    def files(root: Path) -> dict[str, Path]:
        return {str(p.relative_to(root)): p for p in root.rglob("*") if p.is_file()} if root.exists() else {}

    old, new = files(before), files(after)
    lines: list[str] = []
    for name in sorted(set(old) | set(new)):
        if name not in new:
            lines.append(f"removed  {name}")
        elif name not in old:
            lines.append(f"added    {name}")
        elif old[name].read_bytes() != new[name].read_bytes():
            lines.append(f"changed  {name}")
            if new[name].suffix in (".md", ".json", ".lock", ".html", ".txt"):
                lines += difflib.unified_diff(old[name].read_text(encoding="utf-8").splitlines(),
                                              new[name].read_text(encoding="utf-8").splitlines(),
                                              f"a/{name}", f"b/{name}", lineterm="", n=1)
    return lines


def cmd_publish(args: argparse.Namespace) -> int:
    """Record a chosen run in the committed profile of its class; rebuild ``reports/`` and the comparison from them.

    Runs write to an ignored store and folder; publishing is the one step that changes committed files, and
    everything it writes is built from committed evidence, so a reader can rebuild each report from the profiles.
    """
    from claimcheck.report.compare import write as write_comparison

    if not Path(args.store).exists():
        return _fail(f"{args.store}: no evidence store there (run the suite first, or pass --store)")
    with EvidenceStore(args.store, readonly=True) as store:
        run = _chosen_run(store, args)
        rows = store.run_rows(run.run_id)
    for name, commit in (("suite", run.suite_ref), ("claims", run.claims_ref)):
        if commit is None:
            print(f"warning: run {run.run_id} recorded no {name} commit", file=sys.stderr)
    profiles = Path(args.out) / "profiles"
    if not getattr(args, "no_record", False):
        previous = _last_count(profile_for(profiles, run.machine_class, args.profile), run.machine_class)
        if _refused("publish", refusals(run, previous), args):
            return FAILED
    if getattr(args, "dry_run", False):
        return _publish_dry_run(args)
    source = Path(args.store)
    if not args.no_record:
        source = profile_for(profiles, run.machine_class, args.profile)
        state = "already recorded"
        if not _holds_run(source, rows):
            target = EvidenceStore(source)
            try:
                copied = target.copy_run(rows, str(args.store))
            finally:
                target.settle()  # a committed profile is one file, read without side files
            for conflict in copied.conflicts:
                print(f"conflict: {conflict}", file=sys.stderr)
            state = "recorded" if copied.run_added or copied.results_added else state
        print(f"publish: run {run.run_id} {state} in {source} ({run.commits_text()})")
    report_args = argparse.Namespace(**{**vars(args), "store": str(source), "run": run.run_id})
    with contextlib.redirect_stdout(io.StringIO()):  # the run was named above
        status = cmd_report(report_args)
    if status != OK:
        return status
    print(f"wrote {Path(args.out) / 'index.md'}, {Path(args.out) / 'index.html'}")
    stores = sorted(profiles.glob("*.sqlite"))
    if stores:
        for path in write_comparison(stores, profiles):
            print(f"wrote {path}")
    return OK


def _holds_run(profile: Path, rows: RunRows) -> bool:
    """Whether ``profile`` holds the run row for row: then it is left as it is (a write rewrites its bytes)."""
    if not profile.exists():
        return False
    with EvidenceStore.open_readonly(profile) as store:
        return store.holds_run(rows)


def _publish_dry_run(args: argparse.Namespace) -> int:
    """Publish into a scratch copy of the report folder and print what would change in it."""
    import shutil
    import tempfile

    out = Path(args.out)
    with tempfile.TemporaryDirectory(prefix="claimcheck-publish-") as scratch:
        copy = Path(scratch) / "reports"
        if out.exists():
            shutil.copytree(out, copy)
        trial = argparse.Namespace(**{**vars(args), "out": str(copy), "dry_run": False, "force": True,
                                      "links_from": str(out)})  # the pages link to the docs as from `out`
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            status = cmd_publish(trial)
        diff = _tree_diff(out, copy)
    for line in diff:
        print(line.replace(str(copy), str(out)))
    print(f"publish --dry-run: {sum(1 for line in diff if line[:8].strip() in ('added', 'removed', 'changed'))} "
          f"file(s) of {out} would change; nothing written")
    return status


def profile_slug(machine_class: str) -> str:
    """``cpu/AMD EPYC/16-32GiB`` -> ``cpu-amd-epyc-16-32gib``: a profile file name for a machine class."""
    return "-".join(part for part in re.split(r"[^a-z0-9]+", machine_class.lower()) if part) or "machine"


def profile_for(folder: Path, machine_class: str, name: str | None = None) -> Path:
    """The committed profile a run of ``machine_class`` is recorded in: each profile holds one class only.

    ``name`` when given; else the profile whose runs are all of that class; else a new file named after
    the class. A profile holding another class's runs is never written to, so a reader of one profile
    never takes one class's figure for another's.
    """
    if name:
        return folder / (name if name.endswith(".sqlite") else f"{name}.sqlite")
    for path in sorted(folder.glob("*.sqlite")):
        with EvidenceStore.open_readonly(path) as profile:
            classes = {found.machine_class for found in profile.runs()}
        if classes == {machine_class}:
            return path
    return folder / f"{profile_slug(machine_class)}.sqlite"


def cmd_accept(args: argparse.Namespace) -> int:
    """Accept a run's decided verdicts as its machine class's expectations (``claims/verdicts.lock``)."""
    from claimcheck.engine import expectations

    if getattr(args, "from_artifact", None):
        found = artifact_store(args.from_artifact)
        if found is None:
            return _fail(f"{args.from_artifact}: no claimcheck.sqlite in the artifact")
        args.store = str(found)
    if not Path(args.store).exists():
        return _fail(f"{args.store}: no evidence store there (run the suite first, or pass --store)")
    lock = Path(args.lock)
    current = expectations.read(lock)
    with EvidenceStore(args.store, readonly=True) as store:
        run = _chosen_run(store, args)
        # a control is judged against its claim; a hold its control did not refute is no evidence of holding
        ran = [found for found in store.outcome(run.run_id).findings if found.result.control_for is None]
        unshown = sorted(found.item_id for found in ran if found.role is Role.NOT_SHOWN)
        verdicts = [(found.item_id, Verdict.INCONCLUSIVE if found.role is Role.NOT_SHOWN else found.verdict)
                    for found in ran]
        independent = {f.item_id: why for f in ran
                       if (why := expectations.machine_independent(f.result, run.machine_class)) is not None}
        before = current.classes.get(run.machine_class)
        previous = None
        if before is not None and before.run_id and before.run_id != run.run_id:
            try:
                previous = store.run(before.run_id).result_count
            except Exception:  # noqa: BLE001 - the accepted run is not in this store: compare the items accepted
                accepted_now = sum(1 for _, verdict in verdicts if verdict in expectations.ACCEPTED)
                previous = run.result_count - accepted_now + len(before.items)
    # --update drops nothing (items it did not run keep theirs), so a smaller run is no loss
    if _refused("accept", refusals(run, None if args.update else previous, partial_ok=args.update,
                                   markers_ok=bool(getattr(args, "from_artifact", None))), args):
        return FAILED
    updated = expectations.accepted(current, run.machine_class, run.run_id, verdicts, update=args.update,
                                    independent=independent)
    after = {**{k: v.verdict for k, v in updated.every_class.items()}, **updated.classes[run.machine_class].items}
    old = {**{k: v.verdict for k, v in current.every_class.items()}, **(before.items if before else {})}
    changed = sorted(k for k in after if k in old and old[k] is not after[k])
    added = sorted(k for k in after if k not in old)
    removed = sorted(k for k in old if k not in after)
    if args.dry_run:
        import difflib

        was = lock.read_text(encoding="utf-8").splitlines() if lock.exists() else []
        for line in difflib.unified_diff(was, expectations.render(updated).splitlines(), f"a/{lock}", f"b/{lock}",
                                         lineterm=""):
            print(line)
        print(f"accept --dry-run: {len(changed)} changed, {len(added)} new, {len(removed)} dropped; nothing written")
        return OK
    expectations.write(lock, updated)
    print(f"accepted run {run.run_id} for machine class {run.machine_class}: "
          f"{len(updated.classes[run.machine_class].items)} item(s); "
          f"{len(changed)} changed, {len(added)} new, {len(removed)} dropped -> {lock}")
    for item_id in changed:
        print(f"  changed  {item_id}: {old[item_id].value} -> {after[item_id].value}{_where(updated, item_id)}")
    for item_id in added:
        print(f"  new      {item_id}: {after[item_id].value}{_where(updated, item_id)}")
    for item_id in removed:
        print(f"  dropped  {item_id} (was {old[item_id].value})")
    for item_id in unshown:
        print(f"  undecided {item_id}: it held, but its control was not refuted in this run (not shown able to "
              "fail here), so it is accepted as undecided")
    return OK


def _where(lock: object, item_id: str) -> str:
    """`` (all-classes: why)`` for an item the every-class section holds."""
    entry = getattr(lock, "every_class", {}).get(item_id)
    return f" (all-classes: {entry.why})" if entry is not None else ""


def cmd_runs(args: argparse.Namespace) -> int:
    from claimcheck.store import EvidenceStore

    if not Path(args.store).exists():
        return _fail(f"{args.store}: no evidence store there")
    with EvidenceStore(args.store, readonly=True) as store:
        for run in store.runs(args.machine_class):
            print(f"{run.run_id}  {run.effective_status:<10}  {run.started}  {run.machine_class}"
                  f"  {run.result_count} items")
    return OK


def history_lines(rows: Sequence[StoredResult], this_class: str | None) -> list[str]:
    """History grouped by machine class, this machine's first.

    Changes are marked only between runs of the same class; a figure from
    another class is labelled as such and never compared with this machine's.
    """
    from claimcheck.report import text

    classes = sorted({r.machine_class for r in rows}, key=lambda c: (c != this_class, c))
    item_width = max(len(r.item_id) for r in rows)
    lines: list[str] = []
    for machine_class in classes:
        if this_class is None:
            label = f"machine class {machine_class}"
        elif machine_class == this_class:
            label = f"{machine_class} (this machine's class)"
        else:
            label = f"{machine_class} (other machine class: measured elsewhere, not comparable with this machine)"
        lines.append(label)
        last: dict[str, StoredResult] = {}
        for row in (r for r in rows if r.machine_class == machine_class):
            marks = []
            before = last.get(row.item_id)
            if before is not None:
                if before.verdict is not row.verdict:
                    marks.append(f"verdict was {before.verdict.value}")
                stat = text.statistic(row)
                low, high = (before.decision.low, before.decision.high) if before.decision else (None, None)
                if stat is not None and low is not None and high is not None and not low <= stat <= high:
                    marks.append("outside previous interval")
            last[row.item_id] = row
            n = f"n={row.decision.n}" if row.decision is not None else ""
            line = (
                f"  {text.run_date(row.run_started)}  {row.run_id}  {row.run_status:<10}  "
                f"{row.item_id:<{item_width}}  {row.verdict.value:<14}  {text.figure(row):<24} {n}"
                + (f"  <- {'; '.join(marks)}" if marks else "")
            )
            lines.append(line.rstrip())
    return lines


#: How many recent runs the did-you-mean of ``history`` reads claim ids from.
HINT_RUNS = 50


def _claim_hint(store: EvidenceStore, claim_id: str) -> str:
    """`` (did you mean `x`?)`` from the claim ids of the store's recent runs; an item id names its claim."""

    known: set[str] = set()
    for run in store.runs(limit=HINT_RUNS):
        # Runs record their claims; older ones only their results.
        known.update(store.claims(run.run_id) or {result.claim_id for result in store.results(run.run_id)})
    base = claim_id.split("[", 1)[0]
    if base != claim_id and base in known:
        return f" (`{claim_id}` is an item; its claim is `{base}`)"
    return did_you_mean(base, sorted(known))


def cmd_history(args: argparse.Namespace) -> int:
    from claimcheck.store import EvidenceStore, choose_class

    if not Path(args.store).exists():
        return _fail(f"{args.store}: no evidence store there")
    with EvidenceStore(args.store, readonly=True) as store:
        rows = store.history(args.claim_id)
        choice = choose_class(store, args.machine_class)
        hint = "" if rows else _claim_hint(store, args.claim_id)
    if not rows:
        return _fail(f"history: no results for claim `{args.claim_id}` in {args.store}{hint}")
    this_class = choice.machine_class
    if args.json:
        from claimcheck.report.corrections import item_json

        found = [dict(item_json(row), run_id=row.run_id, run_started=row.run_started, run_status=row.run_status,
                      machine_class=row.machine_class,
                      this_machine_class=row.machine_class == this_class if this_class else None) for row in rows]
        print(json.dumps({"claim_id": args.claim_id, "this_machine_class": this_class, "rows": found}, indent=2,
                         default=str))
        return OK
    print(f"{args.claim_id} — {len(rows)} result(s) in {args.store}; compared within {choice.describe()}")
    for line in history_lines(rows, this_class):
        print(line)
    return OK


def cmd_merge(args: argparse.Namespace) -> int:
    from claimcheck.store import merge

    result = merge(args.dest, args.sources)
    print(f"merged {len(result.sources)} store(s) into {args.dest}: {result.runs_added} run(s) added, "
          f"{result.runs_updated} finalised, {result.results_added} item(s) added, "
          f"{result.results_skipped} already there")
    for conflict in result.conflicts:
        print(f"conflict: {conflict}", file=sys.stderr)
    return FAILED if result.conflicts else OK


def cmd_compare(args: argparse.Namespace) -> int:
    """Write the cross-machine comparison of portable claims from the latest evidence run (whole, finished, adjudicated) of each class."""
    from claimcheck.report.compare import load, run_lines, write_files

    missing = [path for path in args.stores if not Path(path).exists()]
    if missing:
        return _fail(f"{missing[0]}: no evidence store there")
    comparison = load(args.stores)
    for line in run_lines(comparison):
        print(line.removeprefix("- ").replace("`", ""))
    for path in write_files(comparison, args.out):
        print(f"wrote {path}")
    return OK
