"""The fork map: which rank-2 alternatives of a greedy path lead somewhere else.

Pure bookkeeping on token ids, so it is tested on hand-made sequences. The
procedure (see the methods notes, section C): at each traced position ``i`` of
the greedy reference ``ref`` the rank-2 token is forced and the branch
greedy-continues; its reconvergence score is the longest common contiguous
token run between the branch and ``ref[i+1:]``, divided by ``LR = N-1-i``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

RECONVERGED = "reconverged"
PARTIAL = "partial"
DIVERGED = "diverged"
REMERGED = "remerged"  # fully or partly: a branch stopped once it could no longer diverge

OUTCOME = "outcome"
LABEL = "label"
SETTLE_LEVELS = (OUTCOME, LABEL)

FORK = "FORK"
LOCKED = "LOCKED"
REMERGE = "REMERGE"
LABELS = (FORK, REMERGE, LOCKED)


@dataclass(frozen=True)
class TraceRules:
    """Thresholds of the trace; defaults are the original experiment's.

    Attributes:
        max_positions: positions traced at most (``i < min(N, max_positions)``).
        min_suffix: a position is traced while ``LR = N-1-i >= min_suffix``.
        extra_tokens: a branch greedy-continues ``LR + extra_tokens`` tokens.
        reconverged_at: score at or above which a branch re-merged.
        diverged_below: score below which a branch diverged.
        genuine_p2: rank-2 probability from which an alternative is genuine.
    """

    max_positions: int = 52
    min_suffix: int = 12
    extra_tokens: int = 8
    reconverged_at: float = 0.5
    diverged_below: float = 0.25
    genuine_p2: float = 0.05


def traced_positions(n: int, rules: TraceRules = TraceRules()) -> list[int]:
    """Positions ``i`` that get a branch for a reference of length ``n``."""
    return [i for i in range(min(n, rules.max_positions)) if n - 1 - i >= rules.min_suffix]


def longest_common_run(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest contiguous token run present in both sequences (alignment-free)."""
    if not a or not b:
        return 0
    best = 0
    previous = [0] * (len(b) + 1)
    for token in a:
        current = [0] * (len(b) + 1)
        for j, other in enumerate(b, start=1):
            if token == other:
                current[j] = previous[j - 1] + 1
                if current[j] > best:
                    best = current[j]
        previous = current
    return best


class RunTracker:
    """Longest common run between a growing branch and a fixed suffix, updated per token.

    Lets a generator stop a branch as soon as its outcome is settled: the
    longest run never shrinks, and with ``r`` tokens left it can grow to at
    most ``max(best, current + r)``.
    """

    def __init__(self, suffix: Sequence[int]) -> None:
        self.suffix = list(suffix)
        self.row = [0] * (len(self.suffix) + 1)
        self.best = 0

    def push(self, token: int) -> int:
        row = [0] * (len(self.suffix) + 1)
        for j, other in enumerate(self.suffix, start=1):
            if token == other:
                row[j] = self.row[j - 1] + 1
                if row[j] > self.best:
                    self.best = row[j]
        self.row = row
        return self.best

    @property
    def current(self) -> int:
        """Length of the longest common run that ends at the branch's last token."""
        return max(self.row)

    def settled(self, remaining: int, rules: "TraceRules") -> bool:
        """True when no continuation of ``remaining`` tokens can change the outcome."""
        lr = len(self.suffix)
        if self.best >= rules.reconverged_at * lr:
            return True
        reach = max(self.best, self.current + remaining)
        if reach >= rules.reconverged_at * lr:
            return False
        return self.best >= rules.diverged_below * lr or reach < rules.diverged_below * lr

    def label_settled(self, remaining: int, rules: "TraceRules") -> bool:
        """True when no continuation of ``remaining`` tokens can change whether the branch diverges.

        Every label reads only that (a diverged branch is FORK or LOCKED, any other REMERGE), so a
        branch can stop sooner than :meth:`settled` lets it: once its run reaches the diverged
        threshold it re-merges, whether or not it would go on to the reconverged one.
        """
        threshold = rules.diverged_below * len(self.suffix)
        return self.best >= threshold or max(self.best, self.current + remaining) < threshold

    def decided(self, remaining: int, rules: "TraceRules", level: str) -> bool:
        """:meth:`settled` (``level="outcome"``) or :meth:`label_settled` (``level="label"``)."""
        if level == LABEL:
            return self.label_settled(remaining, rules)
        if level == OUTCOME:
            return self.settled(remaining, rules)
        raise ValueError(f"settle level must be one of {', '.join(SETTLE_LEVELS)}, got {level!r}")


def reconvergence_score(branch: Sequence[int], ref_suffix: Sequence[int]) -> float:
    """``longest_common_run(branch, ref_suffix) / len(ref_suffix)``."""
    if not ref_suffix:
        raise ValueError("the reference suffix is empty: a position needs LR >= 1 to be scored")
    return longest_common_run(branch, ref_suffix) / len(ref_suffix)


def classify_branch(score: float, rules: TraceRules = TraceRules()) -> str:
    """``reconverged`` / ``partial`` / ``diverged`` from a reconvergence score."""
    if score >= rules.reconverged_at:
        return RECONVERGED
    if score < rules.diverged_below:
        return DIVERGED
    return PARTIAL


def node_label(outcome: str, p2: float, rules: TraceRules = TraceRules()) -> str:
    """Route-experiment label of a traced node."""
    if outcome == DIVERGED:
        return FORK if p2 >= rules.genuine_p2 else LOCKED
    return REMERGE


@dataclass(frozen=True)
class Node:
    """One traced position.

    Attributes:
        position: index ``i`` in the reference.
        p1, p2: probabilities of the top-1 and rank-2 tokens there.
        top1, rank2: their ids (``top1`` is the reference token for a greedy path).
        score: reconvergence score of the rank-2 branch.
        outcome: reconverged / partial / diverged, or ``remerged`` for a branch stopped once it
            could no longer diverge, before its score told partial from reconverged.
        label: FORK / REMERGE / LOCKED.
        branch_tokens: generated tokens of the branch (after the forced one).
        decided_early: the branch was stopped once its outcome (or its label:
            :meth:`RunTracker.label_settled`) could no longer change; ``score`` is
            then the score of the tokens generated so far.
    """

    position: int
    p1: float
    p2: float
    top1: int
    rank2: int
    score: float
    outcome: str
    label: str
    branch_tokens: tuple[int, ...] = ()
    decided_early: bool = False

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["branch_tokens"] = list(self.branch_tokens)
        return out


def make_node(
    position: int,
    p1: float,
    p2: float,
    top1: int,
    rank2: int,
    branch: Sequence[int],
    ref: Sequence[int],
    rules: TraceRules = TraceRules(),
    *,
    decided_early: bool = False,
    settle: str = OUTCOME,
) -> Node:
    """Score and label the branch forced at ``position``.

    ``settle="label"`` says an early stop came from :meth:`RunTracker.label_settled`: a branch
    stopped in the partial band may still have been heading for a reconvergence, so its outcome
    is ``remerged``, not ``partial``.
    """
    score = reconvergence_score(branch, ref[position + 1 :])
    outcome = classify_branch(score, rules)
    if decided_early and settle == LABEL and outcome == PARTIAL:
        outcome = REMERGED
    return Node(
        position=position,
        p1=float(p1),
        p2=float(p2),
        top1=int(top1),
        rank2=int(rank2),
        score=score,
        outcome=outcome,
        label=node_label(outcome, p2, rules),
        branch_tokens=tuple(int(t) for t in branch),
        decided_early=decided_early,
    )


def position_labels(n: int, nodes: Sequence[Node]) -> list[str]:
    """A label for every reference position: the node's, or LOCKED where no node was traced."""
    labels = [LOCKED] * n
    for node in nodes:
        labels[node.position] = node.label
    return labels


@dataclass(frozen=True)
class ForkSummary:
    """What the fork map says about one prompt.

    Attributes:
        length: reference length N.
        traced: number of traced positions.
        genuine_alternatives: nodes with ``p2 >= genuine_p2``.
        genuine_forks: genuine alternatives whose branch diverged.
        fork_share: forks / alternatives, ``None`` when there is no alternative.
        remerge_share: 1 - fork_share (re-merged or partial), ``None`` likewise.
        first_alternative: position of the first genuine alternative (the
            funnel's length), ``None`` when there is none among the traced positions.
        first_fork: position of the first genuine fork, ``None`` when none.
        fork_positions: positions of the genuine forks.
        undefined_reason: why the shares are ``None``, else ``None``.
    """

    length: int
    traced: int
    genuine_alternatives: int
    genuine_forks: int
    fork_share: float | None
    remerge_share: float | None
    first_alternative: int | None
    first_fork: int | None
    fork_positions: tuple[int, ...]
    undefined_reason: str | None = None


def summarize(n: int, nodes: Sequence[Node], rules: TraceRules = TraceRules(), *, traced: int | None = None) -> ForkSummary:
    """Fork share and funnel of one trace.

    ``traced`` is the number of traceable positions when ``nodes`` holds only some
    of them (a trace of the genuine alternatives alone); default ``len(nodes)``.
    """
    traced = len(nodes) if traced is None else traced
    genuine = [node for node in nodes if node.p2 >= rules.genuine_p2]
    forks = [node for node in genuine if node.outcome == DIVERGED]
    if genuine:
        share: float | None = len(forks) / len(genuine)
        reason = None
    else:
        share = None
        reason = (
            f"no traced position has a rank-2 probability >= {rules.genuine_p2:g} (reference of {n} tokens, {traced} traced)"
            if traced
            else f"the reference ({n} tokens) is too short to trace any position (needs > {rules.min_suffix} tokens)"
        )
    return ForkSummary(
        length=n,
        traced=traced,
        genuine_alternatives=len(genuine),
        genuine_forks=len(forks),
        fork_share=share,
        remerge_share=None if share is None else 1.0 - share,
        first_alternative=min((node.position for node in genuine), default=None),
        first_fork=min((node.position for node in forks), default=None),
        fork_positions=tuple(node.position for node in forks),
        undefined_reason=reason,
    )
