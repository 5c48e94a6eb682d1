"""Where each seed leaves the greedy path, and how coherent its fork departures are: cached per prompt and policy.

The two cost very different amounts. First departures are read off one teacher-forced pass per
prompt (no generation), so every route item has them. Coherence continues each fork departure of the
first ``coherence_seeds`` seeds to the reference's length, most of a route item's generated tokens,
and only a check reading ``incoherent`` or ``coherence_gap`` needs it. Each is cached per (prompt,
policy): the first item that needs coherence continues every route policy's departures in one batch,
and an item asking for one more policy computes that policy alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from claimcheck.api import ProbeContext
from .curve_cache import cached_many
from .curve_setup import PromptRun
from .curve_text import model_key

if TYPE_CHECKING:
    from claimcheck.api.sampling import ReferencePasses

COHERENCE_OUTPUTS = ("incoherent", "coherence_gap")

Records = Mapping[str, Mapping[str, Any]]


def _entry(prompt: str, policy: str) -> str:
    return f"{prompt}/{policy}"


def _cached_per_pair(
    ctx: ProbeContext, run: PromptRun, policy_names: Sequence[str], key_of: Callable[[str, str], dict[str, Any]],
    compute: Callable[[dict[str, list[str]]], dict[tuple[str, str], Any]],
) -> dict[str, dict[str, Any]]:
    """A value per (prompt, policy), stored ones reused: ``compute`` gets the missing policies grouped by prompt."""
    keys = {_entry(p.id, name): key_of(p.id, name) for p in run.chosen for name in policy_names}

    def compute_missing(missing: list[str]) -> dict[str, Any]:
        grouped: dict[str, list[str]] = {}
        for entry in missing:
            prompt, name = entry.split("/", 1)
            grouped.setdefault(prompt, []).append(name)
        return {_entry(prompt, name): value for (prompt, name), value in compute(grouped).items()}

    flat = cached_many(ctx, keys, compute_missing)
    return {p.id: {name: flat[_entry(p.id, name)] for name in policy_names} for p in run.chosen}


def departures(
    ctx: ProbeContext, run: PromptRun, passes: ReferencePasses, records: Records, policy_names: Sequence[str], seeds: int,
    trace_key_of: Mapping[str, dict[str, Any]],
) -> dict[str, dict[str, dict[str, list[Any]]]]:
    """Per prompt and policy, every seed's first departure from the greedy path and the token drawn there."""
    from claimcheck.api.sampling import first_departures, get_policy

    def key_of(prompt: str, name: str) -> dict[str, Any]:
        return model_key(run.lm) | {"probe": "route_departures", "trace": trace_key_of[prompt], "policy": name, "seeds": int(seeds)}

    def compute(missing: dict[str, list[str]]) -> dict[tuple[str, str], Any]:
        out: dict[tuple[str, str], Any] = {}
        for prompt, names in missing.items():
            ref = records[prompt]["ref"]
            _, rows = passes.get(run.ids[prompt], ref)  # one pass read per prompt
            for name in names:
                found, tokens = first_departures(rows, ref, get_policy(name), list(range(seeds)))
                out[prompt, name] = {"departures": found, "tokens": tokens}
        return out

    return _cached_per_pair(ctx, run, policy_names, key_of, compute)


def coherence(
    ctx: ProbeContext, run: PromptRun, passes: ReferencePasses, records: Records, found: Mapping[str, Mapping[str, Any]],
    policy_names: Sequence[str], coherence_seeds: int, batch_size: int, trace_key_of: Mapping[str, dict[str, Any]],
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per prompt and policy, the fork departures among the first ``coherence_seeds`` seeds, continued and scored.

    ``found`` is :func:`departures`' result. Each value is ``{"scores": [...], "work": ...}``: one score
    per fork departure (seed, position, the sample's and the reference's mean log-probs, its tokens),
    and the generation work of the call that computed it. Every missing (prompt, policy) is continued
    in one batched generation, so the policies of one item fill each other's batches.
    """
    from claimcheck.api.sampling import Countdown, GenerationStats, fork_departure_coherence, get_policy

    def key_of(prompt: str, name: str) -> dict[str, Any]:
        return model_key(run.lm) | {"probe": "route_coherence", "trace": trace_key_of[prompt], "policy": name,
                                    "coherence_seeds": int(coherence_seeds)}

    def compute(missing: dict[str, list[str]]) -> dict[tuple[str, str], Any]:
        roots, items, owners = [], [], []
        for prompt, names in missing.items():
            record = records[prompt]
            ref, labels = record["ref"], record["labels"]
            ref_logprobs = [f["ref_logprob"] for f in record["positions"]]
            root, rows = passes.get(run.ids[prompt], ref)  # one pass read per prompt
            roots.append(root)
            for name in names:
                mine = found[prompt][name]
                for seed in range(min(coherence_seeds, len(mine["departures"]))):
                    d = mine["departures"][seed]
                    if d < len(ref) and labels[d] == "FORK":
                        token = mine["tokens"][seed]
                        items.append({"prompt": run.ids[prompt], "ref": ref, "ref_logprobs": ref_logprobs, "policy": get_policy(name),
                                      "seed": seed, "departure": d, "token": token, "token_logprob": float(rows[d, token])})
                        owners.append((prompt, name, seed, d))
        countdown = Countdown("route hazard", "fork departures continued", len(items), ctx.progress)
        countdown.start()
        stats = GenerationStats()
        scored = fork_departure_coherence(run.lm.model, items, roots=roots, stop_ids=run.stops, batch_size=batch_size, stats=stats,
                                          finished=countdown.advance_to)
        work = stats.to_json() | {"shared_by": [_entry(prompt, name) for prompt, names in missing.items() for name in names]}
        out: dict[tuple[str, str], Any] = {(prompt, name): {"scores": [], "work": work} for prompt, names in missing.items() for name in names}
        for (prompt, name, seed, d), score in zip(owners, scored):
            out[prompt, name]["scores"].append({"seed": seed, "departure": d} | score)
        return out

    return _cached_per_pair(ctx, run, policy_names, key_of, compute)
