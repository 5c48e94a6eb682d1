"""Where the MoE probe's set-up time goes, phase by phase, at the CUDA profile's shape.

Times, each once, in one process: building each layer's random 4-bit expert stacks, the first
(compiling) evaluation of each arm, the read-bandwidth ceiling the probe guards its figures with,
and then one timed sample per arm. Prints numbers; asserts nothing.

    python benchmarks/moe_setup.py --n-experts 128 --layers 8 --scale-dtype bfloat16
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hidden", type=int, default=2816)
    parser.add_argument("--expert", type=int, default=704)
    parser.add_argument("--n-experts", type=int, default=128)
    parser.add_argument("--top-k", type=int, default=8)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--scale-dtype", default="bfloat16")
    args = parser.parse_args()

    from claimcheck.harness.timing import mlx_core, read_ceiling_gbps
    from probes.decode.moe import _expert_bytes, _layer_weights, expert_layer

    started = time.perf_counter()
    mx = mlx_core()
    print(f"device {mx.default_device()}, import {time.perf_counter() - started:.2f} s")
    chosen = [i * args.n_experts // args.top_k for i in range(args.top_k)]
    layers = []
    for index in range(args.layers):
        t = time.perf_counter()
        layers.append(_layer_weights(args.hidden, args.expert, args.n_experts, chosen, bits=4, group_size=64, scale_dtype=args.scale_dtype))
        print(f"layer {index} weights {time.perf_counter() - t:.2f} s")
    nominal = sum(_expert_bytes(layer, e) for layer in layers for e in chosen)
    x0 = (mx.random.normal((1, args.hidden)) * 1e-1).astype(getattr(mx, args.scale_dtype))
    idx = mx.array([chosen], dtype=mx.uint32)
    for arm in ("gather", "dense"):
        for attempt in ("first", "second"):
            t = time.perf_counter()
            x = x0
            for layer in layers:
                x = x + expert_layer(mx, arm, x, layer, idx, expert=args.expert, bits=4, group_size=64)
            mx.eval(x)
            print(f"{arm} {attempt} evaluation {1e3 * (time.perf_counter() - t):.1f} ms")
    t = time.perf_counter()
    ceiling = read_ceiling_gbps(nominal / 2**20)
    print(f"read ceiling over {nominal / 2**20:.0f} MiB: {ceiling:.0f} GB/s in {time.perf_counter() - t:.2f} s")
    print(f"total {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()
