"""Route departures (methods, section D): where each seed first leaves the greedy path, and how coherent the sample is after it.

Before its first departure a sample *is* the reference, so the distribution it draws from at step
``t`` is the teacher-forced one after ``ref[:t]``, the same for every seed: the first departure of
every (policy, seed) is read off one teacher-forced pass with the matched-seed draws ``u(seed, t)``.
Only what comes after a departure needs generating.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from claimcheck.probing.sampling.generate import DEFAULT_STOP_IDS, GenerationRequest, GenerationStats, Root, generate_batch
from claimcheck.probing.sampling.policies import CdfTable, Policy
from claimcheck.probing.sampling.seeds import uniform_draws


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
    finished: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """Continue every given departure to the reference's length and score it under the model.

    Each item has ``prompt`` (ids), ``ref``, ``ref_logprobs`` (per position),
    ``policy`` (a :class:`Policy`), ``seed``, ``departure`` (position ``d``),
    ``token`` (drawn at ``d``) and ``token_logprob`` (the model's log-prob of it).
    The sample from ``d`` onward is the departing token plus a continuation
    drawn with the same seed from step ``d + 1``, up to ``len(ref)`` tokens in
    all or a stop token. Returns per item the sample's mean log-prob, the
    reference's mean log-prob over the whole reference and over the same
    positions, and the continuation tokens. ``finished(count)`` hears how many items are done.
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
    done_without_generating = len(items) - len(requests)

    def ended(count: int) -> None:
        if finished is not None:
            finished(done_without_generating + count)

    ended(0)
    generated = generate_batch(model, requests, stop_ids=stop_ids, batch_size=batch_size, roots=roots, stats=stats, finished=ended)
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
