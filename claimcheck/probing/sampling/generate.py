"""Seeded batched generation: a small continuous-batching loop over an mlx-lm model.

Why not ``mlx_lm.generate.BatchGenerator``: it keeps row and sequence together
(per-sequence samplers, uid-tagged responses), but (1) every step it takes a
full-vocabulary ``logsumexp`` in MLX, whose CPU ``exp`` is several times slower
than numpy's (about 0.1 s per step at batch 64 on a 2-core machine, as much as
the model itself), (2) per-sequence samplers are called row by row, and (3) it
prefills every prompt in full, while the experiments here generate hundreds of
sequences that share long prefixes (a prompt plus part of its greedy
reference). This loop uses mlx-lm's model, ``make_prompt_cache`` and
``BatchKVCache`` directly:

- each distinct prefix ("root") is prefilled once; a sequence starts from a
  slice of its root's KV cache, merged into the batch with left padding;
- finished rows leave the batch (``BatchKVCache.filter``) and waiting requests
  join it (``BatchKVCache.extend``), so the batch stays full;
- one model call per step; the draws run in numpy, each row with its own
  policy and its own ``u(seed, step)``. The log-softmax runs in numpy on the
  CPU and on the device on a GPU (:func:`normalise_on_device`), where the host's
  full-vocabulary exp each step was time the device waited (gemma3-270m has
  262 k entries a row; docs/gpu.md measures the difference).

A row's draws therefore depend only on its seed and step; its logits can
differ from a solo run in the last bits (padding changes summation order),
which the tests measure as a token agreement rate.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from claimcheck.probing.sampling.policies import Policy, draw_tokens, log_softmax

DEFAULT_STOP_IDS = (2, 0)  # SmolLM2: <|im_end|> ends a chat turn, <|endoftext|> a completion


@dataclass(frozen=True)
class GenerationRequest:
    """One sequence to generate.

    Attributes:
        prompt: token ids to condition on (chat prompt plus any forced prefix); at least one.
        policy: how tokens are drawn.
        seed: the random stream (ignored by greedy policies).
        max_tokens: tokens to generate at most (>= 1).
        start_step: step index of the first generated token in the seed's
            stream; a continuation from position ``d`` of a response uses ``d``.
        tag: anything the caller wants back with the result.
        shadows: policies that also draw, with the same seed and step, from
            every distribution this sequence samples from; their tokens are
            recorded, not followed. A control arm drawn this way sees exactly
            the numbers the main arm saw, so any difference between the two is
            the policies', not the arithmetic of two batch rows.
    """

    prompt: Sequence[int]
    policy: Policy
    seed: int = 0
    max_tokens: int = 64
    start_step: int = 0
    tag: Any = None
    shadows: tuple[Policy, ...] = ()


@dataclass
class Generation:
    """What came out for one request.

    Attributes:
        tokens: generated ids, without the stop token.
        logprobs: the model's log-prob of each token in ``tokens`` (natural
            log; with ``ban_ids`` the banned mass is renormalised away).
        finish_reason: ``"stop"`` (a stop id was drawn), ``"length"``, or
            ``"early"`` (the caller's ``stop_when`` ended it).
        request: the request it answers.
        shadow_tokens: per shadow policy name, its draw at each step (one per
            drawn token, the stop token included).
    """

    tokens: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    finish_reason: str | None = None
    request: GenerationRequest | None = None
    shadow_tokens: dict[str, list[int]] = field(default_factory=dict)


@dataclass
class GenerationStats:
    """Work done by :func:`generate_batch` calls (accumulates)."""

    sequences: int = 0
    generated_tokens: int = 0
    prefill_tokens: int = 0
    steps: int = 0
    seconds: float = 0.0

    @property
    def tokens_per_second(self) -> float:
        return self.generated_tokens / self.seconds if self.seconds > 0 else 0.0

    def to_json(self) -> dict[str, float]:
        return {
            "sequences": self.sequences,
            "generated_tokens": self.generated_tokens,
            "prefill_tokens": self.prefill_tokens,
            "steps": self.steps,
            "seconds": round(self.seconds, 3),
            "tokens_per_second": round(self.tokens_per_second, 2),
        }


@dataclass
class Root:
    """A prefilled token sequence whose KV-cache prefixes start several requests."""

    tokens: tuple[int, ...]
    cache: list[Any]


def prefill(model: Any, tokens: Sequence[int], *, logits: bool = False) -> tuple[Root, Any]:
    """Run ``tokens`` through the model once; return the root cache and, if asked, the log-probs.

    With ``logits=True`` the second value is an ``[len(tokens), V]`` numpy array
    of next-token log-probs after each token (row ``i`` predicts token ``i+1``);
    otherwise the head is never evaluated (MLX is lazy) and it is ``None``.
    """
    import mlx.core as mx
    from mlx_lm.models.cache import make_prompt_cache

    cache = make_prompt_cache(model)
    out = model(mx.array([list(map(int, tokens))]), cache=cache)
    if logits:
        rows = out[0].astype(mx.float32)
        mx.eval(rows, [c.state for c in cache])
        return Root(tuple(int(t) for t in tokens), cache), log_softmax(np.array(rows))
    mx.eval([c.state for c in cache])
    return Root(tuple(int(t) for t in tokens), cache), None


def teacher_forced_logprobs(model: Any, prompt: Sequence[int], continuation: Sequence[int]) -> np.ndarray:
    """Next-token log-probs at each continuation position, from one forward pass.

    Returns ``[len(continuation), V]`` (numpy): row ``i`` is the distribution of
    ``continuation[i]`` given the prompt and ``continuation[:i]``.
    """
    _, rows = prefill(model, list(prompt) + list(continuation), logits=True)
    start = len(prompt) - 1
    return rows[start : start + len(continuation)]


def _plan_roots(contexts: Sequence[tuple[int, ...]], roots: Sequence[Root]) -> list[Root | tuple[int, ...]]:
    """For each context, a root whose tokens start with it (given roots first, else the longest new one)."""
    known: list[Any] = list(roots)
    assigned: list[Any] = [None] * len(contexts)
    order = sorted(range(len(contexts)), key=lambda i: -len(contexts[i]))
    for i in order:
        context = contexts[i]
        for root in known:
            tokens = root.tokens if isinstance(root, Root) else root
            if len(tokens) >= len(context) and tokens[: len(context)] == context:
                assigned[i] = root
                break
        else:
            known.append(context)
            assigned[i] = context
    return assigned


def _slice_cache(root: Root, length: int) -> list[Any]:
    from mlx_lm.models.cache import KVCache

    out = []
    for layer in root.cache:
        piece = KVCache()
        if length > 0:
            piece.keys = layer.keys[..., :length, :]
            piece.values = layer.values[..., :length, :]
        piece.offset = length
        out.append(piece)
    return out


def normalise_on_device() -> bool:
    """Whether the step's log-softmax (and bans) run in MLX: on a GPU, where MLX's reductions are fast.

    On the CPU MLX's ``exp`` is several times slower than numpy's, so the step's rows are normalised there.
    """
    import mlx.core as mx

    return mx.default_device().type == mx.DeviceType.gpu


def _draw(
    draws: Sequence[tuple[Policy, int]], rows: np.ndarray, requests: Sequence[GenerationRequest], active: list[int], steps_taken: dict[int, int]
) -> np.ndarray:
    """The token of each ``(policy, batch row)`` draw, with that row's seed and step; one pass per policy.

    ``rows`` are the step's log-probs, or its raw logits when every policy is greedy (an argmax
    needs no normalising).
    """
    tokens = np.empty(len(draws), dtype=np.int64)
    groups: dict[int, list[int]] = {}
    for k, (policy, _) in enumerate(draws):
        groups.setdefault(id(policy), []).append(k)
    for members in groups.values():
        policy = draws[members[0]][0]
        batch_rows = [draws[k][1] for k in members]
        seeds = [requests[active[r]].seed for r in batch_rows]
        step_ids = [requests[active[r]].start_step + steps_taken[active[r]] for r in batch_rows]
        tokens[members] = draw_tokens(policy, rows[batch_rows], seeds, step_ids)
    return tokens


def generate_batch(
    model: Any,
    requests: Sequence[GenerationRequest],
    *,
    stop_ids: Sequence[int] = DEFAULT_STOP_IDS,
    ban_ids: Sequence[int] = (),
    batch_size: int = 64,
    roots: Sequence[Root] = (),
    stop_when: Callable[[int, list[int]], bool] | None = None,
    stats: GenerationStats | None = None,
    logprobs: bool = True,
    longest_first: bool = False,
    finished: Callable[[int], None] | None = None,
    on_device: bool | None = None,
) -> list[Generation]:
    """Generate every request, keeping up to ``batch_size`` sequences decoding at once.

    Args:
        model: an mlx-lm model (its layers must use ``KVCache``, as llama-like models do).
        requests: the sequences; results come back in the same order.
        stop_ids: token ids that end a sequence (not included in the output).
        ban_ids: token ids made impossible (their logits set to ``-inf`` before
            the log-softmax), for fixed-length samples.
        batch_size: sequences decoded together.
        roots: prefilled sequences (from :func:`prefill`) to start requests
            from; a request whose ``prompt[:-1]`` is a prefix of a root reuses
            its cache. Other prompts are prefilled here, once per distinct prefix.
        stop_when: ``stop_when(index, tokens_so_far) -> True`` ends request
            ``index`` early (finish reason ``"early"``).
        stats: accumulates token counts and wall time when given.
        logprobs: record each token's log-prob. ``False`` lets a step of greedy
            rows skip the full-vocabulary log-softmax (``Generation.logprobs``
            then stays empty for them).
        longest_first: admit requests in order of decreasing ``max_tokens`` rather than the
            caller's order, so the last steps are not spent on a few long stragglers (fewer
            steps for the same tokens). Results still come back in the caller's order.
        finished: ``finished(count)`` after every step in which some request ended, with the
            number ended so far (for a progress line; it never changes a result).
        on_device: normalise each step's logits (bans, log-softmax) in MLX rather than numpy;
            ``None``: :func:`normalise_on_device`. The two agree to float32 rounding, so a draw on a
            CDF boundary may differ between them, as between two backends.

    Returns:
        One :class:`Generation` per request.
    """
    import mlx.core as mx
    from mlx_lm.models.cache import BatchKVCache

    started = time.perf_counter()
    results = [Generation(request=r) for r in requests]
    for index, request in enumerate(requests):
        if len(request.prompt) < 1 or request.max_tokens < 1:
            raise ValueError(f"request {index}: needs a non-empty prompt and max_tokens >= 1")
    if not requests:
        return results
    stop_set = {int(t) for t in stop_ids}
    ban = np.array(sorted({int(t) for t in ban_ids}), dtype=np.int64)
    device = normalise_on_device() if on_device is None else on_device
    banned: Any = None  # the bans as an MLX row mask, built once the vocabulary is seen
    contexts = [tuple(int(t) for t in r.prompt[:-1]) for r in requests]
    plan = _plan_roots(contexts, roots)
    built: dict[tuple[int, ...], Root] = {}
    prefill_tokens = 0

    def root_for(index: int) -> Root:
        nonlocal prefill_tokens
        entry = plan[index]
        if isinstance(entry, Root):
            return entry
        if entry not in built:
            built[entry], _ = prefill(model, entry) if entry else (Root((), []), None)
            prefill_tokens += len(entry)
        return built[entry]

    waiting = list(range(len(requests)))
    if longest_first:
        waiting.sort(key=lambda index: -requests[index].max_tokens)  # stable: ties keep the caller's order
    waiting.reverse()  # pop() from the end admits in that order
    active: list[int] = []
    pending_input: dict[int, int] = {}
    steps_taken: dict[int, int] = {}
    cache: list[Any] | None = None
    steps = 0
    ended = 0

    def admit(count: int) -> None:
        nonlocal cache
        joining = [waiting.pop() for _ in range(min(count, len(waiting)))]
        if not joining:
            return
        per_row = []
        for index in joining:
            context = contexts[index]
            root = root_for(index)
            per_row.append(_slice_cache(root, len(context)) if context else None)
            pending_input[index] = int(requests[index].prompt[-1])
            steps_taken[index] = 0
        n_layers = len(model.layers)
        group = []
        for layer in range(n_layers):
            pieces = [row[layer] if row is not None else None for row in per_row]
            if all(p is None for p in pieces):
                group.append(BatchKVCache([0] * len(joining)))
            else:
                from mlx_lm.models.cache import KVCache

                group.append(BatchKVCache.merge([p if p is not None else KVCache() for p in pieces]))
        if cache is None:
            cache = group
        else:
            for mine, theirs in zip(cache, group):
                mine.extend(theirs)
        active.extend(joining)

    refill_at = max(1, batch_size // 8)
    while waiting or active:
        if waiting and (not active or batch_size - len(active) >= refill_at):
            admit(batch_size - len(active))
        inputs = mx.array([[pending_input[i]] for i in active])
        out = model(inputs, cache=cache)[:, -1, :].astype(mx.float32)
        steps += 1
        # greedy rows need only the argmax; the log-softmax is most of a step's numpy work
        normalise = logprobs or any(not requests[i].policy.greedy or requests[i].shadows for i in active)
        lp: np.ndarray | None
        if device:
            if ban.size:
                if banned is None:
                    banned = mx.array(np.isin(np.arange(out.shape[-1]), ban))
                out = mx.where(banned, mx.array(-np.inf, dtype=mx.float32), out)
            if normalise:
                out = out - mx.logsumexp(out, axis=-1, keepdims=True)
            logits = np.array(out)
            lp = logits if normalise else None
        else:
            logits = np.array(out)
            if ban.size:
                logits[:, ban] = -np.inf
            lp = log_softmax(logits) if normalise else None
        chosen = _draw([(requests[i].policy, row) for row, i in enumerate(active)], logits if lp is None else lp, requests, active, steps_taken)
        shadow_draws = [(shadow, row) for row, i in enumerate(active) for shadow in requests[i].shadows]
        if shadow_draws:
            assert lp is not None, "a row with shadows always gets its log-probs above"
            for (shadow, row), token in zip(shadow_draws, _draw(shadow_draws, lp, requests, active, steps_taken)):
                results[active[row]].shadow_tokens.setdefault(shadow.name, []).append(int(token))
        keep: list[int] = []
        for row, index in enumerate(active):
            token = int(chosen[row])
            result = results[index]
            steps_taken[index] += 1
            if token in stop_set:
                result.finish_reason = "stop"
                continue
            result.tokens.append(token)
            if lp is not None:
                result.logprobs.append(float(lp[row, token]))
            if len(result.tokens) >= requests[index].max_tokens:
                result.finish_reason = "length"
            elif stop_when is not None and stop_when(index, result.tokens):
                result.finish_reason = "early"
            else:
                pending_input[index] = token
                keep.append(row)
        if len(keep) < len(active):
            ended += len(active) - len(keep)
            if finished is not None:
                finished(ended)
            active = [active[row] for row in keep]
            if active:
                for layer in cache:  # type: ignore[union-attr]
                    layer.filter(keep)
            else:
                cache = None
    mx.clear_cache()
    if stats is not None:
        stats.sequences += len(requests)
        stats.generated_tokens += sum(len(r.tokens) for r in results)
        stats.prefill_tokens += prefill_tokens
        stats.steps += steps
        stats.seconds += time.perf_counter() - started
    return results
