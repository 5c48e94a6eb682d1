"""A premise its source retracted: its dependants are stale on every machine, whatever it measures."""

from __future__ import annotations

import pytest

from claimcheck.engine.adjudicate import cascade, stale_chains
from claimcheck.claim import Check, Claim, ProbeSpec, Retraction, Scope, Source
from claimcheck.errors import ClaimError
from claimcheck.claims.loader import load_claims_text
from claimcheck.engine.result import ItemResult
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
    report.stdout.fnmatch_lines(["claims/chain.yaml .S*"])  # the progress letter is the final one, not the own verdict's
    assert report.ret == pytest.ExitCode.OK


BANNER = Retraction("2026-07-02 CORRECTION banner", "the §4(b)/(c) decomposition does not", "§4(b)/(c)")


def _with(claim_id: str, verdict: str, retracted: Retraction | None = None, control_for: str | None = None) -> ItemResult:
    claim = Claim(claim_id, "t", "s", Source("d.md", "§4(b)", "f"), Scope(), ProbeSpec("constant"), Check("exact"),
                  retracted=retracted)
    return ItemResult(claim, claim_id, {}, Verdict(verdict), "own reason", control_for=control_for)


@pytest.mark.parametrize("own", ["holds", "refuted", "inconsistent", "inconclusive"])
def test_a_figure_resting_on_a_withdrawn_decomposition_is_stale_whatever_it_gives(own: str) -> None:
    results = [_with("overhead", own, BANNER)]
    chains = stale_chains(results, {}, retracted={"overhead": BANNER.text()})
    (final,) = cascade(results, chains)
    assert final.verdict is Verdict.STALE
    assert final.reason == (f"stale: retracted by its source: rests on the §4(b)/(c) decomposition it withdrew "
                            f"(2026-07-02 CORRECTION banner: \u201cthe §4(b)/(c) decomposition does not\u201d) "
                            f"(own verdict {own})")
    assert final.adjustments[-1].before is Verdict(own)


def test_a_withdrawn_claim_keeps_its_own_verdict_but_a_withdrawn_figure_does_not() -> None:
    results = [_with("premise", "refuted", Retraction("§7", "premise gone")), _with("figure", "refuted", BANNER)]
    chains = stale_chains(results, {}, retracted={"premise": "x", "figure": BANNER.text()})
    final = {r.claim_id: r.verdict for r in cascade(results, chains)}
    assert final == {"premise": Verdict.REFUTED, "figure": Verdict.STALE}


def test_what_rests_on_a_withdrawn_figure_is_stale_with_the_banner_as_reason() -> None:
    results = [_with("overhead", "holds", BANNER), _with("prize", "holds")]
    chains = stale_chains(results, {"prize": ("overhead",)}, retracted={"overhead": BANNER.text()})
    final = {r.claim_id: r for r in cascade(results, chains)}
    assert final["prize"].verdict is Verdict.STALE
    assert "premise was retracted by its source" in final["prize"].reason
    assert "rests on the §4(b)/(c) decomposition it withdrew" in final["prize"].reason


def test_the_positive_control_of_a_withdrawn_figure_still_decides() -> None:
    results = [_with("overhead--control", "refuted", BANNER, control_for="overhead")]
    assert cascade(results, stale_chains(results, {}))[0].verdict is Verdict.REFUTED


def test_the_decomposition_is_read_and_kept_in_the_record() -> None:
    text = CLAIM + 'retracted: {section: "banner", figure: "does not", decomposition: "§4(b)/(c)"}\n'
    (claim,) = load_claims_text(text, "c.yaml")
    assert claim.retracted == Retraction("banner", "does not", "§4(b)/(c)")
    assert Claim.from_record(claim.to_record()).retracted == claim.retracted
    (plain,) = load_claims_text(CLAIM + 'retracted: {section: "§7", figure: "premise gone"}\n', "c.yaml")
    assert "decomposition" not in plain.to_record()["retracted"], "a plain retraction's record is unchanged"


def test_every_figure_on_one_withdrawn_decomposition_quotes_the_same_withdrawal() -> None:
    first = CLAIM + 'retracted: {section: "banner", figure: "does not", decomposition: "§4(b)/(c)"}\n'
    second = (CLAIM.replace("id: root", "id: other")
              + 'retracted: {section: "§7", figure: "is WRONG", decomposition: "§4(b)/(c)"}\n')
    from claimcheck.claims.premises import dependency_problems

    claims = load_claims_text("---\n".join([first, second]), "c.yaml")
    (problem,) = dependency_problems(claims)
    assert str(problem).startswith("c.yaml:17: retracted: the §4(b)/(c) decomposition is withdrawn as "
                                   "\u201cdoes not\u201d (banner) at c.yaml:1")
    assert dependency_problems(claims[:1]) == []


def test_the_suite_marks_every_figure_on_the_withdrawn_4bc_decomposition() -> None:
    from pathlib import Path

    from claimcheck.claims.loader import load_claims

    claims = {c.id: c for c in load_claims([Path(__file__).resolve().parents[2] / "claims"])}
    withdrawn = {cid for cid, c in claims.items() if c.retracted and c.retracted.decomposition == "§4(b)/(c)"}
    assert {"gpu-overhead-above-floor", "e4b-dispatch-count-brackets-overhead",
            "e4b-dispatch-count-brackets-overhead-high"} <= withdrawn
    # §7: "§6 items 2 (26B expert reads), 3 (e4b dispatch count) … are UNAFFECTED": §6.2 stands
    assert claims["metal-kernel-dispatch-eats-prize"].retracted is None
    assert claims["e4b-compiled-gpu-cost"].retracted.decomposition == "§4(d) host/GPU"
    for cid in withdrawn | {"e4b-compiled-gpu-cost"}:
        assert "withdrawn figure" in (claims[cid].notes or ""), f"{cid}: its notes must say it reads a withdrawn figure"
