"""Generation throughput by batch size through mlx-lm's batched generation (``BatchGenerator``).

Decode is bound by reading the weights once per step, so decoding several sequences in one step
should raise total tokens/s until compute becomes the limit. Each sample is one run of mlx-lm's
``BatchGenerator`` (the engine behind ``mlx_lm.generate.batch_generate``) over ``batch_size``
prompts of the same length, every sequence generating exactly ``max_tokens`` tokens (no stop
tokens, so every batch size does the same work per sequence); the figure is mlx-lm's own
``generation_tps`` for that run. A reference batch size runs in the same rounds, in ABBA order,
so a claim can compare the two sizes pairwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from claimcheck.api import Output, ProbeContext, interleaved_order, mlx_core, probe

from ..curves.curve_text import DEFAULT_MODEL

PROMPT_TEXT = "The lighthouse keeper climbed the stairs and looked out over the water. "


@dataclass(frozen=True)
class BatchRun:
    """What one batched run did, from mlx-lm's ``BatchStats`` for the run."""

    batch_size: int
    generation_tokens: int
    generation_tps: float
    prompt_tps: float
    wall_seconds: float


def prompts_for(lm: Any, batch_size: int, prompt_tokens: int) -> list[list[int]]:
    """``batch_size`` prompts of ``prompt_tokens`` ids, each row a different rotation of one text."""
    if lm.tokenizer is not None:
        base: list[int] = []
        while len(base) < prompt_tokens + batch_size:
            base += [int(t) for t in lm.tokenizer.encode(PROMPT_TEXT)]
    else:
        vocab = int(lm.config.get("vocab_size") or 256)
        base = [(7919 * i + 13) % vocab for i in range(prompt_tokens + batch_size)]
    return [base[row : row + prompt_tokens] for row in range(batch_size)]


def run_batch(lm: Any, prompts: Sequence[Sequence[int]], *, max_tokens: int, sampler: Any = None) -> BatchRun:
    """Generate ``max_tokens`` for every prompt at once with ``mlx_lm.generate.BatchGenerator``."""
    mlx_core()
    from mlx_lm.generate import BatchGenerator

    size = len(prompts)
    generator = BatchGenerator(lm.model, max_tokens=max_tokens, stop_tokens=None, sampler=sampler,
                               completion_batch_size=size, prefill_batch_size=size)
    try:
        generator.insert([list(p) for p in prompts], [max_tokens] * size)
        produced = 0
        with generator.stats() as stats:
            while responses := generator.next_generated():
                produced += len(responses)
    finally:
        generator.close()
    if produced != size * max_tokens or stats.generation_tokens != size * max_tokens:
        from claimcheck.api import ProbeError

        raise ProbeError(
            f"batch of {size} produced {produced} tokens (mlx-lm counted {stats.generation_tokens}), "
            f"expected {size * max_tokens}"
        )
    return BatchRun(size, stats.generation_tokens, stats.generation_tps, stats.prompt_tps, stats.wall_time)


@probe(
    "batched_generation",
    outputs={
        "tokens_per_s": Output("tokens/s", True, "generated tokens/s over all sequences at batch_size (mlx-lm generation_tps)"),
        "reference_tokens_per_s": Output("tokens/s", True, "the same at reference_batch_size, same rounds"),
        "speedup": Output("x", True, "tokens_per_s / reference_tokens_per_s, per round"),
        "prompt_tokens_per_s": Output("tokens/s", True, "prompt processing at batch_size (mlx-lm prompt_tps)"),
    },
)
def batched_generation(
    ctx: ProbeContext,
    *,
    model: str = DEFAULT_MODEL,
    variant: str | None = None,
    batch_size: int = 8,
    reference_batch_size: int | None = 1,
    max_tokens: int = 16,
    prompt_tokens: int = 16,
    warmup: int = 1,
) -> dict[str, list[float]]:
    """Total generation tokens/s at one batch size, beside a reference batch size in the same rounds.

    Args:
        model: model id: a registered one, a project alias, an mlx-lm folder or a cached Hugging Face repo.
        variant: which weights of the model to load, one it offers (``fp32``, ``4bit``); ``None``: its
            default (``fp32`` on the CPU, ``4bit`` on a GPU).
        batch_size: sequences decoded together (``check.over`` can sweep it).
        reference_batch_size: the size compared against, interleaved; ``None`` runs ``batch_size`` only.
        max_tokens: tokens generated per sequence, exactly (no stop tokens).
        prompt_tokens: prompt length per sequence, in tokens (each row a different window of one fixed text).
        warmup: untimed runs of each size before the first round (first look only).
    """
    if batch_size < 1 or (reference_batch_size is not None and reference_batch_size < 1):
        raise ValueError(f"batch sizes must be >= 1, got {batch_size} and {reference_batch_size}")
    from claimcheck.api import load

    lm = load(model, variant=variant)
    ctx.info.update(lm.info())
    sizes = {"batch": batch_size}
    if reference_batch_size is not None:
        sizes["reference"] = reference_batch_size
    prompts = {arm: prompts_for(lm, size, prompt_tokens) for arm, size in sizes.items()}
    if ctx.look == 0:
        for _ in range(warmup):
            for arm in sizes:
                run_batch(lm, prompts[arm], max_tokens=max_tokens)
    runs: dict[str, list[BatchRun]] = {arm: [] for arm in sizes}
    order: list[str] = []
    for index, round_arms in enumerate(interleaved_order(list(sizes), ctx.n)):
        ctx.progress(f"batched_generation round {index + 1}/{ctx.n}")
        for arm in round_arms:
            runs[arm].append(run_batch(lm, prompts[arm], max_tokens=max_tokens))
            order.append(arm)
    out: dict[str, list[float]] = {
        "tokens_per_s": [r.generation_tps for r in runs["batch"]],
        "prompt_tokens_per_s": [r.prompt_tps for r in runs["batch"]],
    }
    if "reference" in runs:
        out["reference_tokens_per_s"] = [r.generation_tps for r in runs["reference"]]
        out["speedup"] = [a / b for a, b in zip(out["tokens_per_s"], out["reference_tokens_per_s"])]
    ctx.artifacts["order"] = order
    ctx.info.update({"batch_size": batch_size, "reference_batch_size": reference_batch_size, "max_tokens": max_tokens,
                     "prompt_tokens": prompt_tokens, "engine": "mlx_lm.generate.BatchGenerator (greedy, no stop tokens)"})
    return out
