"""What the command-line tests share: a valid claim file, a store of synthetic runs, the one-line error check."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from claimcheck.store import EvidenceStore

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("cc_synthetic_cli", ROOT / "tests" / "store" / "synthetic.py")
assert _spec is not None and _spec.loader is not None
synth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(synth)

#: A valid claim on a probe no project defines (validated with ``--no-probes``, or to show an unknown probe).
GOOD = """\
id: doubled-bandwidth
title: Doubling is exact
statement: Two times 21 is 42.
source: {doc: notes.md, section: "§1", figure: "42"}
scope: {kind: portable, backend: any}
probe: {name: no_such_probe_here}
check: {rule: exact, output: value, expected: 42, tolerance: 0}
"""


def store_run(path: Path, *outcomes: dict, machine: dict = synth.MACHINE_A, machine_class: str = synth.CLASS_A) -> str:
    """One finished run of ``outcomes`` in the store at ``path``; returns its id."""
    with EvidenceStore(path) as store:
        run_id = store.begin_run(machine=machine, machine_class=machine_class, options={}, suite_commit="s",
                                 claims_commit="c")
        for outcome in outcomes:
            store.record(run_id, outcome)
        store.finish_run(run_id)
    return run_id


def one_line_error(capsys) -> str:
    """The command's stderr, asserted to be one ``claimcheck: ...`` line."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("claimcheck: "), err
    return err
