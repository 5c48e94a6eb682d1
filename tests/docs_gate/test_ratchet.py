"""``--changed-since REF --strict-changed``: every new figure must be anchored; untouched lines keep their warnings."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest

from claimcheck.gate import main

from ._clone import unpack_committed

ROOFLINE = "docs/findings/decode-roofline.md"


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                   capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository whose ``main`` is the committed findings, with a line of an unknown unit already on it."""
    root = unpack_committed(tmp_path / "repo")
    doc = root / ROOFLINE
    doc.write_text(doc.read_text(encoding="utf-8") + "\nThe old table quoted 12 GFLOP/s.\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "main")
    return root


def run(root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    monkeypatch.chdir(root)
    code = main(["docs/findings", "--changed-since", "main", "--strict-changed"])
    return code, capsys.readouterr().out.splitlines()


def test_untouched_main_is_green_and_a_new_unanchored_figure_is_red_at_its_line(
        repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(repo, monkeypatch, capsys)
    assert code == 0, "\n".join(out)
    unreadable = [line for line in out if "cannot be read" in line]
    assert len(unreadable) == 1 and ": warning: figure \"12 GFLOP/s\" cannot be read" in unreadable[0], out
    doc = repo / ROOFLINE
    lines = doc.read_text(encoding="utf-8").split("\n")
    at = lines.index("## 6. MoE expert reads") + 2
    lines[at:at] = ["The kernel now streams 312 GB/s on the M1 Max.", "",
                    "Its new path costs 7 ops/ms.", ""]
    doc.write_text("\n".join(lines), encoding="utf-8")
    git(repo, "commit", "-q", "-am", "a new figure")
    git(repo, "checkout", "-q", "-b", "pr")
    code, out = run(repo, monkeypatch, capsys)
    errors = [line for line in out if line.startswith("docs/") and ": warning: " not in line]
    assert code == 0, "the ref is the branch itself: nothing changed since it"
    git(repo, "branch", "-f", "main", "HEAD~1")
    code, out = run(repo, monkeypatch, capsys)
    errors = [line for line in out if line.startswith("docs/") and ": warning: " not in line]
    assert code == 1
    assert errors == [
        f"{ROOFLINE}:{at + 1}:24: 312 GB/s is unverified: cite the claim that checks it (`<!-- claim: ID -->`), "
        "mark what a run measured (`<!-- measured: ID on CLASS -->`) or why it is no finding "
        "(`<!-- not-a-finding: setup -->`)",
        f"{ROOFLINE}:{at + 3}:20: figure \"7 ops/ms\" cannot be read: unknown unit \"ops/ms\" (claimcheck.figures "
        "knows x, %, s, ms, µs, GB/s, TB/s, tok/s, MiB, MB, nats and counts \"N of M\")",
    ], "\n".join(out)
    assert any(": warning: figure \"12 GFLOP/s\" cannot be read" in line for line in out), "untouched: a warning"
    assert out[-1].startswith("figures: ") and " · unverified " in out[-1]


def _undecided_claim(root: Path) -> str:
    """A claim (no grid, no control) that the newest committed run of this machine's class left inconclusive."""
    from claimcheck.machine import machine_class

    for profile in sorted((root / "reports" / "profiles").glob("*.sqlite")):
        with sqlite3.connect(profile) as db:
            run_id = db.execute("SELECT run_id FROM runs WHERE machine_class = ? AND status = 'complete' "
                                "ORDER BY started DESC LIMIT 1", (machine_class(),)).fetchone()
            if run_id is None:
                continue
            row = db.execute("SELECT item_id FROM results WHERE run_id = ? AND verdict = 'inconclusive' AND "
                             "item_id NOT LIKE '%[%' AND item_id NOT LIKE '%control%' ORDER BY item_id",
                             run_id).fetchone()
            if row is not None:
                return str(row[0])
    pytest.skip("no committed run of this machine's class left a claim inconclusive")


def test_a_changed_line_citing_an_undecided_claim_is_red(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    claim = _undecided_claim(repo)
    doc = repo / ROOFLINE
    doc.write_text(doc.read_text(encoding="utf-8") + f"\nAn untouched sentence cites it. <!-- claim: {claim} -->\n",
                   encoding="utf-8")
    git(repo, "commit", "-q", "-am", "an undecided claim cited on main")
    doc.write_text(doc.read_text(encoding="utf-8") + f"\nA new sentence cites it again. <!-- claim: {claim} -->\n",
                   encoding="utf-8")
    code, out = run(repo, monkeypatch, capsys)
    errors = [line for line in out if line.startswith("docs/") and ": warning: " not in line]
    assert code == 1 and len(errors) == 1, "\n".join(out)
    assert f"claim `{claim}` is inconclusive on" in errors[0]
    assert any(f": warning: claim `{claim}` is inconclusive" in line for line in out), \
        "the same claim cited on an untouched line stays a warning"


def _ci(root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> list[tuple[int, list[str]]]:
    """Both CI steps of the docs-gate job: the findings at full coverage, then the figures changed since main."""
    monkeypatch.chdir(root)
    out = []
    for args in (["docs/findings", "--strict", "--evidence", "committed", "--machine-class", GATE_CLASS],
                 ["docs/findings", "--changed-since", "main", "--strict-changed", "--evidence", "committed",
                  "--machine-class", GATE_CLASS]):
        code = main(args)
        out.append((code, capsys.readouterr().out.splitlines()))
    return out


GATE_CLASS = "cpu/AMD EPYC/16-32GiB"


def test_the_ratchet_compares_figures_not_lines(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    doc = repo / ROOFLINE
    text = doc.read_text(encoding="utf-8")
    line = "The old table quoted 12 GFLOP/s."
    # a prose edit on a line holding an old unanchored figure: the figure is not new, so nothing fails
    doc.write_text(text.replace(line, "The older table had quoted 12 GFLOP/s."), encoding="utf-8")
    code, out = run(repo, monkeypatch, capsys)
    assert code == 0, "\n".join(out)
    # the same line with a changed figure fails, at that figure
    doc.write_text(text.replace(line, "The older table had quoted 14 GFLOP/s."), encoding="utf-8")
    code, out = run(repo, monkeypatch, capsys)
    errors = [o for o in out if o.startswith("docs/") and ": warning: " not in o]
    assert code == 1 and len(errors) == 1 and "\"14 GFLOP/s\" cannot be read" in errors[0], "\n".join(out)


def test_strict_changed_without_changed_since_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docs/findings", "--strict-changed"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["claimcheck docs: --strict-changed needs --changed-since REF (the base the changes are read from)"]


def test_the_banner_fix_writes_passes_the_ci_gate_unchanged(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    doc = repo / ROOFLINE
    text = doc.read_text(encoding="utf-8").replace("\nThe old table quoted 12 GFLOP/s.\n", "\n")
    lines = text.split("\n")
    banner = next(i for i, line in enumerate(lines) if line.startswith("> **") and "41.55%" in line)
    del lines[banner:banner + 2]  # the committed banner and the blank line after it
    doc.write_text("\n".join(lines), encoding="utf-8")
    git(repo, "commit", "-q", "-am", "main without the banner")
    git(repo, "checkout", "-q", "-b", "pr")
    assert [code for code, _ in _ci(repo, monkeypatch, capsys)] == [1, 1], "an uncorrected refuted claim fails"
    monkeypatch.chdir(repo)
    assert main(["docs/findings", "--fix", "--machine-class", GATE_CLASS]) == 0
    capsys.readouterr()
    inserted = next(line for line in doc.read_text(encoding="utf-8").split("\n")
                    if line.startswith("> **") and "roofline-small-models-leave-30-40-pct" in line)
    assert "{'" not in inserted and len(inserted) < 300, inserted
    assert "%" in inserted, "the computed figure is written with its unit"
    git(repo, "commit", "-q", "-am", "the banner --fix wrote")
    for code, out in _ci(repo, monkeypatch, capsys):
        assert code == 0, "\n".join(out)
