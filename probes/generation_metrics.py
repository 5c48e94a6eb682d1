"""Repetition and diversity of sampled generations, for a sampler built by mlx-lm's ``make_sampler``.

Claims about samplers ("min-p keeps text diverse at high temperature", "greedy decoding loops",
"temperature 0 is argmax") are claims about the distribution of generated text across seeds.
Each sample here is one seed: one generation from the same prompt through mlx-lm's own
``generate_step`` with the configured sampler, scored on its token ids.

Self-BLEU needs references from the same sampler. Each seed is scored against a fixed pool of
``pool_seeds`` generations from seeds no sample uses, drawn once per call: every sample then has
the same number of references however many seeds a look asks for, and the mean over seeds is the
self-BLEU of the sampler (Texygen's measure with the pool as the other texts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from claimcheck.harness.timing import mlx_core
from claimcheck.probe import Output, ProbeContext, probe

from .curve_text import DEFAULT_MODEL, chat_ids, load_text_model, stop_token_ids
from .text_metrics import bleu, distinct_n, repetition_rate

DEFAULT_PROMPT = "Write a short story about a lighthouse keeper."
POOL_SEED_BASE = 1_000_000_007  # far from every sample seed
SEEDS_PER_LOOK = 100_003


@dataclass(frozen=True)
class SamplerConfig:
    """The ``make_sampler`` arguments a claim sets, with mlx-lm's defaults (``temp`` 0 is argmax)."""

    temp: float = 0.0
    top_p: float = 0.0
    min_p: float = 0.0
    top_k: int = 0
    min_tokens_to_keep: int = 1

    def build(self) -> Any:
        from mlx_lm.sample_utils import make_sampler

        return make_sampler(
            temp=self.temp, top_p=self.top_p, min_p=self.min_p, top_k=self.top_k, min_tokens_to_keep=self.min_tokens_to_keep
        )


@dataclass(frozen=True)
class SeedMetrics:
    """One generation's scores."""

    seed: int
    tokens: list[int]
    repetition_rate: float
    distinct_1: float
    distinct_2: float
    self_bleu: float


def generate_ids(lm: Any, prompt: Sequence[int], *, sampler: Any, seed: int, max_tokens: int, stop: Sequence[int]) -> list[int]:
    """One generation through ``mlx_lm.generate.generate_step``, seeded, cut at the first stop id."""
    mx = mlx_core()
    from mlx_lm.generate import generate_step

    mx.random.seed(seed)
    out: list[int] = []
    stops = set(stop)
    for token, _ in generate_step(mx.array(list(prompt), dtype=mx.uint32), lm.model, max_tokens=max_tokens, sampler=sampler):
        if int(token) in stops:
            break
        out.append(int(token))
    return out


def prompt_ids(lm: Any, prompt: str) -> list[int]:
    """The chat-templated prompt, or fixed ids for a model without a tokenizer (random weights)."""
    if lm.tokenizer is not None:
        return chat_ids(lm.tokenizer, prompt)
    vocab = int(lm.config.get("vocab_size") or 256)
    return [(7919 * i + 13) % vocab for i in range(16)]


def measure_generations(
    lm: Any,
    seeds: Sequence[int],
    *,
    config: SamplerConfig,
    prompt: str = DEFAULT_PROMPT,
    max_tokens: int = 48,
    pool_seeds: int = 4,
    repetition_n: int = 4,
    stop_at_eos: bool = True,
) -> list[SeedMetrics]:
    """Generate once per seed and score each generation (self-BLEU against the seed pool)."""
    if pool_seeds < 1:
        raise ValueError(f"`pool_seeds` must be >= 1, got {pool_seeds}")
    if max_tokens < 1:
        raise ValueError(f"`max_tokens` must be >= 1, got {max_tokens}")
    sampler = config.build()
    ids = prompt_ids(lm, prompt)
    stop = stop_token_ids(lm.tokenizer) if (stop_at_eos and lm.tokenizer is not None) else []

    def run(seed: int) -> list[int]:
        return generate_ids(lm, ids, sampler=sampler, seed=seed, max_tokens=max_tokens, stop=stop)

    pool = [run(POOL_SEED_BASE + j) for j in range(pool_seeds)]
    scored = []
    for seed in seeds:
        tokens = run(seed)
        scored.append(
            SeedMetrics(
                seed=seed,
                tokens=tokens,
                repetition_rate=repetition_rate(tokens, repetition_n),
                distinct_1=distinct_n(tokens, 1),
                distinct_2=distinct_n(tokens, 2),
                self_bleu=bleu(tokens, pool),
            )
        )
    return scored


@probe(
    "generation_metrics",
    outputs={
        "repetition_rate": Output("", False, "share of 4-grams (repetition_n) repeating an earlier one, per seed"),
        "distinct_1": Output("", True, "unique tokens / tokens, per seed"),
        "distinct_2": Output("", True, "unique bigrams / bigrams, per seed"),
        "self_bleu": Output("", False, "BLEU-4 (+1 smoothing) of each seed's text against the pool of other seeds"),
        "length": Output("tokens", None, "generated tokens before the first end-of-sequence id, per seed"),
    },
    reads_text=True,
)
def generation_metrics(
    ctx: ProbeContext,
    *,
    model: str = DEFAULT_MODEL,
    variant: str | None = None,
    prompt: str = DEFAULT_PROMPT,
    temp: float = 0.0,
    top_p: float = 0.0,
    min_p: float = 0.0,
    top_k: int = 0,
    min_tokens_to_keep: int = 1,
    max_tokens: int = 48,
    pool_seeds: int = 4,
    repetition_n: int = 4,
    stop_at_eos: bool = True,
) -> dict[str, list[float]]:
    """Per-seed repetition rate, distinct-1/2 and self-BLEU of generations under one mlx-lm sampler.

    Args:
        temp, top_p, min_p, top_k, min_tokens_to_keep: passed to ``mlx_lm.sample_utils.make_sampler``.
        prompt: one user turn, wrapped in the model's chat template.
        max_tokens: generation length (shorter when the model ends the text and ``stop_at_eos``).
        pool_seeds: generations every seed's self-BLEU is measured against.
        repetition_n: n-gram length of the repetition rate.
    """
    lm = load_text_model(ctx, model, variant)
    config = SamplerConfig(temp=temp, top_p=top_p, min_p=min_p, top_k=top_k, min_tokens_to_keep=min_tokens_to_keep)
    seeds = [ctx.seed % SEEDS_PER_LOOK + ctx.look * SEEDS_PER_LOOK + i for i in range(ctx.n)]
    scored = measure_generations(
        lm, seeds, config=config, prompt=prompt, max_tokens=max_tokens, pool_seeds=pool_seeds,
        repetition_n=repetition_n, stop_at_eos=stop_at_eos,
    )
    ctx.artifacts.setdefault("generations", []).extend({"seed": s.seed, "tokens": s.tokens} for s in scored)
    ctx.info.update({"sampler": f"make_sampler({config})", "max_tokens": max_tokens, "pool_seeds": pool_seeds,
                     "bleu": "BLEU-4, add-one smoothing for n>=2, brevity penalty (in-project implementation)"})
    return {
        "repetition_rate": [s.repetition_rate for s in scored],
        "distinct_1": [s.distinct_1 for s in scored],
        "distinct_2": [s.distinct_2 for s in scored],
        "self_bleu": [s.self_bleu for s in scored],
        "length": [float(len(s.tokens)) for s in scored],
    }
