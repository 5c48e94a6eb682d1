"""The lock's every-class section: expectations no machine can change, each with its reason, applied on every class."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from claimcheck.claim import Claim
from claimcheck.claims.loader import expand_grid, item_id, load_claims
from claimcheck.engine import expectations
from claimcheck.probing.registry import get_probe, load_probe_modules
from claimcheck.verdict import Verdict

from ._shared import ROOT

LOCK = ROOT / "claims" / "verdicts.lock"
EPYC, METAL = "cpu/AMD EPYC/16-32GiB", "metal/Apple M1 Max/64-128GiB"
UNLOCKED = "cpu/Example CPU 0000/8-16GiB"  # a class the lock has no section for


def test_the_committed_lock_holds_the_machine_independent_expectations_with_their_reasons() -> None:
    lock = expectations.read(LOCK)
    every = lock.every_class
    kinds = Counter((e.why.split(" (")[0], e.verdict) for e in every.values())
    # 172 arithmetic items: every decided item of the arithmetic pack (the 15 others are stale on
    # every machine: their figure or a premise was withdrawn by the source), 7 seeded curve results
    # (the only-the-own-seed opening refuted on the embedded model), 3 seedless ones (the source's own
    # prompts, the identity curve's exact selectivity), 5 numerical checks (4 hold on their test's
    # uniform inputs).
    assert kinds == {("arithmetic on the source's printed figures", Verdict.REFUTED): 22,
                     ("arithmetic on the source's printed figures", Verdict.HOLDS): 148,
                     ("arithmetic on the source's printed figures", Verdict.INCONSISTENT): 2,
                     ("seeded, deterministic curve result", Verdict.REFUTED): 7,
                     ("deterministic curve result", Verdict.HOLDS): 1,
                     ("deterministic curve result", Verdict.INCONCLUSIVE): 2,
                     ("numerical check of MLX ops on fixed seeded inputs", Verdict.REFUTED): 1,
                     ("numerical check of MLX ops on fixed seeded inputs", Verdict.HOLDS): 4}
    assert all(e.backend == ("any" if e.why.startswith("arithmetic") else "cpu") for e in every.values())
    assert not set(every) & set(lock.classes[EPYC].items), "each expectation lives in one section"


def _is_arithmetic(claim: Claim) -> bool:
    """Whether the claim's probe only recomputes the source's printed figures (probes/figures/arithmetic.py)."""
    return get_probe(claim.probe.name).function.__module__.rsplit(".", 1)[-1] == "arithmetic"


def _rests_on_a_withdrawal(claim: Claim, by_id: dict[str, Claim]) -> bool:
    """True when the source withdrew the claim's figure or one of its premises: stale wherever it is not refuted."""
    if claim.retracted is not None and claim.retracted.withdraws_the_figure:
        return True
    return any(by_id[p].retracted is not None or _rests_on_a_withdrawal(by_id[p], by_id) for p in claim.depends_on)


def test_arithmetic_expectations_live_only_in_the_every_class_section() -> None:
    """Arithmetic gives one verdict on every machine, so no class may hold its expectation alone.

    An arithmetic item accepted into one class's section only is judged by the plain rule on every
    other class, where its known refutations fail the run; each lives in `all-classes` instead.
    """
    lock = expectations.read(LOCK)
    load_probe_modules(str(ROOT))
    by_id = {claim.id: claim for claim in load_claims([ROOT / "claims"])}
    items = {item_id(claim.id, name): claim for claim in by_id.values() if _is_arithmetic(claim)
             for name, _ in expand_grid(claim)}
    assert len(items) > 150, "the arithmetic pack was not found"
    per_class = sorted(f"{machine_class}: {item}" for machine_class, section in lock.classes.items()
                       for item in section.items if item in items)
    assert per_class == [], "move these to the lock's all-classes section (arithmetic is the same on every class)"
    for item, claim in items.items():
        entry = lock.every_class.get(item)
        if entry is None:
            assert _rests_on_a_withdrawal(claim, by_id), f"{item}: decided on every machine, no every-class expectation"
            continue
        assert entry.backend == "any" and entry.applies(METAL), item
        assert entry.why.startswith("arithmetic on the source's printed figures"), item
        assert f"probe `{claim.probe.name}`" in entry.why, item


def test_a_class_without_a_section_is_judged_on_the_every_class_items() -> None:
    lock = expectations.read(LOCK)
    assert not lock.covers(UNLOCKED) and lock.covers(UNLOCKED, "factual-funnel") and lock.covers(EPYC)
    for item in lock.every_class:
        assert lock.expected(UNLOCKED, item) is lock.every_class[item].verdict is lock.expected(EPYC, item)
    assert lock.expected(METAL, "moe-26b-600-ceiling") is Verdict.REFUTED, "arithmetic: every backend"
    assert lock.expected(METAL, "factual-funnel") is None and not lock.covers(METAL, "factual-funnel"), \
        "a seeded curve result is the same only where the backend is"
    assert lock.expected(UNLOCKED, "router-raises-fork-departures") is None, "a class's own measurements stay its own"


def test_accepting_a_run_keeps_the_section_and_writes_only_what_differs(tmp_path: Path) -> None:
    lock = expectations.read(LOCK)
    updated = expectations.accepted(lock, UNLOCKED, "run-x", [("factual-funnel", Verdict.REFUTED),
                                                          ("gelu-fast-approx-within-0015-of-gelu", Verdict.HOLDS),
                                                          ("router-raises-fork-departures", Verdict.HOLDS)])
    assert updated.classes[UNLOCKED].items == {"router-raises-fork-departures": Verdict.HOLDS,
                                           "gelu-fast-approx-within-0015-of-gelu": Verdict.HOLDS}
    path = tmp_path / "verdicts.lock"
    expectations.write(path, updated)
    again = expectations.read(path)
    assert again.every_class == lock.every_class and again.classes[UNLOCKED].items == updated.classes[UNLOCKED].items
    assert again.expected(UNLOCKED, "gelu-fast-approx-within-0015-of-gelu") is Verdict.HOLDS, "its own section wins"


def test_an_every_class_item_without_its_reason_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.lock"
    path.write_text("version: 1\nall-classes:\n  items:\n    x: {verdict: refuted}\nclasses: {}\n", encoding="utf-8")
    with pytest.raises(expectations.LockError, match=r"all-classes / x: expected \{verdict: \.\.\., why: \.\.\.\}"):
        expectations.read(path)
