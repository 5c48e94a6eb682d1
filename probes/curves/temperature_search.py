"""The temperature search (methods E): can pure temperature reproduce one curve-generated sample?

``temperature_search`` draws a target with a curve policy, then sweeps temperatures x seeds for an
exact match, recording fork crossings, shared prefixes and content recall per sample. Every call
also checks that the target's own seed reproduces it and records the exact, seedless odds of an
exact match (``probes/curves/temperature_controls.py``); ``search_policy`` replaces pure temperature by
another policy, e.g. the target's own under other seeds: the base rate of exact matches.

:class:`SearchDesign` and :func:`run_search` are what every probe reading a temperature search
shares (``probes/curves/temperature_fork.py`` too): one set of parameters and defaults, one setup, one
cache key, so two probes asking for the same search read the same cached samples.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Sequence

from claimcheck.api import Output, ProbeContext, ProbeError, Undecidable, probe
from .curve_cache import cached_many, whole_on_first_look
from .temperature_controls import (
    exact_match_log10, likely_prefix_length, own_seed_divergence, policy_arm, prefix_log10, search_seeds,
)
from .curve_prompts import one_prompt
from .curve_text import DEFAULT_MODEL, chat_ids, load_text_model, model_key, stop_token_ids

# where the target's own seed, drawn alone, left the target (None: nowhere), stored with the search
OWN_SEED = "own_seed_diverges_at"

TEMPERATURE_GRID = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.4, 1.6, 2.0)


@dataclass(frozen=True)
class SearchDesign:
    """One temperature search: the target (a policy's sample at one seed) and the sweep that looks for it.

    Attributes:
        model, variant: the model the target and the sweep are drawn from.
        prompt: the one prompt id both are drawn for.
        target_policy, target_seed: the policy and seed that draw the target.
        temperatures, seeds, seed_start: the sweep, temperatures x seeds counting from ``seed_start``.
        max_tokens: the length of every sample.
        stop_at_miss: cut a sample once its text can no longer equal the target's.
        search_policy: a policy drawing the sweep's samples instead of pure temperature ("" for none).
        with_own_seed: the ``search_policy`` sweep draws the target's own seed too (a planted match).
        likely_prefix: when above 0, the target and every sample are cut to the target's longest
            opening that the target's policy draws with at least this probability (see
            :func:`at_likely_length`).
    """

    model: str = DEFAULT_MODEL
    variant: str | None = "fp32"
    prompt: str = "lighthouse"
    target_policy: str = "curve-router"
    target_seed: int = 102
    temperatures: tuple[float, ...] = TEMPERATURE_GRID
    seeds: int = 26
    seed_start: int = 0
    max_tokens: int = 48
    stop_at_miss: bool = False
    search_policy: str = ""
    with_own_seed: bool = False
    likely_prefix: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "temperatures", tuple(float(t) for t in self.temperatures))
        if self.with_own_seed and not self.search_policy:
            raise ProbeError("`with_own_seed` plants the target's own seed in a `search_policy` sweep: name the policy")
        if not 0 <= float(self.likely_prefix) < 1:
            raise ProbeError(f"`likely_prefix` is a probability below 1 (0 for off), got {self.likely_prefix}")

    def seed_list(self) -> list[int]:
        """The sweep's seeds, in order."""
        return list(range(int(self.seed_start), int(self.seed_start) + int(self.seeds)))

    def replace(self, **changes: Any) -> "SearchDesign":
        """The same design with some parameters changed."""
        return dataclasses.replace(self, **changes)

    def twin(self) -> "SearchDesign":
        """The target's own seed at temperature 1 and nothing else: the one-sample search beside the target."""
        return self.replace(temperatures=(1.0,), seeds=1, seed_start=self.target_seed, search_policy="",
                            with_own_seed=False, likely_prefix=0.0)


SEARCH = SearchDesign()  # the defaults the temperature probes' signatures show


@dataclass(frozen=True)
class SearchRun:
    """A temperature search as run: the model, the tokenised prompt, the policies and the (cached) result."""

    design: SearchDesign
    lm: Any
    ids: list[int]
    stops: list[int]
    target: Any
    arm: Any
    result: dict[str, Any]

    @property
    def rows(self) -> list[dict[str, Any]]:
        """One row per sweep sample (temperature, seed, exact match, fork crossing, shared prefix, recall, text)."""
        return list(self.result["samples"])


def arm_seeds(design: SearchDesign, count: int) -> list[int]:
    """The ``search_policy`` sweep's seeds: ``count`` from ``seed_start`` without the target's, or with it first."""
    if design.with_own_seed:
        return [int(design.target_seed)] + search_seeds(count - 1, int(design.seed_start), int(design.target_seed))
    return search_seeds(count, int(design.seed_start), int(design.target_seed))


def at_likely_length(ctx: ProbeContext, design: SearchDesign) -> SearchDesign:
    """The design cut to the target's longest opening its own policy draws with probability ``likely_prefix``.

    A positive control for "never matches": at that length the target's own policy under other
    seeds must match it often (312 samples at odds 0.05 expect 15), so a count of zero there
    means the search cannot see a match. The length comes from one teacher-forced pass over the
    target, before any sample is drawn; it is recorded with its odds.
    """
    if design.likely_prefix <= 0:
        return design
    from claimcheck.api.sampling import teacher_forced_logprobs

    full = run_search(ctx, design.twin())
    tokens = [int(t) for t in full.result["target"]["tokens"]]
    forced = teacher_forced_logprobs(full.lm.model, full.ids, tokens)
    cumulative = prefix_log10(forced, tokens, full.target, full.stops)
    length = likely_prefix_length(cumulative, float(design.likely_prefix))
    ctx.artifacts["likely_prefix"] = {
        "odds": float(design.likely_prefix), "tokens": length, "of": len(tokens),
        "log10_probability": round(float(cumulative[length - 1]), 4),
        "text": full.lm.tokenizer.decode(tokens[:length]),
    }
    return design.replace(max_tokens=length, likely_prefix=0.0)


def run_search(ctx: ProbeContext, design: SearchDesign, *, batch_size: int = 64) -> SearchRun:
    """Draw (or read from the cache) the target and the sweep; fail unless the target's own seed gives it back."""
    from claimcheck.api.sampling import get_policy, temperature_search as search

    chosen = one_prompt(design.prompt)
    target = get_policy(design.target_policy)
    arm = get_policy(design.search_policy) if design.search_policy else None
    lm = load_text_model(ctx, design.model, design.variant)
    ids = chat_ids(lm.tokenizer, chosen.text)
    stops = stop_token_ids(lm.tokenizer)
    seed_list = design.seed_list()
    key = model_key(lm) | {
        "probe": "temperature_search", "prompt_ids": ids, "target_policy": design.target_policy, "target_seed": int(design.target_seed),
        "temperatures": list(design.temperatures), "seeds": seed_list, "max_tokens": int(design.max_tokens), "ban_ids": stops,
    } | ({"stop_at_miss": True} if design.stop_at_miss else {}) | ({"search_policy": design.search_policy} if design.search_policy else {}) \
      | ({"with_own_seed": True} if design.with_own_seed and arm is not None else {})

    def compute(_: list[str]) -> dict[str, Any]:
        found = search(
            lm.model, lm.tokenizer.decode, ids, target_policy=target, target_seed=int(design.target_seed),
            temperatures=[] if arm else list(design.temperatures), seeds=seed_list, max_tokens=int(design.max_tokens),
            ban_ids=stops, batch_size=batch_size, progress=ctx.progress, stop_at_miss=bool(design.stop_at_miss),
        )
        if arm is not None:
            count = len(design.temperatures) * len(seed_list)
            ctx.progress(f"temperature search: {count} samples of `{arm.name}`")
            found["samples"] = policy_arm(
                lm.model, lm.tokenizer.decode, ids, found["target"], found["fork_position"], policy=arm,
                seeds=arm_seeds(design, count),
                max_tokens=int(design.max_tokens), ban_ids=stops, batch_size=batch_size, stop_at_miss=bool(design.stop_at_miss),
            )
        found[OWN_SEED] = own_seed(found["target"])  # kept with the samples it vouches for: a reuse draws it no more
        return {chosen.id: found}

    def own_seed(target_record: dict[str, Any]) -> int | None:
        return own_seed_divergence(lm.model, ids, target_record, policy=target, seed=int(design.target_seed), ban_ids=stops)

    result = cached_many(ctx, {chosen.id: key}, compute)[chosen.id]
    diverged = result[OWN_SEED] if OWN_SEED in result else own_seed(result["target"])
    if diverged is not None:
        ctx.artifacts["own_seed_reproduces"] = False
        ctx.artifacts[OWN_SEED] = diverged
        raise Undecidable(f"`{design.target_policy}` at seed {design.target_seed}, drawn again alone, left its own sample at "
                          f"token {diverged} of {len(result['target']['tokens'])}: sampling here depends on more than the "
                          "seed, so exact matches cannot be counted")
    return SearchRun(design, lm, ids, stops, target, arm, result)


def record_search(ctx: ProbeContext, run: SearchRun) -> None:
    """The search's evidence: exact-match odds per policy, the target, per-temperature counts, the closest samples."""
    from claimcheck.api.sampling import teacher_forced_logprobs, temperature_policy

    rows, tokens = run.rows, run.result["target"]["tokens"]
    forced = teacher_forced_logprobs(run.lm.model, run.ids, tokens)
    ctx.artifacts["exact_match_log10_probability"] = {
        "target_policy": exact_match_log10(forced, tokens, run.target, run.stops),
        "temperatures": {f"{t:g}": exact_match_log10(forced, tokens, temperature_policy(t), run.stops) for t in run.design.temperatures},
        "means": "log10 P(the policy draws the target token for token); the target's policy gives the base rate of a match",
    }
    ctx.artifacts["own_seed_reproduces"] = True
    ctx.artifacts["target"] = run.result["target"] | {"fork_position": run.result["fork_position"], "greedy": run.result["greedy"]["text"]}
    if run.arm is not None:
        ctx.artifacts["search_arm"] = {"policy": run.arm.name, "samples": len(rows), "exact": sum(r["exact_match"] for r in rows),
                                       "crossed_fork": sum(r["crossed_fork"] for r in rows)} | (
            {"includes_own_seed": int(run.design.target_seed)} if run.design.with_own_seed
            else {"excludes_seed": int(run.design.target_seed)})
    by_t: dict[str, dict[str, float]] = {}
    for t in run.design.temperatures if run.arm is None else ():
        subset = [r for r in rows if r["temperature"] == t]
        by_t[f"{t:g}"] = {
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
    ctx.artifacts["work"] = run.result["work"]


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
    model: str = SEARCH.model,
    variant: str | None = SEARCH.variant,
    prompt: str = SEARCH.prompt,
    target_policy: str = SEARCH.target_policy,
    target_seed: int = SEARCH.target_seed,
    temperatures: Sequence[float] = SEARCH.temperatures,
    seeds: int = SEARCH.seeds,
    seed_start: int = SEARCH.seed_start,
    max_tokens: int = SEARCH.max_tokens,
    batch_size: int = 64,
    stop_at_miss: bool = SEARCH.stop_at_miss,
    search_policy: str = SEARCH.search_policy,
    with_own_seed: bool = SEARCH.with_own_seed,
    likely_prefix: float = SEARCH.likely_prefix,
) -> dict[str, list[float]]:
    """Sweep pure temperature x seeds for an exact match of one curve-generated sample.

    Args:
        model: model id: a registered one, a project alias, an mlx-lm folder or a cached Hugging Face repo.
        variant: which weights of the model to load, one it offers (``fp32``, ``4bit``); ``None``: its
            default (``fp32`` on the CPU, ``4bit`` on a GPU).
        prompt: the one prompt id of ``probes/data/curve-prompts.yaml`` the target and the sweep are drawn
            for (not ``all`` nor a pole).
        target_policy: the policy that draws the target, by name (``curve-router``, ``curve-id``,
            ``default``, ``greedy``, ``temp<T>``).
        target_seed: the seed that draws the target (102, the source's).
        temperatures: the pure temperatures swept, each at every seed.
        seeds: seeds per temperature, counting up from ``seed_start``: temperatures x seeds samples.
        seed_start: the sweep's first seed.
        max_tokens: tokens of the target and of every sample (end-of-sequence ids are banned; only
            ``stop_at_miss`` and ``likely_prefix`` make them shorter).
        batch_size: sequences generated at once (speed and memory); not part of the cache key, so a
            stored result is reused at any value.
        stop_at_miss: stop each sample once its text can no longer equal the target's: the same exact
            matches, fork crossings and shared prefixes for a fraction of the tokens, but no
            ``content_recall`` for the samples cut short (claims on content keep it off).
        search_policy: a policy name that draws the same number of samples (temperatures x seeds)
            instead of pure temperature, at seeds counting from ``seed_start`` without ``target_seed``:
            with the target's own policy, the base rate of exact matches under an identical
            distribution. ``""``: pure temperature.
        with_own_seed: put the target's own seed first among the ``search_policy`` sweep's seeds (a
            planted match; needs ``search_policy``).
        likely_prefix: a probability below 1; above 0, the target and the samples are cut to the target's
            longest opening its own policy draws with at least that probability (:func:`at_likely_length`,
            a positive control). 0: off.
    """
    design = SearchDesign(model, variant, prompt, target_policy, target_seed, tuple(temperatures), seeds, seed_start,
                          max_tokens, stop_at_miss, search_policy, with_own_seed, likely_prefix)
    run = run_search(ctx, at_likely_length(ctx, design), batch_size=batch_size)
    record_search(ctx, run)
    rows = run.rows
    return {
        "exact_match": [float(r["exact_match"]) for r in rows],
        "crossed_fork": [float(r["crossed_fork"]) for r in rows],
        "content_recall": [float(r["content_recall"]) for r in rows if r["content_recall"] is not None],
        "shared_prefix": [float(r["shared_prefix"]) for r in rows],
    }
