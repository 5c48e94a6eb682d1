"""batched_generation: fixed-length batches through mlx-lm's BatchGenerator on a tiny model."""

from __future__ import annotations

import pytest

from claimcheck.errors import ProbeError
from claimcheck.probing.registry import ProbeContext, get_probe
from probes.decode.batched_generation import batched_generation, prompts_for, run_batch


@pytest.fixture(scope="module")
def tiny():
    from claimcheck.models import load

    return load("synthetic:llama:tiny", variant="fp32")


def test_prompts_have_one_length_and_differ_by_row(tiny):
    prompts = prompts_for(tiny, 4, 6)
    assert [len(p) for p in prompts] == [6] * 4
    assert len({tuple(p) for p in prompts}) == 4


def test_every_sequence_generates_max_tokens(tiny):
    run = run_batch(tiny, prompts_for(tiny, 3, 5), max_tokens=4)
    assert run.batch_size == 3 and run.generation_tokens == 12
    assert run.generation_tps > 0 and run.wall_seconds > 0


def test_a_short_batch_is_a_probe_error(tiny, monkeypatch):
    # If mlx-lm stopped a sequence early, batch sizes would no longer do the same work per sequence.
    from mlx_lm.generate import BatchGenerator

    real = BatchGenerator.next_generated

    def drop_last(self):
        responses = real(self)
        return responses[:-1] if len(responses) > 1 else responses

    monkeypatch.setattr(BatchGenerator, "next_generated", drop_last)
    with pytest.raises(ProbeError, match="produced"):
        run_batch(tiny, prompts_for(tiny, 2, 5), max_tokens=3)


def test_probe_smoke_with_a_reference_size():
    ctx = ProbeContext(n=2)
    out = batched_generation(ctx, model="synthetic:llama:tiny", variant="fp32", batch_size=4, max_tokens=4, prompt_tokens=4)
    assert all(len(v) == 2 for v in out.values())
    for fast, ref, ratio in zip(out["tokens_per_s"], out["reference_tokens_per_s"], out["speedup"]):
        assert ratio == pytest.approx(fast / ref)
    assert ctx.artifacts["order"] == ["batch", "reference", "reference", "batch"]
    assert ctx.info["batch_size"] == 4 and ctx.info["reference_batch_size"] == 1


def test_probe_without_a_reference_reports_one_size():
    out = batched_generation(ProbeContext(n=1), model="synthetic:llama:tiny", variant="fp32", batch_size=2,
                             reference_batch_size=None, max_tokens=2, prompt_tokens=4)
    assert set(out) == {"tokens_per_s", "prompt_tokens_per_s"}
    assert set(get_probe("batched_generation").outputs) >= set(out)
