"""Where a curve sample leaves the temperature paths (its "fork"), located by its own seed.

The curve doc's control for the temperature search was the curve's own seed: under pure
temperature, seed 102 reproduced the curve sample's opening and then forked away. That fork, the
first token where the curve's reshaped draw and temperature's draw from the same random stream
part, is where the curve sample leaves the temperature paths; "0 crossings of the curve's fork"
says no temperature sample follows the curve sample past it. Locating the fork with the
matched-seed twin keeps the test from following from its definition: the first departure from
the greedy path, the earlier definition, is token 0 on a model whose router-curve sample opens
off-greedy, so every sample with the target's first token "crossed" it.
"""

from __future__ import annotations

from typing import Sequence

from claimcheck.errors import ProbeError
from claimcheck.probe import Output, ProbeContext, probe

from .curve_cache import whole_on_first_look
from .curve_text import DEFAULT_MODEL
from .temperature_search import TEMPERATURE_GRID, temperature_search

_OUTPUTS = {
    "crossed_twin_fork": Output("0/1", description="temperature sample agrees with the target past the position "
                                                   "where the target's own seed under temperature 1 left it"),
    "beyond_max_shared": Output("0/1", description="temperature sample shares more than `max_shared` tokens with the target"),
    "shared_prefix": Output("tokens", description="tokens the temperature sample shares with the target from the start"),
}


@probe("temperature_fork", outputs=_OUTPUTS, reads_text=True)
@whole_on_first_look(_OUTPUTS)
def temperature_fork(
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
    max_shared: int = 0,
    stop_at_miss: bool = True,
    search_policy: str = "",
) -> dict[str, list[float]]:
    """Per temperature sample: does it pass the target's twin fork, and does it share more than ``max_shared`` tokens?

    The twin is the target's own seed at temperature 1 (same random stream, no reshaping); its
    shared prefix with the target is the fork position. The sweep is the temperature search
    itself (cached with it), so the samples are those the exact-match claims read;
    ``search_policy`` replaces pure temperature in the sweep (not in the twin), as there.
    """
    common = dict(model=model, variant=variant, prompt=prompt, target_policy=target_policy, target_seed=target_seed,
                  max_tokens=max_tokens, stop_at_miss=stop_at_miss)
    if target_seed in range(int(seed_start), int(seed_start) + int(seeds)) and 1.0 in [float(t) for t in temperatures]:
        raise ProbeError("the sweep includes the target's own seed at temperature 1, the twin that locates the fork")
    twin = temperature_search(ctx, **common, temperatures=[1.0], seeds=1, seed_start=target_seed)
    if not twin.get("shared_prefix"):
        raise ProbeError("the target's own seed gave no temperature-1 sample to locate the fork with")
    fork = float(twin["shared_prefix"][0])
    ctx.artifacts["twin_fork"] = {"seed": int(target_seed), "temperature": 1.0, "fork_position": fork}
    sweep = temperature_search(ctx, **common, temperatures=temperatures, seeds=seeds, seed_start=seed_start,
                               search_policy=search_policy)
    shared = [float(value) for value in sweep["shared_prefix"]]
    return {
        "crossed_twin_fork": [1.0 if value > fork else 0.0 for value in shared],
        "beyond_max_shared": [1.0 if value > max_shared else 0.0 for value in shared],
        "shared_prefix": shared,
    }
