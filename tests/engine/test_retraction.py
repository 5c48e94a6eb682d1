"""A premise its source retracted: its dependants are stale on every machine, whatever it measures."""

from __future__ import annotations

import pytest

from claimcheck.adjudicate import cascade, stale_chains
from claimcheck.claim import Check, Claim, ProbeSpec, Retraction, Scope, Source
from claimcheck.errors import ClaimError
from claimcheck.loader import load_claims_text
from claimcheck.result import ItemResult
from claimcheck.verdict import Verdict

WITHDRAWN = Retraction("§7", "premise gone").text()


def _records(verdicts: dict[str, str]) -> list[ItemResult]:
    def claim(claim_id: str) -> Claim:
        return Claim(claim_id, "t", "s", Source("d.md", "1", "f"), Scope(), ProbeSpec("constant"), Check("exact"))

    return [ItemResult(claim(cid), cid, {}, Verdict(v), "") for cid, v in verdicts.items()]


def test_a_retracted_premise_that_holds_here_still_makes_its_dependants_stale() -> None:
    premises = {"child": ("root",), "grandchild": ("child",)}
    results = _records({"root": "holds", "child": "holds", "grandchild": "holds"})
    assert stale_chains(results, premises) == {}
    chains = stale_chains(results, premises, retracted={"root": WITHDRAWN})
    assert chains["child"] == [f"root ({WITHDRAWN})", "child"]
    assert chains["grandchild"] == [f"root ({WITHDRAWN})", "child", "grandchild"]
    final = {r.claim_id: r for r in cascade(results, chains)}
    assert final["root"].verdict is Verdict.HOLDS, "the premise keeps its own measured verdict"
    assert final["child"].verdict is Verdict.STALE
    assert "premise was retracted by its source" in final["child"].reason
    assert "§7: \u201cpremise gone\u201d" in final["child"].reason


def test_a_retracted_premise_not_run_now_still_counts() -> None:
    chains = stale_chains(_records({"child": "holds"}), {"child": ("root",)}, retracted={"root": WITHDRAWN})
    assert chains == {"child": [f"root ({WITHDRAWN})", "child"]}


def test_cascade_makes_inconsistent_stale_and_leaves_refuted() -> None:
    results = _records({"root": "refuted", "a": "inconsistent", "b": "refuted", "c": "holds"})
    chains = stale_chains(results, {"a": ("root",), "b": ("root",), "c": ("root",)})
    final = {r.claim_id: r.verdict for r in cascade(results, chains)}
    assert final == {"root": Verdict.REFUTED, "a": Verdict.STALE, "b": Verdict.REFUTED, "c": Verdict.STALE}


CLAIM = """\
id: root
title: t
statement: s
source: {doc: d.md, section: "1", figure: "f"}
scope: {kind: portable, backend: any}
probe: {name: constant, params: {value: 1}}
check: {rule: exact, output: value, expected: 1, tolerance: 0.01}
"""


def test_the_retraction_is_read_with_its_section_and_words() -> None:
    (claim,) = load_claims_text(CLAIM + 'retracted: {section: "§7", figure: "premise gone"}\n', "c.yaml")
    assert claim.retracted == Retraction("§7", "premise gone")
    assert Claim.from_record(claim.to_record()).retracted == claim.retracted


@pytest.mark.parametrize("field, message", [
    ('retracted: {section: "§7"}\n', "c.yaml:8: retracted: missing required field `retracted.figure`"),
    ('retracted: {section: "§7", figure: "x", when: 2}\n', "c.yaml:8: retracted.when: unknown key `when`"),
    ('retracted: yes\n', "c.yaml:8: retracted: expected a mapping"),
])
def test_a_malformed_retraction_is_one_line_at_its_field(field: str, message: str) -> None:
    with pytest.raises(ClaimError) as caught:
        load_claims_text(CLAIM + field, "c.yaml")
    assert str(caught.value).startswith(message)


def test_dependants_of_a_retracted_premise_are_stale_in_the_run(demo_project: pytest.Pytester) -> None:
    child = CLAIM.replace("id: root", "id: child") + "depends_on: [root]\n"
    root = CLAIM + 'retracted: {section: "§7", figure: "premise gone"}\n'
    (demo_project.path / "claims" / "chain.yaml").write_text("---\n".join([root, child]))
    report = demo_project.runpytest("claims", "--claims-no-store")
    report.stdout.fnmatch_lines(["*1 passed*1 stale*"])
    report.stdout.fnmatch_lines(["stale: child <- root (retracted by its source (§7: \u201cpremise gone\u201d)) -> child"])
    assert report.ret == pytest.ExitCode.OK
