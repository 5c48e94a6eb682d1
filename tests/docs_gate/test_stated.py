"""A doc figure against the claim's stated figure: printed precision, one-sided bounds, units, counts."""

from __future__ import annotations

import pytest

from claimcheck.claim import Check
from claimcheck.gate import ClaimInfo
from claimcheck.gate._stated import against_stated, read_interval
from claimcheck.figures import parse_figures


def claim(figure: str, **check: object) -> ClaimInfo:
    return ClaimInfo(id="c", figure=figure, check=Check.from_record({"rule": "at_least", "threshold": 0.5, **check}))


def stated(text: str, info: ClaimInfo) -> bool | None:
    (figure,) = [f for f in parse_figures(text) if f.unit is not None or f.kind == "count"]
    return against_stated(figure, text, info).agrees


def test_printed_precision_and_bounds() -> None:
    (figure,) = parse_figures("74–88%")
    assert read_interval(figure, "74–88%", "%") == (73.5, 88.5)
    text = "at least 2x"
    (bound,) = parse_figures(text)
    assert read_interval(bound, text, "x") == (2.0, float("inf")), "a bound is exact"


@pytest.mark.parametrize(("quote", "agrees"), [("80%", True), ("0.8x", True), ("at least 74%", True),
                                               ("94–98%", False), ("0.95x", False), ("under 70%", False)])
def test_a_quote_agrees_with_a_stated_range_in_any_unit_of_its_family(quote: str, agrees: bool) -> None:
    assert stated(f"It reaches {quote}.", claim("74–88% of raw bandwidth", unit="ratio")) is agrees


def test_a_bare_stated_bound_takes_the_claims_unit() -> None:
    info = claim("≥ 2", unit="x", threshold=2)
    assert stated("It is 2.4x faster.", info) is True
    assert stated("It is 1.5x faster.", info) is False


def test_counts_must_match_their_denominator() -> None:
    info = claim("0 exact matches in 924", unit="rate")
    assert stated("0 of 924", info) is True
    assert stated("0 of 900", info) is False and stated("3 of 924", info) is False


def test_a_ratio_the_stated_figures_imply_is_the_stated_figure_of_an_x_quote() -> None:
    info = claim("upstream reproduces 6.18 vs 4.01 ms", threshold=1.5)  # 1.54x, either way round 0.65x
    assert stated("about 1.5x slower", info) is True and stated("0.65x", info) is True
    assert stated("about 30x slower", info) is False and stated("1.1x", info) is False
