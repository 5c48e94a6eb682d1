"""The identity control: the identity curve against temperature 1 under matched seeds, token for token.

``identity_control`` generates with a curve and, as a shadow of the same draws, with a reference
policy; any difference between the two is the policies', not the arithmetic of two batch rows.
"""

from __future__ import annotations

from typing import Any, Sequence

from claimcheck.api import Output, ProbeContext, probe
from .curve_cache import cached_many, whole_on_first_look
from .curve_setup import prompt_run
from .curve_text import DEFAULT_MODEL, model_key


def perturbed_policy(curve: str, perturb: float) -> Any:
    """The named curve with its interior knots raised by ``perturb`` in probability (ends kept)."""
    from claimcheck.api.sampling import NAMED_CURVE_POINTS, TransferCurve, curve_policy

    if curve not in NAMED_CURVE_POINTS:
        raise ValueError(f"`perturb` needs a named curve ({', '.join(sorted(NAMED_CURVE_POINTS))}), got {curve!r}")
    if not -0.5 < perturb < 0.5:
        raise ValueError(f"`perturb` must lie in (-0.5, 0.5), got {perturb}")
    points = NAMED_CURVE_POINTS[curve]
    moved = [points[0], *((x, y * (1 + perturb)) for x, y in points[1:-1]), points[-1]]
    return curve_policy(TransferCurve.from_percent_points(moved, name=f"{curve}{perturb:+g}"))


_IDENTITY_OUTPUTS = {
    "mismatch": Output("0/1", description="per (prompt, seed): the curve's sample differs from the reference policy's anywhere"),
    "token_agreement": Output("fraction", description="per (prompt, seed): share of positions with the same token"),
}


def _light_warm_up(params: dict[str, Any]) -> dict[str, Any]:
    """One seed of four tokens per prompt: the model converted and loaded, its decode kernels compiled, little else.

    An item of this probe is often a model's first in a run; on a GPU that first use (conversion, load,
    kernel compilation) is most of the item, and a warm-up process can do it while the run is elsewhere.
    """
    return {**params, "seeds": 1, "max_tokens": 4}


@probe("identity_control", outputs=_IDENTITY_OUTPUTS, reads_text=True, warm_up=_light_warm_up)
@whole_on_first_look(_IDENTITY_OUTPUTS)
def identity_control(
    ctx: ProbeContext,
    *,
    model: str = DEFAULT_MODEL,
    variant: str | None = "fp32",
    prompts: str | Sequence[str] = "all",
    curve: str = "curve-id",
    reference_policy: str = "temp1",
    seeds: int = 5,
    max_tokens: int = 32,
    batch_size: int = 64,
    perturb: float = 0.0,
) -> dict[str, list[float]]:
    """Generate with a curve and with a reference policy under the same seeds, token for token.

    The reference arm draws from the curve arm's own distributions for as long as the two agree
    (a shadow draw, :class:`GenerationRequest` ``shadows``), so a difference is the policies' and
    not the last bits of two batch rows; from its first different token on it continues alone.

    Args:
        model: model id: a registered one, a project alias, an mlx-lm folder or a cached Hugging Face repo.
        variant: which weights of the model to load, one it offers (``fp32``, ``4bit``); ``None``: its
            default (``fp32`` on the CPU, ``4bit`` on a GPU).
        prompts: prompts of ``probes/data/curve-prompts.yaml``: ``all`` (the creative, advice and factual
            poles), a pole, a prompt id, or a list of those (the ``copy`` pole only by name).
        curve: the curve arm's policy: ``curve-id`` (the identity curve) or ``curve-router``, or any
            policy name (``greedy``, ``default``, ``temp<T>``) when ``perturb`` is 0.
        reference_policy: the policy compared with it, by name (``temp1``: pure temperature 1, which
            the identity curve must reproduce token for token).
        seeds: seeds per prompt (0 to ``seeds - 1``), one sample per (prompt, seed).
        max_tokens: tokens per sample, exactly (end-of-sequence ids are banned).
        batch_size: sequences generated at once (speed and memory); not part of the cache key, so a
            stored result is reused at any value.
        perturb: raises the curve's interior knots by that fraction in probability (y x (1 + perturb)),
            in (-0.5, 0.5); a slightly different curve, the positive control the comparison must tell
            apart. 0: the curve as named.
    """
    from claimcheck.api.sampling import GenerationRequest, generate_batch, get_policy

    run = prompt_run(ctx, model, variant, prompts)
    chosen, lm, stops, ids = run.chosen, run.lm, run.stops, run.ids
    arms = (perturbed_policy(curve, perturb) if perturb else get_policy(curve), get_policy(reference_policy))
    keys = {p.id: model_key(lm) | {"probe": "identity_control", "prompt_ids": ids[p.id], "arms": [curve, reference_policy],
                                     "seeds": int(seeds), "max_tokens": int(max_tokens), "ban_ids": stops, "paired": True}
            | ({"perturb": float(perturb)} if perturb else {}) for p in chosen}

    def compute(missing: list[str]) -> dict[str, Any]:
        curve_arm, reference_arm = arms
        requests = [GenerationRequest(prompt=ids[name], policy=curve_arm, seed=seed, max_tokens=int(max_tokens), tag=(name, seed),
                                      shadows=(reference_arm,))
                    for name in missing for seed in range(seeds)]
        from claimcheck.api.sampling import Countdown

        countdown = Countdown("identity control", "paired samples", len(requests), ctx.progress)
        countdown.start()
        generated = generate_batch(lm.model, requests, stop_ids=(), ban_ids=stops, batch_size=batch_size,
                                   finished=countdown.advance_to)
        out: dict[str, Any] = {name: {curve_arm.name: {}, reference_arm.name: {}, "first_difference": {}} for name in missing}
        continuations = []
        for request, g in zip(requests, generated):
            name, seed = request.tag
            shadow = g.shadow_tokens.get(reference_arm.name, [])
            differs = next((i for i, (x, y) in enumerate(zip(g.tokens, shadow)) if x != y), None)
            out[name][curve_arm.name][str(seed)] = g.tokens
            if differs is None:
                out[name][reference_arm.name][str(seed)] = list(g.tokens)
                continue
            head = g.tokens[:differs] + [shadow[differs]]
            out[name][reference_arm.name][str(seed)] = head
            out[name]["first_difference"][str(seed)] = differs
            if len(head) < max_tokens:
                continuations.append(GenerationRequest(prompt=ids[name] + head, policy=reference_arm, seed=seed, start_step=len(head),
                                                       max_tokens=int(max_tokens) - len(head), tag=(name, seed)))
        for request, g in zip(continuations, generate_batch(lm.model, continuations, stop_ids=(), ban_ids=stops, batch_size=batch_size)):
            name, seed = request.tag
            out[name][reference_arm.name][str(seed)] += g.tokens
        return out

    values = cached_many(ctx, keys, compute)
    mismatch: list[float] = []
    agreement: list[float] = []
    examples: list[dict[str, Any]] = []
    for p in chosen:
        for seed in range(seeds):
            a, b = values[p.id][arms[0].name][str(seed)], values[p.id][arms[1].name][str(seed)]
            same = sum(1 for x, y in zip(a, b) if x == y)
            agreement.append(same / max(len(a), len(b), 1))
            mismatch.append(0.0 if a == b else 1.0)
            if a != b and len(examples) < 5:
                examples.append({"prompt": p.id, "seed": seed, "first_difference": values[p.id].get("first_difference", {}).get(str(seed)),
                                 "curve": lm.tokenizer.decode(a), "reference": lm.tokenizer.decode(b)})
    ctx.artifacts["identity"] = {"pairs": len(mismatch), "identical": int(len(mismatch) - sum(mismatch)), "differing_examples": examples,
                                 "curve": arms[0].describe()}
    return {"mismatch": mismatch, "token_agreement": agreement}
