"""Every claim with a holds direction can hold after its family's adjustment (issue #45, Build 2).

A design whose smallest reachable hold p-value (no event in all its samples; every sample on the
claimed side of a sign test) lies above the level Holm first tests it at in its family can never
keep a *holds*, however true the source's figure: the design, not the evidence, would decide it.
The floors are checked for the whole suite on a CPU and under the cuda profile.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from claimcheck.claims.loader import load_claims, load_claims_text
from claimcheck.engine.families import FamilySlot, group_members
from claimcheck.engine.family_tree import tree_slots
from claimcheck.engine.reach import design_samples, family_reach, hold_floor, report, suite_reach
from claimcheck.pytest_plugin.session import unavailable_model
from claimcheck.probing.registry import load_probe_modules

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def probes_loaded() -> None:
    load_probe_modules(str(ROOT))


@pytest.mark.parametrize("machine, profile", [({"backend": "cpu", "device": "cpu"}, "cpu"),
                                              ({"backend": "cuda", "device": "NVIDIA H200"}, "cuda")])
def test_every_sampled_member_of_the_suite_can_hold_in_its_family(probes_loaded: None, machine: dict,
                                                                  profile: str) -> None:
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        reach = suite_reach(["claims"], machine, profile, unavailable=unavailable_model)
    finally:
        os.chdir(cwd)
    assert reach, "no sampled member found"
    lines, ok = report(reach)
    print(f"\n[{profile}]", *lines, sep="\n")  # the suite's table, shown with -s
    assert ok, "\n".join(line for line in lines if line.startswith("FAIL"))


def test_the_zero_rate_floor_is_the_source_count_with_no_event(probes_loaded: None) -> None:
    claim = {c.id: c for c in load_claims([ROOT / "claims" / "curves"])}["temp-never-matches-curve"]
    n = design_samples(claim, claim.probe.params)
    assert n == 924  # 12 temperatures x 77 seeds, the doc's "924 pure-temperature samples"
    floor, _ = hold_floor(claim, n)
    assert floor == pytest.approx(0.99 ** 924)
    assert hold_floor(claim, 312)[0] == pytest.approx(0.0435, abs=5e-5)  # the audit's figure for the old design


CLAIM = """\
id: {id}
title: t
statement: s
source: {{doc: d.md, section: "1", figure: f}}
scope: {{kind: portable}}
probe: {{name: temperature_search, params: {{model: {model}, prompt: lighthouse, seeds: 26}}}}
check: {{rule: zero_rate, output: exact_match, threshold: 0.01}}
budget: {{min_samples: 100, max_samples: 400}}
"""


def test_a_design_that_held_alone_but_not_in_a_family_of_two_fails_the_check(probes_loaded: None) -> None:
    claims = [load_claims_text(CLAIM.format(id=f"c{i}", model="smollm2-135m-instruct"), "claims/x.yaml")[0]
              for i in range(2)]
    slots = {"c0": FamilySlot("x.yaml", 0.05), "c1": FamilySlot("x.yaml", 0.05)}
    reach = family_reach(claims, slots)
    assert [r.n for r in reach] == [312, 312]
    assert not any(r.can_hold for r in reach)  # 0.0435 > 0.05 / 2
    alone = family_reach(claims[:1], {"c0": FamilySlot("x.yaml", 0.05)})
    assert alone[0].can_hold  # 0.0435 <= 0.05


def test_an_item_whose_model_cannot_load_here_leaves_its_family(probes_loaded: None, tmp_path: Path) -> None:
    present = load_claims_text(CLAIM.format(id="here", model="smollm2-135m-instruct"), str(tmp_path / "x.yaml"))[0]
    absent = load_claims_text(CLAIM.format(id="there", model="gemma-4-e4b-it-optiq-4bit"), str(tmp_path / "x.yaml"))[0]
    assert unavailable_model({"model": "gemma-4-e4b-it-optiq-4bit"}) is not None
    slots = tree_slots([present, absent], "cpu", {"backend": "cpu"}, [tmp_path], unavailable=unavailable_model)
    assert list(slots) == ["here"]


def test_a_not_applicable_result_does_not_count_at_p_one() -> None:
    from claimcheck.claim import Check, Claim, ProbeSpec, Scope, Source
    from claimcheck.engine.result import ItemResult
    from claimcheck.stats import Decision
    from claimcheck.verdict import Verdict

    def result(item_id: str, verdict: Verdict, decided: bool) -> ItemResult:
        claim = Claim(item_id, "t", "s", Source("d.md", "1", "f"), Scope(), ProbeSpec("p"),
                      Check("zero_rate", output="x", params={"threshold": 0.01}))
        decision = Decision("zero_rate", 0.0, 0.0, 0.0, 0.95, 924, verdict, "r", 1.0, 0.05,
                            hold_pvalue=0.99 ** 924) if decided else None
        return ItemResult(claim, item_id, {}, verdict, "r", decision)

    results = [result("a", Verdict.HOLDS, True), result("b", Verdict.NOT_APPLICABLE, False)]
    groups = group_members(results, [0], {"a": 0.05, "b": 0.05, "c": 0.05}, {"a": "f", "b": "f", "c": "f"})
    assert sorted(m.item_id for m in groups["f"]) == ["a", "c"]  # b left; c (not run) still counts at p = 1
