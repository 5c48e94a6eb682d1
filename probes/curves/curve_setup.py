"""What a prompt-set curve probe does before it measures: select the prompts, load the model, tokenise.

The route hazard and identity control probes (and any other that samples a selection of the
prompt set) start the same way; one definition keeps their prompt ids and stop ids the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from claimcheck.api import ProbeContext
from .curve_prompts import CurvePrompt, select_prompts
from .curve_text import chat_ids, load_text_model, stop_token_ids


@dataclass(frozen=True)
class PromptRun:
    """A loaded model and the chosen prompts, tokenised.

    Attributes:
        lm: the loaded model with its tokenizer.
        chosen: the selected prompts, in selection order.
        ids: chat-templated prompt ids by prompt id.
        stops: the model's end-of-sequence ids.
    """

    lm: Any
    chosen: tuple[CurvePrompt, ...]
    ids: Mapping[str, list[int]]
    stops: list[int]


def prompt_run(ctx: ProbeContext, model: str, variant: str | None, prompts: str | Sequence[str]) -> PromptRun:
    """Select the prompts (failing fast on an unknown one), load the model, tokenise the prompts."""
    chosen = tuple(select_prompts(prompts))
    lm = load_text_model(ctx, model, variant)
    return PromptRun(lm, chosen, {p.id: chat_ids(lm.tokenizer, p.text) for p in chosen}, stop_token_ids(lm.tokenizer))
