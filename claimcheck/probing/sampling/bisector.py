"""The fork map of several prompts on a model (methods, section C): every branch of every prompt in one batched generation.

Each prompt's greedy reference is prefilled once (:class:`ReferencePasses`); every branch starts
from a slice of that KV cache (the reference up to the branch point), the branches of all prompts
decode together, and a branch stops as soon as its label (or outcome) can no longer change.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from claimcheck.probing.sampling.countdown import Countdown
from claimcheck.probing.sampling.forkmap import (
    LABEL,
    SETTLE_LEVELS,
    Node,
    RunTracker,
    TraceRules,
    make_node,
    position_labels,
    summarize,
    traced_positions,
)
from claimcheck.probing.sampling.generate import DEFAULT_STOP_IDS, GenerationRequest, GenerationStats, generate_batch
from claimcheck.probing.sampling.policies import get_policy
from claimcheck.probing.sampling.reference import Progress, ReferencePasses, greedy_references, position_features, quiet

GENUINE = "genuine"
ALL = "all"


def bisector_traces(
    model: Any,
    prompts: Sequence[Sequence[int]],
    *,
    rules: TraceRules = TraceRules(),
    max_ref_tokens: int = 80,
    stop_ids: Sequence[int] = DEFAULT_STOP_IDS,
    early_stop: bool = True,
    settle: str = LABEL,
    batch_size: int = 64,
    progress: Progress = quiet,
    branches: str = ALL,
    known: Sequence[dict[str, Any] | None] | None = None,
    passes: ReferencePasses | None = None,
) -> list[dict[str, Any]]:
    """The fork map of each prompt (methods, section C), all branches in one batched generation.

    Args:
        prompts: chat-templated prompt ids.
        rules: thresholds (defaults are the original experiment's).
        max_ref_tokens: length cap of the greedy reference.
        early_stop: stop a branch once it is decided (a re-merge is certain,
            or the rest of the branch cannot lift the score over the next
            threshold); its recorded score then covers the tokens generated so
            far, its label is the same as a full run's.
        settle: what decides a branch: ``"label"`` (whether it diverges, all
            that a label or a share reads; the default) or ``"outcome"``
            (reconverged, partial or diverged, which runs re-merging branches longer).
        branches: ``"all"`` traces every traceable position; ``"genuine"`` only
            the genuine alternatives (rank-2 probability >= ``rules.genuine_p2``),
            which is all that fork shares, funnels and re-merge shares read. A
            genuine-only record has no per-position labels (a position without a
            genuine alternative may be REMERGE or LOCKED; only its branch tells).
        known: per prompt, a genuine-only record of it to complete (its
            reference and branches are kept; only the missing branches run), or ``None``.
        passes: the teacher-forced passes to read and extend (one is made when not given);
            a caller that reads the same references afterwards passes its own and prefills none again.

    Returns:
        One JSON-able record per prompt: the reference, per-position features,
        nodes, labels (``None`` for a genuine-only record), summary and work done.
    """
    if branches not in (ALL, GENUINE):
        raise ValueError(f"`branches` must be {ALL!r} or {GENUINE!r}, got {branches!r}")
    if settle not in SETTLE_LEVELS:
        raise ValueError(f"`settle` must be one of {', '.join(SETTLE_LEVELS)}, got {settle!r}")
    known = list(known) if known is not None else [None] * len(prompts)
    stats = GenerationStats()
    fresh = [k for k, record in enumerate(known) if record is None]
    progress(f"bisector trace: greedy references for {len(fresh)} prompt(s)")
    refs: list[list[int]] = [list(record["ref"]) if record is not None else [] for record in known]
    generated = greedy_references(model, [prompts[k] for k in fresh], max_tokens=max_ref_tokens, stop_ids=stop_ids, batch_size=batch_size, stats=stats)
    for k, ref in zip(fresh, generated):
        refs[k] = ref
    passes = passes if passes is not None else ReferencePasses(model)
    before = passes.prefill_tokens
    computed = [passes.get(p, r) for p, r in zip(prompts, refs)]
    roots = [root for root, _ in computed]
    features = [
        list(record["positions"]) if record is not None else position_features(rows, r)
        for record, (_, rows), r in zip(known, computed, refs)
    ]
    reference_tokens = passes.prefill_tokens - before
    greedy = get_policy("greedy")
    requests: list[GenerationRequest] = []
    trackers: list[RunTracker] = []
    for k, (prompt, ref, feats) in enumerate(zip(prompts, refs, features)):
        n = len(ref)
        done = {node["position"] for node in record["nodes"]} if (record := known[k]) is not None else set()
        for i in traced_positions(n, rules):
            if i in done or (branches == GENUINE and feats[i]["p2"] < rules.genuine_p2):
                continue
            lr = n - 1 - i
            forced = list(prompt) + list(ref[:i]) + [feats[i]["rank2"]]
            requests.append(GenerationRequest(prompt=forced, policy=greedy, max_tokens=lr + rules.extra_tokens, tag=(k, i)))
            trackers.append(RunTracker(ref[i + 1 :]))

    def settled(index: int, tokens: list[int]) -> bool:
        tracker = trackers[index]
        tracker.push(tokens[-1])
        return early_stop and tracker.decided(requests[index].max_tokens - len(tokens), rules, settle)

    countdown = Countdown("bisector trace", "branches", len(requests), progress)
    countdown.start()
    outcomes = generate_batch(model, requests, stop_ids=stop_ids, batch_size=batch_size, roots=roots, stop_when=settled, stats=stats,
                              logprobs=False, longest_first=True, finished=countdown.advance_to)
    nodes_by_prompt: list[list[Any]] = [[Node(**(node | {"branch_tokens": tuple(node["branch_tokens"])})) for node in record["nodes"]] if record is not None else [] for record in known]
    for request, branch in zip(requests, outcomes):
        k, i = request.tag
        f = features[k][i]
        nodes_by_prompt[k].append(
            make_node(i, f["p1"], f["p2"], f["top1"], f["rank2"], branch.tokens, refs[k], rules, decided_early=branch.finish_reason == "early",
                      settle=settle)
        )
    records = []
    for k, prompt in enumerate(prompts):
        ref, nodes = refs[k], sorted(nodes_by_prompt[k], key=lambda node: node.position)
        summary = summarize(len(ref), nodes, rules, traced=len(traced_positions(len(ref), rules)))
        records.append(
            {
                "prompt_tokens": len(prompt),
                "branches": branches,
                "settle": settle if early_stop else None,
                "ref": list(ref),
                "ref_mean_logprob": float(np.mean([f["ref_logprob"] for f in features[k]])) if ref else None,
                "positions": features[k],
                "nodes": [node.to_json() for node in nodes],
                "labels": position_labels(len(ref), nodes) if branches == ALL else None,
                "summary": summary.__dict__ | {"fork_positions": list(summary.fork_positions)},
                "work": stats.to_json() | {"reference_pass_tokens": reference_tokens,
                                           "completed_a_genuine_only_trace": known[k] is not None},
            }
        )
    return records
