"""An `over:` sweep splits each look into two calls per level: each call must draw samples of its own.

The sampler calls every level forward then backward within a look (drift balance). A probe that
derives its draws from (seed, look, index) would repeat the first call's draws in the second if
the index restarted at 0, and intervals would count each draw twice (issue: stored seeds
``[21074, 21075, 21076, 21074, 21075, 21076, ...]``). These tests run the shipped sampled
probes through the real sampler with a sweep and read back the seeds or input keys they drew.
"""

from __future__ import annotations

import inspect
import random
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from claimcheck.claims.loader import load_claims, load_claims_text
from claimcheck.engine.sampler import Sampler
from claimcheck.probing.registry import ProbeContext, RegisteredProbe, get_probe, load_probe_modules

ROOT = Path(__file__).resolve().parents[2]

CLAIM = """
id: swept
title: t
statement: s
source: {{doc: d.md, section: "1", figure: f}}
scope: {{kind: portable}}
probe: {{name: {probe}, params: {params}}}
check: {{rule: monotone, output: {output}, over: {over}, direction: increasing}}
budget: {{min_samples: 6, max_samples: 12, looks: 2}}
"""

# Shipped probes a swept claim may use, and why the split cannot repeat their draws. A probe with
# draws of its own is checked below; add a swept claim's new probe here with its reason.
NO_DRAWS = {
    "qmv": "timing: the same seeded workload in every call, no per-sample draw",
    "roofline": "timing: the same greedy decode in every call",
    "kv_cache_step": "timing: the same seeded cache in every call",
    "temperature_search": "its whole design comes in one call per level (the sampler makes no second call)",
    "route_hazard": "its whole design comes in one call per level (the sampler makes no second call)",
}
DRAWS_CHECKED = {"generation_metrics", "op_pair"}


@pytest.fixture(autouse=True, scope="module")
def _probes() -> None:
    load_probe_modules(str(ROOT))  # this checkout's probes/ folder, whatever claimcheck_probes resolves to


def _globals_of(name: str) -> dict[str, Any]:
    """The namespace the registered probe function reads its helpers from (not whatever ``sys.modules``
    holds under its module's name now: a test of another project's ``probes/`` may have replaced that)."""
    return inspect.unwrap(get_probe(name).function).__globals__


class Recorder:
    """Wraps a probe: which draw keys each call made, by (level, look), read from a ``keys()`` callback."""

    def __init__(self, probe: RegisteredProbe, over: str) -> None:
        self.probe, self.over = probe, over
        self.keys: list[Any] = []
        self.by_look: dict[tuple[str, int], list[Any]] = {}

    def __call__(self, ctx: ProbeContext, **params: Any) -> Any:
        before = len(self.keys)
        out = self.probe(ctx, **params)
        self.by_look.setdefault((str(params[self.over]), ctx.look), []).extend(self.keys[before:])
        return out


def _sweep(name: str, params: str, output: str, over: str) -> tuple[Sampler, Recorder]:
    claim = load_claims_text(CLAIM.format(probe=name, params=params, output=output, over=over), "s.yaml")[0]
    shipped = get_probe(name)
    recorder = Recorder(shipped, over)
    wrapped = RegisteredProbe(name, recorder, shipped.outputs)
    return Sampler(claim, wrapped, dict(claim.probe.params), ProbeContext(seed=21074, rng=random.Random(0))), recorder


def _assert_each_look_draws_anew(recorder: Recorder, looks: dict[int, int], levels: int) -> None:
    assert len(recorder.by_look) == levels * len(looks)
    for (level, look), keys in recorder.by_look.items():
        assert len(keys) == looks[look], (level, look, keys)
        assert len(set(keys)) == len(keys), f"level {level}, look {look} drew a sample twice: {keys}"
    every = [key for keys in recorder.by_look.values() for key in keys]
    per_level = {level for level, _ in recorder.by_look}
    assert len(set(every)) * len(per_level) == len(every), "levels should share draws (the same seeds per round)"


def test_generation_metrics_draws_distinct_seeds_in_both_halves_of_a_swept_look(monkeypatch) -> None:
    sampler, recorder = _sweep("generation_metrics", "{temp: [0.5, 1.0], max_tokens: 4}", "distinct_1", "temp")
    module = _globals_of("generation_metrics")

    def measure(lm: Any, seeds: list[int], **_: Any) -> list[Any]:
        recorder.keys.extend(seeds)
        return [SimpleNamespace(seed=s, tokens=[1, 2], repetition_rate=0.0, distinct_1=1.0, distinct_2=1.0,
                                self_bleu=0.0, cross_entropy=1.0) for s in seeds]

    monkeypatch.setitem(module, "load_text_model", lambda ctx, model, variant: None)
    monkeypatch.setitem(module, "measure_generations", measure)
    sampler.draw(6, 0)
    sampler.draw(3, 1)
    assert sampler.count() == 9
    _assert_each_look_draws_anew(recorder, {0: 6, 1: 3}, levels=2)
    # Each seed recorded with its generation: no seed stored twice for one level.
    stored = [g["seed"] for g in sampler.ctx.artifacts["generations"]]
    assert len(set(stored)) == 9


def test_op_pair_draws_distinct_inputs_in_both_halves_of_a_swept_look(monkeypatch) -> None:
    sampler, recorder = _sweep("op_pair", "{a: gelu_erf, b: gelu_erf_compiled, shape: [[4, 8], [8, 8]], warmup: 0}",
                               "a_ms", "shape")
    module = _globals_of("op_pair")
    original = module["_round_key"]

    def key(seed: int, look: int, index: int) -> Any:
        recorder.keys.append((seed, look, index))
        return original(seed, look, index)

    monkeypatch.setitem(module, "_round_key", key)
    sampler.draw(4, 0)
    sampler.draw(5, 1)
    assert sampler.count() == 9
    _assert_each_look_draws_anew(recorder, {0: 4, 1: 5}, levels=2)


def test_every_swept_claim_uses_a_probe_whose_draws_are_checked_or_that_has_none() -> None:
    swept = {claim.probe.name for claim in load_claims([ROOT / "claims"]) if claim.check.over}
    unexplained = sorted(name for name in swept
                         if not get_probe(name).deterministic and name not in NO_DRAWS and name not in DRAWS_CHECKED)
    assert unexplained == [], "a swept claim uses a probe whose draws no test checks: add it to this file"


@pytest.mark.parametrize("name", sorted(DRAWS_CHECKED))
def test_the_checked_probes_are_sampled(name: str) -> None:
    assert not get_probe(name).deterministic
