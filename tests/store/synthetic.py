"""Synthetic outcome records in the shape of docs/architecture.md ("Outcome record").

Shared by the store, report and CLI tests (loaded by file path, so the test
folders need not be packages).
"""

from __future__ import annotations

import copy
from typing import Any

from claimcheck.engine.result import ItemResult

MACHINE_A = {
    "backend": "cpu",
    "device": "AMD EPYC 9R14 96-Core Processor",
    "cpu": "AMD EPYC 9R14 96-Core Processor",
    "cores": 2,
    "memory_gib": 24.0,
    "os": "Linux 6.1",
    "python": "3.11.2",
    "mlx": "0.32.4",
    "blas": "openblas-pthread",
}
CLASS_A = "cpu/AMD EPYC 9xxx/16-32GiB"

MACHINE_B = {
    "backend": "metal",
    "device": "Apple M1 Max",
    "cpu": "Apple M1 Max",
    "cores": 10,
    "memory_gib": 64.0,
    "os": "Darwin 23.4",
    "python": "3.12.1",
    "mlx": "0.32.4",
    "blas": "accelerate",
}
CLASS_B = "metal/Apple M1 Max/64-128GiB"


def claim_record(claim_id: str = "qmv-large-bw", **overrides: Any) -> dict[str, Any]:
    """A claim as the runner attaches it to an outcome."""
    claim = {
        "id": claim_id,
        "title": "qmv reaches three quarters of raw read bandwidth on large matrices",
        "statement": "Quantised matvec streams weights at >= 0.74x the raw read bandwidth for matrices >= 64 MiB.",
        "source": {"doc": "docs/qmv-bandwidth.md", "section": "3.2 Large matrices", "figure": "0.74x raw read"},
        "scope": {"kind": "portable", "backend": "any", "device": None, "model": None, "min_memory_gib": None},
        "probe": {"name": "qmv", "params": {"dtype": "bfloat16"}, "grid": {"size_mib": [64, 256]}},
        "check": {"rule": "ratio", "output": "qmv_gbps", "reference": "raw_gbps", "bound": "at_least",
                  "threshold": 0.74, "unit": "×", "alpha": 0.05},
        "budget": {"min_samples": 10, "max_samples": 40, "max_seconds": 60.0, "exclusive": True, "looks": 4},
        "tags": ["bandwidth"],
        "depends_on": [],
        "notes": None,
        "path": f"claims/{claim_id}.yaml",
        "line": 1,
        "content_hash": "sha256:" + "ab" * 16,
    }
    for key, value in overrides.items():
        claim[key] = value
    return claim


def outcome(*args: Any, **kwargs: Any) -> ItemResult:
    """One typed result; arguments as for :func:`outcome_record`."""
    return ItemResult.from_record(outcome_record(*args, **kwargs))


def outcome_record(
    claim_id: str = "qmv-large-bw",
    *,
    item: str | None = "size_mib=256",
    verdict: str = "refuted",
    statistic: float | None = 0.41,
    low: float | None = 0.38,
    high: float | None = 0.44,
    n: int = 24,
    reason: str | None = None,
    machine: dict[str, Any] | None = None,
    machine_class: str = CLASS_A,
    claim: dict[str, Any] | None = None,
    params: dict[str, Any] | None = None,
    samples: dict[str, list[float]] | None = None,
    artifacts: dict[str, Any] | None = None,
    info: dict[str, Any] | None = None,
    raw_verdict: str | None = None,
    adjusted_verdict: str | None = None,
    decision: bool = True,
) -> dict[str, Any]:
    """One outcome record; numbers default to a refuted bandwidth ratio."""
    claim = copy.deepcopy(claim) if claim is not None else claim_record(claim_id)
    item_id = f"{claim_id}[{item}]" if item else claim_id
    if params is None:
        params = {"dtype": "bfloat16"}
        if item:
            key, _, value = item.partition("=")
            params[key] = int(value) if value.isdigit() else value
    check = claim.get("check", {})
    if samples is None:
        samples = {"qmv_gbps": [40.0 + i % 3 for i in range(n)], "raw_gbps": [98.0 + i % 2 for i in range(n)]}
    decided = verdict in ("holds", "refuted", "inconclusive") and decision
    record: dict[str, Any] = {
        "claim_id": claim_id,
        "item_id": item_id,
        "params": params,
        "verdict": verdict,
        "reason": reason if reason is not None else f"synthetic {verdict}",
        "decision": None,
        "samples": samples if decided or verdict == "error" else {},
        "machine": dict(machine or MACHINE_A),
        "machine_class": machine_class,
        "info": info if info is not None else {"model": "SmolLM2-135M", "variant": "q4", "weights_hash": "deadbeef"},
        "artifacts": artifacts or {},
        "started": "2026-11-29T10:00:00+00:00",
        "finished": "2026-11-29T10:00:05+00:00",
        "duration_s": 5.0,
        "claim": claim,
    }
    if decided:
        record["decision"] = {
            "rule": check.get("rule", "ratio"),
            "statistic": statistic,
            "low": low,
            "high": high,
            "confidence_level": 0.95,
            "n": n,
            "pvalue": 0.001 if verdict != "inconclusive" else 0.3,
            "alpha": 0.05,
            "mde": 0.05,
            "estimate_label": "raw read",
            "unit": check.get("unit", "×"),
            "details": {},
            "raw_verdict": raw_verdict or verdict,
            "adjusted_verdict": adjusted_verdict or verdict,
        }
    return record
