"""Figures as the source docs write them: units, ranges, approximations, signs, counts, conversions.

Every input string below is copied from the two source write-ups (decode-roofline-lookagain.md,
curve-bisector-routing.md) unless it says otherwise; expected values are what the text says.
"""

from __future__ import annotations

import math

import pytest

from claimcheck.figures import (
    UnitError,
    compatible,
    convert,
    family_of,
    format_value,
    parse_figure,
    parse_figures,
    read_markdown,
    unit_of,
)


def only(text: str):
    figures = parse_figures(text)
    assert len(figures) == 1, [f.text for f in figures]
    return figures[0]


@pytest.mark.parametrize(
    ("text", "low", "high", "unit", "approx"),
    [
        ("reaches **74–88%** of raw machine bandwidth", 74, 88, "%", False),
        ("74-88 %", 74, 88, "%", False),  # hyphen and a space before the unit
        ("costs ~10–15 µs/op incl host encode", 10, 15, "µs", True),
        ("~250–295 GB/s in mlx's own GEMV", 250, 295, "GB/s", True),
        ("Gap ≈ −4 to −10% directional", -10, -4, "%", True),  # "to" range, unicode minus
        ("~**+35–55%**", 35, 55, "%", True),
        ("real decode @600 re-measured 21.0–22.6 ms/tok", 21.0, 22.6, "ms", False),
    ],
)
def test_ranges(text, low, high, unit, approx):
    figure = only(text)
    assert figure.kind == "range" and figure.is_range and figure.value is None
    assert (figure.low, figure.high, figure.unit, figure.approx) == (low, high, unit, approx)


def test_percent_range_converts_to_ratio():
    # "74–88%" is the ratio interval [0.74, 0.88]: % is 1/100 of a ratio.
    assert only("74–88%").interval("ratio") == pytest.approx((0.74, 0.88))


def test_per_unit_and_time_conversion():
    figure = only("~10–15 µs/op")
    assert (figure.unit, figure.per, figure.full_unit) == ("µs", "op", "µs/op")
    assert figure.interval("ms") == pytest.approx((0.010, 0.015))
    assert only("4.06 ms/tok").interval("s") == pytest.approx((0.00406, 0.00406))


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("0.75", 0.75, None),
        ("CPM5 reads **0.694 GB** of weights/token", 0.694, "GB"),
        ("Production-shaped decode measures **4.06 ms/tok**.", 4.06, "ms"),
        ("| creative  | 21 | **48%**|", 48, "%"),
        ("the first draft of this probe \"measured\" 4.4 TB/s", 4.4, "TB/s"),
        ("ours 689 tok/s @3266", 689, "tok/s"),
        ("each expert slice is ~3.3 MiB", 3.3, "MiB"),
        ("within ~1 nat/token of the reference", 1, "nat"),
        ("(0.70→0.94x, never above 1.0)", 0.70, "x"),  # the first figure; it takes the unit of the second
        ("FUSED_GELU=0 changes prefill ~nothing (2.31→2.36 s)", 2.31, "s"),
    ],
)
def test_values_with_units(text, value, unit):
    figure = parse_figure(text)
    assert figure is not None
    assert figure.value == pytest.approx(value) and figure.unit == unit


def test_signs_and_plus_minus():
    plus = parse_figures("prebuilt **4.11 (+0.07)**")
    assert [f.value for f in plus] == [4.11, 0.07]
    minus = only("−0.96")
    assert minus.value == pytest.approx(-0.96) and minus.unit is None
    assert only("+0.07 ms").value == pytest.approx(0.07)
    pm = only("chain-2 ±0.01 ms")
    assert pm.kind == "plusminus" and (pm.low, pm.high, pm.unit) == (-0.01, 0.01, "ms")


def test_arrows_share_a_group_and_pass_units_left():
    derived = parse_figures("2.12 ms → **268 GB/s**")
    assert [(f.text, f.unit, f.role) for f in derived] == [("2.12 ms", "ms", "from"), ("268 GB/s", "GB/s", "to")]
    assert derived[0].group == derived[1].group
    change = parse_figures("graph 3.5→1.2 ms but GPU +1.7 ms")
    assert [(f.value, f.unit, f.unit_inherited) for f in change[:2]] == [(3.5, "ms", True), (1.2, "ms", False)]


def test_slash_lists_take_the_trailing_unit():
    bandwidths = parse_figures("raw streaming read, bf16 sum 1/2/4 GiB | 299 / 320 / **337 GB/s** |")
    assert [(f.value, f.unit) for f in bandwidths] == [
        (1, "GiB"), (2, "GiB"), (4, "GiB"), (299, "GB/s"), (320, "GB/s"), (337, "GB/s")]
    deltas = parse_figures("unchanged (+0.07 / +0.01 ms, inside pass-to-pass drift)")
    assert [(f.value, f.unit) for f in deltas] == [(0.07, "ms"), (0.01, "ms")]


@pytest.mark.parametrize(
    ("text", "count", "of", "noun"),
    [
        ("0 of 924", 0, 924, None),
        ("0 exact matches in 924", 0, 924, "exact matches"),
        ("→ **0 exact matches, 0 crossings of the curve's fork.**", 0, None, "exact matches"),
        ("| coherent | 9/9 |", 9, 9, None),
    ],
)
def test_counts(text, count, of, noun):
    figure = parse_figures(text)[0]
    assert figure.kind == "count" and figure.family == "count"
    assert (figure.value, figure.count_of, figure.noun) == (count, of, noun)


def test_zero_count_as_a_rate():
    # "0 of 924" is an observed rate of exactly 0, whatever the fraction unit.
    assert only("0 of 924").interval("%", tolerant=True) == (0.0, 0.0)
    assert only("9/9").interval("ratio") == (1.0, 1.0)


@pytest.mark.parametrize(
    "text",
    [
        "Decode perf look again (2026-07-01)",  # a date, not a range
        "e4b 12B bf16 CPM5-1B 26B-A4B M1 Max M4 Pro",  # identifiers with digits
        "4-bit GEMV, 8-bit KV, a 14-year-old",  # adjectives
        "upstream python mlx 0.31.2 reproduces",  # a version
        "generate.ts:512-516 and fused-decode-kernel.ts:227,234",  # file positions
        "see §3 and §4(b)/(c), backlog #4",  # section and issue marks
        "e4b @600 vs @8k",  # context sizes
        "(2816×704×3 mats, 4-bit)",  # a dimension product
        "FUSED_GELU=0 and M=1",  # assignments
    ],
)
def test_not_figures(text):
    assert parse_figures(text) == []


def test_gib_is_not_gb():
    # The doc adds 0.448 GiB layers + 0.198 GiB head and reports 0.694 GB:
    # 0.646 * 2**30 / 1e9 = 0.69364 GB, which prints as 0.694.
    total = sum(f.value for f in parse_figures("0.448 GiB layers + 0.198 GiB untied lm_head"))
    assert convert(total, "GiB", "GB") == pytest.approx(0.646 * 2**30 / 1e9)
    assert round(convert(total, "GiB", "GB"), 3) == 0.694
    assert convert(1, "GiB/s", "GB/s") == pytest.approx(1.073741824)
    assert convert(540, "MiB", "GB") == pytest.approx(0.566231040)


def test_unit_families_and_errors():
    assert family_of("GB/s") == family_of("TB/s") == "bandwidth"
    assert family_of("ms/tok") == "time"
    assert family_of("%") == family_of("x") == family_of("ratio") == "fraction"
    assert family_of(None) == "number" and compatible("number", "fraction")
    assert unit_of("furlongs") is None
    with pytest.raises(UnitError, match="cannot convert"):
        convert(1.0, "GB", "GB/s")
    assert convert(math.inf, "GB/s", "TB/s") == math.inf


def test_rounding_and_approximation_tolerance():
    exact = only("64%")
    assert exact.interval(tolerant=True) == pytest.approx((63.5, 64.5))  # half of the last digit
    approx = only("~2.6 ms/tok")
    assert approx.interval(tolerant=True) == pytest.approx((2.6 - 0.05 - 0.26, 2.6 + 0.05 + 0.26))


def test_format_value():
    assert format_value(0.41, "%") == "0.41%"
    assert format_value(268.04, "GB/s") == "268 GB/s"
    assert format_value(math.inf, "ms") == "∞"


def test_line_and_column():
    figures = parse_figures("first line\n  second 4.06 ms")
    assert (figures[0].line, figures[0].column) == (2, 10)


DOC = """# Title

Intro sentence with `code 12 ms` inside. Second sentence reaches 3 ms. <!-- claim: a-1 -->

## 1. Measured bandwidth

| probe | result |
|---|---|
| qmv 4-bit GEMV 540 MiB | 2.12 ms → **268 GB/s** |

- a list item with 5% e.g. here. And more.

```
fenced 99 GB/s
```
"""


def test_read_markdown_sentences_tables_and_masking():
    doc = read_markdown(DOC)
    kinds = [(s.kind, s.line, s.section) for s in doc.sentences]
    assert kinds == [
        ("heading", 1, "Title"),
        ("prose", 3, "Title"),
        ("prose", 3, "Title"),
        ("heading", 5, "1. Measured bandwidth"),
        ("table", 9, "1. Measured bandwidth"),
        ("list", 11, "1. Measured bandwidth"),
        ("list", 11, "1. Measured bandwidth"),
    ]
    row = doc.sentences[4]
    assert [c.header for c in row.cells] == ["probe", "result"]
    texts = [f.text for f in doc.figures]
    # code, comment and fence are masked; the heading's section number is a bare number
    assert texts == ["3 ms", "1", "540 MiB", "2.12 ms", "268 GB/s", "5%"]
    assert doc.comments[0].body == "claim: a-1"
    three = doc.figures[0]
    assert doc.position(three.start) == (3, three.column) and three.line == 3


def test_a_count_whose_noun_runs_across_a_line_break_is_read_without_error() -> None:
    from claimcheck.figures._parse import parse_figures

    text = "the boundary is the median of the window of 30 samples\n  puts the first samples 0.38 SD below it."
    (count,) = [f for f in parse_figures(text) if f.low == 30]
    assert count.kind == "count" and text[count.start:count.end] == "30"


@pytest.mark.parametrize(("text", "unit", "low", "high"), [
    ("11.2x", "x", 11.2, 11.2), ("74–88%", "%", 74, 88), ("4.06 ms", "ms", 4.06, 4.06), ("~10–15 µs", "µs", 10, 15),
    ("268 GB/s", "GB/s", 268, 268), ("0.88–0.92 TB/s", "TB/s", 0.88, 0.92), ("483 tok/s", "tok/s", 483, 483),
    ("128 MiB", "MiB", 128, 128), ("45 MB", "MB", 45, 45),
])
def test_every_unit_the_docs_gate_compares_is_read(text: str, unit: str, low: float, high: float) -> None:
    (figure,) = parse_figures(text)
    assert (figure.unit, figure.low, figure.high) == (unit, low, high)


def test_counts_n_of_m_keep_their_denominator() -> None:
    (figure,) = parse_figures("10 of 21 alternatives")
    assert figure.kind == "count" and figure.count_of == 21 and figure.interval("%") == pytest.approx((47.619, 47.619),
                                                                                                        abs=1e-3)
