"""Claims that depend on claims: a failed premise makes its dependants stale."""

from __future__ import annotations

import pytest

from claimcheck.engine.adjudicate import stale_chains
from claimcheck.claim import Check, Claim, ProbeSpec, Scope, Source
from claimcheck.engine.result import ItemResult
from claimcheck.verdict import Verdict

BASE = """\
id: {id}
title: t
statement: s
source: {{doc: d.md, section: "1", figure: "f"}}
scope: {{kind: portable, backend: any}}
probe: {{name: constant, params: {{value: {value}}}}}
check: {{rule: exact, output: value, expected: 1, tolerance: 0.01}}
"""


def _claim(claim_id: str, value: float, depends_on: list[str] | None = None) -> str:
    text = BASE.format(id=claim_id, value=value)
    if depends_on:
        text += f"depends_on: [{', '.join(depends_on)}]\n"
    return text


def _records(verdicts: dict[str, str]) -> list[ItemResult]:
    def claim(claim_id: str) -> Claim:
        return Claim(claim_id, "t", "s", Source("d.md", "1", "f"), Scope(), ProbeSpec("constant"), Check("exact"))

    return [ItemResult(claim(cid), cid, {}, Verdict(v), "") for cid, v in verdicts.items()]


def test_three_level_chain_from_a_refuted_root() -> None:
    premises = {"child": ("root",), "grandchild": ("child",), "other": ()}
    chains = stale_chains(_records({"root": "refuted", "child": "holds", "grandchild": "holds", "other": "holds"}), premises)
    assert chains == {"child": ["root (refuted)", "child"], "grandchild": ["root (refuted)", "child", "grandchild"]}


def test_premise_that_holds_makes_nothing_stale() -> None:
    premises = {"child": ("root",)}
    assert stale_chains(_records({"root": "holds", "child": "holds"}), premises) == {}


def test_premise_verdict_from_an_earlier_run_counts() -> None:
    chains = stale_chains(_records({"child": "holds"}), {"child": ("root",)}, elsewhere={"root": Verdict.INCONCLUSIVE})
    assert chains == {"child": ["root (inconclusive)", "child"]}


def test_stale_in_summary_and_cascade_fail(demo_project: pytest.Pytester) -> None:
    (demo_project.path / "claims" / "chain.yaml").write_text("---\n".join([
        _claim("root", 2.0),
        _claim("child", 1.0, ["root"]),
        _claim("grandchild", 1.0, ["child"]),
        _claim("unrelated", 1.0),
    ]))
    report = demo_project.runpytest("claims", "--claims-no-store")
    report.stdout.fnmatch_lines(["*1 failed, 1 passed*2 stale*"])
    report.stdout.fnmatch_lines(["stale: grandchild <- root (refuted) -> child -> grandchild"])
    assert report.ret == pytest.ExitCode.TESTS_FAILED
    failing = demo_project.runpytest("claims", "--claims-no-store", "--claims-cascade=fail")
    failing.stdout.fnmatch_lines(["*3 failed, 1 passed*"])


def test_cascade_alone_fails_the_run_only_when_asked(demo_project: pytest.Pytester) -> None:
    (demo_project.path / "claims" / "chain.yaml").write_text("---\n".join([
        _claim("root", 1.0) .replace("rule: exact, output: value, expected: 1, tolerance: 0.01", "rule: exact, output: value, expected: 1, tolerance: 0.01"),
        _claim("child", 1.0, ["root"]),
    ]))
    (demo_project.path / "claims" / "root.yaml").write_text("")
    ok = demo_project.runpytest("claims", "--claims-no-store", "--claims-cascade=fail")
    assert ok.ret == pytest.ExitCode.OK
