"""A new claim reaches the lock with the commands the tool prints, and nothing else.

A temp project with one accepted claim; ``claimcheck new`` writes a measured claim (with its control)
and an arithmetic one, and prints what to run next. The printed commands are run as printed; the
lock then holds the measured item in the class section, naming the run it came from, and the
arithmetic item in ``all-classes`` with its reason, and the earlier item is kept.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from claimcheck.engine import expectations
from claimcheck.verdict import Verdict

from tests.workflow._pr import BIN, clean_env, git

PROBES = '''"""Probes of a small project: a computed size and a sampled share (seeded)."""

import random

from claimcheck.probing.registry import Output, ProbeContext, probe


@probe("size_gb", outputs={"gb": Output("GB")}, deterministic=True)
def size_gb(ctx: ProbeContext, bytes_: float = 694e6) -> dict[str, list[float]]:
    """A size, computed."""
    return {"gb": [bytes_ / 1e9]}


@probe("share_pct", outputs={"pct": Output("%")})
def share_pct(ctx: ProbeContext, mean: float = 92.0) -> dict[str, list[float]]:
    """A measured share, with noise."""
    rng = random.Random(ctx.seed * 1_000 + ctx.look)
    return {"pct": [rng.gauss(mean, 2.0) for _ in range(ctx.n)]}
'''

FIRST = '''id: first-share
title: The share is at least 80%
statement: The share is at least 80%.
source: {doc: notes.md, section: Share, figure: "92%"}
scope: {kind: portable, backend: any}
probe: {name: share_pct}
check: {rule: at_least, output: pct, threshold: 80, unit: "%"}
budget: {min_samples: 10, max_samples: 20, looks: 2}
control: {params: {mean: 70.0}, why: "a share of 70% is below 80%"}
'''


def _sh(repo: Path, command: str) -> subprocess.CompletedProcess[str]:
    """A printed command, run as a user runs it (``claimcheck`` and ``pytest`` from the environment)."""
    return subprocess.run(["bash", "-c", command], cwd=repo, env=clean_env(), capture_output=True, text=True,
                          timeout=600)


def _printed(output: str) -> list[str]:
    """The commands after ``next:`` (comments dropped)."""
    lines = output.split("next:", 1)[1].splitlines()
    return [line.split("   #")[0].strip() for line in lines if line.strip()]


def _project(tmp_path: Path) -> Path:
    repo = tmp_path / "project"
    for name, text in {"pytest.ini": "[pytest]\n", ".gitignore": "reports/\n.claimcheck/\n__pycache__/\n",
                       "probes/__init__.py": "", "probes/mine.py": PROBES, "claims/first.yaml": FIRST}.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "A first claim")
    assert _sh(repo, "pytest claims/ -q -p no:cacheprovider").returncode == 0
    assert _sh(repo, "claimcheck accept").returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Its expected verdict")
    return repo


def _new(repo: Path, *flags: str) -> list[str]:
    done = _sh(repo, shlex.join([str(Path(BIN) / "claimcheck"), "new", "--no-interactive", *flags]))
    assert done.returncode == 0, done.stdout + done.stderr
    return _printed(done.stdout)


def test_a_new_claim_reaches_the_lock_with_the_printed_commands(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    common = ["--doc", "notes.md", "--section", "S", "--scope-kind", "portable", "--backend", "any"]
    refused = _sh(repo, shlex.join(["claimcheck", "new", "--no-interactive", "--id", "second-share", "--title", "t",
                                    "--statement", "s", "--figure", "95%", "--probe", "share_pct", "--rule",
                                    "at_least", "--output", "pct", "--threshold", "85", *common]))
    assert refused.returncode == 2 and "missing control" in refused.stderr, refused.stderr
    measured_flags = ("--id", "second-share", "--title", "The share is at least 85%", "--statement", "At least 85%.",
                      "--figure", "92%", "--probe", "share_pct", "--rule", "at_least", "--output", "pct",
                      "--threshold", "85", "--control", "mean=75", "--control-why", "75% is below 85%", *common)
    arithmetic_flags = ("--id", "size-is-0-694-gb", "--title", "The size is 0.694 GB", "--statement", "0.694 GB.",
                        "--figure", "0.694 GB", "--probe", "size_gb", "--rule", "exact", "--output", "gb",
                        "--expected", "0.694", "--tolerance", "0.0005", "--unit", "GB", *common)
    before = expectations.read(repo / "claims" / "verdicts.lock")
    (cls,) = before.classes
    for flags in (measured_flags, arithmetic_flags):  # each claim through the commands `new` prints, in order
        printed = _new(repo, *flags)
        assert [c.split()[:2] for c in printed] == [["claimcheck", "validate"], ["git", "add"], ["pytest", "claims/"],
                                                     ["claimcheck", "accept"]]
        validate, commit, run, accept = printed
        for command in (validate, commit):
            done = _sh(repo, command)
            assert done.returncode == 0, f"{command}: {done.stdout}{done.stderr}"
        ran = _sh(repo, run + " -p no:cacheprovider")
        assert ran.returncode == 1 and "NO EXPECTATION" in ran.stdout, ran.stdout[-3000:]
        assert "claimcheck accept --update" in ran.stdout, "the failure names the command that works"
        done = _sh(repo, accept)
        assert done.returncode == 0, f"{accept}: {done.stdout}{done.stderr}"
        git(repo, "commit", "-q", "-am", "Its expected verdict")  # "review, then commit the lock"
    lock = expectations.read(repo / "claims" / "verdicts.lock")
    section = lock.classes[cls]
    assert section.items["first-share"] is Verdict.HOLDS and section.run_id == before.classes[cls].run_id, \
        "the earlier item and the section's run are kept"
    assert section.items["second-share"] is Verdict.HOLDS and section.run_of("second-share") != section.run_id, \
        "the new item names the run it was accepted from"
    arith = lock.every_class["size-is-0-694-gb"]
    assert "size-is-0-694-gb" not in section.items and arith.verdict is Verdict.HOLDS and arith.backend == "any"
    assert "deterministic probe `size_gb`" in arith.why and arith.run_id not in ("", section.run_of("second-share"))
    again = _sh(repo, "pytest claims/ -q -p no:cacheprovider")
    assert again.returncode == 0, again.stdout[-3000:]


def test_accept_update_still_refuses_a_dirty_tree(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    (repo / "claims" / "first.yaml").write_text(FIRST.replace("at least 80%", "at least 80 %"), encoding="utf-8")
    assert _sh(repo, "pytest claims/ -q -p no:cacheprovider -k first-share").returncode == 0
    refused = _sh(repo, "claimcheck accept --update")
    assert refused.returncode == 1 and "dirty tree" in refused.stderr, refused.stderr
