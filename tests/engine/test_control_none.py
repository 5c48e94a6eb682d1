"""`control: {none: true, why: ...}`: a claim that says why no positive control exists."""

from __future__ import annotations

import pytest

from claimcheck.claim import Claim
from claimcheck.errors import ClaimError
from claimcheck.claims.loader import load_claims_text

BASE = """\
id: c1
title: t
statement: s
source: {doc: d.md, section: "1", figure: "f"}
scope: {kind: portable, backend: any}
probe: {name: normal, params: {mean: 14, sd: 1}}
check: {rule: at_least, output: x, threshold: 10}
"""


def test_no_control_with_its_reason_is_kept_on_the_claim() -> None:
    (claim,) = load_claims_text(BASE + 'control: {none: true, why: "the figure is a count over a database we cannot read"}\n', "c.yaml")
    assert claim.control is None
    assert claim.no_control == "the figure is a count over a database we cannot read"
    assert Claim.from_record(claim.to_record()).no_control == claim.no_control


@pytest.mark.parametrize(
    ("control", "field", "message"),
    [
        ('{none: true, params: {mean: 6}, why: "w"}', "control.none", "not both"),
        ('{why: "w"}', "control.params", "none: true"),
        ("{none: true}", "control", "missing required field `control.why`"),
    ],
)
def test_a_control_is_params_or_none_with_a_reason(control: str, field: str, message: str) -> None:
    with pytest.raises(ClaimError, match=message) as caught:
        load_claims_text(BASE + f"control: {control}\n", "c.yaml")
    assert caught.value.field == field
