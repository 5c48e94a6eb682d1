"""One clear line instead of a traceback, a silent success or an aborted dialogue, for each misuse of the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from claimcheck import cli

from ._shared import GOOD, ROOT, synth
from ._shared import one_line_error as _one_line_error
from ._shared import store_run as _store


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT))


def test_version(capsys):
    from importlib import metadata

    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out == f"claimcheck {metadata.version('claimcheck')}\n"


def _closed_pipe_run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """Run the command with its stdout a pipe whose reader is already gone, as after ``| head`` quits."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-m", "claimcheck.cli", *args], stdout=write_end,
                              stderr=subprocess.PIPE, cwd=cwd, env=_env(), timeout=900)
    finally:
        os.close(write_end)


@pytest.mark.parametrize("command", ["validate", "history"])
def test_a_closed_pipe_ends_quietly_as_sigpipe_would(tmp_path, command):
    if command == "validate":
        (tmp_path / "claims").mkdir()
        for index in range(3):
            (tmp_path / "claims" / f"c{index}.yaml").write_text(GOOD.replace("doubled-bandwidth", f"claim-{index}"))
        args = ["validate", "claims", "--no-probes"]
    else:
        store = tmp_path / "ev.sqlite"
        for _ in range(3):
            _store(store, synth.outcome())
        args = ["history", "qmv-large-bw", "--json", "--store", str(store), "--machine-class", synth.CLASS_A]
    done = _closed_pipe_run(args, tmp_path)
    assert done.returncode == cli.CLOSED_PIPE, done.stderr
    assert done.stderr == b"", done.stderr.decode()


def test_validate_of_a_non_claim_file_or_an_empty_folder_is_an_error(tmp_path, capsys):
    (tmp_path / "README.md").write_text("# notes\n")
    assert cli.main(["validate", str(tmp_path / "README.md"), "--no-probes"]) == 2
    assert "nothing to validate: no claim files (.yaml, .yml) in" in _one_line_error(capsys)
    (tmp_path / "empty").mkdir()
    assert cli.main(["validate", str(tmp_path / "empty"), "--no-probes"]) == 2
    assert f"nothing to validate: no claim files (.yaml, .yml) in {tmp_path / 'empty'}" in _one_line_error(capsys)
    # Beside claim files, a stray non-claim path is named but does not hide the claims.
    (tmp_path / "one.yaml").write_text(GOOD)
    assert cli.main(["validate", str(tmp_path / "one.yaml"), str(tmp_path / "README.md"), "--no-probes"]) == 0
    captured = capsys.readouterr()
    assert "1 claim file(s) valid" in captured.out and "skipped" in captured.err and "README.md" in captured.err


def test_an_unknown_probe_outside_the_project_root_hints_at_root(tmp_path, capsys):
    project = tmp_path / "project"
    (project / "probes").mkdir(parents=True)
    (project / "claims").mkdir()
    (project / "claims" / "one.yaml").write_text(GOOD)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert cli.main(["validate", str(project / "claims"), "--root", str(elsewhere)]) == 1
    captured = capsys.readouterr()
    assert "unknown probe `no_such_probe_here`" in captured.out
    assert (f"hint: {elsewhere} has no probes/ folder and no [tool.claimcheck] probes; the claims look like they "
            f"belong to {project}: pass --root {project}") in captured.err
    # From the project root itself the probe is simply unknown: no hint.
    assert cli.main(["validate", str(project / "claims"), "--root", str(project)]) == 1
    assert "hint:" not in capsys.readouterr().err


def test_an_unknown_probe_with_no_project_in_sight_says_to_run_from_the_root(tmp_path, capsys):
    (tmp_path / "one.yaml").write_text(GOOD)
    assert cli.main(["validate", str(tmp_path / "one.yaml"), "--root", str(tmp_path)]) == 1
    assert "run from the project root or pass --root PROJECT" in capsys.readouterr().err


def test_history_of_a_mistyped_claim_or_an_item_id_says_which_claim(tmp_path, capsys):
    store = tmp_path / "ev.sqlite"
    _store(store, synth.outcome())
    assert cli.main(["history", "qmv-large-b", "--store", str(store), "--machine-class", "x"]) == 2
    assert "no results for claim `qmv-large-b`" in (err := _one_line_error(capsys))
    assert "(did you mean `qmv-large-bw`?)" in err
    assert cli.main(["history", "qmv-large-bw[size_mib=256]", "--store", str(store), "--machine-class", "x"]) == 2
    assert "(`qmv-large-bw[size_mib=256]` is an item; its claim is `qmv-large-bw`)" in _one_line_error(capsys)
    assert cli.main(["history", "zzzz", "--store", str(store), "--machine-class", "x"]) == 2
    assert "did you mean" not in _one_line_error(capsys)


NEW_BASE = ["new", "--no-probes", "--stdout", "--interactive", "--reference", "raw", "--bound", "at_least"]


def test_new_asks_again_after_a_bad_answer_instead_of_aborting(tmp_path, capsys):
    answers = iter(["Not A Slug", "asked-claim", "An interactive claim", "It is asked for", "docs/x.md", "§3",
                    "1.5x", "portble", "portable", "qmv", "ratoi", "ratio", "gbps", "lots", "0.74"])
    prompts: list[str] = []

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return next(answers)

    args = cli.build_parser().parse_args([*NEW_BASE, "--claims-dir", str(tmp_path)])
    assert cli.cmd_new(args, ask=ask) == 0
    captured = capsys.readouterr()
    from claimcheck.claims.loader import load_claims_text

    (claim,) = load_claims_text(captured.out, "stdout")
    assert (claim.id, claim.scope.kind, claim.check.rule, claim.check.number("threshold")) == (
        "asked-claim", "portable", "ratio", 0.74)
    assert sum(prompt.startswith("claim id") for prompt in prompts) == 2
    assert sum(prompt.startswith("scope kind") for prompt in prompts) == 2
    assert sum(prompt.startswith("threshold") for prompt in prompts) == 2
    problems = [line for line in captured.err.splitlines() if line.endswith("; try again")]
    assert len(problems) == 4, captured.err
    assert "expected a slug" in problems[0] and "expected `portable` or `as-stated`" in problems[1]
    assert "unknown rule 'ratoi' (did you mean `ratio`?)" in problems[2] and "expected a number" in problems[3]


def test_new_asks_again_for_a_bad_flag_value_and_a_mistyped_probe(tmp_path, capsys):
    answers = iter(["Title", "Statement", "d.md", "1", "2x", "portable", "weight_byte", "weight_bytes", "at_least",
                    "bytes_per_tokn", "bytes_per_token", "1"])
    args = cli.build_parser().parse_args(["new", "--id", "Bad Id", "--stdout", "--interactive", "--root", str(ROOT),
                                          "--claims-dir", str(tmp_path)])
    asked = iter(["fixed-id"])

    def ask(prompt: str) -> str:
        return next(asked) if prompt.startswith("claim id") else next(answers)

    assert cli.cmd_new(args, ask=ask) == 0
    captured = capsys.readouterr()
    assert "id: fixed-id" in captured.out and "output: bytes_per_token" in captured.out
    assert "unknown probe `weight_byte` (did you mean `weight_bytes`?)" in captured.err
    assert "probe `weight_bytes` has no output `bytes_per_tokn`" in captured.err


def test_new_at_the_end_of_input_writes_nothing(tmp_path, capsys):
    def ask(prompt: str) -> str:
        raise EOFError

    args = cli.build_parser().parse_args(["new", "--no-probes", "--interactive", "--claims-dir", str(tmp_path)])
    assert cli.cmd_new(args, ask=ask) == 2
    assert "input ended before the claim was complete" in _one_line_error(capsys)
    assert list(tmp_path.iterdir()) == []


PROFILED = GOOD + "profiles:\n  cuda: {params: {size: 2}}\n  h200-long: {params: {size: 4}}\n"


def _pytest(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=cwd,
                          capture_output=True, text=True, env=_env(), timeout=900)


@pytest.fixture
def pytest_project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (tmp_path / "claims").mkdir()
    (tmp_path / "claims" / "one.yaml").write_text(PROFILED)
    return tmp_path


def test_pytest_with_root_says_to_use_rootdir(pytest_project):
    done = _pytest(["--root", str(pytest_project), "--co", "-q"], pytest_project)
    assert done.returncode == 4, done.stdout + done.stderr
    assert (f"claimcheck: pytest has no --root option (that is `claimcheck validate --root`); use "
            f"--rootdir={pytest_project}") in done.stderr
    assert "Traceback" not in done.stderr


def test_an_unknown_claims_profile_gets_a_did_you_mean(pytest_project):
    done = _pytest(["--claims-profile", "h200-lnog", "--co", "-q", "claims"], pytest_project)
    assert done.returncode == 4, done.stdout + done.stderr
    assert ("claimcheck: unknown --claims-profile `h200-lnog`; did you mean `h200-long`? known: cpu, cuda, h200-long, "
            "metal") in done.stderr
    # A profile a claim declares is accepted.
    done = _pytest(["--claims-profile", "h200-long", "--co", "-q", "claims"], pytest_project)
    assert "unknown --claims-profile" not in done.stdout + done.stderr


def test_the_schema_module_names_where_the_published_schema_is():
    from claimcheck.claims import schema
    from claimcheck.claims import schema_file

    doc = schema.__doc__ or ""
    assert "``schema/claim-v1.json``" in doc and (ROOT / "schema" / schema_file.SCHEMA_NAME).is_file()
    package = Path(schema_file.__file__).parents[1]  # claimcheck/, where the wheel puts schemas/
    installed = package / "schemas" / schema_file.SCHEMA_NAME
    assert f"``claimcheck/schemas/{schema_file.SCHEMA_NAME}``" in doc
    assert installed.relative_to(package.parent).as_posix() == "claimcheck/schemas/claim-v1.json"
    assert schema_file.published_schema_path() == ROOT / "schema" / schema_file.SCHEMA_NAME


def test_validate_checks_the_model_alias_table_at_its_line(tmp_path, capsys):
    (tmp_path / "one.yaml").write_text(GOOD)
    (tmp_path / "pyproject.toml").write_text('[tool.claimcheck.models]\nfine = "org/name"\nbroken = 3\n')
    assert cli.main(["validate", str(tmp_path / "one.yaml"), "--no-probes", "--root", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"{tmp_path / 'pyproject.toml'}:3: [tool.claimcheck.models] broken: expected a directory" in out


def test_no_hint_in_a_project_root_that_only_uses_installed_probes(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (tmp_path / "claims").mkdir()
    (tmp_path / "claims" / "one.yaml").write_text(GOOD)
    assert cli.main(["validate", str(tmp_path / "claims"), "--root", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "unknown probe `no_such_probe_here`" in captured.out and "hint:" not in captured.err
