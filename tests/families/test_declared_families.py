"""Declared multiplicity families: the `family:` field, its default (the claim file), and Holm within each family."""

from __future__ import annotations

from pathlib import Path

import pytest

from claimcheck.claim import Check, Claim, ProbeSpec, Scope, Source
from claimcheck.claims.families import family_of
from claimcheck.claims.loader import load_claims_text
from claimcheck.engine.adjudicate import correct_family
from claimcheck.engine.families import FamilySlot, stop_levels
from claimcheck.engine.result import ItemResult
from claimcheck.errors import ClaimError
from claimcheck.stats import Decision, FamilyMember, family_lines
from claimcheck.verdict import Verdict

H, R, I = Verdict.HOLDS, Verdict.REFUTED, Verdict.INCONCLUSIVE

CLAIM = """\
id: {id}
title: t
statement: s
source: {{doc: d.md, section: "1", figure: f}}
scope: {{kind: portable}}
probe: {{name: p}}
check: {{rule: at_least, output: x, threshold: 0.0}}
{extra}
"""


def test_a_declared_family_is_read_and_kept_in_the_record() -> None:
    claim = load_claims_text(CLAIM.format(id="c", extra="family: gemm kernels"), "claims/a.yaml")[0]
    assert claim.family == "gemm kernels"
    assert family_of(claim, [Path("claims")]) == "gemm kernels"
    assert Claim.from_record(claim.to_record()).family == "gemm kernels"


def test_without_a_declaration_the_family_is_the_file_relative_to_its_claims_folder(tmp_path: Path) -> None:
    path = tmp_path / "claims" / "memory" / "bandwidth.yaml"
    claim = load_claims_text(CLAIM.format(id="c", extra=""), str(path))[0]
    assert claim.family is None
    assert family_of(claim, [tmp_path / "claims", tmp_path]) == "memory/bandwidth.yaml"
    outside = load_claims_text(CLAIM.format(id="c", extra=""), str(tmp_path / "extra.yaml"))[0]
    assert family_of(outside, [tmp_path / "claims", tmp_path]) == "extra.yaml"  # the project root is the last root


@pytest.mark.parametrize("value, found", [("3", "number 3"), ('""', "text ''"), ("[a, b]", "a list"),
                                          ("{a: 1}", "a mapping"), ("", "nothing")])
def test_a_family_that_is_not_a_non_empty_name_is_one_line_at_its_field(value: str, found: str) -> None:
    text = CLAIM.format(id="c", extra=f"family: {value}")
    with pytest.raises(ClaimError) as caught:
        load_claims_text(text, "claims/a.yaml")
    line = str(caught.value)
    assert "\n" not in line and line.startswith("claims/a.yaml:8: family: ") and "non-empty text" in line, line
    assert found in line


def _result(item_id: str, verdict: Verdict, p: float, alpha: float = 0.05, n: int = 30) -> ItemResult:
    claim = Claim(item_id, "t", "s", Source("d.md", "1", "f"), Scope(), ProbeSpec("p"),
                  Check("at_least", output="x", params={"threshold": 0.0}, alpha=alpha))
    pvalue, hold = (p, 1.0) if verdict is R else (1.0, p)
    decision = Decision("at_least", 0.0, 0.0, 0.0, 0.9, n, verdict, "raw reason", pvalue, alpha, hold_pvalue=hold)
    return ItemResult(claim, item_id, {}, verdict, "raw reason", decision)


def test_each_family_is_adjusted_on_its_own() -> None:
    """0.006 among 10 members is undone (0.05 / 10 = 0.005); in a family of 2 it survives (0.025)."""
    results = [_result("big-0", R, 0.006), _result("small-0", R, 0.006)]
    collected = {**{f"big-{i}": 0.05 for i in range(10)}, "small-0": 0.05, "small-1": 0.05}
    families = {item: item.split("-")[0] for item in collected}
    out = correct_family(results, "holm", collected=collected, families=families)
    assert [r.verdict for r in out] == [I, R]
    assert "Holm over 10 items of family big (9 without a decision count at p = 1)" in out[0].reason
    assert "Holm over 2 items of family small (1 without a decision count at p = 1)" in out[1].reason
    one = correct_family(results, "holm", collected=collected)  # no families given: one family of 12, as before
    assert [r.verdict for r in one] == [I, I] and "over 12 items" in one[1].reason


def test_a_lax_member_loosens_no_other_member_of_its_family() -> None:
    """A member at alpha 0.25 raises the family's mean level, but the others are still first tested at 0.05 / m."""
    strict = _result("f-0", R, 0.0052)
    collected = {f"f-{i}": 0.05 for i in range(10)}
    families = dict.fromkeys(collected, "f")
    alone = correct_family([strict], "holm", collected=collected, families=families)[0]
    lax = {**collected, "f-9": 0.25}  # one absent member made lax: level (9 * 0.05 + 0.25) / 10 = 0.07
    with_lax = correct_family([strict, _result("f-9", R, 0.2, alpha=0.25)], "holm", collected=lax,
                              families=families)
    assert alone.verdict is I and with_lax[0].verdict is I  # 0.0052 > 0.05 / 10 either way
    assert with_lax[1].verdict is I  # the lax member's own refutation: 0.2 > 0.25 / 10
    step = with_lax[0].adjustment("family")
    assert step is not None and step.adjusted_pvalue == pytest.approx(0.0052 * 0.07 / 0.05 * 10)  # 0.0728 > 0.07
    elsewhere = {**collected, "g-0": 0.25}  # a lax member in another family changes nothing here
    moved = correct_family([strict], "holm", collected=elsewhere, families={**families, "g-0": "g"})[0]
    assert moved.verdict is I and moved.adjustment("family").adjusted_pvalue == alone.adjustment("family").adjusted_pvalue


def test_the_stopping_level_is_the_first_holm_step_of_the_items_family() -> None:
    slots = {**{f"a-{i}": FamilySlot("a", 0.05) for i in range(4)}, "a-lax": FamilySlot("a", 0.25),
             "b-0": FamilySlot("b", 0.01)}
    levels = stop_levels(slots, "holm")
    assert levels["a-0"] == pytest.approx(0.05 / 5) and levels["a-lax"] == pytest.approx(0.25 / 5)
    assert levels["b-0"] == pytest.approx(0.01)  # alone in its family: its own alpha
    given = stop_levels(slots, "holm", level=0.05)  # --claims-family-alpha: alpha_i x level / sum of alphas
    assert given["a-0"] == pytest.approx(0.05 * 0.05 / 0.45)
    assert stop_levels(slots, "none")["a-0"] == 0.05


def test_few_families_get_a_line_each_and_many_only_those_with_undone_decisions() -> None:
    few = family_lines({"a.yaml": [FamilyMember(R, 0.001, 1.0, 0.05), FamilyMember.absent(0.05)],
                        "b.yaml": [FamilyMember(H, 1.0, 0.04, 0.05), FamilyMember.absent(0.05)]})
    assert few[0].startswith("family a.yaml: Holm over 2 items (1 decided), FWER level 0.05")
    assert few[1].startswith("family b.yaml: Holm over 2 items (1 decided, 1 undone), FWER level 0.05")
    assert few[2].startswith("suite-wide FDR") and len(few) == 3
    many = {f"f{i:02d}.yaml": [FamilyMember(H, 1.0, 0.001, 0.05), FamilyMember.absent(0.05)] for i in range(60)}
    many["f07.yaml"] = [FamilyMember(H, 1.0, 0.04, 0.05), FamilyMember.absent(0.05)]
    lines = family_lines(many)
    assert len(lines) == 3, lines
    assert lines[0].startswith("family f07.yaml: Holm over 2 items (1 decided, 1 undone)")
    assert lines[1] == ("families: 60 (Holm within each; 120 items, 60 decided, 1 undone in 1 families); "
                        "59 not listed (nothing undone in them)")
    assert lines[2].startswith("suite-wide FDR (Benjamini–Hochberg over 120 items")
