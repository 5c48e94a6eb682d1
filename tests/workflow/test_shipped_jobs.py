"""The shipped workflow played on temporary repositories: a clean PR, a wrong-figure PR, a first run on a new class.

The ``docs-gate`` job judges a pull request's changed lines against the committed profiles, in
seconds and without a claims run; the ``changes`` job says a docs-only pull request measures
nothing; the claims step of the measuring job, on a machine class the lock has no section for,
records the run as the proposed expectations instead of failing each refutation, and
``claimcheck accept --from-artifact`` adds the section from what it uploaded.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from claimcheck.engine import expectations
from claimcheck.store import EvidenceStore

from ._pr import claimcheck, clean_env, git, play
from .conftest import WEIGHTS_LINE, commit

DOC = Path("docs/findings.md")
pytestmark = pytest.mark.slow  # each plays whole jobs: about a minute of CPU


@pytest.fixture
def gated_repo(pr_repo: Path) -> tuple[Path, str]:
    """The pull request repository with a committed profile on ``main`` (the evidence the docs gate reads)."""
    git(pr_repo, "switch", "-q", "main")
    run = subprocess.run(["pytest", "claims/", "-q", "-p", "no:cacheprovider"], cwd=pr_repo, env=clean_env(),
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:]
    profiles = pr_repo / "reports" / "profiles"
    profiles.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(pr_repo / "reports" / "claimcheck.sqlite", profiles / "ci.sqlite")
    with EvidenceStore(profiles / "ci.sqlite", readonly=True) as store:
        machine_class = store.runs()[0].machine_class
    commit(pr_repo, "A committed profile")
    git(pr_repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    git(pr_repo, "switch", "-q", "pull-request")
    git(pr_repo, "reset", "-q", "--hard", "main")
    return pr_repo, machine_class


def _edit(repo: Path, old: str, new: str) -> None:
    path = repo / DOC
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_clean_pr_passes_the_docs_gate_and_measures_nothing(gated_repo: tuple[Path, str]) -> None:
    repo, machine_class = gated_repo
    _edit(repo, "# Findings", "# Findings, reworded")
    commit(repo, "Reword a heading")
    changes = play(repo, job_name="changes")
    assert changes.exit_status == 0 and "measure=false" in changes.output, changes.output
    job = play(repo, job_name="docs-gate", env_extra={"GATE_CLASS": machine_class})
    assert job.exit_status == 0, job.output
    gate = job.step("python -m claimcheck.gate")
    assert "evidence committed (reports/profiles/ci.sqlite)" in gate.output and machine_class in gate.output
    assert "figures: " in job.summary, "the coverage line is in the step summary"


def test_a_wrong_figure_pr_fails_the_docs_gate_at_its_line(gated_repo: tuple[Path, str]) -> None:
    repo, machine_class = gated_repo
    _edit(repo, "**0.694 GB**", "**0.794 GB**")
    commit(repo, "Update the weights figure")
    job = play(repo, job_name="docs-gate", env_extra={"GATE_CLASS": machine_class})
    assert job.exit_status == 1, job.output
    gate = job.step("python -m claimcheck.gate").output
    assert f"{DOC}:{WEIGHTS_LINE}:" in gate and "0.794 GB ≠ " in gate and "claim `pr-weights-gb`" in gate
    assert f"::error file={DOC},line={WEIGHTS_LINE}," in gate
    # a new unanchored figure on a changed line is red too (the ratchet)
    _edit(repo, "**0.794 GB**", "**0.694 GB**")
    (repo / DOC).write_text((repo / DOC).read_text(encoding="utf-8") + "\nIt now streams 312 GB/s.\n",
                            encoding="utf-8")
    commit(repo, "A new figure")
    ratchet = play(repo, job_name="docs-gate", env_extra={"GATE_CLASS": machine_class})
    assert ratchet.exit_status == 1 and "312 GB/s is unverified: cite the claim" in ratchet.output


def test_a_first_run_on_a_new_machine_class_proposes_its_lock_section(pr_repo: Path) -> None:
    lock_path = pr_repo / "claims" / "verdicts.lock"
    lock = expectations.read(lock_path)
    ((here, section),) = lock.classes.items()
    elsewhere = expectations.Expectations({"cpu/Another CPU/16-32GiB": section})
    expectations.write(lock_path, elsewhere)  # the lock knows another class only
    claims = pr_repo / "claims" / "pr.yaml"
    claims.write_text(claims.read_text(encoding="utf-8").replace("threshold: 80", "threshold: 97"), encoding="utf-8")
    commit(pr_repo, "A claim this machine refutes, and a lock of another class")
    job = play(pr_repo)
    step = job.step("python -m claimcheck.workflow.claims_run")
    assert step.returncode == 0, job.output
    assert f"### First run on `{here}`" in job.summary and "claimcheck accept --from-artifact" in job.summary
    assert "| `pr-share-pct` |" in job.summary, "the proposed refutation is listed"
    proposed = expectations.read(pr_repo / ".claimcheck" / "proposed" / "verdicts.lock")
    assert proposed.classes[here].items["pr-share-pct"].value == "refuted"
    artifact = pr_repo.parent / "downloaded"
    shutil.copytree(pr_repo / ".claimcheck" / "proposed", artifact)
    accepted = claimcheck(pr_repo, "accept", "--from-artifact", str(artifact))
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert expectations.read(lock_path).classes[here].items["pr-share-pct"].value == "refuted"
    again = play(pr_repo)
    assert again.step("python -m claimcheck.workflow.claims_run").returncode == 0, again.output
    assert "First run on" not in again.summary


def test_a_tests_only_or_workflow_only_change_runs_the_tests_but_measures_nothing(pr_repo: Path) -> None:
    from claimcheck.workflow import should_measure

    for changed in (["tests/conftest.py"], [".github/workflows/claims.yml"], ["README.md"]):
        assert should_measure.can_break_tests(changed) == changed and not should_measure.can_change_verdicts(changed)
    assert not should_measure.can_break_tests(["docs/findings/x.md"])
    (pr_repo / "tests").mkdir(exist_ok=True)
    (pr_repo / "tests" / "test_x.py").write_text("def test_x():\n    assert True\n", encoding="utf-8")
    commit(pr_repo, "A test")
    done = subprocess.run([sys.executable, "-m", "claimcheck.workflow.should_measure", "--event", "pull_request",
                           "--base", "origin/main"], cwd=pr_repo, capture_output=True, text=True, env=clean_env())
    assert done.returncode == 0 and done.stdout.splitlines() == [
        "measure=false (nothing that can change a verdict changed)", "test=true (tests/test_x.py)"], done.stdout
