"""The claim loader: schema validation, safety, grids and dependencies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claimcheck.claim import Claim
from claimcheck.errors import ClaimError
from claimcheck.claims.loader import check_dependencies, expand_grid, load_claims, load_claims_text
from claimcheck.claims.schema import json_schema

ROOT = Path(__file__).resolve().parents[2]
BASE = """\
id: c1
title: t
statement: s
source: {doc: d.md, section: "1", figure: "f"}
scope: {kind: portable, backend: any}
probe: {name: p, params: {size: 1}, grid: {mode: [a, b], k: [1, 2.5]}}
check: {rule: at_least, output: x, threshold: 0}
"""


def test_valid_claim_round_trip() -> None:
    (claim,) = load_claims_text(BASE, "c.yaml")
    assert isinstance(claim, Claim)
    assert claim.check.number("threshold") == 0.0 and claim.scope.kind == "portable"
    names = [name for name, _ in expand_grid(claim)]
    assert names == ["mode=a,k=1", "mode=a,k=2.5", "mode=b,k=1", "mode=b,k=2.5"]
    assert expand_grid(claim)[3][1] == {"size": 1, "mode": "b", "k": 2.5}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("!!python/object/apply:os.system ['echo owned']\n", "tag `tag:yaml.org,2002:python/object/apply:os.system` is not allowed"),
        (BASE.replace("title: t", "title: !!binary aGk="), "is not allowed"),
        ("a: &a [1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
         "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n", "alias bomb"),
        ("x: " + "[" * 60 + "]" * 60 + "\n", "nesting deeper"),
        (BASE.replace("threshold: 0", "threshold: .nan"), "non-finite number"),
        (BASE.replace("check: {", "check: {alpha: 0.7, "), "check.alpha: expected a number < 0.5"),
        (BASE.replace("id: c1", "id: ../../etc"), "expected a slug"),
        (BASE.replace("threshold: 0", "threshold: 0, margin: 1"), "`check.margin` is not used by rule `at_least`"),
        (BASE.replace("rule: at_least, output: x, threshold: 0", "rule: equivalent, output: x"), "rule `equivalent` needs `check.margin`"),
        (BASE.replace("source: {doc: d.md, ", "source: {"), "missing required field `source.doc`"),
    ],
)
def test_bad_input_is_one_clear_line(text: str, message: str) -> None:
    with pytest.raises(ClaimError) as info:
        load_claims_text(text, "c.yaml")
    line = str(info.value)
    assert message in line and "\n" not in line and line.startswith("c.yaml:")


def test_drafts_are_not_runnable_claims() -> None:
    draft = "id: d1\ndraft: true\nprobe: {name: TODO}\nstatement: TODO rewrite\n"
    assert load_claims_text(draft, "d.yaml") == []
    (found,) = load_claims_text(draft, "d.yaml", with_drafts=True)
    assert "probe.name (still TODO)" in found.missing and "title" in found.missing


def test_dependency_cycle_and_unknown_premise() -> None:
    a = BASE.replace("id: c1", "id: a") + "depends_on: [b]\n"
    b = BASE.replace("id: c1", "id: b") + "depends_on: [a]\n"
    claims = load_claims_text(a + "---\n" + b, "g.yaml")
    with pytest.raises(ClaimError, match="dependency cycle: a -> b -> a"):
        check_dependencies(claims)
    lone = load_claims_text(BASE + "depends_on: [nope]\n", "g.yaml")
    with pytest.raises(ClaimError, match="unknown claim `nope`"):
        check_dependencies(lone)


def test_duplicate_ids_across_files(tmp_path: Path) -> None:
    (tmp_path / "one.yaml").write_text(BASE)
    (tmp_path / "two.yaml").write_text(BASE)
    with pytest.raises(ClaimError, match="duplicate claim id `c1`"):
        load_claims([tmp_path])


def test_published_json_schema_is_current() -> None:
    published = json.loads((ROOT / "schema" / "claim-v1.json").read_text())
    assert published == json_schema(), "regenerate schema/claim-v1.json (see README)"


def test_repository_claims_load_and_are_unique() -> None:
    claims = load_claims([ROOT / "claims"])
    assert len(claims) >= 15
    check_dependencies(claims)


def test_schema_check_fields_come_from_the_rule_objects() -> None:
    from claimcheck import rules
    from claimcheck.claims.schema import SECTIONS

    params = {p.name for rule in rules.registry().values() for p in rule.params}
    assert params <= set(SECTIONS["check"])
    assert SECTIONS["check"]["rule"].choices == rules.names()


def test_profiles_scale_params_and_budget_but_not_the_check() -> None:
    text = BASE + "profiles:\n  cuda: {params: {size: 4096}, grid: {k: [8]}, budget: {max_samples: 500}}\n"
    (claim,) = load_claims_text(text, "c.yaml")
    scaled = claim.for_profile("cuda")
    assert scaled.probe.params["size"] == 4096 and scaled.probe.grid["k"] == [8]
    assert scaled.budget.max_samples == 500 and scaled.check == claim.check
    assert claim.for_profile("metal") is claim
    with pytest.raises(ClaimError, match=r"profiles.cuda.check: unknown key `check`"):
        load_claims_text(BASE + "profiles:\n  cuda: {check: {threshold: 1}}\n", "c.yaml")
