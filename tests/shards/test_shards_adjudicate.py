"""`--claims-shard K/N` + `claimcheck merge` + `claimcheck adjudicate` give the verdicts of one run."""

from __future__ import annotations

import sys

import pytest

from claimcheck import cli
from claimcheck.pytest_plugin.shard import Shard, Unit, parse_shard, split
from claimcheck.store import EvidenceStore

ITEM = """
---
id: {id}
title: Mean {mean} is at least 0
statement: Normal samples of mean {mean} are at least 0 on average.
source: {{doc: demo.md, section: "1", figure: "{id}"}}
scope: {{kind: portable, backend: any}}
probe: {{name: normal, params: {{mean: {mean}}}{grid}}}
check: {{rule: at_least, output: x, threshold: 0}}
budget: {{min_samples: 6, max_samples: 12, looks: 2{exclusive}}}
"""


def _claims() -> str:
    """One family: clear holds, borderline ones the family adjustment overturns, refutations, a timing claim."""
    parts = [ITEM.format(id=f"shard-mean-{k}", mean=mean, grid="", exclusive="")
             for k, mean in enumerate((3.0, 0.9, 0.7, 0.6, -2.0, -0.8, 2.0))]
    parts.append(ITEM.format(id="shard-timing", mean=1.5, grid=", grid: {sd: [0.5, 1.0, 2.0]}",
                             exclusive=", exclusive: true"))
    return "".join(parts)


def _final(path) -> tuple[str, dict[str, tuple[str, str]]]:
    with EvidenceStore(path) as store:
        run = store.runs()[0]
        return run.run_id, {s.item_id: (s.verdict.value, s.reason) for s in store.results(run.run_id)}


def test_parse_shard_takes_k_of_n_only() -> None:
    assert parse_shard(" 2/3 ") == Shard(2, 3)
    for bad in ("0/2", "3/2", "2", "a/b", "1/0"):
        with pytest.raises(ValueError, match="--claims-shard"):
            parse_shard(bad)


def test_split_balances_longest_first_and_is_deterministic() -> None:
    units = [Unit(f"item:{name}", [name], seconds) for name, seconds in
             (("a", 10.0), ("b", 7.0), ("c", 6.0), ("d", 4.0), ("e", 3.0))]
    shards = split(units, 2)
    assert shards == [["a", "d"], ["b", "c", "e"]]  # loads 14 and 16 of 30
    assert shards == split(list(reversed(units)), 2), "the order units arrive in does not matter"
    assert sorted(sum(shards, [])) == ["a", "b", "c", "d", "e"]


def test_items_that_weigh_nothing_are_spread_by_count() -> None:
    carried = [Unit(f"item:{k}", [k], 0.0) for k in range(7)]
    assert [len(shard) for shard in split(carried, 3)] == [3, 2, 2]


def test_two_shards_merged_and_adjudicated_decide_as_one_run(demo_project: pytest.Pytester,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAIMCHECK_SHARD_GROUP", "matrix-1")
    root = demo_project.path
    (root / "claims" / "sharded.yaml").write_text(_claims())
    single = demo_project.runpytest("claims", "-p", "no:cacheprovider", f"--claims-store={root / 'single.sqlite'}")
    assert single.ret == pytest.ExitCode.TESTS_FAILED, single.stdout.str()[-3000:]  # the refutations
    _, one_run = _final(root / "single.sqlite")
    overturned = [item for item, (verdict, reason) in one_run.items() if "does not survive" in reason]
    assert overturned, "the tree must have a verdict the family adjustment changes"

    shard_items = []
    for k in (1, 2):
        ran = demo_project.runpytest("claims", "-p", "no:cacheprovider", "-v", f"--claims-shard={k}/2",
                                     f"--claims-store={root / f'shard{k}.sqlite'}")
        ran.stdout.fnmatch_lines([f"claimcheck: shard {k}/2: * of 10 claim items"])
        with EvidenceStore(root / f"shard{k}.sqlite") as store:
            run = store.runs()[0]
            assert run.options["shard"] == {"index": k, "total": 2, "group": "matrix-1"}
            shard_items.append({s.item_id for s in store.results(run.run_id)})
    assert not shard_items[0] & shard_items[1] and shard_items[0] | shard_items[1] == set(one_run)
    timing = {f"shard-timing[sd={sd}]" for sd in ("0.5", "1", "2")}
    assert any(timing <= items for items in shard_items), "a timing claim stays whole on one shard"
    assert all(items for items in shard_items)

    merged = root / "merged.sqlite"
    assert cli.main(["merge", str(merged), str(root / "shard1.sqlite"), str(root / "shard2.sqlite")]) == 0
    adjudicated = demo_project.run(sys.executable, "-m", "claimcheck.cli", "adjudicate", str(merged),
                                   "--root", str(root))
    # the demo project has no lock: adjudicate proposes this class's expectations instead of failing each
    # refutation (as claims_run does), and only an item in error would fail it
    assert adjudicated.ret == 0, adjudicated.stdout.str()[-3000:]
    out = adjudicated.stdout.str()
    assert "proposed expectations" in out, out[-3000:]
    assert "adjudicating the 2 shard run(s)" in out and "verdicts: " in out and "\nfamily" in out
    run_id, decided = _final(merged)
    assert decided == one_run, "same final verdicts and reasons, family adjustment included"
    with EvidenceStore(merged) as store:
        run = store.run(run_id)
        assert len(run.options["merged_from"]) == 2 and run.status == "complete"
        assert {s.result.carried_from for s in store.results(run_id)} == set(run.options["merged_from"])


def test_adjudicate_refuses_a_store_missing_a_shard(demo_project: pytest.Pytester,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAIMCHECK_SHARD_GROUP", "matrix-2")
    root = demo_project.path
    (root / "claims" / "sharded.yaml").write_text(_claims())
    demo_project.runpytest("claims", "-p", "no:cacheprovider", "--claims-shard=2/3",
                           f"--claims-store={root / 'shard2.sqlite'}")
    code = cli.main(["adjudicate", str(root / "shard2.sqlite"), "--root", str(root)])
    assert code == 2
