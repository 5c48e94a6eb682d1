"""The experiments themselves, on a loaded model: greedy references, the bisector trace, route
departures with coherence, and the temperature search.

Every function takes an mlx-lm model and token ids and returns JSON-able
dicts, so a probe can cache them and put them in artifacts. Generation is
always batched: all branches of a trace (of all prompts asked for at once),
all continuations of a route, all samples of a temperature sweep.

One shortcut is exact rather than approximate: before its first departure a
sample *is* the reference, so the distribution it draws from at step ``t`` is
the teacher-forced distribution after ``ref[:t]``, the same for every seed.
The first departure of every (policy, seed) is therefore read off one
teacher-forced pass with the matched-seed draws ``u(seed, t)``; only what
comes after a departure needs generating.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Sequence, TypedDict

import numpy as np

from claimcheck.sampling.forkmap import (
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
from claimcheck.sampling.generate import DEFAULT_STOP_IDS, GenerationRequest, GenerationStats, Root, generate_batch, prefill
from claimcheck.sampling.policies import CdfTable, Policy, get_policy
from claimcheck.sampling.seeds import uniform_draws

Progress = Callable[[str], None]


def _quiet(message: str) -> None:
    return None


def greedy_references(
    model: Any,
    prompts: Sequence[Sequence[int]],
    *,
    max_tokens: int = 80,
    stop_ids: Sequence[int] = DEFAULT_STOP_IDS,
    batch_size: int = 64,
    stats: GenerationStats | None = None,
) -> list[list[int]]:
    """Greedy paths (stop ids excluded) for several prompts, in one batch."""
    greedy = get_policy("greedy")
    out = generate_batch(
        model,
        [GenerationRequest(prompt=p, policy=greedy, max_tokens=max_tokens) for p in prompts],
        stop_ids=stop_ids,
        batch_size=batch_size,
        stats=stats,
        logprobs=False,
    )
    return [g.tokens for g in out]


def reference_pass(model: Any, prompt: Sequence[int], ref: Sequence[int]) -> tuple[Root, np.ndarray]:
    """One forward pass over prompt + reference: the root cache for branches and the per-position log-probs.

    Returns ``(root, rows)`` with ``rows[i]`` the teacher-forced distribution of ``ref[i]`` (``[N, V]``).
    """
    root, rows = prefill(model, list(prompt) + list(ref), logits=True)
    start = len(prompt) - 1
    return root, rows[start : start + len(ref)]


class PositionFeatures(TypedDict):
    """What a sampler sees at one reference position (see :func:`position_features`)."""

    top1: int
    rank2: int
    p1: float
    p2: float
    ref_logprob: float
    entropy: float
    margin: float
    top2_mass: float
    bimodality: float


def position_features(rows: np.ndarray, ref: Sequence[int]) -> list[PositionFeatures]:
    """Per reference position: the reference token's probability and the best other token.

    ``p1``/``top1`` are the reference token (the greedy choice) and its
    probability; ``p2``/``rank2`` the most probable token other than it (the
    rank-2 token, robust to near-ties between the greedy decode and the
    teacher-forced pass). Also the local features a sampler could see:
    entropy (nats), ``p1 - p2``, top-2 mass and the runner-up's share of the
    mass outside the top token (``p2 / (1 - p1)``, high for a two-peaked
    distribution), and the reference token's log-prob.
    """
    out: list[PositionFeatures] = []
    for i, token in enumerate(ref):
        row = rows[i].astype(np.float64)
        ref_lp = float(row[token])
        masked = row.copy()
        masked[token] = -np.inf
        rank2 = int(np.argmax(masked))
        probs = np.exp(row)
        entropy = float(-np.sum(np.where(probs > 0, probs * row, 0.0)))
        p1, p2 = math.exp(ref_lp), math.exp(float(row[rank2]))
        out.append(
            {
                "top1": int(token),
                "rank2": rank2,
                "p1": p1,
                "p2": p2,
                "ref_logprob": ref_lp,
                "entropy": entropy,
                "margin": p1 - p2,
                "top2_mass": p1 + p2,
                "bimodality": p2 / (1.0 - p1) if p1 < 1.0 else 0.0,
            }
        )
    return out


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
    progress: Progress = _quiet,
    branches: str = ALL,
    known: Sequence[dict[str, Any] | None] | None = None,
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
    passes = [reference_pass(model, p, r) for p, r in zip(prompts, refs)]
    roots = [root for root, _ in passes]
    features = [
        list(record["positions"]) if record is not None else position_features(rows, r)
        for record, (_, rows), r in zip(known, passes, refs)
    ]
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

    progress(f"bisector trace: {len(requests)} branches")
    outcomes = generate_batch(model, requests, stop_ids=stop_ids, batch_size=batch_size, roots=roots, stop_when=settled, stats=stats,
                              logprobs=False, longest_first=True)
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
                "work": stats.to_json() | {"completed_a_genuine_only_trace": known[k] is not None},
            }
        )
    return records


def first_departures(rows: np.ndarray, ref: Sequence[int], policy: Policy, seeds: Sequence[int]) -> tuple[list[int], list[int | None]]:
    """First departure from ``ref`` and the token drawn there, per seed, from teacher-forced rows.

    ``rows[t]`` is the distribution after ``ref[:t]``; seed ``s`` draws
    ``u(s, t)`` at step ``t`` exactly as in generation.
    """
    n = len(ref)
    if n == 0:
        return [0] * len(seeds), [None] * len(seeds)
    table = CdfTable(policy.log_weights(rows))
    positions = np.repeat(np.arange(n), len(seeds))
    seed_list = np.tile(np.asarray(seeds, dtype=np.int64), n)
    u = uniform_draws([int(s) for s in seed_list], [int(t) for t in positions])
    drawn = table.locate(positions, u).reshape(n, len(seeds))
    differs = drawn != np.asarray(ref, dtype=np.int64)[:, None]
    departures: list[int] = []
    tokens: list[int | None] = []
    for column in range(len(seeds)):
        hits = np.flatnonzero(differs[:, column])
        if hits.size:
            departures.append(int(hits[0]))
            tokens.append(int(drawn[hits[0], column]))
        else:
            departures.append(n)
            tokens.append(None)
    return departures, tokens


def fork_departure_coherence(
    model: Any,
    items: Sequence[dict[str, Any]],
    *,
    roots: Sequence[Root] = (),
    stop_ids: Sequence[int] = DEFAULT_STOP_IDS,
    batch_size: int = 64,
    stats: GenerationStats | None = None,
) -> list[dict[str, Any]]:
    """Continue every given departure to the reference's length and score it under the model.

    Each item has ``prompt`` (ids), ``ref``, ``ref_logprobs`` (per position),
    ``policy`` (a :class:`Policy`), ``seed``, ``departure`` (position ``d``),
    ``token`` (drawn at ``d``) and ``token_logprob`` (the model's log-prob of it).
    The sample from ``d`` onward is the departing token plus a continuation
    drawn with the same seed from step ``d + 1``, up to ``len(ref)`` tokens in
    all or a stop token. Returns per item the sample's mean log-prob, the
    reference's mean log-prob over the whole reference and over the same
    positions, and the continuation tokens.
    """
    requests, owners = [], []
    stop_set = {int(t) for t in stop_ids}
    for index, item in enumerate(items):
        d, n = item["departure"], len(item["ref"])
        remaining = n - d - 1
        if remaining > 0 and item["token"] not in stop_set:
            requests.append(
                GenerationRequest(
                    prompt=list(item["prompt"]) + list(item["ref"][:d]) + [item["token"]],
                    policy=item["policy"],
                    seed=item["seed"],
                    start_step=d + 1,
                    max_tokens=remaining,
                )
            )
            owners.append(index)
    generated = generate_batch(model, requests, stop_ids=stop_ids, batch_size=batch_size, roots=roots, stats=stats)
    continuations = dict(zip(owners, generated))
    out = []
    for index, item in enumerate(items):
        continuation = continuations.get(index)
        logprobs = [item["token_logprob"]] + (continuation.logprobs if continuation else [])
        d = item["departure"]
        out.append(
            {
                "sample_mean_logprob": float(np.mean(logprobs)),
                "ref_mean_logprob": float(np.mean(item["ref_logprobs"])),
                "ref_span_mean_logprob": float(np.mean(item["ref_logprobs"][d:])),
                "sample_tokens": [item["token"]] + (continuation.tokens if continuation else []),
            }
        )
    return out


_WORD = re.compile(r"[a-z0-9']+")
STOPWORDS = frozenset(
    "a an the and or but if of to in on at by for with from as is are was were be been being it its this that these "
    "those there their they them he she his her i you your we our my me not no so do does did can could should would "
    "will may might must have has had than then too very just also into about over under up down out off again".split()
)


def normalize_text(text: str) -> str:
    """Whitespace-normalised text for exact matching."""
    return " ".join(text.split())


def content_words(text: str) -> set[str]:
    """Lower-cased word set without common function words (the content of a text)."""
    return {w for w in _WORD.findall(text.lower()) if w not in STOPWORDS}


def content_recall(sample: str, target: str) -> float | None:
    """Share of the target's content words that the sample also uses (``None`` if the target has none)."""
    wanted = content_words(target)
    if not wanted:
        return None
    return len(wanted & content_words(sample)) / len(wanted)


MISS_MARGIN_CHARS = 8


def can_still_match(text: str, target: str, margin: int = MISS_MARGIN_CHARS) -> bool:
    """Whether a sample whose tokens so far decode to ``text`` can still equal ``target`` (whitespace-normalised).

    The text of a token prefix is a prefix of the final text except near its end (an incomplete
    UTF-8 character, a space that a detokenizer joins to the next token), so only a difference
    more than ``margin`` characters before its end rules the match out.
    """
    sample, wanted = normalize_text(text), normalize_text(target)
    settled = len(sample) - margin
    return settled <= 0 or wanted.startswith(sample[:settled])


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def temperature_search(
    model: Any,
    decode: Callable[[Sequence[int]], str],
    prompt: Sequence[int],
    *,
    target_policy: Policy,
    target_seed: int,
    temperatures: Sequence[float],
    seeds: Sequence[int],
    max_tokens: int,
    ban_ids: Sequence[int] = DEFAULT_STOP_IDS,
    batch_size: int = 64,
    progress: Progress = _quiet,
    stop_at_miss: bool = False,
) -> dict[str, Any]:
    """Can pure temperature reproduce one curve-generated sample (methods, section E)?

    The target and every temperature sample have exactly ``max_tokens`` tokens
    (stop ids banned). The target's fork is the first position where it leaves
    the greedy path (the mode all temperature paths concentrate on); a
    temperature sample crosses the fork when it agrees with the target through
    that position.

    With ``stop_at_miss`` a sample stops as soon as its text can no longer equal
    the target's (:func:`can_still_match`): exact matches, fork crossings and
    shared prefixes come out the same, at a fraction of the tokens, but such a
    sample has no ``content_recall`` (its text is cut short).
    """
    stats = GenerationStats()
    greedy = get_policy("greedy")
    progress("temperature search: target and greedy path")
    target, greedy_path = generate_batch(
        model,
        [
            GenerationRequest(prompt=prompt, policy=target_policy, seed=target_seed, max_tokens=max_tokens),
            GenerationRequest(prompt=prompt, policy=greedy, max_tokens=max_tokens),
        ],
        stop_ids=(),
        ban_ids=ban_ids,
        batch_size=batch_size,
        stats=stats,
    )
    target_text = decode(target.tokens)
    fork = common_prefix(target.tokens, greedy_path.tokens)
    requests = [
        GenerationRequest(prompt=prompt, policy=get_policy(f"temp{t:g}"), seed=s, max_tokens=max_tokens, tag=(t, s))
        for t in temperatures
        for s in seeds
    ]
    progress(f"temperature search: {len(requests)} samples")

    def missed(index: int, tokens: list[int]) -> bool:
        return not can_still_match(decode(tokens), target_text)

    samples = generate_batch(
        model, requests, stop_ids=(), ban_ids=ban_ids, batch_size=batch_size, stats=stats,
        stop_when=missed if stop_at_miss else None,
    )
    rows = []
    for request, sample in zip(requests, samples):
        text = decode(sample.tokens)
        shared = common_prefix(sample.tokens, target.tokens)
        cut_short = sample.finish_reason == "early"
        rows.append(
            {
                "temperature": request.tag[0],
                "seed": request.tag[1],
                "exact_match": int(not cut_short and normalize_text(text) == normalize_text(target_text)),
                "shared_prefix": shared,
                "crossed_fork": int(fork < len(target.tokens) and shared > fork),
                "content_recall": None if cut_short else content_recall(text, target_text),
                "stopped_at_miss": cut_short,
                "text": text,
            }
        )
    return {
        "target": {"tokens": target.tokens, "text": target_text, "policy": target_policy.describe(), "seed": target_seed},
        "greedy": {"tokens": greedy_path.tokens, "text": decode(greedy_path.tokens)},
        "fork_position": fork,
        "samples": rows,
        "work": stats.to_json(),
    }
