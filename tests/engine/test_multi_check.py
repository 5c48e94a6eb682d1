"""Several checks on one measurement: `checks:` gives one item per check, sampled once, each decided on its own;
a single `check:` stays as it was; a bad entry is one line naming its own field."""

from __future__ import annotations

import pytest

from claimcheck.claim import Claim
from claimcheck.claims.loader import load_claims_text
from claimcheck.engine import shared
from claimcheck.engine.options import RunOptions
from claimcheck.engine.runner import run_claim_item
from claimcheck.errors import ClaimError
from claimcheck.probing.registry import Output, ProbeContext, RegisteredProbe
from claimcheck.verdict import Verdict

HEAD = """\
id: two-checks
title: t
statement: s
source: {doc: d.md, section: "1", figure: "f"}
scope: {kind: portable, backend: any}
probe: {name: counted, params: {level: 5.0}}
budget: {min_samples: 10, max_samples: 40, looks: 3}
"""
CHECKS = """\
checks:
  - {name: above, rule: at_least, output: x, threshold: 4}
  - {name: below, rule: at_most, output: x, threshold: 4}
"""


def _counting_probe() -> tuple[RegisteredProbe, list[tuple[int, int]]]:
    calls: list[tuple[int, int]] = []

    def counted(ctx: ProbeContext, *, level: float) -> dict[str, list[float]]:
        calls.append((ctx.look, ctx.n))
        return {"x": [level + ctx.rng.gauss(0, 0.5) for _ in range(ctx.n)]}

    return RegisteredProbe("counted", counted, {"x": Output("")}), calls


def test_each_check_is_its_own_claim_sharing_the_document() -> None:
    claims = load_claims_text(HEAD + CHECKS, "c.yaml")
    assert [c.id for c in claims] == ["two-checks--above", "two-checks--below"]
    assert {c.measurement for c in claims} == {"two-checks"}
    assert [c.check.rule for c in claims] == ["at_least", "at_most"]
    assert claims[1].line_of("check.threshold") == 10  # the entry's own line
    single = load_claims_text(HEAD + "check: {rule: at_least, output: x, threshold: 4}\n", "c.yaml")
    assert [c.id for c in single] == ["two-checks"] and single[0].measurement is None
    assert Claim.from_record(claims[0].to_record()).measurement == "two-checks"


def test_the_checks_sample_once_and_decide_each_on_its_own() -> None:
    shared.forget()
    claims = load_claims_text(HEAD + CHECKS, "c.yaml")
    probe, calls = _counting_probe()
    options = RunOptions(seed=3)
    results = [run_claim_item(c, c.id, dict(c.probe.params), probe, options=options, machine={"backend": "cpu"})
               for c in claims]
    assert results[0].verdict is Verdict.HOLDS and results[1].verdict is Verdict.REFUTED
    alone = len(calls)
    assert results[0].samples["x"] == results[1].samples["x"][:len(results[0].samples["x"])]
    shared.forget()
    probe2, calls2 = _counting_probe()
    run_claim_item(claims[0], claims[0].id, dict(claims[0].probe.params), probe2, options=options,
                   machine={"backend": "cpu"})
    assert alone == len(calls2), "the second check called the probe again for looks the first had taken"


@pytest.mark.parametrize("checks, field, words", [
    ("checks:\n  - {rule: at_least, output: x, threshold: 4}\n  - {name: b, rule: at_most, output: x, threshold: 4}\n",
     "checks[0]", "needs `name:`"),
    ("checks:\n  - {name: a, rule: at_least, output: x, threshold: 4}\n  - {name: a, rule: at_most, output: x, threshold: 4}\n",
     "checks[1].name", "used twice"),
    ("checks:\n  - {name: a, rule: at_least, output: x, threshold: 4}\n  - {name: b, rule: at_mots, output: x, threshold: 4}\n",
     "checks[1].rule", "did you mean `at_most`"),
    ("checks:\n  - {name: a, rule: at_least, output: x, threshold: 4}\n", "checks", "at least two checks"),
    ("check: {rule: at_least, output: x, threshold: 4}\nchecks:\n  - {name: a, rule: at_least, output: x, threshold: 4}\n"
     "  - {name: b, rule: at_most, output: x, threshold: 4}\n", "checks", "not both"),
    ("check: {name: a, rule: at_least, output: x, threshold: 4}\n", "check.name", "takes none"),
    ("", "", "missing required field `check`"),
])
def test_a_bad_check_list_is_one_line_naming_its_field(checks: str, field: str, words: str) -> None:
    with pytest.raises(ClaimError) as error:
        load_claims_text(HEAD + checks, "c.yaml")
    assert error.value.field == field and words in str(error.value), str(error.value)
    assert error.value.line >= 1
