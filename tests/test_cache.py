"""The result cache: reuse by content key, fresh recomputation, key sensitivity, atomic files."""

from __future__ import annotations

import json

import pytest

from claimcheck.engine import cache
from claimcheck.engine.cache import cache_key, cache_root, cached

ENV = {"mlx": "0.32.4", "mlx_lm": "0.32.2", "claimcheck": "0.1.0", "machine_class": "cpu/AMD EPYC/16-32GiB"}


class Counter:
    def __init__(self, value=None):
        self.calls = 0
        self.value = value

    def __call__(self):
        self.calls += 1
        return self.value if self.value is not None else {"samples": [1.5, 2.5], "call": self.calls}


def key(**params):
    return {"probe": "curve", "params": params or {"n": 10}, "weights_hash": "ab" * 32}


def test_second_call_reuses_the_stored_value(tmp_path):
    compute = Counter()
    first = cached(key(), compute, cache_dir=tmp_path, environment=ENV)
    second = cached(key(), compute, cache_dir=tmp_path, environment=ENV)
    assert first == ({"samples": [1.5, 2.5], "call": 1}, False)
    assert second == ({"samples": [1.5, 2.5], "call": 1}, True)
    assert compute.calls == 1


def test_fresh_recomputes_and_overwrites(tmp_path):
    compute = Counter()
    cached(key(), compute, cache_dir=tmp_path, environment=ENV)
    value, hit = cached(key(), compute, fresh=True, cache_dir=tmp_path, environment=ENV)
    assert (value["call"], hit) == (2, False)
    # the overwrite is what later calls see
    assert cached(key(), compute, cache_dir=tmp_path, environment=ENV) == ({"samples": [1.5, 2.5], "call": 2}, True)


def test_fresh_since_a_time_reuses_only_values_stored_after_it(tmp_path):
    """``fresh=<timestamp>`` (a run's start) recomputes older values once, then reuses the new one."""
    import time

    compute = Counter()
    cached(key(), compute, cache_dir=tmp_path, environment=ENV)
    run_started = time.time() + 1e-3
    while time.time() <= run_started:
        time.sleep(1e-3)
    assert cached(key(), compute, fresh=run_started, cache_dir=tmp_path, environment=ENV)[0]["call"] == 2
    assert cached(key(), compute, fresh=run_started, cache_dir=tmp_path, environment=ENV) == ({"samples": [1.5, 2.5], "call": 2}, True)
    assert cached(key(), compute, fresh=time.time() + 60, cache_dir=tmp_path, environment=ENV)[0]["call"] == 3
    assert compute.calls == 3


def test_key_changes_with_params_weights_and_environment(tmp_path):
    compute = Counter()
    cached(key(n=10), compute, cache_dir=tmp_path, environment=ENV)
    assert not cached(key(n=11), compute, cache_dir=tmp_path, environment=ENV)[1]
    assert not cached({**key(n=10), "weights_hash": "cd" * 32}, compute, cache_dir=tmp_path, environment=ENV)[1]
    assert not cached(key(n=10), compute, cache_dir=tmp_path, environment={**ENV, "mlx": "0.33.0"})[1]
    assert not cached(key(n=10), compute, cache_dir=tmp_path, environment={**ENV, "machine_class": "metal/Apple M1 Max/32-64GiB"})[1]
    assert compute.calls == 5
    assert len(list(tmp_path.glob("curve-*.json"))) == 5


def test_key_does_not_depend_on_dict_order():
    assert cache_key({"a": 1, "b": {"x": 1, "y": 2}}) == cache_key({"b": {"y": 2, "x": 1}, "a": 1})
    assert cache_key({"a": 1}) != cache_key({"a": 1.5})


def test_a_corrupt_file_is_a_miss_and_is_replaced(tmp_path):
    compute = Counter()
    cached(key(), compute, cache_dir=tmp_path, environment=ENV)
    [path] = tmp_path.glob("curve-*.json")
    path.write_text("{not json")
    assert cached(key(), compute, cache_dir=tmp_path, environment=ENV) == ({"samples": [1.5, 2.5], "call": 2}, False)
    assert json.loads(path.read_text())["value"]["call"] == 2


def test_files_are_written_atomically_without_leftovers(tmp_path):
    cached(key(), Counter(), cache_dir=tmp_path, environment=ENV)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_unserialisable_values_fail_without_writing(tmp_path):
    with pytest.raises(TypeError, match="not JSON-serialisable"):
        cached(key(), Counter(value={"x": object()}), cache_dir=tmp_path, environment=ENV)
    assert list(tmp_path.iterdir()) == []


def test_default_environment_names_versions_and_machine_class(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAIMCHECK_CACHE", str(tmp_path))
    env = cache.environment_key()
    assert set(env) == {"mlx", "mlx_lm", "claimcheck", "machine_class"}
    value, hit = cached(key(), Counter())
    assert not hit
    stored = json.loads(next((tmp_path / "results").glob("curve-*.json")).read_text())
    assert stored["key"]["environment"] == env


def test_cache_root_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAIMCHECK_CACHE", str(tmp_path / "cc"))
    assert cache_root() == tmp_path / "cc"
    monkeypatch.delenv("CLAIMCHECK_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if not cache.sys.platform == "darwin":
        assert cache_root() == tmp_path / "xdg" / "claimcheck"
