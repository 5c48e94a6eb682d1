"""The gate on copies of this repository's own findings: every wrong figure turns it red at its line.

The committed tree (``git archive HEAD``: the findings, the claims, the committed profiles) is
unpacked into a temp folder with no local store, as a fresh clone has it; each test edits one
figure there, never in the tracked files.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from claimcheck.gate import main

from ._clone import unpack_committed

ROOFLINE = "docs/findings/decode-roofline.md"
ROUTING = "docs/findings/curve-routing.md"


@pytest.fixture(scope="module")
def committed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed findings, claims and profiles, as a fresh clone has them (no local store)."""
    folder = unpack_committed(tmp_path_factory.mktemp("clone"))
    assert not (folder / "reports" / "claimcheck.sqlite").exists()
    return folder


def gate(folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
         *args: str) -> tuple[int, list[str]]:
    monkeypatch.chdir(folder)
    code = main(["docs/findings", *args])
    return code, capsys.readouterr().out.splitlines()


def test_the_committed_findings_pass_on_the_committed_profiles(committed: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, out = gate(committed, monkeypatch, capsys)
    assert code == 0, "\n".join(out)
    profiles = sorted(f"reports/profiles/{p.name}" for p in (committed / "reports" / "profiles").glob("*.sqlite"))
    assert "reports/profiles/h200-cuda.sqlite" in profiles
    assert out[0].startswith(f"claimcheck docs: evidence committed ({', '.join(profiles)}); gating on machine class "), \
        out[0]
    assert re.match(r"^figures: \d+ · verified \d+ · not-a-finding \d+ · unverified \d+ · undecided \d+$", out[-1]), out[-1]


# (doc, text as committed, edited, expected line start): as-stated figures, a measured marker's
# figure, counts "N of M", a figure in another unit than the claim's, one on the claimed side of
# a threshold but not the source's figure
EDITS = [
    pytest.param(ROOFLINE, "reached 74–88% of", "reached 94–98% of",
                 f"{ROOFLINE}:79:41: 94–98% ≠ stated 74–88%: write 74–88% — claim `qmv-large-bw-m1max`", id="as-stated"),
    pytest.param(ROOFLINE, "the medians are 0.30x and", "the medians are 0.52x and",
                 f"{ROOFLINE}:86:59: figure 0.52x disagrees with qmv-large-bw-portable: stated ", id="measured-marker"),
    pytest.param(ROUTING, "10 of 21 alternatives", "11 of 21 alternatives",
                 f"{ROUTING}:34:51: 11 of 21 ≠ computed ", id="count"),
    pytest.param(ROOFLINE, "reached 74–88% of", "reached 0.94–0.98x of",
                 f"{ROOFLINE}:79:41: 0.94–0.98x ≠ stated 74–88%: write 74–88%", id="other-unit"),
    pytest.param(ROOFLINE, "ran about 1.5x slower", "ran about 1.1x slower",
                 f"{ROOFLINE}:131:44: 1.1x ≠ stated ", id="threshold"),
    pytest.param(ROOFLINE, "ran about 1.5x slower", "ran about 30x slower",
                 f"{ROOFLINE}:131:44: 30x ≠ stated ",
                 id="claimed-side-but-not-the-source"),
]


@pytest.mark.parametrize(("doc", "before", "after", "expected"), EDITS)
def test_an_edited_figure_turns_the_gate_red_at_its_line_and_restoring_it_green(
        committed: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        doc: str, before: str, after: str, expected: str) -> None:
    path = committed / doc
    original = path.read_text(encoding="utf-8")
    assert original.count(before) >= 1
    path.write_text(original.replace(before, after, 1), encoding="utf-8")
    try:
        code, out = gate(committed, monkeypatch, capsys)
    finally:
        path.write_text(original, encoding="utf-8")
    errors = [line for line in out if line.startswith("docs/") and ": warning: " not in line]
    assert code == 1 and len(errors) == 1, "\n".join(out)
    assert errors[0].startswith(expected), errors[0]
    assert re.search(r"(measured|computed) .* on \S.* \(run \S.*\)|— claim `", errors[0]), errors[0]
    assert gate(committed, monkeypatch, capsys)[0] == 0


def test_a_missing_path_an_unknown_class_or_evidence_that_is_not_there_is_exit_2(
        committed: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(committed)
    assert main(["docs/nonexistent.md"]) == 2
    assert main(["docs/findings", "--machine-class", "cpu/Example CPU 0000/8-16GiB"]) == 2
    assert "no run of it in the committed evidence" in capsys.readouterr().err
    assert main(["docs/findings", "--evidence", "local"]) == 2  # a fresh clone has no local store
    assert "no evidence store there" in capsys.readouterr().err
