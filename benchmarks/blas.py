"""fp32 GEMM and a SmolLM2 decode step on each BLAS MLX can bind to here, one process per BLAS.

MLX's CPU GEMM binds to a BLAS when ``mlx.core`` is first imported, so each candidate runs in its own
subprocess: the bundled reference BLAS (``CLAIMCHECK_BLAS=off``), each system library at the known
paths, and each BLAS from an installed wheel (the ``cpu-blas`` extra: ``mkl``), chosen with
``CLAIMCHECK_BLAS=<path>`` so a system OpenBLAS cannot win. Each prints what
:func:`claimcheck.harness.blas.ensure_fast_blas` reports (library, threads, threading layer), the best
of ``--repeats`` 64x4096x4096 fp32 GEMMs in GFLOP/s, and the best batch-64 decode step of SmolLM2
fp32 (the curve probes' unit of work). Prints numbers; asserts nothing.

    .venv/bin/python benchmarks/blas.py --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, sys, time
from claimcheck.harness.blas import ensure_fast_blas
info = ensure_fast_blas()
import mlx.core as mx
repeats = int(sys.argv[1])
a, b = mx.random.normal((64, 4096)), mx.random.normal((4096, 4096))
mx.eval(a @ b)
best = min(_t for _t in [(lambda t0: (mx.eval(a @ b), time.perf_counter() - t0)[1])(time.perf_counter()) for _ in range(repeats)])
row = {"kind": info.kind, "library": info.library, "threads": info.threads, "note": info.note, "gemm_gflops": 2 * 64 * 4096 * 4096 / best / 1e9}
if sys.argv[2] == "model":
    from claimcheck.models import load
    from mlx_lm.models.cache import make_prompt_cache
    lm = load("smollm2-135m-instruct", variant="fp32", needs_text=True)
    cache = make_prompt_cache(lm.model)
    mx.eval(lm.model(mx.array([[5] * 16] * 64), cache=cache))  # a short context: the reference BLAS prefills slowly
    steps = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        mx.eval(lm.model(mx.array([[7]] * 64), cache=cache)[:, -1, :])
        steps.append(time.perf_counter() - t0)
    row["decode_step_s"] = min(steps)
print(json.dumps(row))
"""


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-model", action="store_true", help="GEMM only (no SmolLM2 decode step)")
    args = parser.parse_args()

    from claimcheck.harness.blas import candidate_paths, classify, wheel_paths

    options = [("reference (bundled)", "off")]
    options += [(f"system {classify(path)}", path) for path in candidate_paths() if Path(path).exists() and classify(path) != "reference"][:1]
    options += [(f"wheel {classify(path)}", path) for path in wheel_paths()]
    print(f"{os.cpu_count()} cores; best of {args.repeats}; load average {os.getloadavg()[0]:.2f} at the start")
    root = Path(__file__).resolve().parents[1]
    for label, value in options:
        environment = {**os.environ, "CLAIMCHECK_BLAS": value, "PYTHONPATH": str(root)}
        done = subprocess.run([sys.executable, "-c", CHILD, str(args.repeats), "gemm" if args.no_model else "model"],
                              capture_output=True, text=True, env=environment, cwd=root, timeout=900)
        if done.returncode != 0:
            print(f"{label:22s} failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}")
            continue
        row = json.loads(done.stdout.strip().splitlines()[-1])
        step = f", decode step (batch 64) {row['decode_step_s']:.3f} s" if "decode_step_s" in row else ""
        print(f"{label:22s} {row['kind']:9s} threads {row['threads']}  GEMM 64x4096x4096 {row['gemm_gflops']:6.1f} GFLOP/s{step}  ({row['note']})")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
