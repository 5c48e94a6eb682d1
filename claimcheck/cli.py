"""The ``claimcheck`` command: a thin layer over the library.

Subcommands: ``report``, ``history``, ``runs``, ``merge``, ``new``, ``validate``,
and ``docs`` / ``extract`` (handed to their own modules with the rest of the
arguments). Exit codes: 0 ok, 1 check failures (invalid claims, merge
conflicts), 2 usage or input errors. Every error is one line on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from claimcheck.errors import ClaimcheckError

if TYPE_CHECKING:
    from claimcheck.store import StoredResult

OK, FAILED, USAGE = 0, 1, 2
DISPATCH = {"docs": "claimcheck.docs_gate", "extract": "claimcheck.extract"}


class UsageError(Exception):
    """Bad arguments or input; printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line instead of usage text plus message."""

    def error(self, message: str) -> None:  # type: ignore[override]
        where = self.prog.removeprefix("claimcheck").strip()
        raise UsageError(f"{where + ': ' if where else ''}{message} (see `{self.prog} --help`)")


def _fail(message: str, code: int = USAGE) -> int:
    print(f"claimcheck: {' '.join(str(message).split())}", file=sys.stderr)
    return code


# --------------------------------------------------------------------------- report / runs / history / merge


def cmd_report(args: argparse.Namespace) -> int:
    from claimcheck.report import build_reports
    from claimcheck.store import EvidenceStore, choose_class

    if not Path(args.store).exists():
        return _fail(f"{args.store}: no evidence store there (run the suite first, or pass --store)")
    with EvidenceStore(args.store, readonly=True) as store:
        choice = choose_class(store, args.machine_class)
        run = store.resolve_run(args.run, None if args.run else choice.machine_class)
        print(f"report: run {run.run_id}" + ("" if args.run else f", the latest of {choice.describe()}"))
        result = build_reports(store, run.run_id, args.out, plots=not args.no_plots)
    counts = ", ".join(f"{n} {verdict}" for verdict, n in result.counts.items() if n)
    print(f"run {result.run_id}: {counts or 'no items'}")
    print(f"wrote {result.index_md}, {result.index_html}"
          + (f", {len(result.corrections) // 2} correction/note file pair(s)" if result.corrections else ""))
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return OK


def cmd_publish(args: argparse.Namespace) -> int:
    """Regenerate the committed reports from one chosen run (runs themselves write to an ignored folder)."""
    return cmd_report(args)


def cmd_accept(args: argparse.Namespace) -> int:
    """Accept a run's decided verdicts as its machine class's expectations (``claims/verdicts.lock``)."""
    from claimcheck import expectations
    from claimcheck.store import EvidenceStore, choose_class

    if not Path(args.store).exists():
        return _fail(f"{args.store}: no evidence store there (run the suite first, or pass --store)")
    with EvidenceStore(args.store, readonly=True) as store:
        choice = choose_class(store, args.machine_class)
        run = store.resolve_run(args.run, None if args.run else choice.machine_class)
        verdicts = [(result.item_id, result.verdict) for result in store.results(run.run_id)]
    lock = Path(args.lock)
    current = expectations.read(lock)
    before = current.classes.get(run.machine_class)
    updated = expectations.accepted(current, run.machine_class, run.run_id, verdicts)
    after = updated.classes[run.machine_class]
    old = dict(before.items) if before else {}
    changed = sorted(k for k in after.items if k in old and old[k] is not after.items[k])
    added = sorted(k for k in after.items if k not in old)
    removed = sorted(k for k in old if k not in after.items)
    expectations.write(lock, updated)
    print(f"accepted run {run.run_id} for machine class {run.machine_class}: {len(after.items)} decided item(s); "
          f"{len(changed)} changed, {len(added)} new, {len(removed)} no longer decided -> {lock}")
    for item_id in changed:
        print(f"  changed  {item_id}: {old[item_id].value} -> {after.items[item_id].value}")
    for item_id in added:
        print(f"  new      {item_id}: {after.items[item_id].value}")
    for item_id in removed:
        print(f"  dropped  {item_id} (was {old[item_id].value})")
    return OK


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


def cmd_history(args: argparse.Namespace) -> int:
    from claimcheck.store import EvidenceStore, choose_class

    if not Path(args.store).exists():
        return _fail(f"{args.store}: no evidence store there")
    with EvidenceStore(args.store, readonly=True) as store:
        rows = store.history(args.claim_id)
        choice = choose_class(store, args.machine_class)
    if not rows:
        return _fail(f"history: no results for claim `{args.claim_id}` in {args.store}")
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


# --------------------------------------------------------------------------- validate / new


def _loader() -> Any:
    return importlib.import_module("claimcheck.loader")


def _load_probes(root: str) -> None:
    from claimcheck.probe import load_probe_modules

    try:
        load_probe_modules(root)
    except Exception as error:  # noqa: BLE001 - a broken probe module is an input error, shown in one line
        raise UsageError(f"cannot import the probes under {root}: {type(error).__name__}: {error}") from None


def cmd_validate(args: argparse.Namespace) -> int:
    paths = args.paths or ["claims"]
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        return _fail(f"validate: no such file or folder: {', '.join(missing)}")
    if not args.no_probes:
        _load_probes(args.root)
    errors, drafts = _loader().validate_paths(paths, probes=not args.no_probes)
    for error in errors:
        print(error)
    for draft in drafts:
        print(f"{draft.path}:{draft.line}: draft `{draft.id}` is not run until completed: missing "
              f"{', '.join(draft.missing)}")
    files = list(_loader().iter_claim_files(paths))
    if errors:
        print(f"{len(errors)} problem(s) in {len(files)} file(s)", file=sys.stderr)
        return FAILED
    print(f"{len(files)} claim file(s) valid" + (f", {len(drafts)} draft(s)" if drafts else ""))
    return OK


def _parse_value(text: str) -> Any:
    """A flag value as YAML would read it (numbers, booleans, lists), else the text."""
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return text if value is None or isinstance(value, dict) else value


def _pairs(values: Sequence[str] | None, flag: str, *, as_list: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for entry in values or []:
        key, sep, raw = entry.partition("=")
        if not sep or not key:
            raise UsageError(f"new: {flag} expects key=value, got {entry!r}")
        if as_list:
            out[key] = [_parse_value(v) for v in raw.split(",")]
        else:
            out[key] = _parse_value(raw)
    return out


NEW_FIELDS: tuple[tuple[str, str, str], ...] = (
    # (attribute, claim path, prompt)
    ("id", "id", "claim id (slug: a-z, 0-9, -)"),
    ("title", "title", "one-line title"),
    ("statement", "statement", "the claim in your own words"),
    ("doc", "source.doc", "source document"),
    ("section", "source.section", "section of the source"),
    ("figure", "source.figure", "the figure restated, verbatim"),
    ("scope_kind", "scope.kind", "scope kind (portable / as-stated)"),
    ("probe", "probe.name", "probe name"),
    ("rule", "check.rule", "decision rule"),
)


def build_claim(args: argparse.Namespace) -> dict[str, Any]:
    """The claim mapping in schema order, from the flags (only what was given)."""
    claim: dict[str, Any] = {"id": args.id, "title": args.title, "statement": args.statement}
    claim["source"] = {"doc": args.doc, "section": args.section, "figure": args.figure}
    scope = {"kind": args.scope_kind, "backend": args.backend, "device": args.device, "model": args.model,
             "min_memory_gib": args.min_memory_gib}
    claim["scope"] = {k: v for k, v in scope.items() if v is not None}
    probe: dict[str, Any] = {"name": args.probe}
    if args.param:
        probe["params"] = _pairs(args.param, "--param")
    if args.grid:
        probe["grid"] = _pairs(args.grid, "--grid", as_list=True)
    claim["probe"] = probe
    check = {
        "rule": args.rule, "output": args.output, "reference": args.reference,
        "outputs": args.outputs.split(",") if args.outputs else None, "over": args.over,
        "threshold": args.threshold, "bound": args.bound, "margin": args.margin, "scale": args.scale,
        "direction": args.direction, "expected": args.expected, "tolerance": args.tolerance, "unit": args.unit,
        "alpha": args.alpha,
    }
    claim["check"] = {k: v for k, v in check.items() if v is not None}
    if args.tags:
        claim["tags"] = [t.strip() for t in args.tags.split(",") if t.strip()]
    if args.depends_on:
        claim["depends_on"] = [t.strip() for t in args.depends_on.split(",") if t.strip()]
    if args.notes:
        claim["notes"] = args.notes
    return claim


def _ask(args: argparse.Namespace, ask: Callable[[str], str]) -> None:
    """Prompt for every required field the flags left out."""
    for attribute, path, prompt in NEW_FIELDS:
        while not getattr(args, attribute):
            answer = ask(f"{prompt} [{path}]: ").strip()
            if answer:
                setattr(args, attribute, answer)
    if args.rule in ("at_least", "at_most", "ratio", "rate_at_most", "zero_rate", "monotone", "exact",
                     "equivalent") and not args.output:
        args.output = ask("probe output the rule reads [check.output]: ").strip() or None
    numeric = {"at_least": "threshold", "at_most": "threshold", "ratio": "threshold", "rate_at_most": "threshold",
               "zero_rate": "threshold", "equivalent": "margin", "exact": "expected"}
    name = numeric.get(args.rule)
    if name and getattr(args, name) is None:
        answer = ask(f"{name} [check.{name}]: ").strip()
        if answer:
            try:
                setattr(args, name, float(answer))
            except ValueError:
                raise UsageError(f"new: check.{name} must be a number, got {answer!r}") from None


def render_claim(claim: dict[str, Any]) -> str:
    import yaml

    return yaml.safe_dump(claim, sort_keys=False, allow_unicode=True, width=100)


def cmd_new(args: argparse.Namespace, ask: Callable[[str], str] | None = None) -> int:
    missing = [path for attribute, path, _ in NEW_FIELDS if not getattr(args, attribute)]
    if missing:
        interactive = args.interactive or (args.interactive is None and sys.stdin.isatty())
        if not interactive:
            return _fail(f"new: missing {', '.join(missing)} (give them as flags, or run interactively)")
        _ask(args, ask or input)
    claim = build_claim(args)
    target = Path(args.out) if args.out else Path(args.claims_dir) / f"{args.id}.yaml"
    rendered = render_claim(claim)
    loader = _loader()
    try:
        (built,) = loader.load_claims_text(rendered, str(target))
        if not args.no_probes:
            _load_probes(args.root)
            loader.check_probe(built)
    except ClaimcheckError as error:
        return _fail(f"new: {error}")
    if args.stdout:
        sys.stdout.write(rendered)
        return OK
    if not args.force:
        for path in loader.iter_claim_files([args.claims_dir, target] if Path(args.claims_dir).exists() else [target]):
            if not path.exists():
                continue
            try:
                ids = [c.id for c in loader.read_claim_file(path, with_drafts=True)]
            except ClaimcheckError:
                continue  # a broken neighbour is `validate`'s business, not a reason to refuse
            if args.id in ids:
                return _fail(f"new: claim id `{args.id}` already exists in {path} (use --force to write anyway)")
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists() and target.read_text(encoding="utf-8").strip():
        with target.open("a", encoding="utf-8") as handle:
            handle.write("---\n" + rendered)
    else:
        target.write_text(rendered, encoding="utf-8")
    print(f"wrote claim `{args.id}` to {target}")
    return OK


def cmd_compare(args: argparse.Namespace) -> int:
    """Write the cross-machine comparison of portable claims."""
    from claimcheck.report.compare import write

    for path in write(args.stores, args.out):
        print(f"wrote {path}")
    return OK


# --------------------------------------------------------------------------- parser


def _store_flag(parser: argparse.ArgumentParser) -> None:
    from claimcheck.store import DEFAULT_PATH

    parser.add_argument("--store", default=str(DEFAULT_PATH), help=f"evidence store (default {DEFAULT_PATH})")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="claimcheck", description="Re-verify the claims written in ML-systems docs.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    report = sub.add_parser("report", help="rebuild a run's reports from the evidence store")
    _store_flag(report)
    report.add_argument("--run", help="run id or unique prefix (default: the latest run of the machine class)")
    report.add_argument("--machine-class", help="machine class whose latest run to report (default: this machine's "
                                                "class when the store has a run of it, else the latest run's)")
    report.add_argument("--out", default=".claimcheck/reports",
                        help="report folder (default .claimcheck/reports/, ignored by git; see `publish`)")
    report.add_argument("--no-plots", action="store_true", help="skip the pictures (no matplotlib)")
    report.set_defaults(handler=cmd_report)

    publish = sub.add_parser("publish", help="regenerate the committed reports/ from a chosen run")
    _store_flag(publish)
    publish.add_argument("--run", help="run id or unique prefix (default: the latest run of the machine class)")
    publish.add_argument("--machine-class", help="machine class whose latest run to publish (default: this "
                                                 "machine's class when the store has a run of it, else the latest run's)")
    publish.add_argument("--out", default="reports", help="the committed report folder (default reports/)")
    publish.add_argument("--no-plots", action="store_true", help="skip the pictures (no matplotlib)")
    publish.set_defaults(handler=cmd_publish)

    accept = sub.add_parser("accept", help="accept a run's verdicts as the expected ones (claims/verdicts.lock)")
    _store_flag(accept)
    accept.add_argument("--run", help="run id or unique prefix (default: the latest run of the machine class)")
    accept.add_argument("--machine-class", help="machine class whose latest run to accept (default: this machine's "
                                                "class when the store has a run of it, else the latest run's)")
    accept.add_argument("--lock", default=str(Path("claims") / "verdicts.lock"),
                        help="the lock file (default claims/verdicts.lock)")
    accept.set_defaults(handler=cmd_accept)

    runs = sub.add_parser("runs", help="list the runs in the evidence store")
    _store_flag(runs)
    runs.add_argument("--machine-class", help="only runs of this machine class")
    runs.set_defaults(handler=cmd_runs)

    history = sub.add_parser("history", help="verdicts and figures of one claim over runs and machines")
    history.add_argument("claim_id")
    _store_flag(history)
    history.add_argument("--machine-class", help="compare within this class (default: this machine's class when the "
                                                 "store has a run of it, else the latest run's)")
    history.add_argument("--json", action="store_true", help="print JSON")
    history.set_defaults(handler=cmd_history)

    merge = sub.add_parser("merge", help="union the runs of several stores into DEST")
    merge.add_argument("dest")
    merge.add_argument("sources", nargs="+", metavar="SRC")
    merge.set_defaults(handler=cmd_merge)

    compare = sub.add_parser("compare", help="portable claims side by side across machine classes")
    compare.add_argument("stores", nargs="+", metavar="STORE", help="evidence stores (e.g. reports/claimcheck.sqlite reports/profiles/*.sqlite)")
    compare.add_argument("--out", default="reports/profiles", help="folder for comparison.md/.png (default reports/profiles)")
    compare.set_defaults(handler=cmd_compare)

    validate = sub.add_parser("validate", help="lint claim files without running probes")
    validate.add_argument("paths", nargs="*", help="files or folders (default claims/)")
    validate.add_argument("--no-probes", action="store_true", help="do not check probe names, params and outputs")
    validate.add_argument("--root", default=".", help="project root holding probes/ (default .)")
    validate.set_defaults(handler=cmd_validate)

    new = sub.add_parser("new", help="scaffold a claim YAML (flags, or prompts for what is missing)")
    for flag, help_text in (("--id", "claim id"), ("--title", "one-line title"), ("--statement", "the claim"),
                            ("--doc", "source document"), ("--section", "source section"),
                            ("--figure", "figure restated, verbatim"), ("--probe", "probe name")):
        new.add_argument(flag, help=help_text)
    new.add_argument("--scope-kind", choices=("portable", "as-stated"), help="scope kind")
    new.add_argument("--backend", choices=("metal", "cuda", "cpu", "any"))
    new.add_argument("--device", help="device pattern")
    new.add_argument("--model", help="model pattern")
    new.add_argument("--min-memory-gib", type=float)
    new.add_argument("--param", action="append", metavar="KEY=VALUE", help="fixed probe param (repeatable)")
    new.add_argument("--grid", action="append", metavar="KEY=V1,V2", help="grid axis (repeatable)")
    new.add_argument("--rule", help="decision rule (at_least, at_most, ratio, equivalent, ...)")
    new.add_argument("--output")
    new.add_argument("--reference")
    new.add_argument("--outputs", help="comma-separated outputs, for ordering")
    new.add_argument("--over")
    new.add_argument("--threshold", type=float)
    new.add_argument("--bound", choices=("at_least", "at_most"))
    new.add_argument("--margin", type=float)
    new.add_argument("--scale", choices=("difference", "log-ratio"))
    new.add_argument("--direction", choices=("increasing", "decreasing"))
    new.add_argument("--expected", type=float)
    new.add_argument("--tolerance", type=float)
    new.add_argument("--unit")
    new.add_argument("--alpha", type=float)
    new.add_argument("--tags", help="comma-separated tags")
    new.add_argument("--depends-on", help="comma-separated claim ids")
    new.add_argument("--notes")
    new.add_argument("--out", help="file to write (default <claims-dir>/<id>.yaml; appended as a new document)")
    new.add_argument("--claims-dir", default="claims")
    new.add_argument("--stdout", action="store_true", help="print the validated YAML instead of writing it")
    new.add_argument("--force", action="store_true", help="append even if the file already has this id")
    new.add_argument("--no-probes", action="store_true", help="do not check the probe exists")
    new.add_argument("--root", default=".", help="project root holding probes/ (default .)")
    new.add_argument("--interactive", action=argparse.BooleanOptionalAction, default=None,
                     help="prompt for missing fields (default: when stdin is a terminal)")
    new.set_defaults(handler=cmd_new)

    for name, module in DISPATCH.items():
        sub.add_parser(name, help=f"see `claimcheck {name} --help` ({module})", add_help=False)
    return parser


def _dispatch(name: str, argv: list[str]) -> int:
    try:
        module = importlib.import_module(DISPATCH[name])
    except ImportError as error:
        return _fail(f"{name}: not available ({error})")
    result = module.main(argv)
    return int(result or 0)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``claimcheck`` console script; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in DISPATCH:
        return _dispatch(argv[0], argv[1:])
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "handler", None):
            parser.print_help()
            return USAGE
        return args.handler(args)
    except UsageError as error:
        return _fail(str(error))
    except ClaimcheckError as error:
        return _fail(str(error))
    except (sqlite3.Error, OSError) as error:
        return _fail(f"{type(error).__name__}: {error}")
    except KeyboardInterrupt:
        return _fail("interrupted", 130)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
