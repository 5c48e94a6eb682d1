"""What makes the temperature search able to fail: the same-distribution arm, the own seed, exact odds.

Zero exact matches of a 48-64-token text mean little on their own: the curve that drew the
target, sampled again under other seeds, would almost never reproduce it either. Three things
put the count in context:

- :func:`policy_arm`: the search run with any policy instead of pure temperature (the target's
  own policy gives the base rate of exact matches under an identical distribution);
- :func:`own_seed_divergence`: the target's policy and seed, drawn again through the search's own
  path, must give the target back (the source's control: its seed 102 reproducing its opening);
- :func:`exact_match_log10`: the exact, seedless probability that a policy draws the target token
  for token, from one teacher-forced pass; :func:`likely_prefix_length` the longest opening a
  policy draws with a given probability (the length at which its own samples must match).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np


def search_seeds(count: int, start: int, skip: int) -> list[int]:
    """``count`` seeds counting up from ``start``, leaving out ``skip`` (the target's own seed)."""
    seeds: list[int] = []
    seed = int(start)
    while len(seeds) < count:
        if seed != skip:
            seeds.append(seed)
        seed += 1
    return seeds


def policy_arm(
    model: Any,
    decode: Callable[[Sequence[int]], str],
    prompt: Sequence[int],
    target: dict[str, Any],
    fork: int,
    *,
    policy: Any,
    seeds: Sequence[int],
    max_tokens: int,
    ban_ids: Sequence[int],
    batch_size: int,
    stop_at_miss: bool,
) -> list[dict[str, Any]]:
    """The search's sample rows, drawn with ``policy`` at ``seeds`` (same fields as the temperature rows)."""
    from claimcheck.api.sampling import (
        GenerationRequest,
        can_still_match,
        common_prefix,
        content_recall,
        generate_batch,
        normalize_text,
    )

    target_text = target["text"]

    def missed(index: int, tokens: list[int]) -> bool:
        return not can_still_match(decode(tokens), target_text)

    requests = [GenerationRequest(prompt=prompt, policy=policy, seed=s, max_tokens=max_tokens, tag=s) for s in seeds]
    samples = generate_batch(model, requests, stop_ids=(), ban_ids=ban_ids, batch_size=batch_size,
                             stop_when=missed if stop_at_miss else None)
    rows = []
    for request, sample in zip(requests, samples):
        text = decode(sample.tokens)
        shared = common_prefix(sample.tokens, target["tokens"])
        cut_short = sample.finish_reason == "early"
        rows.append({
            "policy": policy.name, "temperature": None, "seed": request.tag,
            "exact_match": int(not cut_short and normalize_text(text) == normalize_text(target_text)),
            "shared_prefix": shared,
            "crossed_fork": int(fork < len(target["tokens"]) and shared > fork),
            "content_recall": None if cut_short else content_recall(text, target_text),
            "stopped_at_miss": cut_short,
            "text": text,
        })
    return rows


def own_seed_divergence(
    model: Any, prompt: Sequence[int], target: dict[str, Any], *, policy: Any, seed: int, ban_ids: Sequence[int]
) -> int | None:
    """Where the target's policy and seed, drawn again on their own, first leave the target's tokens (None: nowhere).

    A seeded draw that does not give itself back means the backend's sampling depends on more
    than the seed (on CUDA, on the batch the draw shared), so an exact match cannot be counted.
    """
    from claimcheck.api.sampling import GenerationRequest, generate_batch

    again = generate_batch(model, [GenerationRequest(prompt=prompt, policy=policy, seed=int(seed), max_tokens=len(target["tokens"]))],
                           stop_ids=(), ban_ids=ban_ids)[0]
    drawn, wanted = [int(t) for t in again.tokens], [int(t) for t in target["tokens"]]
    if drawn == wanted:
        return None
    return next((i for i, (a, b) in enumerate(zip(drawn, wanted)) if a != b), min(len(drawn), len(wanted)))


def prefix_log10(rows: np.ndarray, tokens: Sequence[int], policy: Any, ban_ids: Sequence[int]) -> np.ndarray:
    """log10 of the probability that ``policy`` draws ``tokens[:k + 1]`` one by one, for every k.

    ``rows[i]`` are the model's log-probs of token ``i`` given the prompt and ``tokens[:i]``; the
    banned ids are removed and the rest renormalised, as generation does before the policy applies.
    """
    from claimcheck.api.sampling import log_softmax

    lp = np.array(rows, dtype=np.float64)
    if len(ban_ids):
        lp[:, np.asarray(list(ban_ids), dtype=np.int64)] = -np.inf
    lp = log_softmax(lp)
    weights = log_softmax(np.asarray(policy.log_weights(lp), dtype=np.float64))
    picked = weights[np.arange(len(tokens)), np.asarray(list(tokens), dtype=np.int64)]
    return np.cumsum(picked) / math.log(10)


def exact_match_log10(rows: np.ndarray, tokens: Sequence[int], policy: Any, ban_ids: Sequence[int]) -> float:
    """log10 of the probability that ``policy`` draws all of ``tokens`` (see :func:`prefix_log10`)."""
    odds = prefix_log10(rows, tokens, policy, ban_ids)
    return float(odds[-1]) if len(odds) else 0.0


def likely_prefix_length(cumulative: np.ndarray, odds: float) -> int:
    """How many leading tokens a policy draws with probability at least ``odds`` (at least 1), from :func:`prefix_log10`.

    At that length a policy's own samples repeat the target often (312 samples at odds 0.05
    expect 15 matches), so a search whose count misses them cannot refute anything.
    """
    return max(1, int(np.sum(np.asarray(cumulative) >= math.log10(odds))))
