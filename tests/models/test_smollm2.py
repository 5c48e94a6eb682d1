"""The embedded SmolLM2 model: GGUF -> mlx-lm conversion, caching, tokenizer, and that it still talks sense.

Reference facts come from the GGUF file itself (its ``llama.*`` metadata and tensor shapes) and from the
model's known behaviour: SmolLM2-135M-Instruct completes "The capital of France is" with "Paris" and
answers the matching chat question with a sentence naming Paris. A wrong rotary layout
(``rope_traditional``) keeps completions plausible but empties chat answers, hence both checks.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from claimcheck.models import gguf, smollm2

PROMPT = "The capital of France is"


def _header(path: Path) -> dict:
    with open(path, "rb") as handle:
        size = int.from_bytes(handle.read(8), "little")
        return {k: v for k, v in json.loads(handle.read(size)).items() if k != "__metadata__"}


def test_gguf_tensor_names_map_to_mlx_lm_llama_names():
    assert gguf.mlx_lm_name("blk.3.attn_q.scales") == "model.layers.3.self_attn.q_proj.scales"
    assert gguf.mlx_lm_name("blk.0.ffn_down.weight") == "model.layers.0.mlp.down_proj.weight"
    assert gguf.mlx_lm_name("blk.29.ffn_norm.weight") == "model.layers.29.post_attention_layernorm.weight"
    assert gguf.mlx_lm_name("token_embd.biases") == "model.embed_tokens.biases"
    assert gguf.mlx_lm_name("output_norm.weight") == "model.norm.weight"
    assert gguf.mlx_lm_name("output.weight") == "lm_head.weight"
    with pytest.raises(KeyError):
        gguf.mlx_lm_name("blk.0.attn_qkv.weight")


def test_config_comes_from_the_gguf_metadata(smollm2_4bit):
    # Values: the GGUF's llama.* metadata (576 hidden, 30 blocks, 9 heads, 3 KV heads, FFN 1536,
    # vocab 49152, rope base 100000, eps 1e-5) and its tokenizer ids (<|im_end|> = 2, <|endoftext|> = 0).
    config = json.loads((smollm2_4bit.path / "config.json").read_text())
    expected = {
        "model_type": "llama",
        "hidden_size": 576,
        "num_hidden_layers": 30,
        "num_attention_heads": 9,
        "num_key_value_heads": 3,
        "head_dim": 64,
        "intermediate_size": 1536,
        "vocab_size": 49152,
        "rope_theta": 100000.0,
        "rms_norm_eps": 1e-5,
        "rope_traditional": True,
        "tie_word_embeddings": True,
        "eos_token_id": [2, 0],
        "bos_token_id": 1,
    }
    assert {key: config[key] for key in expected} == expected
    # The layers are 4-bit; the embedding (and so the tied head) is stored Q8_0 -> 8-bit.
    assert config["quantization"]["bits"] == 4 and config["quantization"]["group_size"] == 32
    assert config["quantization"]["model.embed_tokens"]["bits"] == 8


def test_4bit_keeps_the_shipped_tensors(smollm2_4bit):
    header = _header(smollm2_4bit.path / "model.safetensors")
    # 30 layers x (7 quantized x 3 tensors + 2 norms) + embedding x 3 + final norm; no lm_head (tied).
    assert len(header) == 30 * (7 * 3 + 2) + 3 + 1
    assert "lm_head.weight" not in header
    # 4-bit packs 8 values per uint32: 576 inputs -> 72 words, 18 groups of 32.
    assert header["model.layers.0.self_attn.q_proj.weight"]["dtype"] == "U32"
    assert header["model.layers.0.self_attn.q_proj.weight"]["shape"] == [576, 72]
    assert header["model.layers.0.self_attn.k_proj.scales"]["shape"] == [192, 18]
    assert header["model.layers.0.self_attn.k_proj.scales"]["dtype"] == "F16"
    assert header["model.layers.0.mlp.down_proj.weight"]["shape"] == [576, 192]
    # 8-bit packs 4 per word: 576 -> 144.
    assert header["model.embed_tokens.weight"]["shape"] == [49152, 144]
    assert header["model.norm.weight"]["dtype"] == "F32"


def test_fp32_is_the_dequantized_4bit(smollm2_fp32, smollm2_4bit):
    import mlx.core as mx

    header = _header(smollm2_fp32.path / "model.safetensors")
    assert {entry["dtype"] for entry in header.values()} == {"F32"}
    assert header["model.embed_tokens.weight"]["shape"] == [49152, 576]
    assert header["model.layers.0.mlp.gate_proj.weight"]["shape"] == [1536, 576]
    # Same source numbers: dequantizing the 4-bit tensor with float32 scales reproduces the fp32
    # tensor exactly (both compute scale * code + bias in float32 from the same float16 inputs).
    q = mx.load(str(smollm2_4bit.path / "model.safetensors"))
    f = mx.load(str(smollm2_fp32.path / "model.safetensors"))
    for base, bits in (("model.layers.7.self_attn.v_proj", 4), ("model.embed_tokens", 8)):
        restored = mx.dequantize(q[f"{base}.weight"], q[f"{base}.scales"].astype(mx.float32),
                                 q[f"{base}.biases"].astype(mx.float32), group_size=32, bits=bits)
        assert mx.array_equal(restored, f[f"{base}.weight"]).item(), base


def test_conversion_is_cached_and_reused(model_cache, smollm2_4bit):
    directory, manifest, converted_now = smollm2.ensure_converted("4bit")
    assert not converted_now
    assert directory == smollm2_4bit.path
    assert directory.parent == model_cache / "models"
    assert re.fullmatch(r"smollm2-135m-instruct-4bit-[0-9a-f]{12}-c\d+", directory.name)
    assert manifest["weights_sha256"] == smollm2_4bit.weights_hash
    # The hash is the safetensors file's own sha256.
    from claimcheck.models._files import sha256_file

    assert sha256_file(directory / "model.safetensors") == smollm2_4bit.weights_hash
    # No temporary folders are left behind.
    assert not [p for p in directory.parent.iterdir() if p.name.startswith(".")]
    # A second load (not the in-process reuse) reads the converted directory without converting.
    from claimcheck.models import load

    again = load("smollm2-135m-instruct", variant="4bit", reuse=False)
    assert again.path == directory and "convert_seconds" not in again.timings
    assert again.weights_hash == smollm2_4bit.weights_hash


def test_an_unfinished_conversion_is_redone(model_cache, smollm2_4bit, monkeypatch):
    monkeypatch.setenv("CLAIMCHECK_CACHE", str(model_cache / "other"))
    first, _, converted_first = smollm2.ensure_converted("4bit")
    (first / "claimcheck.json").unlink()  # a damaged directory: the manifest is written last
    second, manifest, converted_second = smollm2.ensure_converted("4bit")
    assert converted_first and converted_second and second == first
    assert manifest["weights_sha256"] == smollm2_4bit.weights_hash  # conversion is deterministic


def test_tokenizer_round_trips_unicode(smollm2_fp32):
    tokenizer = smollm2_fp32.tokenizer
    text = "Grüße, 世界! naïve café — emoji 🙂 and\ttabs\n  two spaces"
    assert tokenizer.decode(tokenizer.encode(text)) == text


def test_tokenizer_follows_llama_cpp_smollm_rules(smollm2_fp32):
    tokenizer = smollm2_fp32.tokenizer
    # Digits are split one by one, before byte-level splitting ("smollm" pre-tokenizer: llama.cpp's
    # regexes "\p{N}" then GPT-2's), so the space before a number stays a token of its own.
    from tokenizers import Tokenizer

    backend = Tokenizer.from_file(str(smollm2_fp32.path / "tokenizer.json"))
    pieces = [piece for piece, _ in backend.pre_tokenizer.pre_tokenize_str("abc 2024 x")]
    assert pieces == ["abc", "Ġ", "2", "0", "2", "4", "Ġx"]
    digits = tokenizer.encode("2024")
    assert [tokenizer.decode([i]) for i in digits] == ["2", "0", "2", "4"]
    # No prefix space and no BOS: "Hello" starts with a token that decodes to "Hello"-something.
    assert tokenizer.decode([tokenizer.encode("Hello")[0]]).startswith("H")
    # Control tokens are single special ids.
    assert tokenizer.encode("<|im_start|>user<|im_end|>")[0] == 1
    assert tokenizer.encode("<|im_start|>user<|im_end|>")[-1] == 2
    assert set(tokenizer.eos_token_ids) == {0, 2}


def test_chat_template_renders(smollm2_fp32):
    rendered = smollm2_fp32.tokenizer.apply_chat_template(
        [{"role": "user", "content": "Hi"}], tokenize=False, add_generation_prompt=True
    )
    assert rendered.startswith("<|im_start|>system\n")
    assert rendered.endswith("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")


def _greedy_ids(loaded, prompt_ids, max_tokens: int) -> list[int]:
    """Greedy token ids up to the first end-of-sequence id (decoding ids keeps the exact text)."""
    import mlx.core as mx
    from mlx_lm.generate import generate_step

    out = []
    for token, _ in generate_step(mx.array(prompt_ids), loaded.model, max_tokens=max_tokens):
        token = int(token)
        if token in loaded.tokenizer.eos_token_ids:
            break
        out.append(token)
    return out


@pytest.mark.parametrize("fixture", ["smollm2_fp32", "smollm2_4bit"])
def test_greedy_completion_names_paris(fixture, request):
    loaded = request.getfixturevalue(fixture)
    ids = _greedy_ids(loaded, loaded.tokenizer.encode(PROMPT), max_tokens=3)
    assert loaded.tokenizer.decode(ids).strip().startswith("Paris")


def test_chat_answer_is_a_sensible_sentence(smollm2_fp32):
    tokenizer = smollm2_fp32.tokenizer
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "What is the capital of France?"}], add_generation_prompt=True)
    answer = tokenizer.decode(_greedy_ids(smollm2_fp32, prompt, max_tokens=24)).strip()
    assert answer, "empty chat answer (wrong rotary layout gives this)"
    assert re.fullmatch(r"[A-Za-z0-9 ,.'!?\-\n]+", answer), answer
    assert "Paris" in answer


def test_loaded_model_records_what_was_measured(smollm2_fp32):
    info = smollm2_fp32.info()
    assert info["model"] == "smollm2-135m-instruct"
    assert info["variant"] == "fp32"
    assert re.fullmatch(r"[0-9a-f]{64}", info["weights_hash"])
    assert smollm2_fp32.reads_text
    assert smollm2_fp32.config["tie_word_embeddings"] is True
