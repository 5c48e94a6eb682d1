"""An item's content key: what changes it and what does not."""

from __future__ import annotations

import dataclasses

from claimcheck.claim import Budget, Check, Claim, ProbeSpec, Scope, Source
from claimcheck.engine.cache import cache_key, content_key
from claimcheck.engine.item_key import claim_document, item_key, model_name
from claimcheck.engine.options import RunOptions
from claimcheck.models.identity import weights_identity
from claimcheck.probing.registry import Output, RegisteredProbe

ENV = {"mlx": "1", "mlx_lm": "1", "claimcheck": "1", "machine_class": "cpu/x/16-32GiB"}


def _probe(ctx, *, mean: float, model: str = "synthetic:llama:1b"):  # noqa: ANN001, ANN202 - a stand-in probe
    return {"x": [mean] * ctx.n}


PROBE = RegisteredProbe("stand_in", _probe, {"x": Output("")}, file=__file__)
CLAIM = Claim(id="key-claim", title="t", statement="s", source=Source("d.md", "1", "f"), scope=Scope(),
              probe=ProbeSpec("stand_in", {"mean": 1.0}), check=Check(rule="at_least", output="x"),
              budget=Budget(), path="claims/a.yaml", line=3, content_hash="abc")


def _key(claim: Claim = CLAIM, options: RunOptions = RunOptions(), environment=ENV, weights="w") -> str:  # noqa: ANN001
    return item_key(claim, {"mean": 1.0}, PROBE, options, weights=weights, environment=environment)


def test_the_key_is_the_result_caches_own_key_of_its_parts() -> None:
    assert content_key({"a": 1}, ENV) == cache_key({"parts": {"a": 1}, "environment": ENV})


def test_where_the_claim_sits_in_its_file_does_not_change_the_key() -> None:
    moved = dataclasses.replace(CLAIM, path="claims/b.yaml", line=40, content_hash="def")
    assert _key(moved) == _key()
    assert "line" not in claim_document(CLAIM, {}) and "path" not in claim_document(CLAIM, {})


def test_what_changes_a_measurement_changes_the_key() -> None:
    base = _key()
    assert _key(dataclasses.replace(CLAIM, statement="other")) != base
    assert _key(dataclasses.replace(CLAIM, budget=Budget(max_samples=99))) != base
    assert _key(options=RunOptions(seed=1)) != base
    assert _key(options=RunOptions(budget_scale=2.0)) != base
    assert _key(environment={**ENV, "mlx": "2"}) != base
    assert _key(environment={**ENV, "machine_class": "metal/Apple M1 Max/32-64GiB"}) != base
    assert _key(weights="other") != base


def test_the_model_is_the_param_else_the_probes_default() -> None:
    assert model_name(PROBE, {"model": "m"}) == "m"
    assert model_name(PROBE, {}) == "synthetic:llama:1b"
    assert model_name(dataclasses.replace(PROBE, function=lambda ctx, *, mean: {}), {}) is None


def test_weights_are_identified_by_their_content_not_their_place(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    from claimcheck.models import _registry
    from claimcheck.errors import NotApplicable
    from claimcheck.models._spec import ModelSpec

    monkeypatch.setenv("CLAIMCHECK_CACHE", str(tmp_path / "cache"))
    files = {name: tmp_path / name / "weights.gguf" for name in ("here", "there", "other")}
    for name, path in files.items():
        path.parent.mkdir()
        path.write_bytes(b"other weights" if name == "other" else b"the same weights")

    def resolve(model: str) -> ModelSpec:
        if model.split("-")[-1] not in files:
            raise NotApplicable(f"model {model} not installed")
        return ModelSpec(model, model, True, (), None, str(files[model.split("-")[-1]]), loader=lambda m, v: None)

    monkeypatch.setattr(_registry, "resolve", resolve)
    here, there, other = (weights_identity(f"key-test-{name}") for name in files)
    assert here.startswith("sha256:") and here == there != other
    assert weights_identity("no-such-model-anywhere").startswith("missing: ")
