"""The lock's every-class section: expectations no machine can change, each with its reason, applied on every class."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from claimcheck.engine import expectations
from claimcheck.verdict import Verdict

from ._shared import ROOT

LOCK = ROOT / "claims" / "verdicts.lock"
EPYC, XEON, METAL = "cpu/AMD EPYC/16-32GiB", "cpu/Intel Xeon/16-32GiB", "metal/Apple M1 Max/64-128GiB"


def test_the_committed_lock_holds_the_machine_independent_expectations_with_their_reasons() -> None:
    lock = expectations.read(LOCK)
    every = lock.every_class
    kinds = Counter((e.why.split(" (")[0], e.verdict) for e in every.values())
    # 18 arithmetic items (one holds since its readings became intervals; one withdrawn with its
    # decomposition; the 12B @8k compiled row, the small models' long-context rows, the two 12B host
    # terms and the FUSED_GELU prefill arm added), 6 seeded curve results, 3 seedless ones (the
    # source's own prompts, the identity curve's exact selectivity), 5 numerical checks (4 hold on
    # their test's uniform inputs).
    assert kinds == {("arithmetic on the source's printed figures", Verdict.REFUTED): 13,
                     ("arithmetic on the source's printed figures", Verdict.HOLDS): 4,
                     ("arithmetic on the source's printed figures", Verdict.INCONSISTENT): 1,
                     ("seeded, deterministic curve result", Verdict.REFUTED): 6,
                     ("deterministic curve result", Verdict.HOLDS): 1,
                     ("deterministic curve result", Verdict.INCONCLUSIVE): 2,
                     ("numerical check of MLX ops on fixed seeded inputs", Verdict.REFUTED): 1,
                     ("numerical check of MLX ops on fixed seeded inputs", Verdict.HOLDS): 4}
    assert all(e.backend == ("any" if e.why.startswith("arithmetic") else "cpu") for e in every.values())
    assert not set(every) & set(lock.classes[EPYC].items), "each expectation lives in one section"


def test_a_class_without_a_section_is_judged_on_the_every_class_items() -> None:
    lock = expectations.read(LOCK)
    assert not lock.covers(XEON) and lock.covers(XEON, "factual-funnel") and lock.covers(EPYC)
    for item in lock.every_class:
        assert lock.expected(XEON, item) is lock.every_class[item].verdict is lock.expected(EPYC, item)
    assert lock.expected(METAL, "moe-26b-600-ceiling") is Verdict.REFUTED, "arithmetic: every backend"
    assert lock.expected(METAL, "factual-funnel") is None and not lock.covers(METAL, "factual-funnel"), \
        "a seeded curve result is the same only where the backend is"
    assert lock.expected(XEON, "advice-fork-share") is None, "a class's own measurements stay its own"


def test_accepting_a_run_keeps_the_section_and_writes_only_what_differs(tmp_path: Path) -> None:
    lock = expectations.read(LOCK)
    updated = expectations.accepted(lock, XEON, "run-x", [("factual-funnel", Verdict.REFUTED),
                                                          ("gelu-fast-approx-within-0015-of-gelu", Verdict.HOLDS),
                                                          ("advice-fork-share", Verdict.HOLDS)])
    assert updated.classes[XEON].items == {"advice-fork-share": Verdict.HOLDS,
                                           "gelu-fast-approx-within-0015-of-gelu": Verdict.HOLDS}
    path = tmp_path / "verdicts.lock"
    expectations.write(path, updated)
    again = expectations.read(path)
    assert again.every_class == lock.every_class and again.classes[XEON].items == updated.classes[XEON].items
    assert again.expected(XEON, "gelu-fast-approx-within-0015-of-gelu") is Verdict.HOLDS, "its own section wins"


def test_an_every_class_item_without_its_reason_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.lock"
    path.write_text("version: 1\nall-classes:\n  items:\n    x: {verdict: refuted}\nclasses: {}\n", encoding="utf-8")
    with pytest.raises(expectations.LockError, match=r"all-classes / x: expected \{verdict: \.\.\., why: \.\.\.\}"):
        expectations.read(path)
