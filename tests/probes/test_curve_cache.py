"""The curve probes' shared cache: stored prompts reused, missing ones computed together once, fresh runs honoured."""

from __future__ import annotations

import time

from claimcheck.engine.cache import cached, lookup
from claimcheck.probing.registry import Output, ProbeContext
from probes.curves.curve_cache import cached_many, stored, whole_on_first_look


def _keys(*names: str) -> dict[str, dict[str, object]]:
    return {name: {"probe": "test_curve_cache", "prompt": name} for name in names}


def test_lookup_sees_what_cached_stored_and_respects_fresh(tmp_path) -> None:
    key = {"probe": "test_curve_cache", "prompt": "a"}
    assert lookup(key, cache_dir=tmp_path) == (False, None)
    cached(key, lambda: [1, 2], cache_dir=tmp_path)
    assert lookup(key, cache_dir=tmp_path) == (True, [1, 2])
    assert lookup(key, fresh=True, cache_dir=tmp_path) == (False, None)
    assert lookup(key, fresh=time.time() + 60, cache_dir=tmp_path) == (False, None)  # stored before the fresh run began


def test_missing_prompts_are_computed_together_and_stored_ones_reused(tmp_path) -> None:
    calls: list[list[str]] = []

    def compute(missing: list[str]) -> dict[str, int]:
        calls.append(list(missing))
        return {name: len(name) for name in missing}

    ctx = ProbeContext(cache_dir=str(tmp_path))
    assert cached_many(ctx, _keys("ab", "abc"), compute) == {"ab": 2, "abc": 3}
    again = ProbeContext(cache_dir=str(tmp_path))
    assert cached_many(again, _keys("ab", "abcd"), compute) == {"ab": 2, "abcd": 4}
    assert calls == [["ab", "abc"], ["abcd"]]
    assert again.info["cache"] == {"test_curve_cache:ab": "reused", "test_curve_cache:abcd": "computed"}
    assert set(stored(ctx, _keys("ab", "abc", "zzz"))) == {"ab", "abc"}


def test_a_probe_returns_no_samples_after_its_first_look() -> None:
    outputs = {"x": Output("units"), "y": Output("units")}

    @whole_on_first_look(outputs)
    def measure(ctx: ProbeContext, *, value: float = 1.0) -> dict[str, list[float]]:
        """Doc kept."""
        return {"x": [value], "y": [value]}

    assert measure(ProbeContext(), value=2.0) == {"x": [2.0], "y": [2.0]}
    assert measure(ProbeContext(look=1), value=2.0) == {"x": [], "y": []}
    assert measure.__doc__ == "Doc kept."
