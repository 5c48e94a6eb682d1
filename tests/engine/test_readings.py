"""A figure the source derives from several printed inputs: each input is a reading, and a figure
that holds for some readings and not others is `inconsistent` (the source contradicts itself), a
verdict of its own that is neither a pass nor a refutation."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from claimcheck.claim import Check, Claim, ProbeSpec, Scope, Source
from claimcheck.engine.expectations import Agreement, compare
from claimcheck.report import banner
from claimcheck.engine.result import ItemResult
from claimcheck.rules import decide_check
from claimcheck.verdict import Verdict, worst

CHECK = Check("exact", output="pct", over="reading", unit="%", params={"expected": 17.0, "tolerance": 0.8})


def _decide(values: dict[str, float]):
    groups = [(f"reading={name}", [value]) for name, value in values.items()]
    return decide_check(CHECK, groups, 0.05, deterministic=True)


def test_some_readings_agree_is_inconsistent_naming_both_sides() -> None:
    decision = _decide({"@600 row": 19.05, "@8k row": 16.43, "§7 baseline": 17.35})
    assert decision.verdict is Verdict.INCONSISTENT
    assert "holds for reading @8k row (16.43%), §7 baseline (17.35%), not for @600 row (19.05%)" in decision.reason
    assert [r["holds"] for r in decision.details["readings"]] == [False, True, True]


def test_every_reading_agrees_holds_and_none_refutes() -> None:
    assert _decide({"a": 16.5, "b": 17.7}).verdict is Verdict.HOLDS
    refuted = _decide({"a": 19.05, "b": 15.0})
    assert refuted.verdict is Verdict.REFUTED
    assert "follows from none of its readings" in refuted.reason


def test_one_reading_just_outside_the_tolerance_makes_it_inconsistent() -> None:
    assert _decide({"a": 17.0, "b": 17.81}).verdict is Verdict.INCONSISTENT
    assert _decide({"a": 17.0, "b": 17.79}).verdict is Verdict.HOLDS


def test_inconsistent_ranks_between_refuted_and_stale() -> None:
    assert worst([Verdict.INCONSISTENT, Verdict.REFUTED]) is Verdict.REFUTED
    assert worst([Verdict.INCONSISTENT, Verdict.STALE, Verdict.HOLDS]) is Verdict.INCONSISTENT


@pytest.mark.parametrize("verdict, expected, agreement", [
    (Verdict.INCONSISTENT, Verdict.INCONSISTENT, Agreement.AS_EXPECTED),
    (Verdict.INCONSISTENT, Verdict.REFUTED, Agreement.UNDECIDED),
    (Verdict.INCONSISTENT, Verdict.HOLDS, Agreement.UNDECIDED),
    (Verdict.INCONSISTENT, None, Agreement.NOT_COMPARED),
    (Verdict.HOLDS, Verdict.INCONSISTENT, Agreement.NEWLY_DECIDED),
    (Verdict.REFUTED, Verdict.INCONSISTENT, Agreement.NEWLY_DECIDED),
])
def test_the_lock_treats_inconsistent_like_an_unsettled_verdict(verdict, expected, agreement) -> None:
    assert compare(verdict, expected) is agreement


def test_the_correction_names_each_reading() -> None:
    claim = Claim("c", "t", "s", Source("d.md", "§6", "17%"), Scope(), ProbeSpec("readings"), CHECK)
    decision = _decide({"@600 row": 19.05, "@8k row": 16.43})
    item = ItemResult(claim, "c", {}, decision.verdict, decision.reason, decision)
    assert banner.readings_sentence(item) == "holds for reading @8k row (16.43%), not for @600 row (19.05%)"


def test_a_curve_refutation_names_the_model_that_differs() -> None:
    claim = Claim("c", "t", "s", Source("d.md", "§3", "f"), Scope(), ProbeSpec("p"), Check("at_least"))
    item = ItemResult(claim, "c", {}, Verdict.REFUTED, "", info={"model": "smollm2-135m-instruct", "variant": "fp32"})
    setup, model_named = banner.measured_setup([item], {"backend": "cpu", "device": "AMD EPYC"})
    assert model_named and setup == "model smollm2-135m-instruct (fp32) (on the cpu backend, AMD EPYC)"
    pinned = ItemResult(Claim("c", "t", "s", Source("d.md", "§3", "f"), Scope(kind="as-stated", model="smollm2*"),
                              ProbeSpec("p"), Check("at_least")), "c", {}, Verdict.REFUTED, "",
                        info={"model": "smollm2-135m-instruct"})
    setup, model_named = banner.measured_setup([pinned], {"backend": "cpu"})
    assert not model_named and setup == "this machine (cpu backend) with model smollm2-135m-instruct"


READINGS_CLAIM = """\
id: {id}
title: t
statement: s
source: {{doc: d.md, section: "1", figure: "f"}}
scope: {{kind: portable, backend: any}}
probe: {{name: constant, params: {{value: {values}}}}}
check: {{rule: exact, output: value, over: value, expected: 1, tolerance: 0.01}}
"""


def test_an_inconsistent_item_passes_the_run_unless_strict(demo_project: pytest.Pytester) -> None:
    (demo_project.path / "claims" / "r.yaml").write_text("---\n".join([
        READINGS_CLAIM.format(id="split", values="[1.0, 1.5]"),
        READINGS_CLAIM.format(id="agree", values="[1.0, 1.005]"),
    ]))
    junit = demo_project.path / "junit.xml"
    lenient = demo_project.runpytest("claims", "--claims-no-store", f"--junitxml={junit}")
    lenient.stdout.fnmatch_lines(["*1 passed*1 inconsistent*"])
    lenient.stdout.fnmatch_lines(["inconsistent: split: inconsistent within the source: *holds for reading 1.0 (1)*not for 1.5 (1.5)*"])
    assert lenient.ret == pytest.ExitCode.OK
    verdicts = {case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}["verdict"]
                for case in ET.parse(junit).getroot().iter("testcase")}
    assert verdicts == {"split": "inconsistent", "agree": "holds"}
    assert not any(case.find("failure") is not None for case in ET.parse(junit).getroot().iter("testcase"))
    strict = demo_project.runpytest("claims", "--claims-no-store", "--claims-strict")
    strict.stdout.fnmatch_lines(["*1 failed, 1 passed*"])
    assert strict.ret == pytest.ExitCode.TESTS_FAILED


def _spans(values: dict[str, list[float]], expected: float = 17.0, tolerance: float = 0.5):
    check = Check("exact", output="pct", over="reading", unit="%",
                  params={"expected": expected, "tolerance": tolerance, "spans": True})
    return decide_check(check, [(f"reading={k}", v) for k, v in values.items()], 0.05, deterministic=True)


def test_a_reading_is_an_interval_that_meets_the_band() -> None:
    decision = _spans({"a": [17.6, 17.4, 17.8], "b": [16.9]})
    assert decision.verdict is Verdict.HOLDS, "17.4-17.8 meets 16.5-17.5"
    assert "a (17.6%, 17.4–17.8)" in decision.reason
    assert decision.details["readings"][0] == {"reading": "a", "value": 17.6, "holds": True, "low": 17.4, "high": 17.8}


def test_mixed_readings_that_overlap_are_one_quantity_the_figure_misses() -> None:
    decision = _spans({"edge": [17.3, 17.0, 17.6], "past": [17.7, 17.55, 17.9]})
    assert decision.verdict is Verdict.REFUTED, "the readings share 17.55-17.6, outside the band"
    assert "agree with each other within their printed precision" in decision.reason


def test_mixed_readings_disjoint_beyond_their_precision_are_inconsistent() -> None:
    decision = _spans({"@600": [19.05, 18.5, 19.6], "@8k": [17.2, 16.9, 17.5]})
    assert decision.verdict is Verdict.INCONSISTENT
    assert "holds for reading @8k (17.2%, 16.9–17.5), not for @600 (19.05%, 18.5–19.6)" in decision.reason


def test_one_reading_of_a_range_end_decides_on_its_span() -> None:
    check = Check("exact", output="total", unit="ms", params={"expected": 5.0, "tolerance": 0.5, "spans": True})
    decision = decide_check(check, [("", [5.6, 5.5, 5.7])], 0.05, deterministic=True)
    assert decision.verdict is Verdict.HOLDS, "5.5-5.7 meets 4.5-5.5 at its edge, whatever the float noise"
    assert decision.details["span"] == [5.5, 5.7]
    missed = decide_check(Check("exact", output="total", params={"expected": 7.0, "tolerance": 0.1, "spans": True}),
                          [("", [7.6, 7.5, 7.7])], 0.05, deterministic=True)
    assert missed.verdict is Verdict.REFUTED and "anywhere within their printed precision" in missed.reason


def test_without_spans_every_value_is_the_figure_and_the_worst_decides() -> None:
    point = Check("exact", output="v", params={"expected": 0.0, "tolerance": 0.0})
    assert decide_check(point, [("", [5.0, 0.0])], 0.05, deterministic=True).verdict is Verdict.REFUTED
    swept = Check("exact", output="v", over="r", params={"expected": 1.0, "tolerance": 0.01})
    decision = decide_check(swept, [("r=a", [1.0, 1.5]), ("r=b", [1.0])], 0.05, deterministic=True)
    assert decision.verdict is Verdict.INCONSISTENT and "not for a (1.5)" in decision.reason


def test_the_readings_probe_spans_half_a_unit_of_each_printed_input() -> None:
    import inspect
    from pathlib import Path

    from claimcheck.probing.registry import ProbeContext, get_probe, load_probe_modules

    # this checkout's probes/, read through the registry: an earlier test may have left another project's
    # `probes` package in sys.modules
    load_probe_modules(str(Path(__file__).resolve().parents[2]))
    readings = get_probe("readings").function
    printed = inspect.unwrap(readings).__globals__["printed"]

    assert printed(2.58) == (2.58, 0.005) and printed("2.570") == (2.57, 0.0005) and printed(240) == (240.0, 0.0)
    assert printed("21.5–22.3") == pytest.approx((21.9, 0.45))
    ctx = ProbeContext(n=1)
    out = readings(ctx, of="sum_of", reading="r", inputs={"r": {"terms": [18.9, -13.3]}})
    assert out["total"] == pytest.approx([5.6, 5.5, 5.7])
    exact = readings(ctx, of="ratio_of", reading="r", inputs={"r": {"numerator": 3345408, "denominator": 1048576}})
    assert exact["ratio"] == pytest.approx([3345408 / 1048576]), "integers are exact: a point"
    scaled = readings(ctx, of="product_of", reading="r", inputs={"r": {"factors": [3, 30, 60], "scale": 0.001}})
    assert scaled["product"] == pytest.approx([5.4]), "a unit conversion is no printed figure"
    assert ctx.artifacts["reading_spans"]["r"] == {}
