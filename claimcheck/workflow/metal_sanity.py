"""``python -m claimcheck.workflow.metal_sanity``: is MLX's GPU computing the same numbers as its CPU here?

GitHub's hosted Apple silicon runners are virtual machines with a paravirtual GPU whose compute
nobody vouches for (custom Metal kernels have been seen returning zeros there). Before any claim
runs, this step computes the ops the probes use (matmul, 4-bit quantized_matmul, gather_qmm and
a short greedy generation on the embedded model) on the GPU and on the CPU device, each in its
own process (:mod:`claimcheck.workflow.sanity_ops`), and compares them. When they disagree beyond
the tolerance, or the GPU run fails, the rest of the job runs on the CPU device
(``CLAIMCHECK_DEVICE=cpu`` through ``$GITHUB_ENV``; the fingerprint records it) and the job
summary says why. Exit 0 either way; 1 only when the CPU run itself fails (nothing to compare with).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from claimcheck.machine import DEVICE_ENV

from .github import annotation, set_env_for_later_steps, write_summary

#: Largest |GPU - CPU| allowed, relative to the largest |CPU| value of the op (fp32 inputs: a kernel
#: that works differs by ~1e-6; one that returns zeros or garbage by ~1).
TOLERANCE = 1e-3


@dataclass(frozen=True)
class DeviceRun:
    """What :mod:`~claimcheck.workflow.sanity_ops` computed on one device."""

    device: str
    available: bool = True
    reason: str = ""
    error: str = ""
    ops: dict[str, list[float]] = field(default_factory=dict)
    tokens: list[int] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DeviceRun:
        """From the child's JSON."""
        return cls(device=str(data.get("device", "")), available=bool(data.get("available", True)),
                   reason=str(data.get("reason", "")), error=str(data.get("error", "")),
                   ops={str(k): [float(v) for v in values] for k, values in (data.get("ops") or {}).items()},
                   tokens=[int(t) for t in data.get("tokens") or []])


@dataclass(frozen=True)
class Comparison:
    """One op, GPU against CPU."""

    name: str
    agrees: bool
    detail: str


def run_device(device: str, *, model: str, tokens: int, timeout_s: float = 1200) -> DeviceRun:
    """Run :mod:`~claimcheck.workflow.sanity_ops` in a fresh process on ``device`` (``cpu`` or ``gpu``)."""
    with tempfile.TemporaryDirectory(prefix="claimcheck-sanity-") as scratch:
        out = Path(scratch) / f"{device}.json"
        env = {**os.environ, DEVICE_ENV: device}
        try:
            done = subprocess.run([sys.executable, "-m", "claimcheck.workflow.sanity_ops", "--out", str(out),
                                   "--model", model, "--tokens", str(tokens)],
                                  env=env, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return DeviceRun(device, error=f"no answer within {timeout_s:.0f} s")
        if out.exists():
            return DeviceRun.from_json(json.loads(out.read_text(encoding="utf-8")))
        tail = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return DeviceRun(device, error=f"the process died ({tail[:300]})")


def compare(cpu: DeviceRun, gpu: DeviceRun, tolerance: float = TOLERANCE) -> list[Comparison]:
    """Every op and the generation, GPU against CPU."""
    out = []
    for name, expected in cpu.ops.items():
        got = gpu.ops.get(name)
        if got is None or len(got) != len(expected):
            out.append(Comparison(name, False, "missing or of another shape on the GPU"))
            continue
        if not all(math.isfinite(v) for v in got):
            out.append(Comparison(name, False, "non-finite values on the GPU"))
            continue
        scale = max((abs(v) for v in expected), default=0.0) or 1.0
        worst = max((abs(g - c) for g, c in zip(got, expected)), default=0.0)
        relative = worst / scale
        detail = f"max |GPU − CPU| = {worst:.3g} ({relative:.2g} of the largest value; bound {tolerance:g})"
        out.append(Comparison(name, relative <= tolerance, detail))
    if cpu.tokens:
        same = gpu.tokens == cpu.tokens
        shorter = min(len(gpu.tokens), len(cpu.tokens))
        first = next((k for k, (g, c) in enumerate(zip(gpu.tokens, cpu.tokens)) if g != c), shorter)
        detail = (f"the same {len(cpu.tokens)} greedy tokens" if same else
                  f"tokens differ from position {first} (GPU {gpu.tokens}, CPU {cpu.tokens})")
        out.append(Comparison("greedy generation", same, detail))
    return out


def report(gpu: DeviceRun, comparisons: Sequence[Comparison]) -> tuple[bool, str]:
    """Whether the GPU can be used, and the summary section that says so."""
    lines = ["### Metal sanity check", ""]
    if not gpu.available:
        lines += [f"{gpu.reason or 'No GPU device'}: the claims run on the CPU device.", ""]
        return True, "\n".join(lines)
    if gpu.error:
        lines += [f"**The GPU run failed ({gpu.error}): the rest of this job runs on the CPU device "
                  f"(`{DEVICE_ENV}=cpu`).**", ""]
        return False, "\n".join(lines)
    usable = all(c.agrees for c in comparisons)
    if usable:
        lines += [f"MLX's GPU ({gpu.device}) agrees with its CPU device on every op the probes use: "
                  "the claims run on the GPU.", ""]
    else:
        wrong = ", ".join(c.name for c in comparisons if not c.agrees)
        lines += [f"**MLX's GPU ({gpu.device}) disagrees with its CPU device on {wrong}: the rest of this job runs "
                  f"on the CPU device (`{DEVICE_ENV}=cpu`), and the machine class says so.**", ""]
    lines += ["| op | agrees | |", "|---|---|---|"]
    lines += [f"| {c.name} | {'yes' if c.agrees else '**no**'} | {c.detail} |" for c in comparisons]
    return usable, "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Check, then set the device for the later steps; 0, or 1 when even the CPU run fails."""
    parser = argparse.ArgumentParser(prog="python -m claimcheck.workflow.metal_sanity",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="smollm2-135m-instruct",
                        help="model for the generation (default: %(default)s)")
    parser.add_argument("--tokens", type=int, default=8, help="greedy tokens compared (0: no generation)")
    parser.add_argument("--tolerance", type=float, default=TOLERANCE,
                        help="relative bound per op (default: %(default)g)")
    args = parser.parse_args(argv)
    if os.environ.get(DEVICE_ENV, "").strip().lower() == "cpu":
        write_summary(f"### Metal sanity check\n\n`{DEVICE_ENV}=cpu` is set: the claims run on the CPU device.\n")
        return 0
    gpu = run_device("gpu", model=args.model, tokens=args.tokens)
    if not gpu.available:
        _, text = report(gpu, [])
        write_summary(text)
        return 0
    cpu = run_device("cpu", model=args.model, tokens=args.tokens)
    if cpu.error or not cpu.available:
        print(f"claimcheck metal_sanity: the CPU device run failed, nothing to compare with: "
              f"{cpu.error or cpu.reason}", file=sys.stderr)
        write_summary(f"### Metal sanity check\n\nThe CPU device run failed ({cpu.error or cpu.reason}).\n")
        return 1
    comparisons = compare(cpu, gpu, args.tolerance) if not gpu.error else []
    usable, text = report(gpu, comparisons)
    write_summary(text)
    if not usable:
        set_env_for_later_steps(DEVICE_ENV, "cpu")
        wrong = ", ".join(c.name for c in comparisons if not c.agrees) or gpu.error
        print(annotation("warning", f"MLX's GPU disagrees with its CPU device ({wrong}); the claims run on the CPU "
                                    "device", title="claimcheck metal sanity"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
