"""Fork-map bookkeeping on hand-made token sequences."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from claimcheck.probing.sampling.forkmap import (
    DIVERGED,
    FORK,
    LOCKED,
    PARTIAL,
    RECONVERGED,
    REMERGE,
    RunTracker,
    TraceRules,
    classify_branch,
    longest_common_run,
    make_node,
    node_label,
    position_labels,
    reconvergence_score,
    summarize,
    traced_positions,
)


def test_longest_common_run_is_contiguous_and_alignment_free() -> None:
    assert longest_common_run([1, 2, 3, 4], [9, 2, 3, 8, 4]) == 2  # "2 3", not the subsequence 2 3 4
    assert longest_common_run([7, 7, 1, 2, 3], [1, 2, 3, 0]) == 3  # found at any offset
    assert longest_common_run([], [1]) == 0
    assert longest_common_run([5], [6]) == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 4), max_size=25), st.lists(st.integers(0, 4), min_size=1, max_size=25))
def test_incremental_tracker_equals_the_batch_computation(branch: list[int], suffix: list[int]) -> None:
    tracker = RunTracker(suffix)
    for i, token in enumerate(branch, start=1):
        assert tracker.push(token) == longest_common_run(branch[:i], suffix)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=20), st.lists(st.integers(0, 3), max_size=20), st.lists(st.integers(0, 3), min_size=12, max_size=20))
def test_a_settled_branch_keeps_its_outcome_whatever_follows(head: list[int], tail: list[int], suffix: list[int]) -> None:
    rules = TraceRules()
    tracker = RunTracker(suffix)
    for token in head:
        tracker.push(token)
    if tracker.settled(len(tail), rules):
        early = classify_branch(reconvergence_score(head, suffix), rules)
        assert classify_branch(reconvergence_score(head + tail, suffix), rules) == early


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=20), st.lists(st.integers(0, 3), max_size=20), st.lists(st.integers(0, 3), min_size=12, max_size=20))
def test_a_label_settled_branch_keeps_its_divergence_whatever_follows(head: list[int], tail: list[int], suffix: list[int]) -> None:
    rules = TraceRules()
    tracker = RunTracker(suffix)
    for token in head:
        tracker.push(token)
    if tracker.label_settled(len(tail), rules):
        early = classify_branch(reconvergence_score(head, suffix), rules) == DIVERGED
        assert (classify_branch(reconvergence_score(head + tail, suffix), rules) == DIVERGED) == early


def test_label_settling_stops_a_remerging_branch_before_outcome_settling_does() -> None:
    rules = TraceRules()
    suffix = list(range(20))
    tracker = RunTracker(suffix)
    for token in range(5):  # a run of 5 = 25% of the suffix: it can no longer diverge
        tracker.push(token)
    assert tracker.label_settled(20, rules) and not tracker.settled(20, rules)
    assert tracker.decided(20, rules, "label") and not tracker.decided(20, rules, "outcome")
    with pytest.raises(ValueError, match="settle level"):
        tracker.decided(20, rules, "score")


def test_score_thresholds() -> None:
    ref_suffix = list(range(20))
    assert reconvergence_score(list(range(10)), ref_suffix) == 0.5
    assert classify_branch(0.5) == RECONVERGED
    assert classify_branch(0.49) == PARTIAL
    assert classify_branch(0.25) == PARTIAL
    assert classify_branch(0.2499) == DIVERGED
    with pytest.raises(ValueError, match="empty"):
        reconvergence_score([1], [])


def test_labels_of_nodes() -> None:
    assert node_label(DIVERGED, 0.05) == FORK
    assert node_label(DIVERGED, 0.0499) == LOCKED
    assert node_label(PARTIAL, 0.3) == REMERGE
    assert node_label(RECONVERGED, 0.001) == REMERGE


def test_traced_positions_stop_at_52_and_keep_12_tokens_after() -> None:
    assert traced_positions(20) == list(range(8))  # LR = 19 - i >= 12 -> i <= 7
    assert traced_positions(80) == list(range(52))  # capped at 52
    assert traced_positions(12) == []  # LR of position 0 is 11


def test_a_trace_by_hand() -> None:
    ref = list(range(100, 120))  # N = 20, positions 0..7 traced
    nodes = [
        make_node(0, 0.6, 0.30, 100, 7, ref[1:12], ref),  # re-merges at once: score 11/19
        make_node(1, 0.7, 0.20, 101, 7, [1, 2, 3, 4], ref),  # diverged, genuine -> FORK
        make_node(2, 0.9, 0.01, 102, 7, [5, 6], ref),  # diverged, rank-2 ~0 -> forced noise, LOCKED
        make_node(3, 0.5, 0.40, 103, 7, [9] + ref[5:10], ref),  # 5 of 16 -> partial -> REMERGE
    ]
    assert [n.outcome for n in nodes] == [RECONVERGED, DIVERGED, DIVERGED, PARTIAL]
    assert [n.label for n in nodes] == [REMERGE, FORK, LOCKED, REMERGE]
    labels = position_labels(len(ref), nodes)
    assert labels[:5] == [REMERGE, FORK, LOCKED, REMERGE, LOCKED] and set(labels[4:]) == {LOCKED}
    summary = summarize(len(ref), nodes)
    assert (summary.genuine_alternatives, summary.genuine_forks) == (3, 1)
    assert summary.fork_share == pytest.approx(1 / 3)
    assert summary.remerge_share == pytest.approx(2 / 3)
    assert (summary.first_alternative, summary.first_fork, summary.fork_positions) == (0, 1, (1,))


def test_shares_are_undefined_with_a_reason_not_zero() -> None:
    empty = summarize(9, [])
    assert empty.fork_share is None and "too short" in empty.undefined_reason
    quiet = summarize(20, [make_node(0, 0.99, 0.001, 1, 2, [3], list(range(20)))])
    assert quiet.fork_share is None and "rank-2 probability" in quiet.undefined_reason
    assert quiet.first_alternative is None
