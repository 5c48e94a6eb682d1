"""The text side shared by the curve probes: loading the model, its chat template, its end markers.

Every curve probe conditions on the same chat-templated prompt ids and bans or stops on the same
end-of-sequence ids, and keys its cached results on the same model identity; these helpers keep
those three things one definition each.
"""

from __future__ import annotations

from typing import Any

from claimcheck.api import ProbeContext

DEFAULT_MODEL = "smollm2-135m-instruct"
CACHE_VERSION = 1


def load_text_model(ctx: ProbeContext, model: str, variant: str | None) -> Any:
    """The model with its tokenizer; its identity and the BLAS in use go into the probe's info."""
    from claimcheck.api import load

    loaded = load(model, variant=variant, needs_text=True)
    ctx.info.update(loaded.info())
    try:
        from claimcheck.api import ensure_fast_blas

        ctx.info["blas"] = ensure_fast_blas().describe()
    except Exception:  # noqa: BLE001 - the BLAS note is informative only
        pass
    return loaded


def chat_ids(tokenizer: Any, text: str) -> list[int]:
    """The model's chat template around one user turn, ready for generation.

    A base model without a chat template (e.g. Gemma 3 270M) gets the prompt as
    plain text after its BOS token instead.
    """
    if not getattr(tokenizer, "chat_template", None):
        return [int(t) for t in tokenizer.encode(text)]
    ids = tokenizer.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True)
    if isinstance(ids, str):
        ids = tokenizer.encode(ids, add_special_tokens=False)
    return [int(t) for t in ids]


def stop_token_ids(tokenizer: Any) -> list[int]:
    """End-of-sequence ids: the tokenizer's, plus the chat/text end markers it knows.

    SmolLM2 ends a chat turn with ``<|im_end|>`` (2) but plain completions with
    ``<|endoftext|>`` (0); both end a sequence.
    """
    ids = {int(t) for t in (getattr(tokenizer, "eos_token_ids", None) or [])}
    vocab = tokenizer.get_vocab() if hasattr(tokenizer, "get_vocab") else {}
    for marker in ("<|endoftext|>", "<|im_end|>", "<|eot_id|>", "<end_of_turn>", "</s>", "<eos>"):
        if marker in vocab:
            ids.add(int(vocab[marker]))
    return sorted(ids)


def model_key(lm: Any) -> dict[str, Any]:
    """The part of every curve probe's cache key that names the model exactly."""
    return {"model": lm.model_id, "variant": lm.variant, "weights_hash": lm.weights_hash, "version": CACHE_VERSION}
