"""``claimcheck adjudicate STORE``: decide the shard runs of one CI matrix as the one run they split.

Each shard (``pytest claims/ --claims-shard K/N``) measured part of the suite and stored it as its own
run; ``claimcheck merge`` put the shards' stores together. This command runs the claims session once
more over the same checkout with nothing measured: every item is carried from the shard that ran it,
then the family adjustment, the cascade and the lock apply over all of them, as in one run. The
result is a new run in STORE (``merged_from`` names the shards) with the final verdicts, the reports,
the same terminal summary and the same exit status as one run of the whole suite, except on a machine
class the lock has no section for: there, as in ``claims_run``, the run is proposed as that class's
expectations (``--proposal DIR``, an artifact to review and accept) and only an item in error fails.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._base import UsageError

#: Run options a shard recorded -> the pytest option that gives the adjudicated run the same value.
_REPLAYED = {"seed": "--claims-seed", "alpha": "--claims-alpha", "budget-scale": "--claims-budget-scale",
             "family": "--claims-family", "family-alpha": "--claims-family-alpha", "cascade": "--claims-cascade",
             "cv-bound": "--claims-cv-bound", "profile": "--claims-profile"}
_FLAGS = {"strict": "--claims-strict", "controls": "--claims-controls"}


def replayed_options(options: Mapping[str, Any]) -> list[str]:
    """The pytest arguments that repeat a shard's recorded options (selection included)."""
    found: list[str] = []
    for name, flag in _REPLAYED.items():
        value = options.get(name)
        if value is not None:
            found.append(f"{flag}={value}")
    found += [flag for name, flag in _FLAGS.items() if options.get(name)]
    selection = options.get("selection") or {}
    if selection.get("keyword"):
        found += ["-k", str(selection["keyword"])]
    if selection.get("markexpr"):
        found += ["-m", str(selection["markexpr"])]
    return found


def cmd_adjudicate(args: argparse.Namespace) -> int:
    import pytest

    from claimcheck.pytest_plugin import shard
    from claimcheck.store import EvidenceStore

    store = Path(args.store).resolve()
    root = Path(args.root).resolve()
    with EvidenceStore.open_readonly(store) as opened:
        group = shard.shard_group()
        try:
            runs = shard.shard_runs(opened.runs(), None if group == "local" else group)
        except shard.ShardSetError as error:
            raise UsageError(f"adjudicate: {store}: {error}") from None
    options = dict(runs[0].options)
    paths = [str(arg) for arg in options.get("args") or []] or ["claims"]
    argv = [*paths, "-p", "no:cacheprovider", f"--claims-adjudicate={store}", f"--claims-store={store}",
            *replayed_options(options), *(["--claims-lock", str(Path(args.lock).resolve())] if args.lock else []),
            *(["--claims-reports", str(Path(args.reports).resolve())] if args.reports else []), *args.pytest_args]
    print(f"adjudicate: {len(runs)} shard run(s) of {runs[0].machine_class}: {', '.join(run.run_id for run in runs)}")
    with _inside(root):
        code = int(pytest.main(argv))
    return _propose_new_class(code, store, Path(args.lock).resolve() if args.lock else root / "claims" /
                              "verdicts.lock", root / args.proposal)


def _propose_new_class(code: int, store: Path, lock: Path, folder: Path) -> int:
    """pytest's status, unless the lock has no section for the run's class: then propose it (0 for the undecided)."""
    if code not in (0, 1):
        return code  # interrupted, a usage or internal error: no run to propose from
    from claimcheck.errors import ClaimcheckError
    from claimcheck.workflow.claims_run import propose, report_proposal

    try:
        summary = propose(store, lock, folder)
    except ClaimcheckError as error:
        raise UsageError(f"adjudicate: {' '.join(str(error).split())}") from None
    return code if summary is None else report_proposal(summary, str(folder))


@contextlib.contextmanager
def _inside(folder: Path) -> Any:
    """Run with ``folder`` as the working directory, as the shards ran pytest from the project root."""
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def add_parser(sub: Any) -> None:
    """The ``adjudicate`` subcommand."""
    adjudicate = sub.add_parser("adjudicate", help="decide the merged shard runs of a CI matrix as one run "
                                                   "(family, cascade, lock), stored as a new run")
    adjudicate.add_argument("store", help="the store the shards' stores were merged into (`claimcheck merge`)")
    adjudicate.add_argument("--lock", help="expected verdicts (default: <root>/claims/verdicts.lock)")
    adjudicate.add_argument("--root", default=".", help="the project root the shards ran from (default .)")
    adjudicate.add_argument("--reports", help="report folder (default <root>/.claimcheck/reports)")
    adjudicate.add_argument("--proposal", default=".claimcheck/proposed",
                            help="where a first run on a machine class the lock lacks proposes its expectations "
                                 "(relative to --root; default %(default)s)")
    adjudicate.add_argument("pytest_args", nargs="*", metavar="PYTEST_ARG",
                            help="more pytest arguments, after `--` (e.g. -- --junitxml=merged.xml)")
    adjudicate.set_defaults(handler=cmd_adjudicate)
