"""``python -m claimcheck.workflow.sanity_ops --out FILE``: the probes' ops on one device, for comparison.

Run once per device by :mod:`claimcheck.workflow.metal_sanity`, with ``CLAIMCHECK_DEVICE`` naming
the device, in a process of its own (mlx-lm binds its generation stream to the default device
when it is imported, so one process can only speak for one device). The inputs come from numpy
with a fixed seed, so both devices see the same numbers. Writes JSON: the device, whether it
exists here, each op's output, and the greedy tokens of the embedded model.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from claimcheck.machine import apply_device, requested_device

SEED = 20260702
GROUP_SIZE, BITS = 64, 4
PROMPT = "The capital of France is"


def ops(mx: Any) -> dict[str, list[float]]:
    """matmul, 4-bit quantized_matmul and gather_qmm (decode-shaped, as the bandwidth and MoE probes call them)."""
    import numpy as np

    rng = np.random.default_rng(SEED)
    a = mx.array(rng.standard_normal((64, 256), dtype=np.float32))
    b = mx.array(rng.standard_normal((256, 128), dtype=np.float32))
    w = mx.array(rng.standard_normal((256, 512), dtype=np.float32))
    x = mx.array(rng.standard_normal((8, 512), dtype=np.float32))
    experts = mx.array(rng.standard_normal((8, 128, 512), dtype=np.float32))
    token = mx.array(rng.standard_normal((1, 512), dtype=np.float32))
    wq = mx.quantize(w, group_size=GROUP_SIZE, bits=BITS)
    eq = mx.quantize(experts, group_size=GROUP_SIZE, bits=BITS)
    chosen = mx.array([[1, 5]], dtype=mx.uint32)
    out = {
        "matmul": a @ b,
        "quantized_matmul": mx.quantized_matmul(x, *wq, transpose=True, group_size=GROUP_SIZE, bits=BITS),
        "gather_qmm": mx.gather_qmm(mx.expand_dims(token, (-2, -3)), *eq, rhs_indices=chosen, transpose=True,
                                    group_size=GROUP_SIZE, bits=BITS),
    }
    mx.eval(out)
    return {name: [float(v) for v in np.asarray(value, dtype=np.float64).ravel()] for name, value in out.items()}


def greedy_tokens(model_id: str, tokens: int) -> list[int]:
    """The embedded model's greedy continuation of a fixed prompt (mlx-lm's default sampler is argmax)."""
    from mlx_lm import stream_generate

    from claimcheck.models import load

    loaded = load(model_id, variant="fp32", needs_text=True)
    return [int(step.token) for step in stream_generate(loaded.model, loaded.tokenizer, PROMPT, max_tokens=tokens)]


def _available(mx: Any, device: str) -> str | None:
    """Why the device cannot run here, or ``None`` when it can."""
    if device != "gpu":
        return None
    cuda = getattr(mx, "cuda", None)
    if mx.metal.is_available() or (cuda is not None and cuda.is_available()):
        return None
    return "MLX has no GPU device here"


def main(argv: Sequence[str] | None = None) -> int:
    """Compute and write the results; 0, or 1 with one line when a step failed."""
    parser = argparse.ArgumentParser(prog="python -m claimcheck.workflow.sanity_ops")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--tokens", type=int, default=8, help="greedy tokens to generate (0: no generation)")
    args = parser.parse_args(argv)
    from claimcheck.harness.blas import ensure_fast_blas

    ensure_fast_blas()  # before MLX is imported, or its CPU runs on the reference BLAS
    import mlx.core as mx

    wanted = requested_device()
    record: dict[str, Any] = {"device": wanted or "default", "available": True, "ops": {}, "tokens": []}
    missing = _available(mx, wanted or "")
    if missing:
        record.update(available=False, reason=missing)
    else:
        try:
            apply_device()
            record["device"] = str(mx.default_device())
            record["ops"] = ops(mx)
            record["tokens"] = greedy_tokens(args.model, args.tokens) if args.tokens > 0 else []
        except Exception as error:  # noqa: BLE001 - the parent compares; a failure here is a finding
            record.update(error=f"{type(error).__name__}: {' '.join(str(error).split())[:300]}")
    args.out.write_text(json.dumps(record), encoding="utf-8")
    if "error" in record:
        print(f"sanity_ops on {record['device']}: {record['error']}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
