"""The temperature search (methods E): can pure temperature reproduce one curve-generated sample?

``temperature_search`` draws a target with a curve policy, then sweeps temperatures x seeds for an
exact match, recording fork crossings, shared prefixes and content recall per sample. Every call
also checks that the target's own seed reproduces it and records the exact, seedless odds of an
exact match (``probes/temperature_controls.py``); ``search_policy`` replaces pure temperature by
another policy, e.g. the target's own under other seeds: the base rate of exact matches.
"""

from __future__ import annotations

from typing import Any, Sequence

from claimcheck.errors import ProbeError
from claimcheck.probe import Output, ProbeContext, probe
from .curve_cache import cached_many, whole_on_first_look
from .temperature_controls import exact_match_log10, own_seed_reproduces, policy_arm, search_seeds
from .curve_prompts import one_prompt
from .curve_text import DEFAULT_MODEL, chat_ids, load_text_model, model_key, stop_token_ids

TEMPERATURE_GRID = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.4, 1.6, 2.0)


_SEARCH_OUTPUTS = {
    "exact_match": Output("0/1", description="temperature sample equals the target text (whitespace-normalised)"),
    "crossed_fork": Output("0/1", description="temperature sample agrees with the target through the target's fork (its first departure from the greedy path)"),
    "content_recall": Output("fraction", description="share of the target's content words the temperature sample also uses"),
    "shared_prefix": Output("tokens", description="tokens the temperature sample shares with the target from the start"),
}


@probe("temperature_search", outputs=_SEARCH_OUTPUTS, reads_text=True)
@whole_on_first_look(_SEARCH_OUTPUTS)
def temperature_search(
    ctx: ProbeContext,
    *,
    model: str = DEFAULT_MODEL,
    variant: str | None = "fp32",
    prompt: str = "lighthouse",
    target_policy: str = "curve-router",
    target_seed: int = 102,
    temperatures: Sequence[float] = TEMPERATURE_GRID,
    seeds: int = 26,
    seed_start: int = 0,
    max_tokens: int = 48,
    batch_size: int = 64,
    stop_at_miss: bool = False,
    search_policy: str = "",
) -> dict[str, list[float]]:
    """Sweep pure temperature x seeds for an exact match of one curve-generated sample.

    ``stop_at_miss`` stops each sample once its text can no longer equal the target's: the
    same exact matches, fork crossings and shared prefixes for a fraction of the tokens, but no
    ``content_recall`` for the samples cut short (claims on content keep it off).

    ``search_policy`` (a policy name) draws the same number of samples (temperatures x seeds) from
    that policy instead, at seeds counting from ``seed_start`` without ``target_seed``: with the
    target's own policy this is the base rate of exact matches under an identical distribution.
    """
    from claimcheck.sampling import get_policy, teacher_forced_logprobs, temperature_policy
    from claimcheck.sampling.runs import temperature_search as search

    chosen = one_prompt(prompt)
    target = get_policy(target_policy)
    lm = load_text_model(ctx, model, variant)
    ids = chat_ids(lm.tokenizer, chosen.text)
    stops = stop_token_ids(lm.tokenizer)
    seed_list = list(range(int(seed_start), int(seed_start) + int(seeds)))
    key = model_key(lm) | {
        "probe": "temperature_search", "prompt_ids": ids, "target_policy": target_policy, "target_seed": int(target_seed),
        "temperatures": [float(t) for t in temperatures], "seeds": seed_list, "max_tokens": int(max_tokens), "ban_ids": stops,
    } | ({"stop_at_miss": True} if stop_at_miss else {}) | ({"search_policy": search_policy} if search_policy else {})
    arm = get_policy(search_policy) if search_policy else None

    def compute(_: list[str]) -> dict[str, Any]:
        found = search(
            lm.model, lm.tokenizer.decode, ids, target_policy=target, target_seed=int(target_seed),
            temperatures=[] if arm else [float(t) for t in temperatures], seeds=seed_list, max_tokens=int(max_tokens),
            ban_ids=stops, batch_size=batch_size, progress=ctx.progress, stop_at_miss=bool(stop_at_miss),
        )
        if arm is not None:
            ctx.progress(f"temperature search: {len(temperatures) * len(seed_list)} samples of `{arm.name}`")
            found["samples"] = policy_arm(
                lm.model, lm.tokenizer.decode, ids, found["target"], found["fork_position"], policy=arm,
                seeds=search_seeds(len(temperatures) * len(seed_list), int(seed_start), int(target_seed)),
                max_tokens=int(max_tokens), ban_ids=stops, batch_size=batch_size, stop_at_miss=bool(stop_at_miss),
            )
        return {chosen.id: found}

    result = cached_many(ctx, {chosen.id: key}, compute)[chosen.id]
    rows = result["samples"]
    if not own_seed_reproduces(lm.model, ids, result["target"], policy=target, seed=int(target_seed), ban_ids=stops):
        raise ProbeError(f"`{target_policy}` at seed {target_seed} did not reproduce its own sample: exact matches cannot be counted")
    forced = teacher_forced_logprobs(lm.model, ids, result["target"]["tokens"])
    ctx.artifacts["exact_match_log10_probability"] = {
        "target_policy": exact_match_log10(forced, result["target"]["tokens"], target, stops),
        "temperatures": {f"{float(t):g}": exact_match_log10(forced, result["target"]["tokens"], temperature_policy(float(t)), stops)
                         for t in temperatures},
        "means": "log10 P(the policy draws the target token for token); the target's policy gives the base rate of a match",
    }
    ctx.artifacts["own_seed_reproduces"] = True
    ctx.artifacts["target"] = result["target"] | {"fork_position": result["fork_position"], "greedy": result["greedy"]["text"]}
    if arm is not None:
        ctx.artifacts["search_arm"] = {"policy": arm.name, "samples": len(rows), "exact": sum(r["exact_match"] for r in rows),
                                       "crossed_fork": sum(r["crossed_fork"] for r in rows), "excludes_seed": int(target_seed)}
    by_t: dict[str, dict[str, float]] = {}
    for t in temperatures if arm is None else ():
        subset = [r for r in rows if r["temperature"] == float(t)]
        by_t[f"{float(t):g}"] = {
            "samples": len(subset),
            "exact": sum(r["exact_match"] for r in subset),
            "crossed_fork": sum(r["crossed_fork"] for r in subset),
            "mean_shared_prefix": round(sum(r["shared_prefix"] for r in subset) / max(1, len(subset)), 2),
        }
    ctx.artifacts["by_temperature"] = by_t
    closest = sorted(rows, key=lambda r: (-r["shared_prefix"], -(r["content_recall"] or 0)))[:5]
    ctx.artifacts["closest_samples"] = [
        {k: r.get(k) for k in ("temperature", "seed", "shared_prefix", "content_recall", "stopped_at_miss", "text")} for r in closest
    ]
    ctx.artifacts["stopped_at_miss"] = sum(1 for r in rows if r.get("stopped_at_miss"))
    ctx.artifacts["work"] = result["work"]
    return {
        "exact_match": [float(r["exact_match"]) for r in rows],
        "crossed_fork": [float(r["crossed_fork"]) for r in rows],
        "content_recall": [float(r["content_recall"]) for r in rows if r["content_recall"] is not None],
        "shared_prefix": [float(r["shared_prefix"]) for r in rows],
    }
