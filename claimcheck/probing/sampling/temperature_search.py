"""Can pure temperature reproduce one curve-generated sample? (methods, section E), on a model."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from claimcheck.probing.sampling.countdown import Countdown
from claimcheck.probing.sampling.generate import DEFAULT_STOP_IDS, GenerationRequest, GenerationStats, generate_batch
from claimcheck.probing.sampling.matching import can_still_match, common_prefix, content_recall, normalize_text
from claimcheck.probing.sampling.policies import Policy, get_policy
from claimcheck.probing.sampling.reference import Progress, quiet



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
    progress: Progress = quiet,
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
    countdown = Countdown("temperature search", "samples", len(requests), progress)
    countdown.start()

    def missed(index: int, tokens: list[int]) -> bool:
        return not can_still_match(decode(tokens), target_text)

    samples = generate_batch(
        model, requests, stop_ids=(), ban_ids=ban_ids, batch_size=batch_size, stats=stats,
        stop_when=missed if stop_at_miss else None, finished=countdown.advance_to,
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
