"""The workflow a user copies, run job by job in a fresh repository outside this one, on claimcheck's wheel.

The example user repository (``docs/examples/user-repo``) is copied out, with its workflow, and given
a history: a base commit whose lock and committed profile come from a run there. Its workflow's jobs
then run every step under :mod:`tests.workflow._runner` (pip offline, with only this checkout's
wheel to install, so the workflow's pinned ``claimcheck==X`` must be the wheel's version). The claims
are cut to the two quick files (arithmetic and a seeded die) so that each pull request takes seconds;
the jobs and their commands are the copied file's.

- a clean pull request (a claims change): every job passes, nothing is proposed;
- a wrong figure in a doc: the docs gate fails, naming the line;
- a lock that lacks this runner's class: adjudicate passes, proposes the class's section as an
  artifact with a notice.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from claimcheck import machine
from tests.adoption.test_installed_wheel import _build_wheel, _dependency_links

from ._pr import git
from ._runner import Context, run_workflow

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "docs" / "examples" / "user-repo"
WORKFLOW = Path(".github") / "workflows" / "claims.yml"
QUICK = ("own.yaml", "mlx-arithmetic.yaml")


def test_the_copied_workflow_pins_this_version() -> None:
    import tomllib

    version = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    env = yaml.safe_load((EXAMPLE / WORKFLOW).read_text(encoding="utf-8"))["env"]
    assert env["CLAIMCHECK"] == f"claimcheck=={version}", "the pin names the released version"
    text = (EXAMPLE / WORKFLOW).read_text(encoding="utf-8")
    assert "pip install -e" not in text and "--no-deps -e ." not in text, "never the user's own project"


@pytest.fixture(scope="module")
def user(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """``(base repository, venv bin, wheels)``: the example copied out with a history, and the wheel installed."""
    work = tmp_path_factory.mktemp("user-workflow")
    assert not work.resolve().is_relative_to(REPO)
    wheel = _build_wheel(work)
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=600)
    python = venv / "bin" / "python"
    done = subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    (purelib / "claimcheck-dependencies.pth").write_text(f"{_dependency_links(work)}\n")
    # the console script pip writes when it installs pytest, a dependency (here linked, not installed)
    script = venv / "bin" / "pytest"
    script.write_text(f"#!/bin/sh\nexec {python} -m pytest \"$@\"\n", encoding="utf-8")
    script.chmod(0o755)
    repo = work / "user-repo"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("__pycache__", ".claimcheck", "reports"))
    for claims in (repo / "claims").glob("*.yaml"):
        if claims.name not in QUICK:
            claims.unlink()
    (repo / ".gitignore").write_text(".claimcheck/\nreports/claimcheck.sqlite*\n__pycache__/\n", encoding="utf-8")
    env = _env(venv / "bin")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Notes and their claims")
    for command in (["pytest", "claims/", "-q", "-p", "no:cacheprovider"], ["claimcheck", "accept"],
                    ["claimcheck", "publish", "--no-plots"]):
        done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=900)
        assert done.returncode in ((0, 1) if command[0] == "pytest" else (0,)), done.stdout[-3000:] + done.stderr
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Expected verdicts and the committed profile")
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    return repo, venv / "bin", wheel.parent


def _env(bin_dir: Path) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "GITHUB_", "PYTHON"))}
    env.update({"PATH": f"{bin_dir}{os.pathsep}{env['PATH']}", "PYTHONNOUSERSITE": "1"})
    return env


def _pull_request(user: tuple[Path, Path, Path], tmp_path: Path, change) -> dict:
    base, bin_dir, wheels = user
    repo = tmp_path / "repo"
    shutil.copytree(base, repo, symlinks=True)
    git(repo, "switch", "-q", "-c", "pull-request")
    change(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "A change")
    ctx = Context(repo=repo, bin_dir=bin_dir, wheels=wheels, artifacts=tmp_path / "artifacts",
                  variables={"CLAIMCHECK_GATE_CLASS": machine.machine_class()})
    ctx.artifacts.mkdir()
    return {"jobs": run_workflow(repo / WORKFLOW, ctx), "artifacts": ctx.artifacts}


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def test_a_clean_pull_request_passes_every_job(user, tmp_path: Path) -> None:
    ran = _pull_request(user, tmp_path, lambda repo: _append(repo / "claims" / "own.yaml", "# reviewed\n"))
    jobs = ran["jobs"]
    assert set(jobs) == {"changes", "docs-gate", "claims", "adjudicate"}
    assert jobs["changes"].outputs == {"measure": "true"}
    for name, job in jobs.items():
        assert not job.failed, f"{name}:\n{job.output[-4000:]}"
    assert not (ran["artifacts"] / "claimcheck-proposed").exists()
    assert "adjudicate: 2 shard run(s)" in jobs["adjudicate"].output


def test_a_wrong_figure_fails_the_docs_gate(user, tmp_path: Path) -> None:
    def wrong(repo: Path) -> None:
        doc = repo / "docs" / "kv.md"
        doc.write_text(doc.read_text(encoding="utf-8").replace("23.04 KB", "32.04 KB"), encoding="utf-8")

    jobs = _pull_request(user, tmp_path, wrong)["jobs"]
    assert jobs["changes"].outputs == {"measure": "false"} and "claims" not in jobs
    gate = jobs["docs-gate"]
    assert gate.failed and "docs/kv.md:5:" in gate.output and "::error" in gate.output, gate.output[-4000:]


def test_a_class_the_lock_lacks_proposes_its_section(user, tmp_path: Path) -> None:
    def other_class(repo: Path) -> None:
        lock = repo / "claims" / "verdicts.lock"
        lock.write_text(lock.read_text(encoding="utf-8").replace(machine.machine_class(), "cpu/Other CPU/1-2GiB"),
                        encoding="utf-8")
        _append(repo / "claims" / "own.yaml", "# reviewed\n")

    ran = _pull_request(user, tmp_path, other_class)
    adjudicate = ran["jobs"]["adjudicate"]
    assert not adjudicate.failed, adjudicate.output[-4000:]
    assert "::notice title=claimcheck lock::first run on this machine class" in adjudicate.output
    proposed = ran["artifacts"] / "claimcheck-proposed" / "proposed" / "verdicts.lock"
    assert machine.machine_class() in proposed.read_text(encoding="utf-8")
    assert "fair-die-mean: holds" in proposed.read_text(encoding="utf-8")
