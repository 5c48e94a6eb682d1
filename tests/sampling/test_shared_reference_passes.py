"""One teacher-forced pass per reference: the route hazards and fork maps it gives are the ones separate passes gave.

The route hazard probe reads each prompt's reference four times (completing the fork map, the
seeds' first departures, the coherence continuations, the exact hazards). It now prefills it
once (:class:`ReferencePasses`); ``keep=False`` is the former computation, every reader prefilling
its own pass. Both run here from empty caches on two tiny models, after a genuine-only fork map
(so the full trace is completed from it, as when the fork-map claims run first), and every output,
label, count and hazard must be equal, while the shared run prefills a quarter of the reference
tokens. A reference computation that uses none of the probe's code (mlx-lm's ``KVCache`` prefill
through :func:`teacher_forced_logprobs`, matched-seed first departures, per-sample counts) checks
the departures and at-risk counts in the route table.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("mlx.core")

import claimcheck.api
import claimcheck.api.sampling
import claimcheck.models  # noqa: E402
import claimcheck.probing.sampling.reference as reference  # noqa: E402
from claimcheck.probing.registry import ProbeContext  # noqa: E402
from claimcheck.probing.sampling import Counts, ROUTE_POLICIES, get_policy, sample_counts, teacher_forced_logprobs  # noqa: E402
from claimcheck.probing.sampling.reference import ReferencePasses, reference_pass  # noqa: E402
from claimcheck.probing.sampling.runs import first_departures  # noqa: E402
from probes.curves import fork_map, route_hazard  # noqa: E402
from probes.curves.curve_prompts import select_prompts  # noqa: E402
from probes.curves.curve_text import chat_ids  # noqa: E402
from tests.sampling.tiny import TinyLoaded, chain_model, tiny_model  # noqa: E402

PROMPTS = ["lighthouse", "night-train"]
SMALL = {"max_ref_tokens": 30, "batch_size": 16}
SEEDS = 12


def test_a_kept_pass_is_the_pass_itself_computed_once() -> None:
    model = tiny_model()
    prompt, ref = [1, 5, 9, 2, 1], [7, 8, 9, 10, 11, 12]
    root, rows = reference_pass(model, prompt, ref)
    kept = ReferencePasses(model)
    first, again = kept.get(prompt, ref), kept.get(tuple(prompt), tuple(ref))
    assert again is first and first[0].tokens == root.tokens
    assert np.array_equal(first[1], rows)
    assert (kept.passes, kept.reused, kept.prefill_tokens) == (1, 1, len(prompt) + len(ref))
    separate = ReferencePasses(model, keep=False)
    separate.get(prompt, ref)
    assert np.array_equal(separate.get(prompt, ref)[1], rows)
    assert (separate.passes, separate.reused, separate.prefill_tokens) == (2, 0, 2 * (len(prompt) + len(ref)))


def _route_run(tmp_path: Any, monkeypatch: pytest.MonkeyPatch, loaded: TinyLoaded, keep: bool) -> dict[str, Any]:
    made: list[ReferencePasses] = []

    class Recorded(ReferencePasses):
        def __init__(self, model: Any, *, keep: bool = keep) -> None:
            super().__init__(model, keep=keep)
            made.append(self)

    monkeypatch.setattr(claimcheck.models, "load", lambda model, variant=None, needs_text=False: loaded)
    monkeypatch.setattr(claimcheck.api, "load", lambda model, variant=None, needs_text=False: loaded)  # what probes import
    monkeypatch.setattr(reference, "ReferencePasses", Recorded)
    monkeypatch.setattr(claimcheck.api.sampling, "ReferencePasses", Recorded)  # what the probes import
    folder = tmp_path / ("shared" if keep else "separate")
    fork_map.bisector_trace(ProbeContext(cache_dir=str(folder)), prompts=PROMPTS, **SMALL)
    ctx = ProbeContext(cache_dir=str(folder))
    out = route_hazard.route_hazard(ctx, prompts=PROMPTS, policy="curve-router", reference_policy="curve-id", seeds=SEEDS,
                                    coherence_seeds=6, **SMALL)
    records = fork_map.traces(ProbeContext(cache_dir=str(folder)), loaded, select_prompts(PROMPTS), **SMALL)
    assert len(made) == 1, "the route hazard probe makes one set of passes"
    return {"out": out, "artifacts": ctx.artifacts, "records": records, "passes": made[0]}


@pytest.fixture(scope="module", params=["random", "chain"])
def loaded(request: pytest.FixtureRequest) -> TinyLoaded:
    return TinyLoaded(tiny_model() if request.param == "random" else chain_model())


def test_shared_passes_give_the_route_hazards_of_separate_ones(tmp_path, monkeypatch, loaded) -> None:
    shared = _route_run(tmp_path, monkeypatch, loaded, keep=True)
    separate = _route_run(tmp_path, monkeypatch, loaded, keep=False)
    assert shared["out"] == separate["out"]
    for name in ("route_table", "labels", "estimates", "undefined", "fork_departures"):
        assert shared["artifacts"][name] == separate["artifacts"][name], name
    for name in PROMPTS:
        a, b = shared["records"][name], separate["records"][name]
        assert a["work"]["completed_a_genuine_only_trace"] and b["work"]["completed_a_genuine_only_trace"]
        assert (a["ref"], a["labels"], a["nodes"], a["summary"]) == (b["ref"], b["labels"], b["nodes"], b["summary"])
    tokens = sum(len(chat_ids(loaded.tokenizer, p.text)) + len(shared["records"][p.id]["ref"]) for p in select_prompts(PROMPTS))
    assert shared["passes"].prefill_tokens == tokens  # the full trace, the departures and the exact hazards share one pass
    assert separate["passes"].prefill_tokens == 4 * tokens
    assert shared["passes"].reused == 3 * len(PROMPTS)


def test_the_route_table_counts_are_those_of_an_independent_computation(tmp_path, monkeypatch, loaded) -> None:
    run = _route_run(tmp_path, monkeypatch, loaded, keep=True)
    table = run["artifacts"]["route_table"]
    labelled = 0
    for name in sorted(set(ROUTE_POLICIES) | {"curve-router", "curve-id"}):
        pooled = Counts({}, {})
        for p in select_prompts(PROMPTS):
            record = run["records"][p.id]
            rows = teacher_forced_logprobs(loaded.model, chat_ids(loaded.tokenizer, p.text), record["ref"])
            departures, _ = first_departures(rows, record["ref"], get_policy(name), list(range(SEEDS)))
            for d in departures:
                pooled = pooled + sample_counts(d, record["labels"])
        assert table[name]["departures"] == dict(pooled.departures), name
        assert table[name]["at_risk"] == dict(pooled.at_risk), name
        labelled += sum(pooled.at_risk.values())
    assert labelled > 0
