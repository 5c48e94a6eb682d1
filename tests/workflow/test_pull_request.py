"""A docs pull request played through the workflow's own steps: what the maintainer of the docs sees.

Each test edits the pull request branch of a small docs repository (a computed and a sampled
claim, one doc citing both, the lock accepted from a real run) and plays the hosted Apple
Silicon job's steps on it (``_pr.play``): the Metal sanity check (no GPU here: CPU), the
portable claims against the lock, the verdict summary, and the docs gate on the changed docs.
The probes are seeded, so every verdict is the same on every run. A played job takes ~10 s of
CPU (each step is a fresh process that imports MLX), so the scenarios with several pushes are slow tests.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from claimcheck.engine import expectations

from ._pr import claimcheck, play
from .conftest import WEIGHTS_LINE, commit

DOC = Path("docs/findings.md")
BANNER = "> **2026-12-01 CORRECTION — the 4-bit weights take 0.9 GB; 0.694 GB was an older build.**\n\n"


def _edit(repo: Path, name: str | Path, old: str, new: str) -> None:
    path = repo / name
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {name}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.slow
def test_unchanged_docs_with_the_lock_pass(pr_repo: Path) -> None:
    _edit(pr_repo, "README.md", "# A docs repository", "# A docs repository, reworded")
    commit(pr_repo, "Reword the README")
    job = play(pr_repo, skip=())
    assert job.exit_status == 0, job.output
    assert (pr_repo / ".claimcheck" / "reports" / "index.html").exists(), "the HTML report for the artifact"
    assert "no doc to gate" in job.step("python -m claimcheck.workflow.docs_changed").output
    assert "Every verdict is the one" in job.summary and "the claims run on the CPU device" in job.summary

    dispatched = play(pr_repo, event="workflow_dispatch")  # no base: every doc is gated, and agrees
    assert dispatched.exit_status == 0, dispatched.output
    assert "2 claim anchor(s) in 1 doc(s)" in dispatched.step("python -m claimcheck.workflow.docs_changed").output


def test_a_wrong_figure_in_a_sentence_naming_the_m1_max_fails_with_an_annotation_at_its_line(pr_repo: Path) -> None:
    _edit(pr_repo, DOC, "**0.694 GB**", "**0.794 GB**")
    commit(pr_repo, "Update the weights figure")
    job = play(pr_repo)
    assert job.exit_status == 1, job.output
    assert job.step("python -m claimcheck.workflow.claims_run").returncode == 0, "the claims still hold; only the doc is wrong"
    gate = job.step("python -m claimcheck.workflow.docs_changed")
    assert gate.returncode == 1
    annotations = re.findall(r"^::error file=([^,]+),line=(\d+),col=\d+,title=claimcheck docs::(.*)$", gate.output, re.M)
    assert (str(DOC), str(WEIGHTS_LINE)) in [(f, line) for f, line, _ in annotations], gate.output
    message = next(m for f, line, m in annotations if line == str(WEIGHTS_LINE))
    assert "0.794 GB" in message and "pr-weights-gb" in message
    assert f"`{DOC}:{WEIGHTS_LINE}`" in job.summary


@pytest.mark.slow
def test_a_flip_to_refuted_fails_until_the_sentence_is_corrected_and_the_lock_accepted(pr_repo: Path) -> None:
    _edit(pr_repo, "probes/pr.py", "WEIGHTS_GB = 0.6936", "WEIGHTS_GB = 0.9")
    commit(pr_repo, "Count the embedding table in the weights")
    job = play(pr_repo)
    assert job.exit_status == 1, job.output
    claims, gate = job.step("python -m claimcheck.workflow.claims_run"), job.step("python -m claimcheck.workflow.docs_changed")
    assert claims.returncode == 1 and "verdict changed: expected holds" in claims.output
    assert gate.returncode == 1 and "add a dated correction banner above this sentence" in gate.output
    flagged = next(line for line in gate.output.splitlines() if line.startswith("docs/findings.md:"))
    assert flagged.count("claim `pr-weights-gb` is refuted") == 1, flagged
    assert "::error file=claims/pr.yaml,line=1" in job.step("python -m claimcheck.workflow.summary").output

    _edit(pr_repo, DOC, "On the M1 Max the 4-bit", BANNER + "On the M1 Max the 4-bit")
    commit(pr_repo, "Correct the weights sentence")
    corrected = play(pr_repo)
    assert corrected.exit_status == 1, "the lock still expects a hold"
    assert corrected.step("python -m claimcheck.workflow.claims_run").returncode == 1
    assert corrected.step("python -m claimcheck.workflow.docs_changed").returncode == 0, corrected.output

    # from the store the played run left (its portable part of the suite: --update), as after a local run
    accepted = claimcheck(pr_repo, "accept", "--update")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    lock = expectations.read(pr_repo / "claims" / "verdicts.lock")
    assert lock.every_class["pr-weights-gb"].verdict.value == "refuted", "arithmetic: the same on every class"
    commit(pr_repo, "Accept the refutation")
    done = play(pr_repo)
    assert done.exit_status == 0, done.output
    assert "expected refutation" in done.step("python -m claimcheck.workflow.claims_run").output

    _edit(pr_repo, DOC, BANNER, "")  # the lock alone is not enough: the doc must say so too
    commit(pr_repo, "Drop the banner")
    uncorrected = play(pr_repo)
    assert uncorrected.exit_status == 1
    assert uncorrected.step("python -m claimcheck.workflow.claims_run").returncode == 0
    assert uncorrected.step("python -m claimcheck.workflow.docs_changed").returncode == 1


@pytest.mark.slow
def test_a_flip_to_inconclusive_passes_with_a_warning(pr_repo: Path) -> None:
    _edit(pr_repo, "probes/pr.py", "SHARE_MEAN = 92.0\nSHARE_SD = 2.0", "SHARE_MEAN = 80.0\nSHARE_SD = 6.0")
    commit(pr_repo, "Measure the share with the new kernel")
    job = play(pr_repo)
    assert job.exit_status == 0, job.output
    assert "| `pr-share-pct` | holds | **inconclusive** | undecided |" in job.summary, job.summary
    summary_step = job.step("python -m claimcheck.workflow.summary")
    assert "::warning file=claims/pr.yaml,line=9," in summary_step.output, summary_step.output
    gate = job.step("python -m claimcheck.workflow.docs_changed")
    assert gate.returncode == 0 and "::warning file=docs/findings.md" in gate.output and "inconclusive" in gate.output
