"""Every run records the suite and claims commits with a dirty flag, and reports show them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from claimcheck.store import CLAIMS_COMMIT_ENV, SUITE_COMMIT_ENV, Commit, EvidenceStore, git_commits, provenance


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "claims").mkdir(parents=True)
    (root / "claims" / "a.yaml").write_text("id: a\n")
    (root / "suite.py").write_text("x = 1\n")
    _git(root, "init", "-q")
    _git(root, "-c", "user.email=t@example.com", "-c", "user.name=t", "add", ".")
    _git(root, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "first")
    return root


def test_a_clean_checkout_records_both_commits_clean(checkout: Path) -> None:
    head = _git(checkout, "rev-parse", "HEAD")
    found = provenance(checkout, environ={})
    assert (found.source, found.suite, found.claims) == ("git", Commit(head, False), Commit(head, False))
    assert git_commits(checkout, environ={}) == (head, head)


def test_an_edited_claim_marks_both_commits_dirty(checkout: Path) -> None:
    head = _git(checkout, "rev-parse", "HEAD")
    (checkout / "claims" / "a.yaml").write_text("id: a\nedited: true\n")
    assert git_commits(checkout, environ={}) == (f"{head}+dirty", f"{head}+dirty")


def test_an_edited_suite_file_leaves_the_claims_commit_clean(checkout: Path) -> None:
    head = _git(checkout, "rev-parse", "HEAD")
    (checkout / "suite.py").write_text("x = 2\n")
    assert git_commits(checkout, environ={}) == (f"{head}+dirty", head)


def test_a_copy_without_git_takes_the_commits_from_the_environment(tmp_path: Path) -> None:
    env = {SUITE_COMMIT_ENV: "a" * 40 + "+dirty", CLAIMS_COMMIT_ENV: "b" * 40}
    found = provenance(tmp_path, environ=env)
    assert (found.source, found.suite, found.claims) == ("environment", Commit("a" * 40, True), Commit("b" * 40, False))
    assert provenance(tmp_path, environ={}).source == "unknown"
    assert git_commits(tmp_path, environ={}) == (None, None)


def test_a_stored_run_reads_its_commits_back_with_the_dirty_flag(tmp_path: Path) -> None:
    with EvidenceStore(tmp_path / "ev.sqlite") as store:
        run_id = store.begin_run(machine={}, machine_class="x", suite_commit="c" * 40 + "+dirty", claims_commit=None)
        run = store.run(run_id)
    assert run.suite_ref == Commit("c" * 40, True) and run.claims_ref is None
    assert run.commits_text() == f"suite {'c' * 12} (dirty), claims not recorded"


def test_the_environment_wins_over_a_git_folder_the_copy_carried(checkout: Path) -> None:
    env = {SUITE_COMMIT_ENV: "c" * 40, CLAIMS_COMMIT_ENV: "d" * 40}
    found = provenance(checkout, environ=env)
    assert (found.source, found.suite, found.claims) == ("environment", Commit("c" * 40, False), Commit("d" * 40, False))
