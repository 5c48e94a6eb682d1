"""Seeded batched generation on a tiny random llama model: identity, batch independence, prefixes, stops."""

from __future__ import annotations

import numpy as np
import pytest

mx = pytest.importorskip("mlx.core")

from claimcheck.probing.sampling.generate import GenerationRequest, generate_batch, prefill, teacher_forced_logprobs  # noqa: E402
from claimcheck.probing.sampling.policies import get_policy  # noqa: E402
from tests.sampling.tiny import tiny_model  # noqa: E402

PROMPTS = [[1, 5, 9, 14, 20, 33], [1, 7, 8], [1, 40, 41, 42, 43, 44, 45, 46, 47, 48], [1, 60, 2, 61]]


@pytest.fixture(scope="module")
def model():
    return tiny_model()


def test_greedy_generation_matches_mlx_lm_generate_step(model) -> None:
    from mlx_lm.generate import generate_step

    (ours,) = generate_batch(model, [GenerationRequest(prompt=PROMPTS[0], policy=get_policy("greedy"), max_tokens=12)], stop_ids=())
    theirs = [(int(t), lp) for (t, lp), _ in zip(generate_step(mx.array(PROMPTS[0]), model, sampler=lambda x: mx.argmax(x, -1)), range(12))]
    assert ours.tokens == [t for t, _ in theirs]
    expected = [float(lp[t]) for t, lp in theirs]
    # Same model and token path: log-probs agree to float32 rounding of a log-softmax (1e-4 absolute).
    np.testing.assert_allclose(ours.logprobs, expected, rtol=0, atol=1e-4)


def test_identity_curve_reproduces_temperature_one_under_matched_seeds(model) -> None:
    requests = [
        GenerationRequest(prompt=PROMPTS[k % 4], policy=get_policy(name), seed=k, max_tokens=24)
        for k in range(8)
        for name in ("curve-id", "temp1")
    ]
    out = generate_batch(model, requests, stop_ids=())
    pairs = [(out[2 * k].tokens, out[2 * k + 1].tokens) for k in range(8)]
    assert all(a == b for a, b in pairs)
    assert len({tuple(a) for a, _ in pairs}) > 1  # different seeds do differ


def test_a_sequence_draws_the_same_alone_and_in_a_batch_of_eight(model, record_property) -> None:
    policies = ["temp1", "curve-router", "default", "temp0.8"]
    requests = [
        GenerationRequest(prompt=PROMPTS[k % 4], policy=get_policy(policies[k % 4]), seed=100 + k, max_tokens=30, start_step=k)
        for k in range(8)
    ]
    batch = generate_batch(model, requests, stop_ids=())
    alone = [generate_batch(model, [r], stop_ids=())[0] for r in requests]
    pairs = [(b.tokens, a.tokens) for b, a in zip(batch, alone)]
    agreement = sum(x == y for b, a in pairs for x, y in zip(b, a)) / sum(max(len(b), len(a)) for b, a in pairs)
    record_property("token_agreement", agreement)
    # Draws are identical by construction (u depends on seed and step only); tokens can differ only
    # where left padding changes the logits' last bits enough to cross a CDF boundary: rare.
    assert agreement >= 0.95, f"token agreement alone vs batch: {agreement:.3f}"


def test_continuous_batching_gives_the_same_sequences_as_one_big_batch(model) -> None:
    requests = [GenerationRequest(prompt=PROMPTS[k % 4], policy=get_policy("temp1"), seed=k, max_tokens=5 + 3 * k) for k in range(9)]
    big = generate_batch(model, requests, stop_ids=(), batch_size=16)
    small = generate_batch(model, requests, stop_ids=(), batch_size=3)
    assert [g.tokens for g in big] == [g.tokens for g in small]
    assert [len(g.tokens) for g in big] == [5 + 3 * k for k in range(9)]


def test_prefilled_roots_give_the_same_result(model) -> None:
    base = PROMPTS[2]
    root, _ = prefill(model, base + [50, 51, 52])
    requests = [GenerationRequest(prompt=base + [50, 51, 52][:i] + [70 + i], policy=get_policy("greedy"), max_tokens=8) for i in range(4)]
    with_root = generate_batch(model, requests, stop_ids=(), roots=[root])
    without = generate_batch(model, requests, stop_ids=())
    assert [g.tokens for g in with_root] == [g.tokens for g in without]


def test_stop_ids_end_a_sequence_and_are_not_returned(model) -> None:
    (free,) = generate_batch(model, [GenerationRequest(prompt=PROMPTS[1], policy=get_policy("greedy"), max_tokens=6)], stop_ids=())
    stop = free.tokens[3]
    (stopped,) = generate_batch(model, [GenerationRequest(prompt=PROMPTS[1], policy=get_policy("greedy"), max_tokens=6)], stop_ids=[stop])
    assert stopped.finish_reason == "stop"
    assert stopped.tokens == free.tokens[: free.tokens.index(stop)]


def test_banned_ids_never_appear(model) -> None:
    banned = list(range(0, 90))  # leave only a few ids of the 96
    out = generate_batch(
        model, [GenerationRequest(prompt=PROMPTS[0], policy=get_policy("temp1"), seed=s, max_tokens=20) for s in range(4)],
        stop_ids=(), ban_ids=banned,
    )
    assert all(t >= 90 for g in out for t in g.tokens)
    assert all(len(g.tokens) == 20 for g in out)


def test_stop_when_ends_a_sequence_early(model) -> None:
    out = generate_batch(
        model, [GenerationRequest(prompt=PROMPTS[0], policy=get_policy("temp1"), seed=s, max_tokens=20) for s in range(3)],
        stop_ids=(), stop_when=lambda index, tokens: index == 1 and len(tokens) == 4,
    )
    assert [len(g.tokens) for g in out] == [20, 4, 20]
    assert out[1].finish_reason == "early"


def test_teacher_forcing_matches_the_generated_log_probs(model) -> None:
    (g,) = generate_batch(model, [GenerationRequest(prompt=PROMPTS[3], policy=get_policy("temp1"), seed=3, max_tokens=10)], stop_ids=())
    rows = teacher_forced_logprobs(model, PROMPTS[3], g.tokens)
    forced = rows[np.arange(len(g.tokens)), g.tokens]
    # One full pass vs incremental decoding: float32 summation order only (1e-4 absolute).
    np.testing.assert_allclose(forced, g.logprobs, rtol=0, atol=1e-4)


def test_requests_need_a_prompt_and_tokens(model) -> None:
    with pytest.raises(ValueError, match="request 0"):
        generate_batch(model, [GenerationRequest(prompt=[], policy=get_policy("greedy"))])


def test_a_shadow_policy_draws_from_the_main_sequence_s_own_rows(model) -> None:
    """A shadow draws with the same seed and step; the identity curve's shadow of temperature 1 never differs."""
    from claimcheck.probing.sampling import get_policy

    requests = [GenerationRequest(prompt=[1, 2, 3], policy=get_policy("temp1"), seed=seed, max_tokens=12, shadows=(get_policy("curve-id"), get_policy("greedy")))
                for seed in range(6)]
    out = generate_batch(model, requests, stop_ids=(), batch_size=4)
    for g in out:
        assert g.shadow_tokens["curve-id"] == g.tokens
        assert len(g.shadow_tokens["greedy"]) == len(g.tokens)
    # greedy's shadow is the argmax of each step's distribution: where the sample took it, they agree
    first = out[0]
    assert first.shadow_tokens["greedy"][0] == generate_batch(model, [GenerationRequest(prompt=[1, 2, 3], policy=get_policy("greedy"), max_tokens=1)], stop_ids=())[0].tokens[0]
    assert any(g.shadow_tokens["greedy"] != g.tokens for g in out)  # temperature 1 leaves the greedy path somewhere


def test_greedy_rows_without_log_probs_give_the_same_tokens(model) -> None:
    requests = [GenerationRequest(prompt=[1, 2, k], policy=get_policy("greedy"), max_tokens=10) for k in range(3, 9)]
    with_lp = generate_batch(model, requests, stop_ids=(), batch_size=4)
    without = generate_batch(model, requests, stop_ids=(), batch_size=4, logprobs=False)
    assert [g.tokens for g in without] == [g.tokens for g in with_lp]
    assert all(len(g.logprobs) == 10 for g in with_lp) and all(g.logprobs == [] for g in without)


def test_admitting_the_longest_requests_first_keeps_results_in_order_and_takes_fewer_steps() -> None:
    from claimcheck.probing.sampling import GenerationRequest, GenerationStats, generate_batch, get_policy
    from tests.sampling.tiny import chain_model

    model = chain_model()
    greedy = get_policy("greedy")
    lengths = [2, 3, 2, 2, 3, 2, 30, 25]
    requests = [GenerationRequest(prompt=[5 + k, 7], policy=greedy, max_tokens=n, tag=k) for k, n in enumerate(lengths)]
    plain, longest = GenerationStats(), GenerationStats()
    as_given = generate_batch(model, requests, stop_ids=(), batch_size=2, stats=plain)
    reordered = generate_batch(model, requests, stop_ids=(), batch_size=2, stats=longest, longest_first=True)
    assert [g.request.tag for g in reordered] == list(range(len(lengths)))
    assert [g.tokens for g in reordered] == [g.tokens for g in as_given]
    assert [len(g.tokens) for g in reordered] == lengths
    assert longest.steps < plain.steps


def test_the_step_normalised_on_the_device_draws_as_in_numpy(model, record_property) -> None:
    """MLX's log-softmax (the GPU path) against numpy's, on the same rows: the same tokens but on a CDF boundary."""
    from claimcheck.probing.sampling.generate import normalise_on_device

    assert normalise_on_device() is (mx.default_device().type == mx.DeviceType.gpu)
    policies = ["temp1", "curve-router", "default", "temp0.8", "curve-id"]
    requests = [GenerationRequest(prompt=PROMPTS[k % 4], policy=get_policy(policies[k % 5]), seed=300 + k, max_tokens=24,
                                  shadows=(get_policy("temp1"),) if k % 3 == 0 else ())
                for k in range(20)]
    banned = [3, 4, 5, 50]
    host = generate_batch(model, requests, stop_ids=(), ban_ids=banned, on_device=False)
    device = generate_batch(model, requests, stop_ids=(), ban_ids=banned, on_device=True)
    pairs = [(h.tokens, d.tokens) for h, d in zip(host, device)]
    agreement = sum(x == y for h, d in pairs for x, y in zip(h, d)) / sum(max(len(h), len(d)) for h, d in pairs)
    record_property("token_agreement", agreement)
    assert agreement >= 0.99, f"token agreement numpy vs MLX log-softmax: {agreement:.3f}"
    assert not {3, 4, 5, 50} & {t for g in device for t in g.tokens}, "a banned id was drawn on the device path"
    same = [(h, d) for h, d in zip(host, device) if h.tokens == d.tokens]
    assert same, "no sequence came out the same"
    for h, d in same:
        np.testing.assert_allclose(d.logprobs, h.logprobs, rtol=0, atol=1e-5)
        assert d.shadow_tokens == h.shadow_tokens
    greedy = [GenerationRequest(prompt=p, policy=get_policy("greedy"), max_tokens=10) for p in PROMPTS]
    assert [g.tokens for g in generate_batch(model, greedy, stop_ids=(), logprobs=False, on_device=True)] == \
        [g.tokens for g in generate_batch(model, greedy, stop_ids=(), logprobs=False, on_device=False)]
