"""A model's quality on a small shipped data set: proverb completion, scored by log-likelihood.

Claims such as "4-bit quantization costs SmolLM2 little accuracy" need a quality figure that runs
anywhere without a download. ``data/proverbs.yaml`` (shipped with the probes; its provenance is in
the file) holds 40 proverbs split into a stem and an ending. For each item the model scores the
true ending and ``choices - 1`` distractors (endings of other items, drawn with the item's seed)
by their mean log-likelihood per token after the stem, as multiple-choice benchmarks such as
HellaSwag score continuations; each sample is one item:

- ``correct``: 1 when the true ending scores highest, else 0 (chance is ``1 / choices``);
- ``nll``: the true ending's mean negative log-likelihood per token (nats), a log-likelihood figure;
- ``margin``: the true ending's mean log-likelihood minus the best distractor's (nats per token).

Samples walk a seeded permutation of the items, continuing across calls (each swept level in
step with the others, so levels compare on the same items); ``n`` beyond 40 repeats items with
fresh distractors. MLX is imported inside the functions only.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from claimcheck.api import Output, ProbeContext, mlx_core, probe

from ..curves.curve_text import DEFAULT_MODEL, load_text_model

DATA = Path(__file__).resolve().parents[1] / "data" / "proverbs.yaml"  # the package's data/, shared by families

EXAMPLE = """\
id: smollm2-4bit-kernels-keep-likelihood
title: MLX's 4-bit kernels give SmolLM2 the likelihoods of its dequantized fp32 copy
statement: >-
  Scoring proverb endings, SmolLM2-135M run on its 4-bit weights through MLX's quantized kernels
  gives each ending's per-token log-likelihood within 1% of the same weights dequantized to fp32.
source:
  doc: https://arxiv.org/abs/2212.09720
  section: "Dettmers & Zettlemoyer, The case for 4-bit precision (abstract)"
  figure: "4-bit precision is almost universally optimal for total model bits and zero-shot accuracy"
scope: {kind: portable, backend: any}
probe: {name: proverb_cloze, params: {variant: [fp32, 4bit], choices: 2}}
check: {rule: level_equivalent, output: nll, over: variant, versus: fp32, margin: 0.01, scale: log-ratio}
budget: {min_samples: 6, max_samples: 12, looks: 2}
notes: Both variants hold the GGUF's Q4_1 weights, so the claim is about the kernels, not about quantization error.
"""


@dataclass(frozen=True)
class Item:
    """One proverb: the stem the model reads and the ending it should prefer."""

    stem: str
    ending: str


def load_items(path: Path = DATA) -> list[Item]:
    """The shipped items (a list of ``{stem, ending}``)."""
    import yaml

    rows = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [Item(str(row["stem"]), str(row["ending"])) for row in rows]


def ending_logliks(lm: Any, stem: Sequence[int], endings: Sequence[Sequence[int]]) -> list[float]:
    """Mean log-probability per token of each ending after ``stem``, all endings in one batched forward pass.

    Shorter candidates are padded at the end; a causal model's logits at a position never see later
    tokens, so the padding changes no scored position.
    """
    mx = mlx_core()
    rows = [[*stem, *ending] for ending in endings]
    width = max(len(row) for row in rows)
    logits = lm.model(mx.array([row + [0] * (width - len(row)) for row in rows])).astype(mx.float32)
    logprobs = logits - mx.logsumexp(logits, axis=-1, keepdims=True)
    start = len(stem)
    scores = []
    for index, ending in enumerate(endings):
        positions = mx.array(list(range(start - 1, start - 1 + len(ending))))
        tokens = mx.array([int(t) for t in ending])
        scores.append(float(logprobs[index][positions, tokens].mean().item()))
    return scores


def encode(lm: Any, text: str, *, first: bool) -> list[int]:
    """Token ids of ``text``: the stem with the tokenizer's own start, an ending as a continuation."""
    if first:
        return [int(t) for t in lm.tokenizer.encode(text)]
    return [int(t) for t in lm.tokenizer.encode(" " + text, add_special_tokens=False)]


@probe(
    "proverb_cloze",
    outputs={
        "correct": Output("", True, "1 when the true ending has the highest mean log-likelihood, else 0, per item"),
        "nll": Output("nats/token", False, "the true ending's mean negative log-likelihood per token, per item"),
        "margin": Output("nats/token", True, "true ending's mean log-likelihood minus the best distractor's, per item"),
    },
    reads_text=True,
    example=EXAMPLE,
)
def proverb_cloze(
    ctx: ProbeContext,
    *,
    model: str = DEFAULT_MODEL,
    variant: str | None = None,
    choices: int = 4,
) -> dict[str, list[float]]:
    """Proverb completion on the shipped 40-item set: accuracy among ``choices`` endings and log-likelihood.

    Args:
        model: model id: a registered one, a project alias, an mlx-lm folder or a cached Hugging Face repo.
        variant: which weights of the model to load, one it offers (``fp32``, ``4bit``); ``None``: its
            default (``fp32`` on the CPU, ``4bit`` on a GPU).
        choices: candidate endings per item, the true one included (2 to 40).
    """
    items = load_items()
    if not 2 <= choices <= len(items):
        raise ValueError(f"`choices` must lie in [2, {len(items)}], got {choices}")
    lm = load_text_model(ctx, model, variant)
    order = list(range(len(items)))
    random.Random(ctx.seed).shuffle(order)
    out: dict[str, list[float]] = {"correct": [], "nll": [], "margin": []}
    picked: list[dict[str, Any]] = []
    # Items continue across calls; each swept level keeps its own count, so levels see the same items in step.
    drawn = ctx.artifacts.setdefault("items_drawn", {})
    key = f"{model}/{variant}/{choices}"
    start = int(drawn.get(key, 0))
    drawn[key] = start + ctx.n
    for index in range(start, start + ctx.n):
        item = items[order[index % len(items)]]
        rng = random.Random(ctx.seed * 7_919 + index)
        others = rng.sample([j for j in range(len(items)) if items[j].ending != item.ending], choices - 1)
        stem = encode(lm, item.stem, first=True)
        scores = ending_logliks(lm, stem, [encode(lm, ending, first=False)
                                           for ending in [item.ending, *(items[j].ending for j in others)]])
        true, best = scores[0], max(scores[1:])
        out["correct"].append(1.0 if true > best else 0.0)
        out["nll"].append(-true)
        out["margin"].append(true - best)
        picked.append({"stem": item.stem, "distractors": [items[j].ending for j in others]})
    ctx.artifacts.setdefault("items", []).extend(picked)
    ctx.info.update({"data": "claimcheck_probes/data/proverbs.yaml (40 items)", "choices": choices,
                     "score": "mean log-likelihood per token of each ending after the stem"})
    return out
