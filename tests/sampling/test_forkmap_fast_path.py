"""The fast fork map computes the labels the straightforward procedure computes, on the tiny model.

The fast path (:func:`claimcheck.probing.sampling.runs.bisector_traces`) prefills each reference once and
starts every branch from a slice of its KV cache, batches the branches of several prompts together,
and stops a branch as soon as its label is decided. The straightforward path here does none of
that: every branch is prefilled from scratch and greedy-decoded to its full length by mlx-lm's own
``generate_step``, one branch at a time, then scored and labelled. Both read the same reference and
the same per-position features (the teacher-forced pass is not one of the speed-ups), so any
difference in a label is a difference the speed-ups made.

Two tiny models: a random one (real attention, so a wrong KV slice or padding shows; its branches
diverge, FORK or LOCKED) and a bigram chain (:func:`tests.sampling.tiny.chain_model`, whose
branches re-merge, partly re-merge or diverge by construction).
"""

from __future__ import annotations

import importlib
from typing import Any, Sequence

import pytest

pytest.importorskip("mlx.core")

from claimcheck.probing.sampling.forkmap import LABEL, OUTCOME, REMERGED, TraceRules, make_node, traced_positions  # noqa: E402
from claimcheck.probing.sampling.runs import bisector_traces  # noqa: E402
from probes.curves.curve_prompts import select_prompts  # noqa: E402
from probes.curves.curve_text import chat_ids, stop_token_ids  # noqa: E402
from tests.sampling.tiny import CharTokenizer, chain_model, tiny_model  # noqa: E402

PROMPTS = ["lighthouse", "weights-advice", "paris", "night-train"]
RULES = TraceRules(genuine_p2=0.05)
MAX_REF = 40


def _greedy_alone(model: Any, context: Sequence[int], max_tokens: int, stops: set[int]) -> list[int]:
    """Greedy continuation of ``context`` by mlx-lm's own decode loop, from a fresh cache."""
    import mlx.core as mx

    generate_step = importlib.import_module("mlx_lm.generate").generate_step
    out: list[int] = []
    for token, _ in generate_step(mx.array(list(context)), model, max_tokens=max_tokens, sampler=lambda x: mx.argmax(x, axis=-1)):
        token = int(token)
        if token in stops:
            break
        out.append(token)
    return out


@pytest.fixture(scope="module", params=["random", "chain"])
def setup(request: pytest.FixtureRequest) -> tuple[str, Any, list[list[int]], list[int]]:
    tokenizer = CharTokenizer()
    ids = [chat_ids(tokenizer, p.text) for p in select_prompts(PROMPTS)]
    return request.param, (tiny_model() if request.param == "random" else chain_model()), ids, stop_token_ids(tokenizer)


@pytest.fixture(scope="module")
def fast(setup: tuple[str, Any, list[list[int]], list[int]]) -> list[dict[str, Any]]:
    _, model, ids, stops = setup
    return bisector_traces(model, ids, rules=RULES, max_ref_tokens=MAX_REF, stop_ids=stops, batch_size=16, settle=LABEL)


def test_fast_labels_equal_the_straightforward_ones(setup, fast) -> None:
    kind, model, ids, stops = setup
    compared = 0
    for prompt, record in zip(ids, fast):
        ref, features = record["ref"], record["positions"]
        assert ref == _greedy_alone(model, prompt, MAX_REF, set(stops))
        positions = traced_positions(len(ref), RULES)
        assert [node["position"] for node in record["nodes"]] == positions
        for node in record["nodes"]:
            i = node["position"]
            f = features[i]
            branch = _greedy_alone(model, list(prompt) + ref[:i] + [f["rank2"]], len(ref) - 1 - i + RULES.extra_tokens, set(stops))
            slow = make_node(i, f["p1"], f["p2"], f["top1"], f["rank2"], branch, ref, RULES)
            assert node["label"] == slow.label, (i, node, slow)
            assert node["branch_tokens"] == list(branch[: len(node["branch_tokens"])])
            compared += 1
        assert record["labels"] == [
            next((n["label"] for n in record["nodes"] if n["position"] == p), "LOCKED") for p in range(len(ref))
        ]
    labels = {node["label"] for record in fast for node in record["nodes"]}
    assert compared >= 100
    assert labels >= ({"REMERGE", "FORK", "LOCKED"} if kind == "chain" else {"FORK", "LOCKED"})


def test_settling_by_label_computes_fewer_tokens_and_the_same_labels(setup, fast) -> None:
    kind, model, ids, stops = setup
    by_outcome = bisector_traces(model, ids, rules=RULES, max_ref_tokens=MAX_REF, stop_ids=stops, batch_size=16, settle=OUTCOME)
    remerged = 0
    for a, b in zip(fast, by_outcome):
        assert a["labels"] == b["labels"]
        assert a["summary"] == b["summary"]
        for x, y in zip(a["nodes"], b["nodes"]):
            if x["outcome"] == REMERGED:
                remerged += 1
                assert y["outcome"] in ("partial", "reconverged")
            else:
                assert x["outcome"] == y["outcome"]
    if kind == "chain":  # re-merging branches are where settling by label saves tokens
        assert remerged >= 10
        assert fast[0]["work"]["generated_tokens"] < by_outcome[0]["work"]["generated_tokens"]
    else:
        assert fast[0]["work"]["generated_tokens"] == by_outcome[0]["work"]["generated_tokens"]


def test_an_unknown_settle_level_is_refused(setup) -> None:
    kind, model, ids, stops = setup
    with pytest.raises(ValueError, match="settle"):
        bisector_traces(model, ids[:1], rules=RULES, max_ref_tokens=MAX_REF, stop_ids=stops, settle="score")
