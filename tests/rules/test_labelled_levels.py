"""Grid axes and ``over:`` sweeps over list- or mapping-valued params, each level named by its declared label."""

from __future__ import annotations

import json
from typing import Any, Sequence

import pytest

from claimcheck.errors import ClaimError
from claimcheck.claims.loader import expand_grid, item_id, load_claims_text
from claimcheck.probing.registry import Output, ProbeContext, RegisteredProbe
from claimcheck.engine.runner import RunOptions, run_claim_item
from claimcheck.verdict import Verdict

HEAD = """\
id: c1
title: t
statement: s
source: {doc: d.md, section: "1", figure: f}
scope: {kind: portable}
"""
GRID = HEAD + """\
probe:
  name: shaped
  grid:
    shape:
      small: [8, 16]
      large: [64, 128]
check: {rule: at_least, output: elements, threshold: 100}
"""
SWEEP = HEAD + """\
probe:
  name: shaped
  params:
    shape: {small: [8, 16], large: [64, 128]}
check: {rule: level_ratio, output: elements, over: shape, level: large, versus: small, bound: at_least, threshold: 10}
budget: {min_samples: 8, max_samples: 8, looks: 1}
"""
seen: list[Any] = []


def _shaped(ctx: ProbeContext, *, shape: Sequence[int]) -> dict[str, list[float]]:
    seen.append(shape)
    return {"elements": [float(shape[0] * shape[1]) * (1 + 0.001 * ctx.rng.gauss(0, 1)) for _ in range(ctx.n)]}


SHAPED = RegisteredProbe("shaped", _shaped, {"elements": Output("")})


def test_a_labelled_grid_axis_names_items_by_label_and_hands_the_probe_the_plain_list() -> None:
    (claim,) = load_claims_text(GRID, "c.yaml")
    points = expand_grid(claim)
    assert [name for name, _ in points] == ["shape=small", "shape=large"]
    assert item_id(claim.id, points[1][0]) == "c1[shape=large]"
    params = points[1][1]
    assert params["shape"] == [64, 128] and json.loads(json.dumps(params)) == {"shape": [64, 128]}
    seen.clear()
    result = run_claim_item(claim, "c1[shape=large]", params, SHAPED, options=RunOptions(seed=0),
                            machine={"backend": "cpu"})
    assert result.verdict is Verdict.HOLDS and seen[0] == [64, 128] and str(seen[0]) == "large"


def test_a_labelled_sweep_names_its_levels_by_label() -> None:
    (claim,) = load_claims_text(SWEEP, "c.yaml")
    result = run_claim_item(claim, claim.id, dict(claim.probe.params), SHAPED, options=RunOptions(seed=0),
                            machine={"backend": "cpu"})
    assert result.verdict is Verdict.HOLDS
    assert set(result.samples) == {"elements@shape=small", "elements@shape=large"}


@pytest.mark.parametrize(("text", "line", "message"), [
    (GRID.replace("      small: [8, 16]\n      large: [64, 128]\n", "      - [8, 16]\n      - [64, 128]\n"), 9,
     "list or mapping values need a label each: write the axis as {label: value, ...}"),
    (GRID.replace("small: [8, 16]", "Small Shape: [8, 16]"), 9, "a level label must be a slug"),
    (GRID.replace("small: [8, 16]", "small: 8"), 9, "labels are for list or mapping values"),
    (SWEEP.replace("level: large", "level: huge"), 10, "`level: huge` is not one of the swept `shape` values "
                                                       "(small, large)"),
])
def test_labelled_level_misuse_is_one_line(text: str, line: int, message: str) -> None:
    with pytest.raises(ClaimError) as error:
        load_claims_text(text, "c.yaml")
    assert f"c.yaml:{line}:" in str(error.value) and message in str(error.value)
