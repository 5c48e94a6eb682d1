"""Where a curve sample leaves the temperature paths (its "fork"), located by its own seed.

The curve doc's control for the temperature search was the curve's own seed: under pure
temperature, seed 102 reproduced the curve sample's opening and then forked away. That fork, the
first token where the curve's reshaped draw and temperature's draw from the same random stream
part, is where the curve sample leaves the temperature paths; "0 crossings of the curve's fork"
says no temperature sample follows the curve sample past it. Locating the fork with the
matched-seed twin keeps the test from following from its definition: the first departure from
the greedy path, the earlier definition, is token 0 on a model whose router-curve sample opens
off-greedy, so every sample with the target's first token "crossed" it.

The same fork bounds the target's "opening": the tokens the twin reproduces before it forks away.
"The only seed that reproduced the curve's opening was the curve's own seed" says no other seed
reaches the fork at all (``reached_twin_fork``), a stronger statement than not getting past it.
"""

from __future__ import annotations

from typing import Sequence

from claimcheck.api import Output, ProbeContext, ProbeError, Undecidable, probe

from .curve_cache import whole_on_first_look
from .temperature_search import SEARCH, SearchDesign, record_search, run_search

_OUTPUTS = {
    "crossed_twin_fork": Output("0/1", description="temperature sample agrees with the target past the position "
                                                   "where the target's own seed under temperature 1 left it"),
    "reached_twin_fork": Output("0/1", description="temperature sample reproduces the target's opening: it agrees "
                                                   "with the target at least up to that position"),
    "beyond_max_shared": Output("0/1", description="temperature sample shares more than `max_shared` tokens with the target"),
    "shared_prefix": Output("tokens", description="tokens the temperature sample shares with the target from the start"),
}


@probe("temperature_fork", outputs=_OUTPUTS, reads_text=True)
@whole_on_first_look(_OUTPUTS)
def temperature_fork(
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
    max_shared: int = 0,
    stop_at_miss: bool = True,
    search_policy: str = SEARCH.search_policy,
    with_own_seed: bool = SEARCH.with_own_seed,
    require_opening: bool = False,
) -> dict[str, list[float]]:
    """Per temperature sample: does it reach or pass the target's twin fork, and share more than ``max_shared`` tokens?

    The twin is the target's own seed at temperature 1 (same random stream, no reshaping); its
    shared prefix with the target is the fork position, and the tokens before it the target's
    opening. The sweep is the temperature search itself (:func:`run_search`, cached with it), so
    the samples are those the exact-match claims read.

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
        seeds: seeds per temperature, counting up from ``seed_start``: temperatures x seeds samples; the
            sweep may not hold ``target_seed`` at temperature 1 (that sample is the twin).
        seed_start: the sweep's first seed.
        max_tokens: tokens of the target and of every sample (end-of-sequence ids are banned; only
            ``stop_at_miss`` makes a sample shorter).
        max_shared: shared-prefix length, in tokens, above which a sample counts in ``beyond_max_shared``.
        stop_at_miss: stop each sample once its text can no longer equal the target's (the same shared
            prefixes for a fraction of the tokens; on here, as no output reads the rest).
        search_policy: a policy name that draws the sweep instead of pure temperature (not the twin), at
            seeds counting from ``seed_start`` without ``target_seed``. ``""``: pure temperature.
        with_own_seed: add the target's own seed to the ``search_policy`` sweep (the target itself, which
            passes its fork: a planted crossing).
        require_opening: a twin that leaves the target at its first token (no opening to reproduce, so
            every sample "reaches" the fork) makes the item undecidable instead of refuted.
    """
    design = SearchDesign(model, variant, prompt, target_policy, target_seed, tuple(temperatures), seeds, seed_start,
                          max_tokens, stop_at_miss, search_policy, with_own_seed)
    if int(target_seed) in design.seed_list() and 1.0 in design.temperatures:
        raise ProbeError("the sweep includes the target's own seed at temperature 1, the twin that locates the fork")
    twin = run_search(ctx, design.twin()).rows
    if not twin:
        raise ProbeError("the target's own seed gave no temperature-1 sample to locate the fork with")
    fork = float(twin[0]["shared_prefix"])
    ctx.artifacts["twin_fork"] = {"seed": int(target_seed), "temperature": 1.0, "fork_position": fork}
    if require_opening and fork < 1:
        raise Undecidable("the target's own seed under temperature 1 leaves it at its first token: there is no "
                          "opening for another seed to reproduce")
    sweep = run_search(ctx, design)
    record_search(ctx, sweep)
    shared = [float(r["shared_prefix"]) for r in sweep.rows]
    return {
        "crossed_twin_fork": [1.0 if value > fork else 0.0 for value in shared],
        "reached_twin_fork": [1.0 if value >= fork else 0.0 for value in shared],
        "beyond_max_shared": [1.0 if value > max_shared else 0.0 for value in shared],
        "shared_prefix": shared,
    }
