"""The acceptance table of the docs gate: correct rewordings pass, wrong figures fail, on both findings docs.

Every edit is applied to a fresh copy of the committed findings (``git archive HEAD``) and judged by the
real gate against the committed profiles, on the class CI gates (``cpu/AMD EPYC/16-32GiB``), with
``docs/findings`` held to full coverage as ``pyproject.toml`` configures it.

- A correct rewording (another unit, rounding, a range, % for x, a count, prose around the figure)
  gives no error, and the coverage line still reads ``unverified 0``: the figure is still checked.
- A wrong figure (each figure of multi-figure sentences, stated and measured ones, ranges, counts,
  ratios) gives an error at the edited figure's own line and column, and no error elsewhere.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ._table import Edit, Gate

R = "decode-roofline.md"
C = "curve-routing.md"

CORRECT = [
    Edit(R, "streams 0.694 GB of weights", "streams 694 MB of weights"),
    Edit(R, "gives e4b 3.536 GB per token", "gives e4b 3,536 MB per token"),
    Edit(R, "The 12B streams 8.860 GB", "The 12B streams 8.86 GB"),
    Edit(R, "streams 3.444 GB per token", "streams 3.44 GB per token"),
    Edit(R, "CPM5 costs 24.6 KB per", "CPM5 costs about 25 KB per"),
    Edit(R, "e4b reads 45 MB of KV", "e4b reads 0.045 GB of KV"),
    Edit(R, "e4b reads 154 MB,", "e4b reads 0.154 GB,"),
    Edit(R, "The 12B reads 236 MB per", "The 12B reads 0.236 GB per"),
    Edit(R, "the 12B reads 872 MB per", "the 12B reads 0.87 GB per"),
    Edit(R, "reads 147 MB per token", "reads about 150 MB per token"),
    Edit(R, "streams 538,060,032 bytes", "streams 538.06 MB"),
    Edit(R, "streams 98,346,240 bytes", "streams 98.3 MB"),
    Edit(R, "2.58 ms floor at 270", "2.6 ms floor at 270"),
    Edit(R, "raw read is 483 tok/s", "raw read is about 480 tok/s"),
    Edit(R, "runs at 64% of that roofline", "runs at 0.64 of that roofline"),
    Edit(R, "runs at 70% of its roofline", "runs at 0.70x of its roofline"),
    Edit(R, "runs at 92% of its roofline", "runs at 92 % of its roofline"),
    Edit(R, "implied 154 GB/s", "implied 0.154 TB/s"),
    Edit(R, "CPM5 at 97% of its floor", "CPM5 at 0.97x of its floor"),
    Edit(R, "the stream is 0.906 GB", "the stream is 906 MB"),
    Edit(R, "floor is 2.1 ms per token", "floor is 2,100 µs per token"),
    Edit(R, "gives the table's 60–62%", "gives the table's 0.60–0.62"),
    Edit(R, "GEMV reached 74–88% of the raw", "GEMV reached 0.74–0.88 of the raw"),
    Edit(R, "GEMV reached 74–88% of the raw", "GEMV reached 74 to 88% of the raw"),
    Edit(R, "250 GB/s and 295 GB/s of", "0.25 TB/s and 0.295 TB/s of"),
    Edit(R, "GEMV in 0.022 ms is", "GEMV in 22 µs is"),
    Edit(R, "read about 337 GB/s at", "read about 0.34 TB/s at"),
    Edit(R, "streamed 0.90–0.92 TB/s", "streamed 896–922 GB/s"),
    Edit(R, "against a 3.6–3.8 TB/s raw", "against a 3,600–3,800 GB/s raw"),
    Edit(R, "the medians are 0.30x and 0.30x", "the medians are 30% and 30%"),
    Edit(R, "about 0.25 of it", "about 25% of it"),
    Edit(R, "ran about 1.5x slower", "ran roughly 1.5x slower"),
    Edit(R, "(+0.07 ms on CPM5)", "(+70 µs on CPM5)"),
    Edit(R, "step 0.8 ms faster", "step 800 µs faster"),
    Edit(R, "took\n0.82 <!--", "took\n82% <!--"),
    Edit(R, "The same accounting gives e4b 3.536 GB per token.", "By the same accounting e4b streams 3.536 GB per token."),
    Edit(R, "(ratio about 0.86 <!--", "(ratio about 86% <!--"),
    Edit(R, "gather_qmm took 0.41 <!--", "gather_qmm took 41% <!--"),
    Edit(R, "On the M1 Max, mlx's 4-bit GEMV", "On the M1 Max, MLX's 4-bit GEMV"),
    Edit(R, "(64% for CPM5 <!--", "(0.64 for CPM5 <!--"),
    Edit(R, "(1.48 ms;", "(1,480 µs;"),
    Edit(R, "build (3.19 ms)", "build (about 3.2 ms)"),
    Edit(R, "from about 0.10 TB/s <!--", "from about 100 GB/s <!--"),
    Edit(C, "48%, 27% and 17%", "0.48, 0.27 and 0.17"),
    Edit(C, "10 of 21 alternatives", "10 out of 21 alternatives"),
    Edit(C, "7 of 26 alternatives", "7/26 alternatives"),
    Edit(C, "So the other 83% of", "So the other 0.83 of"),
    Edit(C, "positions 28, 40 and 18", "positions 28, 40, and 18"),
    Edit(C, "selectivity (0.79) matched the identity control's (0.77)",
         "selectivity (79%) matched the identity control's (77%)"),
    Edit(C, "The router's 43% is the highest", "The router's 0.43 is the highest"),
    Edit(C, "re-merge 43% <!--", "re-merge 0.43 <!--"),
    Edit(C, "On e4b on the M1 Max, 924 pure-temperature", "On e4b, on the M1 Max, 924 pure-temperature"),
    Edit(C, "no stretch longer than 6 positions", "no stretch longer than 6 positions at all"),
]

WRONG = [
    Edit(R, "streams 0.694 GB of weights", "streams 0.794 GB of weights", "0.794 GB"),
    Edit(R, "its 0.448 GiB of layers", "its 0.548 GiB of layers", "0.548 GiB"),
    Edit(R, "its 0.198 GiB\nuntied", "its 0.298 GiB\nuntied", "0.298 GiB"),
    Edit(R, "gives e4b 3.536 GB", "gives e4b 3.636 GB", "3.636 GB"),
    Edit(R, "The 12B streams 8.860 GB", "The 12B streams 8.960 GB", "8.960 GB"),
    Edit(R, "streams 3.444 GB per token", "streams 3.544 GB per token", "3.544 GB"),
    Edit(R, "CPM5 costs 24.6 KB per", "CPM5 costs 26.4 KB per", "26.4 KB"),
    Edit(R, "e4b reads 45 MB of KV", "e4b reads 54 MB of KV", "54 MB"),
    Edit(R, "e4b reads 154 MB,", "e4b reads 145 MB,", "145 MB"),
    Edit(R, "The 12B reads 236 MB per", "The 12B reads 263 MB per", "263 MB"),
    Edit(R, "the 12B reads 872 MB per", "the 12B reads 827 MB per", "827 MB"),
    Edit(R, "reads 147 MB per token", "reads 174 MB per token", "174 MB"),
    Edit(R, "streams 538,060,032 bytes", "streams 548,060,032 bytes", "548,060,032 bytes"),
    Edit(R, "streams 98,346,240 bytes", "streams 89,346,240 bytes", "89,346,240 bytes"),
    Edit(R, "2.58 ms floor at 270", "2.85 ms floor at 270", "2.85 ms"),
    Edit(R, "raw read is 483 tok/s", "raw read is 438 tok/s", "438 tok/s"),
    Edit(R, "runs at 64% of that roofline", "runs at 54% of that roofline", "54%"),
    Edit(R, "runs at 64% of that roofline", "runs at 0.54 of that roofline", "0.54"),
    Edit(R, "runs at 70% of its roofline", "runs at 80% of its roofline", "80%"),
    Edit(R, "runs at 92% of its roofline", "runs at 82% of its roofline", "82%"),
    Edit(R, "implied 154 GB/s", "implied 164 GB/s", "164 GB/s"),
    Edit(R, "CPM5 at 97% of its floor", "CPM5 at 87% of its floor", "87%"),
    Edit(R, "the stream is 0.906 GB", "the stream is 0.806 GB", "0.806 GB"),
    Edit(R, "floor is 2.1 ms per token", "floor is 2.4 ms per token", "2.4 ms"),
    Edit(R, "rows of 255–266 tok/s", "rows of 255–286 tok/s", "255–286 tok/s"),
    Edit(R, "were already 3.76–3.92 ms", "were already 3.76–3.99 ms", "3.76–3.99 ms"),
    Edit(R, "gives the table's 60–62%", "gives the table's 50–62%", "50–62%"),
    Edit(R, "GEMV reached 74–88% of", "GEMV reached 64–88% of", "64–88%"),
    Edit(R, "GEMV reached 74–88% of", "GEMV reached 94–98% of", "94–98%"),
    Edit(R, "The band's ends, 250 GB/s", "The band's ends, 260 GB/s", "260 GB/s"),
    Edit(R, "and 295 GB/s of", "and 305 GB/s of", "305 GB/s"),
    Edit(R, "are 74% and 88%.", "are 74% and 98%.", "98%"),
    Edit(R, "0.022 ms is 183 GB/s", "0.022 ms is 138 GB/s", "138 GB/s"),
    Edit(R, "the medians are 0.30x and", "the medians are 0.52x and", "0.52x"),
    Edit(R, "and 0.30x <!--", "and 0.62x <!--", "0.62x"),
    Edit(R, "streamed 0.90–0.92 TB/s", "streamed 1.78–1.91 TB/s", "1.78–1.91 TB/s"),
    Edit(R, "against a 3.6–3.8 TB/s raw", "against a 1.4–1.6 TB/s raw", "1.4–1.6 TB/s"),
    Edit(R, "about 0.25 of it", "about 0.55 of it", "0.55"),
    Edit(R, "ran about 1.5x slower", "ran about 30x slower", "30x"),
    Edit(R, "\"measured\" 4.4 TB/s this way.", "\"measured\" 5.4 TB/s this way.", "5.4 TB/s"),
    Edit(R, "as it must. <!--", "as it must: 0.5x the ceiling. <!--", "0.5x"),
    Edit(R, "as it must. <!--", "as it must: 5000x the ceiling. <!--", "5000x"),
    Edit(R, "step 0.8 ms faster", "step 1.8 ms faster", "1.8 ms"),
    Edit(R, "(+0.07 ms on CPM5)", "(+0.7 ms on CPM5)", "+0.7 ms"),
    Edit(R, "took\n0.82 <!--", "took\n0.95 <!--", "0.95"),
    Edit(R, "to 0.86 TB/s <!--", "to 0.99 TB/s <!--", "0.99 TB/s"),
    Edit(R, "from about 0.10 TB/s <!--", "from about 0.26 TB/s <!--", "0.26 TB/s"),
    Edit(R, "(1.48 ms;", "(1.58 ms;", "1.58 ms"),
    Edit(R, "its low end (29.6%)", "its low end (39.6%)", "39.6%"),
    Edit(R, "build (3.19 ms)", "build (3.29 ms)", "3.29 ms"),
    Edit(R, "GPU step is 98% of its floor", "GPU step is 88% of its floor", "88%"),
    Edit(R, "columns add up to 18.73 ms", "columns add up to 18.93 ms", "18.93 ms"),
    Edit(R, "on every reading (+73–75%;", "on every reading (+83–85%;", "+83–85%"),
    Edit(C, "48%, 27% and 17%", "58%, 27% and 17%", "58%"),
    Edit(C, "48%, 27% and 17%", "48%, 37% and 17%", "37%"),
    Edit(C, "48%, 27% and 17%", "48%, 27% and 7%", "7%"),
    Edit(C, "10 of 21 alternatives", "10 of 22 alternatives", "10 of 22"),
    Edit(C, "7 of 26 alternatives", "9 of 26 alternatives", "9 of 26"),
    Edit(C, "3 of 18 alternatives", "3 of 19 alternatives", "3 of 19"),
    Edit(C, "So the other 83% of", "So the other 73% of", "73%"),
    Edit(C, "selectivity (0.79) matched", "selectivity (0.89) matched", "0.89"),
    Edit(C, "control's (0.77)", "control's (0.67)", "0.67"),
    Edit(C, "The router's 43% is the highest", "The router's 63% is the highest", "63%"),
    Edit(C, "re-merge 43% <!--", "re-merge 73% <!--", "73%"),  # outside the run's interval [24%, 62%]
    Edit(C, "a log ratio of\n0.21 <!--", "a log ratio of\n0.31 <!--", "0.31"),
    Edit(C, "no stretch longer than 6 positions", "no stretch longer than 9 positions", "9 positions"),
]


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory):
    opened = Gate(Path(tmp_path_factory.mktemp("table")))
    yield opened
    opened.close()


def test_the_table_is_large_enough_and_spans_both_docs() -> None:
    assert len(CORRECT) >= 40 and len(WRONG) >= 40
    assert {e.doc for e in CORRECT} == {e.doc for e in WRONG} == {R, C}


def test_the_committed_findings_are_fully_covered(gate: Gate) -> None:
    report, _ = gate.run()
    assert report.ok, [str(p) for p in report.problems]
    assert report.coverage.unverified == 0 and report.coverage.undecided == 0, report.coverage.line()


@pytest.mark.parametrize("edit", CORRECT, ids=lambda e: f"{e.doc[:5]}:{e.after[:40]}")
def test_a_correct_rewording_passes_and_stays_checked(gate: Gate, edit: Edit) -> None:
    report, _ = gate.run(edit)
    assert report.ok, [str(p) for p in report.errors]
    assert report.coverage.unverified == 0, report.coverage.line()


@pytest.mark.parametrize("edit", WRONG, ids=lambda e: f"{e.doc[:5]}:{e.after[:40]}")
def test_a_wrong_figure_fails_at_its_own_line(gate: Gate, edit: Edit) -> None:
    report, texts = gate.run(edit)
    line, column = edit.position(texts[edit.doc])
    found = [(Path(p.path).name, p.line, p.column) for p in report.errors]
    assert found == [(edit.doc, line, column)], [str(p) for p in report.errors]
