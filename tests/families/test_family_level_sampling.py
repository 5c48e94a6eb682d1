"""Items sample to the level their family tests them at, so a clear decision survives Holm.

An item of a family of m members is first tested by Holm at ``alpha / m``. Stopping at the first
look decisive at its own alpha leaves a p-value Holm may undo; stopping only once the sequential
p-value reaches ``alpha / m`` (``stop_alpha``) leaves one that survives whatever the others measure.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from claimcheck.claims.loader import load_claims_text
from claimcheck.engine.adjudicate import correct_family
from claimcheck.engine.runner import RunOptions, run_claim_item
from claimcheck.probing.registry import Output, ProbeContext, RegisteredProbe
from claimcheck.stats import SequentialPlan
from claimcheck.verdict import Verdict

CLAIM = """
id: clear
title: a mean clearly above its threshold
statement: the mean is above 0
source: {doc: d.md, section: "1", figure: f}
scope: {kind: portable}
probe: {name: shifted}
check: {rule: at_least, output: x, threshold: 0.0, statistic: mean}
budget: {min_samples: 8, max_samples: 30, looks: 3, max_seconds: 60}
"""
MEMBERS = 10  # the item and nine members that did not run (p = 1)
SEEDS = 40


def _shifted(ctx: ProbeContext, **params: object) -> dict[str, list[float]]:
    return {"x": [ctx.rng.gauss(1.2, 1.0) for _ in range(ctx.n)]}  # 1.2 SD above: t ~ 3.4 at n = 8


PROBE = RegisteredProbe("shifted", _shifted, {"x": Output("ms")})


def _runs(stop_alpha: float | None) -> Counter[tuple[str, int, str]]:
    claim = load_claims_text(CLAIM, "family.yaml")[0]
    collected = {"clear": 0.05, **{f"other-{i}": 0.05 for i in range(MEMBERS - 1)}}
    seen: Counter[tuple[str, int, str]] = Counter()
    for seed in range(SEEDS):
        result = run_claim_item(claim, "clear", {}, PROBE, options=RunOptions(seed=seed), machine={"backend": "cpu"},
                                stop_alpha=stop_alpha)
        after = correct_family([result], "holm", collected=collected)[0]
        assert result.decision is not None
        seen[(result.verdict.value, result.decision.n, after.verdict.value)] += 1
    return seen


def test_an_item_sampled_to_its_family_level_survives_holm_where_its_own_alpha_was_undone() -> None:
    own = _runs(None)
    family = _runs(0.05 / MEMBERS)
    undone_at_own = sum(count for (raw, _, after), count in own.items() if raw == "holds" and after != "holds")
    assert undone_at_own >= SEEDS // 2, own  # stopped at n = 8 on p ~ 0.01, which Holm over 10 undoes
    assert all(raw == "holds" for raw, _, _ in family), family
    assert all(after == "holds" for _, _, after in family), family  # every hold survives Holm over 10
    assert sum(n * c for (_, n, _), c in family.items()) > sum(n * c for (_, n, _), c in own.items())


def test_the_stopping_level_is_recorded_and_bounded_by_the_plans_alpha() -> None:
    claim = load_claims_text(CLAIM, "family.yaml")[0]
    result = run_claim_item(claim, "clear", {}, PROBE, options=RunOptions(seed=3), machine={"backend": "cpu"},
                            stop_alpha=0.005)
    assert result.decision is not None
    record = result.decision.details["sequential"]
    assert record["stop_alpha"] == 0.005 and result.decision.alpha == 0.05  # the decision keeps its own alpha
    assert result.decision.hold_pvalue <= 0.005 or record["stopped"] != "decided" or record["look"] == 3
    with pytest.raises(ValueError, match="stop_alpha"):
        SequentialPlan(0.05, 8, 30, 3, stop_alpha=0.1)


DEMO_A = """\
id: fam-a-{n}
title: a mean above its threshold
statement: x >= 10
source: {{doc: demo.md, section: "1", figure: "x >= 10"}}
scope: {{kind: portable, backend: any}}
probe: {{name: normal, params: {{mean: 14, sd: 1}}}}
check: {{rule: at_least, output: x, threshold: 10}}
budget: {{min_samples: 10, max_samples: 40, looks: 3}}
{extra}"""


def _write(path, documents: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\n".join(documents))


def test_deselected_items_keep_their_family_and_declared_families_span_files(demo_project) -> None:
    """-k and a path argument run one item; every family keeps its members, and the item samples to its level."""
    claims = demo_project.path / "claims"
    _write(claims / "a.yaml", [DEMO_A.format(n=1, extra=""), DEMO_A.format(n=2, extra=""),
                               DEMO_A.format(n=3, extra="")])
    _write(claims / "sub" / "b.yaml", [DEMO_A.format(n=4, extra="family: shared\n"), DEMO_A.format(n=5, extra="")])
    _write(claims / "c.yaml", [DEMO_A.format(n=6, extra="family: shared\n")])
    run = demo_project.runpytest("claims/a.yaml", "-k", "fam-a-1", "--claims-no-store")
    run.stdout.fnmatch_lines([
        "family a.yaml: Holm over 3 items (1 decided), FWER level 0.05 each way "
        "(each item first tested at its own alpha / 3)",
        "family shared: Holm over 2 items (0 decided), FWER level 0.05 *",
        "family sub/b.yaml: Holm over 1 items (0 decided), FWER level 0.05 *",
        "suite-wide FDR (Benjamini–Hochberg over 6 items, q = 0.05): 0 refutations and 1 holds stand",
    ])
    recorded = demo_project.inline_run("claims/a.yaml", "-k", "fam-a-1", "--claims-no-store")
    reports = [r for r in recorded.getreports("pytest_runtest_logreport") if r.when == "call"]
    record = next(json.loads(value) for r in reports for name, value in r.user_properties if name == "claimcheck")
    assert record["item_id"] == "fam-a-1" and record["verdict"] == Verdict.HOLDS.value
    assert record["decision"]["details"]["sequential"]["stop_alpha"] == pytest.approx(0.05 / 3)


SAMPLED_ON = [0.55, 1.03, 2.86, 1.86, -0.44, 1.19, 0.58, 1.35,  # look 1: holds at 0.05 (p 0.007), not at 0.005
              -1.91, -0.06, -0.06, 1.28, 0.02, 0.21, -1.79, 1.95, -2.22, 0.8, -0.63, -1.18, -0.96,
              -0.97, 0.08, -0.41, 1.18, -2.13, -0.3, -1.19, 0.48, -2.42]  # looks 2 and 3 decide nothing


def _decide(stop_alpha: float | None):
    from claimcheck.rules import run_sequential

    taken = [0]

    def draw(k: int) -> list[tuple[str, list[float]]]:
        batch = SAMPLED_ON[taken[0]:taken[0] + k]
        taken[0] += k
        return [("x", batch)]

    plan = SequentialPlan(0.05, 8, 30, 3, stop_alpha=stop_alpha)
    return run_sequential(draw, "at_least", plan, threshold=0.0, statistic="mean"), taken[0]


def test_a_look_decisive_at_its_own_alpha_stands_when_the_looks_after_it_decide_nothing() -> None:
    own, own_taken = _decide(None)
    family, family_taken = _decide(0.005)
    assert own.verdict is Verdict.HOLDS and own.n == 8 and own_taken == 8
    assert family_taken == 30 and family.details["sequential"]["sampled_on_for_family_at"] == [1]
    assert family.verdict is Verdict.HOLDS and family.n == 8 and family.hold_pvalue == own.hold_pvalue
    assert "decided at look 1 of 3; the looks after it sampled on towards its family's level" in family.reason
