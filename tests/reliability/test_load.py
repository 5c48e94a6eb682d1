"""Load: 1,000 fast claim items under ``pytest -n 2``, and the repository's arithmetic claims.

Every item must be stored exactly once and run exactly once (the probe logs one span per call),
exclusive items must never overlap any other item (their spans are checked against all others),
both workers must have run items, and the wall time of 1,000 items must stay within ~7x that of
200 items in the same test (a per-item cost that grows with the run would show up here).

Plots are turned off for these runs (see ``without_plots``): the forest plot draws one row per
item, so a 1,000-item run would time matplotlib, not claimcheck.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claimcheck.claims.loader import expand_grid, load_claims
from claimcheck.store import EvidenceStore
from tests.reliability._project import (ROOT, claim_yaml, documents, duplicated_items, run_pytest, table,
                                        without_plots)

TICK_PROBE = '''
import json, os, time

from claimcheck.probing.registry import Output, ProbeContext, probe


@probe("tick", outputs={"x": Output("")}, deterministic=True)
def tick(ctx: ProbeContext, *, i: int, sleep_ms: float = 0.0) -> dict:
    """Logs its own start and end (and the worker's pid) so overlaps can be checked afterwards."""
    started = time.time()
    if sleep_ms:
        time.sleep(sleep_ms / 1000)
    ended = time.time()
    line = json.dumps([os.environ.get("PYTEST_XDIST_WORKER", "main"), ctx.seed, i, sleep_ms, started, ended])
    with open(os.environ["RELIABILITY_SPANS"], "a") as spans:
        spans.write(line + "\\n")
    return {"x": [float(i)]}
'''

CHECK = {"rule": "at_least", "output": "x", "threshold": -1}
PER_CLAIM = 50
EXCLUSIVE_SHARE = 50  # one exclusive item per 50


def write_claims(folder: Path, items: int) -> list[str]:
    """``items`` items: claims of 50 grid points, 2% of them exclusive (20 ms) and the rest 1 ms."""
    folder.mkdir(parents=True, exist_ok=True)
    exclusive = items // EXCLUSIVE_SHARE
    shared = items - exclusive
    docs, ids = [], []
    for start in range(0, shared, PER_CLAIM):
        values = list(range(start, min(start + PER_CLAIM, shared)))
        docs.append(claim_yaml(f"load-{start}", "tick", params={"sleep_ms": 1}, grid={"i": values}, check=CHECK))
        ids += [f"load-{start}[i={v}]" for v in values]
    values = list(range(100_000, 100_000 + exclusive))
    docs.append(claim_yaml("load-exclusive", "tick", params={"sleep_ms": 20}, grid={"i": values}, check=CHECK,
                           budget={"exclusive": True}))
    ids += [f"load-exclusive[i={v}]" for v in values]
    (folder / "load.yaml").write_text(documents(*docs))
    return ids


def _overlaps(spans: list[list]) -> list[tuple]:
    """Pairs (exclusive item, other item) whose [start, end] intervals intersect."""
    found = []
    for worker, _, item, sleep_ms, start, end in spans:
        if sleep_ms != 20:
            continue
        for other in spans:
            if other[2] != item and other[4] < end and start < other[5]:
                found.append((item, other[2], worker, other[0]))
    return found


SIZES = (200, 1000)


def test_thousand_items_under_xdist(tmp_path: Path, report_table) -> None:
    env = without_plots(tmp_path / "noplots")
    rows, walls = [], {}
    for items in SIZES:
        project = tmp_path / f"run{items}"
        (project / "probes").mkdir(parents=True)
        (project / "probes" / "__init__.py").write_text("")
        (project / "probes" / "tick.py").write_text(TICK_PROBE)
        (project / "pytest.ini").write_text("[pytest]\n")
        expected = write_claims(project / "claims", items)
        store_path, spans_path = project / "evidence.sqlite", project / "spans.jsonl"
        code, output, wall = run_pytest(
            project, "claims", "-n", "2", "-q", f"--claims-store={store_path}", f"--claims-reports={project / 'reports'}",
            "--claims-cv-bound=10", env={**env, "RELIABILITY_SPANS": str(spans_path)}, timeout=900,
        )
        assert code == pytest.ExitCode.OK, output[-3000:]
        assert f"{items} passed" in output, output[-1000:]
        with EvidenceStore(store_path) as store:
            (run,) = store.runs()
            assert run.status == "complete"
            stored = [r.item_id for r in store.results(run.run_id)]
            assert store.integrity_check() == "ok"
        duplicates = duplicated_items(store_path, run.run_id)
        assert not duplicates
        assert sorted(stored) == sorted(expected), "items missing from the store, or unexpected ones"
        spans = [json.loads(line) for line in spans_path.read_text().splitlines()]
        runs_per_item = {}
        for span in spans:
            runs_per_item[span[2]] = runs_per_item.get(span[2], 0) + 1
        ran_twice = [item for item, count in runs_per_item.items() if count != 1]
        assert len(spans) == items and not ran_twice, f"{len(spans)} probe calls for {items} items; twice: {ran_twice[:5]}"
        workers = {span[0] for span in spans}
        assert len(workers) == 2, f"items ran on {workers}; the -n 2 run did not use two workers"
        overlaps = _overlaps(spans)
        assert not overlaps, f"exclusive items overlapped other items: {overlaps[:5]}"
        exclusive = sum(1 for span in spans if span[3] == 20)
        walls[items] = wall
        rows.append((items, f"{wall:.1f}", len(stored), len(duplicates), len(spans), len(ran_twice), exclusive,
                     len(overlaps), ",".join(sorted(workers))))
    small, large = SIZES
    ratio = walls[large] / walls[small]
    report_table(
        f"load under -n 2: wall {large} vs {small} items = {ratio:.2f}x (limit 7x; {large / small:g}x the items)",
        table(("items", "wall s", "stored", "dup rows", "probe calls", "ran twice", "exclusive", "overlaps",
               "workers"), rows),
    )
    assert ratio < 7


def test_repo_arithmetic_claims_under_xdist_store_each_result_once(tmp_path: Path, report_table) -> None:
    """``pytest -n 2 claims/arithmetic`` on the real claims: one stored result per collected item."""
    expected = sorted(f"{claim.id}[{name}]" if name else claim.id
                      for claim in load_claims([ROOT / "claims" / "arithmetic"]) for name, _ in expand_grid(claim))
    store_path = tmp_path / "evidence.sqlite"
    code, output, wall = run_pytest(
        ROOT, "claims/arithmetic", "-n", "2", "-q", f"--claims-store={store_path}",
        f"--claims-reports={tmp_path / 'reports'}", env=without_plots(tmp_path / "noplots"), timeout=900,
    )
    # Refuted arithmetic is a finding about the docs, not about storage: exit 0 or 1 both finish the run.
    assert code in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), output[-3000:]
    committed = set()  # runs of other machines' profiles, merged into every store
    for profile in sorted((ROOT / "reports" / "profiles").glob("*.sqlite")):
        with EvidenceStore(profile, readonly=True) as other:
            committed |= {r.run_id for r in other.runs()}
    with EvidenceStore(store_path) as store:
        (run,) = [r for r in store.runs() if r.run_id not in committed]
        assert run.status == "complete"
        rows = store.results(run.run_id)
        assert store.integrity_check() == "ok"
    stored = sorted(r.item_id for r in rows)
    assert not duplicated_items(store_path, run.run_id)
    assert stored == expected
    verdicts: dict[str, int] = {}
    for r in rows:
        verdicts[r.verdict.value] = verdicts.get(r.verdict.value, 0) + 1
    report_table(
        "repo claims/arithmetic under -n 2",
        table(("items collected", "stored", "stored twice", "verdicts", "wall s"),
              [(len(expected), len(stored), 0, ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items())),
                f"{wall:.1f}")]),
    )
