"""A small docs repository, committed, with its lock accepted from a real run: the base a pull request starts from."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ._pr import claimcheck, clean_env, git

import subprocess

PROBES = '''"""Probes of a small docs repository: a computed size and a sampled share (seeded)."""

import random

from claimcheck.probing.registry import Output, ProbeContext, probe

WEIGHTS_GB = 0.6936
SHARE_MEAN = 92.0
SHARE_SD = 2.0


@probe("weights_gb", outputs={"gb": Output("GB")}, deterministic=True)
def weights_gb(ctx: ProbeContext) -> dict[str, list[float]]:
    """The weights' size, computed."""
    return {"gb": [WEIGHTS_GB]}


@probe("share_pct", outputs={"pct": Output("%")})
def share_pct(ctx: ProbeContext, mean: float = SHARE_MEAN) -> dict[str, list[float]]:
    """A measured share of the roofline, with noise."""
    rng = random.Random(ctx.seed * 1_000 + ctx.look)
    return {"pct": [rng.gauss(mean, SHARE_SD) for _ in range(ctx.n)]}
'''

CLAIMS = '''id: pr-weights-gb
title: The 4-bit weights take 0.694 GB
statement: The model's 4-bit weights take 0.694 GB.
source: {doc: findings.md, section: Weights, figure: "0.694 GB"}
scope: {kind: portable, backend: any}
probe: {name: weights_gb}
check: {rule: exact, output: gb, expected: 0.694, tolerance: 0.0016, unit: GB}
---
id: pr-share-pct
title: Decode reaches at least 80% of the roofline
statement: Decode reaches at least 80% of the roofline.
source: {doc: findings.md, section: Share, figure: "92%"}
scope: {kind: portable, backend: any}
probe: {name: share_pct}
check: {rule: at_least, output: pct, threshold: 80, unit: "%"}
budget: {min_samples: 10, max_samples: 20, looks: 2}
control: {params: {mean: 70.0}, why: "a share of 70% is below 80%"}
'''

DOC = '''# Findings

## Weights

On the M1 Max the 4-bit weights take **0.694 GB**. <!-- claim: pr-weights-gb -->

## Share

Decode reaches **92%** of the roofline. <!-- claim: pr-share-pct -->
'''

#: The line of the weights sentence in DOC.
WEIGHTS_LINE = 5


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def base_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository at the base of the pull request: claims, probes, a doc, and the lock accepted from a run."""
    repo = tmp_path_factory.mktemp("docs-base") / "repo"
    _write(repo, {"pytest.ini": "[pytest]\n", ".gitignore": "reports/claimcheck.sqlite*\n.claimcheck/\n__pycache__/\n",
                  "README.md": "# A docs repository\n", "probes/__init__.py": "", "probes/pr.py": PROBES,
                  "claims/pr.yaml": CLAIMS, "docs/findings.md": DOC})
    git(repo, "init", "-q", "-b", "main")
    run = subprocess.run(["pytest", "claims/", "-q", "-p", "no:cacheprovider"], cwd=repo, env=clean_env(),
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:]  # no lock yet: judged by the plain rule
    accepted = claimcheck(repo, "accept")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    lock = (repo / "claims" / "verdicts.lock").read_text(encoding="utf-8")
    assert "pr-share-pct: holds" in lock, lock
    assert "pr-weights-gb:\n      verdict: holds\n      backend: any" in lock, "arithmetic goes to all-classes: " + lock
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Findings, their claims, and the expected verdicts")
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    return repo


@pytest.fixture
def pr_repo(base_repo: Path, tmp_path: Path) -> Path:
    """A copy of the base on a pull request branch."""
    repo = tmp_path / "repo"
    shutil.copytree(base_repo, repo, symlinks=True)
    for leftover in (repo / "reports").glob("claimcheck.sqlite*"):
        leftover.unlink()
    git(repo, "switch", "-q", "-c", "pull-request")
    return repo


def commit(repo: Path, message: str) -> None:
    """Commit every change in the pull request branch."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
