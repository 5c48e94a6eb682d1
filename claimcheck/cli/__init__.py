"""The ``claimcheck`` command: a thin layer over the library.

Subcommands: ``report``, ``publish``, ``accept``, ``history``, ``runs``, ``merge``, ``adjudicate``, ``compare``, ``new``, ``validate``,
``probes``, ``models``, and ``docs`` / ``extract`` (handed to their own modules with the rest of the
arguments). Exit codes: 0 ok, 1 check failures (invalid claims, merge
conflicts), 2 usage or input errors, 141 when the reader of the output went away (``| head``), as for
any command killed by SIGPIPE. Every error is one line on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sqlite3
import sys
from pathlib import Path
from typing import Sequence

from claimcheck.doc_links import doc_link
from claimcheck.errors import ClaimcheckError

from ._base import DISPATCH, FAILED, OK, USAGE, UsageError, _fail, _Parser
from ._claims import cmd_validate
from ._new import build_claim, cmd_new, render_claim
from ._evidence import (safety_flags, cmd_accept, cmd_compare, cmd_history, cmd_merge, cmd_publish, cmd_report, cmd_runs,
                        history_lines)
from ._listing import cmd_models, cmd_probes

#: The exit status of a process killed by SIGPIPE (128 + 13), what shells show for ``yes | head``.
CLOSED_PIPE = 141


def _version() -> str:
    from importlib import metadata

    try:
        return f"claimcheck {metadata.version('claimcheck')}"
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "claimcheck (not installed)"


def _store_flag(parser: argparse.ArgumentParser) -> None:
    from claimcheck.store import DEFAULT_PATH

    parser.add_argument("--store", default=str(DEFAULT_PATH), help=f"evidence store (default {DEFAULT_PATH})")


def _run_flags(parser: argparse.ArgumentParser, verb: str) -> None:
    """``--run`` and ``--machine-class``: which run a store command works on (one rule for all of them)."""
    parser.add_argument("--run", help="run id or unique prefix (default: the latest run of the machine class)")
    parser.add_argument("--machine-class", help=f"machine class whose latest run to {verb} (default: this machine's "
                                                "class when the store has a run of it, else the latest run's)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="claimcheck", description="Re-verify the claims written in ML-systems docs.",
                     epilog="Claims are measured by pytest: `pytest claims/` (add `-k ID` for one claim). These commands "
                            "read and edit what a run leaves: the evidence store, the reports, the lock, the claim files.")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    report = sub.add_parser("report", help="rebuild a run's reports from the evidence store")
    _store_flag(report)
    _run_flags(report, "report")
    report.add_argument("--out", default=".claimcheck/reports",
                        help="report folder (default .claimcheck/reports/, ignored by git; see `publish`)")
    report.add_argument("--no-plots", action="store_true", help="skip the pictures (faster)")
    report.set_defaults(handler=cmd_report)

    publish = sub.add_parser("publish", help="record a chosen run in reports/profiles/ and regenerate reports/ "
                                             "and the comparison from it")
    _store_flag(publish)
    _run_flags(publish, "publish")
    publish.add_argument("--out", default="reports", help="the committed report folder (default reports/)")
    publish.add_argument("--no-plots", action="store_true", help="skip the pictures (faster)")
    publish.add_argument("--profile", help="committed profile to record the run in (default: OUT/profiles/ file "
                                           "holding most runs of its machine class, else one named after it)")
    publish.add_argument("--no-record", action="store_true",
                         help="do not record the run in a committed profile (build reports from --store)")
    safety_flags(publish, "publish")
    publish.set_defaults(handler=cmd_publish)

    accept = sub.add_parser("accept", help="accept a run's verdicts as the expected ones (claims/verdicts.lock)")
    _store_flag(accept)
    _run_flags(accept, "accept")
    accept.add_argument("--lock", default=str(Path("claims") / "verdicts.lock"),
                        help="the lock file (default claims/verdicts.lock)")
    accept.add_argument("--update", action="store_true",
                        help="keep the expectations of items the run did not include (a run of part of the suite)")
    safety_flags(accept, "accept")
    accept.set_defaults(handler=cmd_accept)

    runs = sub.add_parser("runs", help="list the runs in the evidence store")
    _store_flag(runs)
    runs.add_argument("--machine-class", help="only runs of this machine class")
    runs.set_defaults(handler=cmd_runs)

    history = sub.add_parser("history", help="verdicts and figures of one claim over runs and machines")
    history.add_argument("claim_id", help="the claim's id (a did-you-mean answers a typo)")
    _store_flag(history)
    history.add_argument("--machine-class", help="compare within this class (default: this machine's class when the "
                                                 "store has a run of it, else the latest run's)")
    history.add_argument("--json", action="store_true", help="print JSON")
    history.set_defaults(handler=cmd_history)

    merge = sub.add_parser("merge", help="union the runs of several stores into DEST")
    merge.add_argument("dest", help="the store to merge into (created if missing)")
    merge.add_argument("sources", nargs="+", metavar="SRC", help="stores whose runs are copied into DEST")
    merge.set_defaults(handler=cmd_merge)

    from ._adjudicate import add_parser as add_adjudicate

    add_adjudicate(sub)

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
    new.add_argument("--backend", choices=("metal", "cuda", "cpu", "any"), help="MLX backend the claim applies to")
    new.add_argument("--device", help="device pattern")
    new.add_argument("--model", help="model pattern")
    new.add_argument("--min-memory-gib", type=float, help="least machine memory the claim needs")
    new.add_argument("--param", action="append", metavar="KEY=VALUE", help="fixed probe param (repeatable)")
    new.add_argument("--grid", action="append", metavar="KEY=V1,V2", help="grid axis (repeatable)")
    new.add_argument("--rule", help="decision rule (at_least, at_most, ratio, equivalent, ...)")
    new.add_argument("--output", help="the probe output the rule reads")
    new.add_argument("--reference", help="a second output the rule compares with (ratio, paired checks)")
    new.add_argument("--outputs", help="comma-separated outputs, for ordering")
    new.add_argument("--over", help="the swept param whose levels the rule compares (monotone, ordering)")
    new.add_argument("--threshold", type=float, help="the figure a bound or ratio rule compares with")
    new.add_argument("--bound", choices=("at_least", "at_most"), help="which side of the threshold holds")
    new.add_argument("--margin", type=float, help="equivalence margin")
    new.add_argument("--scale", choices=("difference", "log-ratio"), help="scale of the equivalence margin")
    new.add_argument("--direction", choices=("increasing", "decreasing"), help="the trend a monotone rule tests")
    new.add_argument("--expected", type=float, help="the value an exact rule expects")
    new.add_argument("--tolerance", type=float, help="how far from --expected still agrees")
    new.add_argument("--unit", help="unit of the figure, as the source prints it")
    new.add_argument("--alpha", type=float, help="error rate of the decision (default 0.05)")
    new.add_argument("--tags", help="comma-separated tags")
    new.add_argument("--depends-on", help="comma-separated claim ids")
    new.add_argument("--notes", help="why the claim reads the source this way")
    new.add_argument("--control", action="append", metavar="KEY=VALUE",
                     help="positive control: a probe param under which the claim must be refuted (repeatable)")
    new.add_argument("--control-why", help="why the claim must be refuted under the --control params")
    new.add_argument("--no-control", metavar="WHY", help="no positive control exists for this claim, and why")
    new.add_argument("--out", help="file to write (default <claims-dir>/<id>.yaml; appended as a new document)")
    new.add_argument("--claims-dir", default="claims", help="folder of claim files (default claims/)")
    new.add_argument("--stdout", action="store_true", help="print the validated YAML instead of writing it")
    new.add_argument("--force", action="store_true", help="append even if the file already has this id")
    new.add_argument("--no-probes", action="store_true", help="do not check the probe exists")
    new.add_argument("--root", default=".", help="project root holding probes/ (default .)")
    new.add_argument("--interactive", action=argparse.BooleanOptionalAction, default=None,
                     help="prompt for missing fields (default: when stdin is a terminal)")
    new.set_defaults(handler=cmd_new)

    probes = sub.add_parser("probes", help="list the probes claims can use: params with types and defaults, outputs "
                                           "with units (like `pytest --fixtures`)")
    probes.add_argument("names", nargs="*", metavar="NAME", help="only these probes")
    probes.add_argument("--root", default=".", help="project root holding probes/ (default .)")
    probes.add_argument("--markdown", action="store_true", help="print the probe reference as Markdown "
                        f"({doc_link('probes.md')}), one worked claim per probe")
    probes.add_argument("--output", metavar="FILE", help="with --markdown: write it to FILE")
    probes.set_defaults(handler=cmd_probes)

    models = sub.add_parser("models", help="each model name the claims use, and what it resolves to here")
    models.add_argument("paths", nargs="*", help="claim files or folders (default <root>/claims)")
    models.add_argument("--root", default=".",
                        help="project root whose pyproject.toml maps model names ([tool.claimcheck.models]; default .)")
    models.set_defaults(handler=cmd_models)

    for name in DISPATCH:
        sub.add_parser(name, help=DISPATCHED_HELP[name], add_help=False)
    for action in sub._choices_actions:  # each subcommand's --help opens with its one-line summary
        chosen = sub.choices[action.dest]
        summary = action.help or ""
        chosen.description = chosen.description or f"{summary[:1].upper()}{summary[1:]}."
    return parser


#: Summaries of the subcommands handed to their own modules (their --help comes from there).
DISPATCHED_HELP = {
    "docs": "check that doc sentences citing claims agree with the evidence (the docs gate)",
    "extract": "draft claims from the figures of a Markdown doc",
}


def _dispatch(name: str, argv: list[str]) -> int:
    try:
        module = importlib.import_module(DISPATCH[name])
    except ImportError as error:
        return _fail(f"{name}: not available ({error})")
    result = module.main(argv)
    return int(result or 0)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``claimcheck`` console script; returns the exit code."""
    try:
        code = _run(list(sys.argv[1:] if argv is None else argv))
        sys.stdout.flush()  # inside the guard: a closed pipe may only show when the last lines are flushed
        return code
    except BrokenPipeError:
        # The reader (`| head`) has what it wanted. Point stdout at /dev/null so that the interpreter's own
        # flush at exit does not fail again, and exit as a command killed by SIGPIPE would.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError):  # stdout is not a file descriptor (captured): nothing to flush at exit
            pass
        return CLOSED_PIPE


def _run(argv: list[str]) -> int:
    if argv and argv[0] in DISPATCH:
        return _dispatch(argv[0], argv[1:])
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "handler", None):
            parser.print_help()
            return USAGE
        return int(args.handler(args))
    except SystemExit as done:  # --help and --version print, then argparse exits
        return done.code if isinstance(done.code, int) else OK
    except UsageError as error:
        return _fail(str(error))
    except ClaimcheckError as error:
        return _fail(str(error))
    except BrokenPipeError:
        raise
    except (sqlite3.Error, OSError) as error:
        return _fail(f"{type(error).__name__}: {error}")
    except KeyboardInterrupt:
        return _fail("interrupted", 130)


__all__ = ["CLOSED_PIPE", "DISPATCH", "FAILED", "OK", "USAGE", "UsageError", "build_claim", "build_parser", "cmd_new", "history_lines",
           "main", "render_claim"]
