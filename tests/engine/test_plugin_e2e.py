"""End-to-end runs of the plugin through real pytest sessions (pytester)."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import DEMO


def _copy_demo_claims(project: pytest.Pytester) -> None:
    shutil.copy(DEMO / "claims" / "rules.yaml", project.path / "claims" / "rules.yaml")


def test_grid_items_have_readable_ids(demo_project: pytest.Pytester) -> None:
    _copy_demo_claims(demo_project)
    result = demo_project.runpytest("claims", "--collect-only", "-q", "--claims-no-store")
    result.stdout.fnmatch_lines([
        "claims/rules.yaml::demo-ratio-grid[[]mean_a=90[]]",
        "claims/rules.yaml::demo-ratio-grid[[]mean_a=50[]]",
        "claims/rules.yaml::demo-exact-holds",
    ])


def test_every_verdict_in_one_run_with_summary_line(demo_project: pytest.Pytester) -> None:
    _copy_demo_claims(demo_project)
    junit = demo_project.path / "junit.xml"
    result = demo_project.runpytest("claims", "-rs", "--claims-no-store", "--claims-family=none",
                                    f"--junitxml={junit}")
    # holds: at-least, equivalent, ratio[90], ordering, zero-rate, monotone, exact;
    # refuted: at-most, ratio[50]; inconclusive: the under-budgeted claim; n/a: metal-only.
    result.assert_outcomes(passed=7, failed=2, skipped=1)
    result.stdout.fnmatch_lines(["*2 failed, 7 passed, 1 skipped*1 inconclusive*"])
    result.stdout.fnmatch_lines(["*not applicable: as-stated claim scoped to backend `metal`*"])
    result.stdout.fnmatch_lines(["REFUTED: demo-at-most-refuted*", "*measured:*CI, n=*"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    cases = ET.parse(junit).getroot().iter("testcase")
    properties = {p.get("name") for case in cases for p in case.iter("property")}
    assert {"machine.backend", "machine.mlx", "verdict", "raw_verdict", "estimate", "n"} <= properties
    assert "claimcheck" not in properties, "the full record lives in the store, not in the XML"


def test_strict_turns_inconclusive_into_failure(demo_project: pytest.Pytester) -> None:
    (demo_project.path / "claims" / "one.yaml").write_text((DEMO / "claims" / "rules.yaml").read_text().split("---\n")[8])
    lenient = demo_project.runpytest("claims", "--claims-no-store")
    lenient.stdout.fnmatch_lines(["*1 inconclusive*"])
    assert lenient.ret == pytest.ExitCode.OK
    strict = demo_project.runpytest("claims", "--claims-no-store", "--claims-strict")
    assert strict.ret == pytest.ExitCode.TESTS_FAILED


CLAIM = """\
id: bad-claim
title: t
statement: s
source: {doc: d.md, section: "1", figure: "f"}
scope: {kind: portable, backend: any}
probe: {name: normal, params: {mean: 1}}
check: {rule: at_least, output: x, threshold: 0}
"""


@pytest.mark.parametrize(
    ("mutation", "expected"),
    [
        (lambda t: t + "title: again\n", "*claims/bad.yaml:8: title: duplicate key*"),
        (lambda t: t.replace("title: t", "titel: t"), "*claims/bad.yaml:2: titel: unknown key `titel`; did you mean `title`?*"),
        (lambda t: t.replace("threshold: 0", "threshold: high"), "*claims/bad.yaml:7: check.threshold: expected a number, got text 'high'*"),
        (lambda t: t.replace("name: normal", "name: nromal"), "*claims/bad.yaml:*: probe.name: unknown probe `nromal` (did you mean `normal`?); known probes:*"),
        (lambda t: t.replace("kind: portable", "kind: portabel"), "*check* or *scope.kind: expected one of as-stated, portable, got 'portabel' (did you mean `portable`?)*"),
        (lambda t: t.replace("{mean: 1}", "{mean: 1, sigma: 2}"), "*probe.params.sigma: probe `normal` has no param `sigma`*"),
        (lambda t: t + "extra: [unclosed\n", "*claims/bad.yaml:9: malformed YAML*"),
    ],
    ids=["duplicate-key", "unknown-key", "wrong-type", "unknown-probe", "bad-choice", "unknown-param", "bad-yaml"],
)
def test_malformed_claim_is_one_line_collection_error(demo_project: pytest.Pytester, mutation, expected: str) -> None:
    (demo_project.path / "claims" / "bad.yaml").write_text(mutation(CLAIM))
    result = demo_project.runpytest("claims", "--claims-no-store")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # collection problems stop the session
    pattern = expected.split(" or ")[-1] if " or " in expected else expected
    result.stdout.fnmatch_lines([pattern])
    assert "Traceback" not in result.stdout.str()
    error_block = result.stdout.str().split("ERROR collecting")[1].split("====")[0]
    assert len([line for line in error_block.splitlines()[1:] if line.strip() and not line.startswith("_")]) == 1


def test_probe_failure_is_error_verdict_and_run_continues(demo_project: pytest.Pytester) -> None:
    text = CLAIM.replace("bad-claim", "broken-claim").replace("name: normal, params: {mean: 1}", "name: broken, params: {mode: raise}")
    good = CLAIM.replace("bad-claim", "good-claim").replace("{mean: 1}", "{mean: 5}")
    (demo_project.path / "claims" / "mixed.yaml").write_text(text + "---\n" + good)
    result = demo_project.runpytest("claims", "--claims-no-store")
    result.stdout.fnmatch_lines(["*1 passed*1 error*"])
    result.stdout.fnmatch_lines(["*why:      RuntimeError: device lost"])
    assert not any(line.strip().startswith("second line") for line in result.stdout.lines)


def test_exclusive_items_never_overlap_under_xdist(demo_project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    demo_project.makepyfile(**{"probes/sleepy.py": '''
import os, random, time, json
from claimcheck.api import probe, Output, ProbeContext

@probe("sleepy", outputs={"x": Output("")})
def sleepy(ctx: ProbeContext, *, tag: int) -> dict:
    start = time.time(); time.sleep(0.3); end = time.time()
    with open(os.environ["SPANS"], "a") as f:
        f.write(json.dumps([tag, start, end]) + "\\n")
    rng = random.Random(tag)  # independent, seeded values: this test is about scheduling, not noise
    return {"x": [1.0 + 0.001 * rng.random() for _ in range(ctx.n)]}
'''})
    claims = []
    for tag in range(6):
        claims.append(CLAIM.replace("bad-claim", f"sleepy-{tag}").replace("name: normal, params: {mean: 1}", f"name: sleepy, params: {{tag: {tag}}}")
                      + "budget: {min_samples: 6, max_samples: 6, looks: 1, exclusive: true}\n")  # six decide a median
    (demo_project.path / "claims" / "sleepy.yaml").write_text("---\n".join(claims))
    spans = demo_project.path / "spans.jsonl"
    monkeypatch.setenv("SPANS", str(spans))
    result = demo_project.runpytest_subprocess("claims", "-n", "2", "--claims-no-store", "--claims-cv-bound=10",
                                               "--claims-family=none")
    result.assert_outcomes(passed=6)
    import json

    intervals = sorted(json.loads(line)[1:] for line in spans.read_text().splitlines())
    assert len(intervals) == 6
    for (_, end), (start, _) in zip(intervals, intervals[1:]):
        assert start >= end, "two exclusive items ran at the same time"


def test_store_and_reports_agree_with_the_pytest_summary(demo_project: pytest.Pytester) -> None:
    import json

    _copy_demo_claims(demo_project)
    result = demo_project.runpytest("claims", "--claims-family=none")
    outcomes = result.parseoutcomes()
    reports = demo_project.path / ".claimcheck" / "reports"  # ignored by git: a run writes no tracked file
    summary = json.loads((reports / "index.json").read_text())
    counts = summary["counts"]
    assert counts["holds"] == outcomes["passed"]
    assert counts["refuted"] == outcomes["failed"]
    assert counts["not-applicable"] == outcomes["skipped"]
    assert counts["inconclusive"] == outcomes["inconclusive"]
    refuted = {"demo-at-most-refuted", "demo-ratio-grid"}
    assert {p.stem for p in (reports / "corrections").glob("*.md")} == refuted
    assert (reports / "index.html").read_text().count("demo-") >= 10
    assert (reports / "forest" / "claims.png").read_bytes()[:4] == b"\x89PNG"
    assert (demo_project.path / "reports" / "claimcheck.sqlite").exists()
    assert not (demo_project.path / "reports" / "index.json").exists(), "only `claimcheck publish` writes reports/"


def test_expensive_results_are_cached_and_fresh_recomputes(demo_project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """A probe's cached result is reused by the next run; --claims-fresh computes it again, once per run."""
    demo_project.makepyfile(**{"probes/costly.py": '''
import os
from claimcheck.engine.cache import cached
from claimcheck.probing.registry import probe, Output, ProbeContext

@probe("costly", outputs={"x": Output("")}, deterministic=True)
def costly(ctx: ProbeContext, *, size: int) -> dict:
    def compute():
        with open(os.environ["COMPUTED"], "a") as log:
            log.write("computed\\n")
        return [float(size)]
    value, hit = cached({"probe": "costly", "params": {"size": size}}, compute, fresh=ctx.fresh,
                        cache_dir=os.environ["CACHE"], environment={})
    ctx.info["cache_hit"] = hit
    return {"x": value}
'''})
    costly = (CLAIM.replace("name: normal, params: {mean: 1}", "name: costly, params: {size: 3}")
              .replace("rule: at_least, output: x, threshold: 0", "rule: exact, output: x, expected: 3, tolerance: 0"))
    # Two claims share one expensive result: a run computes it once, fresh or not.
    (demo_project.path / "claims" / "c.yaml").write_text(
        costly.replace("bad-claim", "costly-claim") + "---\n" + costly.replace("bad-claim", "costly-twin"))
    computed = demo_project.path / "computed.log"
    monkeypatch.setenv("COMPUTED", str(computed))
    monkeypatch.setenv("CACHE", str(demo_project.path / "cache"))
    for args, runs in (((), 1), ((), 1), (("--claims-fresh",), 2), (("--claims-fresh",), 3)):
        demo_project.runpytest("claims", "--claims-no-store", *args).assert_outcomes(passed=2)
        assert computed.read_text().count("computed") == runs
