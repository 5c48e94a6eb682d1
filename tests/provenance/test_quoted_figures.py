"""Every figure the findings, the README and the pages moved out of it quote as measured by our runs is a value a
committed run recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from claimcheck.gate.quoted import check_paths
from claimcheck.store import EvidenceStore

ROOT = Path(__file__).resolve().parents[2]
#: the README's former sections (docs/performance.md holds its measured figures) are checked where they now live
MOVED = ("running.md", "writing-claims.md", "decisions.md", "docs-gate.md", "performance.md", "layout.md")
DOCS = sorted((ROOT / "docs" / "findings").glob("*.md")) + [ROOT / "README.md", *(ROOT / "docs" / m for m in MOVED)]
PROFILES = sorted((ROOT / "reports" / "profiles").glob("*.sqlite"))


@pytest.fixture
def store(tmp_path: Path, synthetic: Any) -> Path:
    """Two items on class A (ratios 0.32 and 0.34, bandwidth samples ~760 and ~916 GB/s), one on class B."""
    path = tmp_path / "ev.sqlite"
    with EvidenceStore(path) as evidence:
        run_a = evidence.begin_run(machine=synthetic.MACHINE_A, machine_class=synthetic.CLASS_A)
        for size, ratio, gbps in ((64, 0.3219, 759.7), (128, 0.3412, 915.7)):
            evidence.record(run_a, synthetic.outcome(item=f"size_mib={size}", statistic=ratio, low=ratio - 0.03,
                                                     high=ratio + 0.04, samples={"qmv_gbps": [gbps] * 3,
                                                                                 "raw_gbps": [3000.0] * 3}))
        evidence.finish_run(run_a)
        run_b = evidence.begin_run(machine=synthetic.MACHINE_B, machine_class=synthetic.CLASS_B)
        evidence.record(run_b, synthetic.outcome(statistic=0.78, low=0.76, high=0.81, machine=synthetic.MACHINE_B,
                                                 machine_class=synthetic.CLASS_B))
        evidence.finish_run(run_b)
    return path


def _check(tmp_path: Path, store: Path, markdown: str) -> list[str]:
    doc = tmp_path / "doc.md"
    doc.write_text(markdown)
    return [str(problem) for problem in check_paths([doc], [store]).problems]


def test_quoted_estimates_ranges_and_output_medians_that_were_recorded_pass(tmp_path: Path, store: Path) -> None:
    assert _check(tmp_path, store, (
        "# Bandwidth\n\nOn the M1 Max it was 9.6 ms; on our CPU refuted (0.32x and 0.34x "
        "<!-- measured: qmv-large-bw on cpu -->) and it streamed 0.76–0.92 TB/s "
        "<!-- measured: qmv-large-bw output qmv_gbps in GB/s on cpu --> at 64 MiB.\n\n"
        "On the M1 Max it was 1.5x; on the other machine the ratio was about 0.78 "
        "<!-- measured: qmv-large-bw[size_mib=256] on metal -->.\n")) == []


def test_a_figure_no_run_recorded_is_reported_at_its_line(tmp_path: Path, store: Path) -> None:
    problems = _check(tmp_path, store, (
        "# Bandwidth\n\nOn our CPU it came out refuted\n(0.30x and 0.34x <!-- measured: qmv-large-bw on cpu -->).\n\n"
        "There it ran 22% faster <!-- measured: qmv-large-bw on metal -->.\n"))
    assert len(problems) == 2, problems
    assert problems[0].startswith(f"{tmp_path / 'doc.md'}:4: figure '0.30x'") and "recorded: 0.3219×, 0.3412×" in problems[0]
    assert problems[1].startswith(f"{tmp_path / 'doc.md'}:6: figure '22%'"), "a derived figure is not a recorded one"


def test_markers_naming_nothing_recorded_or_malformed_are_reported(tmp_path: Path, store: Path) -> None:
    problems = _check(tmp_path, store, (
        "It was 0.32x <!-- measured: qmv-large-bw on cuda -->.\n\n"
        "It was 0.32x <!-- measured: qmv-large-bw on cpu run 1999 -->.\n\n"
        "It was 0.32x <!-- measured: qmv-large-bw -->.\n\n"
        "It was fast <!-- measured: qmv-large-bw on cpu -->.\n"))
    assert [p.split(": ", 1)[1].split(" ")[0:3] for p in problems] == [
        ["no", "recorded", "machine"], ["no", "recorded", "run"], ["malformed", "marker", "`<!--"],
        ["marker", "follows", "no"]]


def test_every_doc_figure_marked_as_measured_is_in_a_committed_profile() -> None:
    report = check_paths(DOCS, PROFILES)
    assert report.checked, "the findings mark the figures our runs measured"
    assert not report.problems, "figures quoted from no recorded run:\n" + "\n".join(map(str, report.problems))
