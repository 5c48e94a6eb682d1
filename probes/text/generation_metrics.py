"""Repetition and diversity of sampled generations, for a sampler built by mlx-lm's ``make_sampler``.

Claims about samplers ("min-p keeps text diverse at high temperature", "greedy decoding loops",
"temperature 0 is argmax") are claims about the distribution of generated text across seeds.
Each sample here is one seed: one generation from the same prompt through mlx-lm's own
``generate_step`` with the configured sampler, scored on its token ids.

Self-BLEU needs references from the same sampler. Each seed is scored against a fixed pool of
``pool_seeds`` generations from seeds no sample uses, drawn once per call: every sample then has
the same number of references however many seeds a look asks for, and the mean over seeds is the
self-BLEU of the sampler (Texygen's measure with the pool as the other texts).

With ``prompts`` (a prompt set) each sample is one *set*: one generation per prompt, each from
its own seed derived from the set's (a prompt listed twice gives two independent draws), scored
as a set: self-BLEU of each generation against the set's others (Texygen's
corpus measure), and the set's mean repetition, distinct-n, length and cross-entropy. The
cross-entropy of a generation is its mean surprise, ``-log p(token)`` in nats under the model's
unfiltered distribution (what mlx-lm's ``generate_step`` returns beside each token, before the
sampler): the quantity whose relation to repetition Basu et al. (2021, Mirostat) describe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from claimcheck.api import Output, ProbeContext, mlx_core, probe

from ..curves.curve_text import DEFAULT_MODEL, chat_ids, load_text_model, stop_token_ids
from .generation_sets import SetMetrics, score_set
from .text_metrics import bleu, distinct_n, repetition_rate

DEFAULT_PROMPT = "Write a short story about a lighthouse keeper."
EXAMPLE = """\
id: temperature-zero-is-argmax
title: At temperature 0 mlx-lm's sampler is argmax, so every seed writes the same text
statement: With temp 0 generations from different seeds are one text; each seed's self-BLEU against the others is 1.
source:
  doc: https://github.com/ml-explore/mlx-lm/blob/037c9b3f420538b61594aa730d201e604b572cf7/mlx_lm/sample_utils.py
  section: make_sampler (docstring, temp)
  figure: "temp (float): The temperature for sampling, if 0 the argmax is used."
scope: {kind: portable, backend: any}
probe: {name: generation_metrics, params: {variant: fp32, temp: 0.0, max_tokens: 8, pool_seeds: 1}}
check: {rule: at_least, output: self_bleu, threshold: 0.999, statistic: median}
budget: {min_samples: 10, max_samples: 10, looks: 1}
"""
POOL_SEED_BASE = 1_000_000_007  # far from every sample seed
SEEDS_PER_LOOK = 100_003
SET_STRIDE = 1_009  # a set's j-th text is drawn from seed * SET_STRIDE + j: its own draw, distinct across sets


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
    cross_entropy: float = 0.0


def generate_ids(lm: Any, prompt: Sequence[int], *, sampler: Any, seed: int, max_tokens: int, stop: Sequence[int]) -> list[int]:
    """One generation through ``mlx_lm.generate.generate_step``, seeded, cut at the first stop id."""
    return generate_scored(lm, prompt, sampler=sampler, seed=seed, max_tokens=max_tokens, stop=stop)[0]


def generate_scored(lm: Any, prompt: Sequence[int], *, sampler: Any, seed: int, max_tokens: int,
                    stop: Sequence[int]) -> tuple[list[int], float]:
    """One seeded generation and its cross-entropy (mean ``-log p`` per token, nats; 0 for an empty one)."""
    mx = mlx_core()
    from mlx_lm.generate import generate_step

    mx.random.seed(seed)
    out: list[int] = []
    surprise = 0.0
    stops = set(stop)
    for token, logprobs in generate_step(mx.array(list(prompt), dtype=mx.uint32), lm.model, max_tokens=max_tokens,
                                         sampler=sampler):
        if int(token) in stops:
            break
        out.append(int(token))
        surprise -= float(logprobs[int(token)].item())  # type: ignore[arg-type]  # a float32 scalar
    return out, surprise / len(out) if out else 0.0


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

    def run(seed: int) -> tuple[list[int], float]:
        return generate_scored(lm, ids, sampler=sampler, seed=seed, max_tokens=max_tokens, stop=stop)

    pool = [run(POOL_SEED_BASE + j)[0] for j in range(pool_seeds)]
    scored = []
    for seed in seeds:
        tokens, cross_entropy = run(seed)
        scored.append(
            SeedMetrics(
                seed=seed,
                tokens=tokens,
                repetition_rate=repetition_rate(tokens, repetition_n),
                distinct_1=distinct_n(tokens, 1),
                distinct_2=distinct_n(tokens, 2),
                self_bleu=bleu(tokens, pool),
                cross_entropy=cross_entropy,
            )
        )
    return scored


def measure_sets(lm: Any, seeds: Sequence[int], *, config: SamplerConfig, prompts: Sequence[str], max_tokens: int,
                 repetition_n: int, stop_at_eos: bool) -> list[SetMetrics]:
    """One set per seed: a generation for every prompt (the j-th from ``seed * SET_STRIDE + j``), scored as a set."""
    if len(prompts) < 2:
        raise ValueError(f"`prompts` needs at least two prompts (self-BLEU compares a set's texts); got {len(prompts)}")
    sampler = config.build()
    ids = [prompt_ids(lm, prompt) for prompt in prompts]
    stop = stop_token_ids(lm.tokenizer) if (stop_at_eos and lm.tokenizer is not None) else []
    return [score_set(seed, [generate_scored(lm, prompt, sampler=sampler, seed=seed * SET_STRIDE + j,
                                             max_tokens=max_tokens, stop=stop)
                             for j, prompt in enumerate(ids)], repetition_n) for seed in seeds]


@probe(
    "generation_metrics",
    warm_up=True,
    outputs={
        "repetition_rate": Output("", False, "share of 4-grams (repetition_n) repeating an earlier one, per seed"),
        "distinct_1": Output("", True, "unique tokens / tokens, per seed"),
        "distinct_2": Output("", True, "unique bigrams / bigrams, per seed"),
        "self_bleu": Output("", False, "BLEU-4 (+1 smoothing) of each seed's text against the pool of other seeds"),
        "length": Output("tokens", None, "generated tokens before the first end-of-sequence id, per seed"),
        "cross_entropy": Output("nats/token", None, "mean -log p of the generated tokens under the model's "
                                "unfiltered distribution, per seed (per set with `prompts`)"),
    },
    reads_text=True,
    example=EXAMPLE,
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
    prompts: list[str] | None = None,
) -> dict[str, list[float]]:
    """Per-seed repetition rate, distinct-1/2 and self-BLEU of generations under one mlx-lm sampler.

    Args:
        model: model id: a registered one, a project alias, an mlx-lm folder or a cached Hugging Face repo.
        variant: which weights of the model to load, one it offers (``fp32``, ``4bit``); ``None``: its
            default (``fp32`` on the CPU, ``4bit`` on a GPU).
        temp, top_p, min_p, top_k, min_tokens_to_keep: passed to ``mlx_lm.sample_utils.make_sampler``.
        prompt: one user turn, wrapped in the model's chat template.
        max_tokens: generation length (shorter when the model ends the text and ``stop_at_eos``).
        pool_seeds: generations every seed's self-BLEU is measured against.
        repetition_n: n-gram length of the repetition rate.
        stop_at_eos: end each generation at its first end-of-sequence id (the tokenizer's and the
            chat/text end markers); off, every generation runs ``max_tokens`` tokens, markers included.
        prompts: a prompt set (replaces ``prompt``): each sample is then one set, a generation per
            prompt (each its own seeded draw), and every output is the set's (self-BLEU within the set, the
            others their mean over the set; ``pool_seeds`` is not used).
    """
    lm = load_text_model(ctx, model, variant)
    config = SamplerConfig(temp=temp, top_p=top_p, min_p=min_p, top_k=top_k, min_tokens_to_keep=min_tokens_to_keep)
    # Draw i of the look is offset + i: a swept look's second call per level continues the first's seeds.
    seeds = [ctx.seed % SEEDS_PER_LOOK + ctx.look * SEEDS_PER_LOOK + ctx.offset + i for i in range(ctx.n)]
    if prompts is not None:
        sets = measure_sets(lm, seeds, config=config, prompts=prompts, max_tokens=max_tokens,
                            repetition_n=repetition_n, stop_at_eos=stop_at_eos)
        ctx.artifacts.setdefault("sets", []).extend({"seed": s.seed, "tokens": s.tokens} for s in sets)
        ctx.info.update({"sampler": f"make_sampler({config})", "max_tokens": max_tokens, "prompts": len(prompts),
                         "bleu": "self-BLEU within each set (BLEU-4, add-one smoothing for n>=2)"})
        return {name: [getattr(s, name) for s in sets] for name in
                ("repetition_rate", "distinct_1", "distinct_2", "self_bleu", "length", "cross_entropy")}
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
        "cross_entropy": [s.cross_entropy for s in scored],
    }
