"""The claimcheck command: report, history, runs, merge, validate, new, and the docs/extract hand-off."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from claimcheck import cli
from claimcheck.store import EvidenceStore

from .cli._shared import GOOD, synth
from .cli._shared import one_line_error as _one_line_error
from .cli._shared import store_run as _store

ROOT = Path(__file__).resolve().parents[1]


def test_report_rebuilds_from_the_store(tmp_path, capsys) -> None:
    store = tmp_path / "ev.sqlite"
    run_id = _store(store, synth.outcome())
    out = tmp_path / "reports"
    assert cli.main(["report", "--store", str(store), "--out", str(out), "--run", run_id[:17], "--no-plots"]) == 0
    assert (out / "index.html").exists() and (out / "corrections" / "qmv-large-bw.md").exists()
    assert f"run {run_id}: 1 refuted" in capsys.readouterr().out


def test_report_without_a_store_is_an_input_error(tmp_path, capsys) -> None:
    assert cli.main(["report", "--store", str(tmp_path / "missing.sqlite")]) == 2
    assert "no evidence store there" in _one_line_error(capsys)
    assert not (tmp_path / "missing.sqlite").exists(), "reporting never creates a store"


def test_unknown_run_and_bad_flags_are_one_line_usage_errors(tmp_path, capsys) -> None:
    store = tmp_path / "ev.sqlite"
    _store(store, synth.outcome())
    assert cli.main(["report", "--store", str(store), "--run", "nope", "--out", str(tmp_path / "r")]) == 2
    assert "no run nope" in _one_line_error(capsys)
    assert cli.main(["report", "--bogus"]) == 2
    assert "unrecognized arguments: --bogus" in _one_line_error(capsys)
    assert cli.main(["frobnicate"]) == 2
    assert "invalid choice" in _one_line_error(capsys)


def test_history_labels_other_machine_classes_and_compares_only_within_a_class(tmp_path, capsys) -> None:
    store = tmp_path / "ev.sqlite"
    _store(store, synth.outcome(verdict="holds", statistic=0.80, low=0.78, high=0.82))
    _store(store, synth.outcome(verdict="holds", statistic=0.95, low=0.93, high=0.97, machine=synth.MACHINE_B,
                                machine_class=synth.CLASS_B), machine=synth.MACHINE_B, machine_class=synth.CLASS_B)
    _store(store, synth.outcome())  # refuted 0.41 on class A
    assert cli.main(["history", "qmv-large-bw", "--store", str(store), "--machine-class", synth.CLASS_A]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == f"{synth.CLASS_A} (this machine's class)"
    other = next(i for i, line in enumerate(lines) if line.startswith(synth.CLASS_B))
    assert "other machine class" in lines[other] and "not comparable" in lines[other]
    this_rows = lines[2:other]
    assert len(this_rows) == 2 and "verdict was holds" in this_rows[1] and "outside previous interval" in this_rows[1]
    assert "<-" not in lines[other + 1], "the class-B figure is never compared with this machine's"


def test_history_of_an_unknown_claim(tmp_path, capsys) -> None:
    store = tmp_path / "ev.sqlite"
    _store(store, synth.outcome())
    assert cli.main(["history", "no-such-claim", "--store", str(store), "--machine-class", "x"]) == 2
    assert "no results for claim `no-such-claim`" in _one_line_error(capsys)


def test_merge_from_two_machines_then_again(tmp_path, capsys) -> None:
    a, b, dest = tmp_path / "a.sqlite", tmp_path / "b.sqlite", tmp_path / "all.sqlite"
    run_a = _store(a, synth.outcome())
    run_b = _store(b, synth.outcome(machine=synth.MACHINE_B, machine_class=synth.CLASS_B),
                   machine=synth.MACHINE_B, machine_class=synth.CLASS_B)
    assert cli.main(["merge", str(dest), str(a), str(b)]) == 0
    assert "2 run(s) added" in capsys.readouterr().out
    assert cli.main(["merge", str(dest), str(a), str(b)]) == 0
    assert "0 run(s) added, 0 finalised, 0 item(s) added, 2 already there" in capsys.readouterr().out
    with EvidenceStore(dest) as store:
        assert {r.run_id for r in store.runs()} == {run_a, run_b}
    assert cli.main(["runs", "--store", str(dest)]) == 0
    assert capsys.readouterr().out.count("complete") == 2


def test_merge_of_a_newer_store_is_refused(tmp_path, capsys) -> None:
    import sqlite3

    newer = tmp_path / "newer.sqlite"
    conn = sqlite3.connect(newer)
    conn.execute("PRAGMA user_version = 9")
    conn.close()
    assert cli.main(["merge", str(tmp_path / "dest.sqlite"), str(newer)]) == 2
    assert "schema version 9 is newer" in _one_line_error(capsys)


def test_validate_reports_every_problem_with_file_and_line(tmp_path, capsys) -> None:
    claims = tmp_path / "claims"
    claims.mkdir()
    (claims / "good.yaml").write_text(GOOD)
    assert cli.main(["validate", str(claims), "--no-probes"]) == 0
    assert "1 claim file(s) valid" in capsys.readouterr().out
    (claims / "bad.yaml").write_text(GOOD.replace("doubled-bandwidth", "second").replace("expected: 42", "expected: lots"))
    assert cli.main(["validate", str(claims), "--no-probes"]) == 1
    out = capsys.readouterr().out
    assert f"{claims / 'bad.yaml'}:7: check.expected: expected a number" in out


def test_validate_checks_probe_names_against_the_registry(tmp_path, capsys) -> None:
    (tmp_path / "one.yaml").write_text(GOOD)
    assert cli.main(["validate", str(tmp_path / "one.yaml"), "--root", str(ROOT)]) == 1
    assert "unknown probe `no_such_probe_here`" in capsys.readouterr().out


def test_validate_of_a_missing_path(tmp_path, capsys) -> None:
    assert cli.main(["validate", str(tmp_path / "nowhere")]) == 2
    assert "no such file or folder" in _one_line_error(capsys)


NEW_FLAGS = ["--title", "qmv is fast", "--statement", "qmv streams at >= 90 GB/s", "--doc", "docs/qmv.md",
             "--section", "2", "--figure", "90 GB/s", "--scope-kind", "portable", "--probe", "qmv",
             "--param", "dtype=bfloat16", "--grid", "size_mib=64,256", "--rule", "at_least", "--output", "gbps",
             "--threshold", "90", "--unit", "GB/s", "--tags", "bandwidth,qmv", "--no-probes"]


def test_new_writes_a_claim_the_loader_reads_back(tmp_path, capsys) -> None:
    claims = tmp_path / "claims"
    assert cli.main(["new", "--id", "qmv-fast", "--claims-dir", str(claims), *NEW_FLAGS]) == 0
    written = claims / "qmv-fast.yaml"
    from claimcheck.claims.loader import read_claim_file

    (claim,) = read_claim_file(written)
    assert claim.id == "qmv-fast" and claim.check.number("threshold") == 90.0 and claim.check.unit == "GB/s"
    assert claim.probe.grid == {"size_mib": [64, 256]} and claim.probe.params == {"dtype": "bfloat16"}
    assert claim.tags == ("bandwidth", "qmv")
    assert cli.main(["new", "--id", "qmv-fast", "--claims-dir", str(claims), *NEW_FLAGS]) == 2
    assert "already exists" in _one_line_error(capsys)


def test_new_refuses_an_invalid_claim_and_writes_nothing(tmp_path, capsys) -> None:
    flags = [f for f in NEW_FLAGS]
    i = flags.index("--threshold")
    del flags[i:i + 2]  # at_least without a threshold
    assert cli.main(["new", "--id", "qmv-fast", "--claims-dir", str(tmp_path), *flags]) == 2
    assert "rule `at_least` needs `check.threshold`" in _one_line_error(capsys)
    assert list(tmp_path.iterdir()) == []
    assert cli.main(["new", "--id", "Not A Slug", "--claims-dir", str(tmp_path), *NEW_FLAGS]) == 2
    assert "expected a slug" in _one_line_error(capsys)


def test_new_without_a_terminal_lists_what_is_missing(tmp_path, capsys, monkeypatch) -> None:
    with open(os.devnull) as no_terminal:
        monkeypatch.setattr(sys, "stdin", no_terminal)
        assert cli.main(["new", "--id", "x-y", "--claims-dir", str(tmp_path)]) == 2
    assert "missing title, statement, source.doc" in _one_line_error(capsys)


def test_new_interactively_asks_for_what_the_flags_left_out(tmp_path, capsys) -> None:
    answers = iter(["", "An interactive claim", "It is asked for", "docs/x.md", "§3", "1.5x", "portable", "qmv",
                    "ratio", "gbps", "0.74"])
    parser = cli.build_parser()
    args = parser.parse_args(["new", "--id", "asked-claim", "--claims-dir", str(tmp_path), "--reference", "raw",
                              "--bound", "at_least", "--no-probes", "--stdout", "--interactive"])
    assert cli.cmd_new(args, ask=lambda prompt: next(answers)) == 0
    text = capsys.readouterr().out
    from claimcheck.claims.loader import load_claims_text

    (claim,) = load_claims_text(text, "stdout")
    assert claim.title == "An interactive claim" and claim.check.rule == "ratio" and claim.check.number("threshold") == 0.74
    assert list(tmp_path.iterdir()) == [], "--stdout writes nothing"


@pytest.mark.parametrize("name, module", sorted(cli.DISPATCH.items()))
def test_docs_and_extract_get_the_remaining_arguments(monkeypatch, name, module) -> None:
    seen = {}
    fake = types.ModuleType(module)
    fake.main = lambda argv: seen.setdefault("argv", argv) and 3
    monkeypatch.setitem(sys.modules, module, fake)
    assert cli.main([name, "--flag", "value", "docs/x.md"]) == 3
    assert seen["argv"] == ["--flag", "value", "docs/x.md"]


def test_console_entry_point_exit_codes(tmp_path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "claimcheck.cli", "history", "x", "--store",
                           str(tmp_path / "none.sqlite")], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


@pytest.mark.parametrize("command", [["runs"], ["history", "{claim}"], ["report", "--no-plots", "--out", "{out}"]])
def test_reading_commands_never_write_the_store(tmp_path, command) -> None:
    """A committed profile read by these commands keeps its bytes: no migration, no checkpoint.

    (An older schema is migrated in memory only; tests/store reads a version-0 store that way.)
    """
    import hashlib
    import shutil
    import sqlite3

    store = tmp_path / "profile.sqlite"
    shutil.copy(ROOT / "reports" / "profiles" / "h200-cuda.sqlite", store)
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as conn:
        (claim_id,) = conn.execute("SELECT claim_id FROM results LIMIT 1").fetchone()
    before = hashlib.sha256(store.read_bytes()).hexdigest()
    args = [a.replace("{claim}", claim_id).replace("{out}", str(tmp_path / "r")) for a in command]
    assert cli.main([*args, "--store", str(store)]) == 0
    assert hashlib.sha256(store.read_bytes()).hexdigest() == before


def test_publish_writes_the_chosen_run_to_the_committed_folder(tmp_path, capsys, monkeypatch) -> None:
    store = tmp_path / "ev.sqlite"
    older = _store(store, synth.outcome(verdict="holds", statistic=0.8, low=0.78, high=0.82))
    newer = _store(store, synth.outcome())
    monkeypatch.chdir(tmp_path)
    assert cli.main(["publish", "--store", str(store), "--machine-class", synth.CLASS_A, "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert f"publish: run {newer}, the latest of machine class {synth.CLASS_A} (given with --machine-class)" in out
    assert (tmp_path / "reports" / "corrections" / "qmv-large-bw.md").exists()
    assert cli.main(["publish", "--store", str(store), "--run", older, "--no-plots"]) == 0
    assert not (tmp_path / "reports" / "corrections" / "qmv-large-bw.md").exists(), "the older run held"


def _doc(claim_id: str, *, depends_on: str = "", expected: str = "42") -> str:
    extra = f"depends_on: [{depends_on}]\n" if depends_on else ""
    return GOOD.replace("doubled-bandwidth", claim_id).replace("expected: 42", f"expected: {expected}") + extra


def test_validate_lists_every_document_and_premise_problem_of_a_folder(tmp_path, capsys) -> None:
    claims = tmp_path / "claims"
    (claims / "a").mkdir(parents=True)
    # one file: a bad document between two good ones, a cycle and an unknown premise
    (claims / "a" / "many.yaml").write_text("---\n".join([
        _doc("first", depends_on="second"), _doc("broken", expected="lots"), _doc("second", depends_on="first"),
        _doc("orphan", depends_on="nowhere"),
    ]))
    (claims / "b.yaml").write_text(_doc("premise-elsewhere"))
    (claims / "a" / "uses.yaml").write_text(_doc("user", depends_on="premise-elsewhere"))
    assert cli.main(["validate", str(claims), "--no-probes", "--root", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "check.expected: expected a number" in out
    assert "depends_on: dependency cycle: first -> second -> first" in out
    assert "depends_on: unknown claim `nowhere`" in out
    assert out.count(str(claims / "a" / "many.yaml")) == 3, out
    # one file of the tree, whose premise lives in another file: valid
    assert cli.main(["validate", str(claims / "a" / "uses.yaml"), "--no-probes", "--root", str(tmp_path)]) == 0
