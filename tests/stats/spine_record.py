"""Decisions of the runner's whole decision path over rules x noise x history, recorded to compare two versions.

Each case runs one item through :func:`claimcheck.engine.runner.run_claim_item` with a probe that replays
fixed samples: the sequential looks, the timing gate and the dependence correction inside them, the
between-run component (history, indifference or the assumed spread) and the noise gate. What it keeps
per case is what a reader sees: the final verdict and reason, the verdict the decision had within the
run, and the decision's estimate, p-values and interval. Numbers are kept as ``repr`` so a comparison
is exact.

    python tests/stats/spine_record.py record tests/stats/spine_decisions.json.gz
    python tests/stats/spine_record.py check tests/stats/spine_decisions.json.gz
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from claimcheck.claim import Budget, Claim, ProbeSpec, Scope, Source
from claimcheck.engine.runner import RunOptions, run_claim_item
from claimcheck.probing.registry import Output, ProbeContext, RegisteredProbe
from claimcheck.rules import make_check

N = 30
LOOKS = 3


def _noise(kind: str, rng: np.random.Generator, n: int) -> np.ndarray:
    """Unit-scale noise of one kind (one arm)."""
    if kind == "iid":
        return rng.standard_normal(n)
    if kind == "ar1":
        e = np.empty(n)
        e[0] = rng.standard_normal()
        for t in range(1, n):
            e[t] = 0.8 * e[t - 1] + 0.6 * rng.standard_normal()
        return e
    if kind == "blocks":  # clock states held for blocks of 10 samples
        states = rng.choice([-1.5, 1.5], size=(n + 9) // 10)
        return np.repeat(states, 10)[:n] + 0.5 * rng.standard_normal(n)
    if kind == "spikes":
        return rng.standard_normal(n) + np.where(rng.random(n) < 0.08, 15.0, 0.0)
    if kind == "warmup":
        e = rng.standard_normal(n)
        e[:3] += 40.0
        return e
    if kind == "ties":
        return np.round(rng.standard_normal(n))
    if kind == "constant":
        return np.zeros(n)
    raise ValueError(kind)


NOISES = ("iid", "ar1", "blocks", "spikes", "warmup", "ties", "constant")
HISTORIES: dict[str, tuple[float, ...] | None] = {  # relative to the true figure: multiplied in
    "first": (), "one": (1.01,), "tight3": (0.999, 1.0, 1.001), "wide5": (0.9, 1.05, 1.1, 0.97, 1.2),
}
INDIFFERENCE = (None, 0.005, 0.05)


def _checks() -> Iterator[tuple[str, dict[str, Any], int]]:
    """(rule, params, groups) for every check shape the corrections know, and two they do not."""
    for rule, statistic in itertools.product(("at_least", "at_most"), ("median", "mean", "auto")):
        yield rule, {"threshold": 100.0, "statistic": statistic}, 1
    for bound, statistic, paired in itertools.product(("at_least", "at_most"), ("median", "mean"), (True, False)):
        yield "ratio", {"threshold": 1.0, "bound": bound, "statistic": statistic, "paired": paired}, 2
    for scale, statistic, paired in itertools.product(("difference", "log-ratio"), ("median", "mean"), (True, False)):
        yield "equivalent", {"margin": 2.0 if scale == "difference" else 0.02, "scale": scale,
                             "statistic": statistic, "paired": paired}, 2
    yield "dispersion", {"threshold": 3.0, "measure": "sd", "bound": "at_most"}, 1


def _shifts(rule: str) -> tuple[float, ...]:
    """The true figure's offsets from the claim's edge, in the figure's units: far, near, at it, beyond."""
    if rule in ("at_least", "at_most"):
        return (-3.0, -0.7, 0.0, 0.7, 3.0)
    if rule == "ratio":
        return (-0.03, -0.007, 0.0, 0.007, 0.03)
    if rule == "equivalent":
        return (0.0, 1.0, 2.0, 3.0, 6.0)
    return (0.0,)


def _groups(rule: str, params: dict[str, Any], count: int, noise: str, shift: float,
            rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The samples of every output of one case: level 100, unit-ish noise, the figure moved by ``shift``."""
    common = _noise(noise, rng, N)  # a paired design's shared round effect
    if count == 1:
        if rule == "dispersion":
            return {"x": 100.0 + 3.0 * _noise(noise, rng, N) + shift}
        return {"x": 100.0 + shift + 1.5 * _noise(noise, rng, N)}
    b = 100.0 + 1.0 * common + 0.5 * _noise("iid", rng, N)
    if rule == "ratio":
        a = b * (1.0 + shift) + 0.6 * _noise(noise, rng, N)
    elif params["scale"] == "log-ratio":
        a = b * (1.0 + shift / 100.0) + 0.6 * _noise(noise, rng, N)
    else:
        a = b + shift + 0.6 * _noise(noise, rng, N)
    return {"a": a, "b": b}


def _probe(data: dict[str, np.ndarray]) -> RegisteredProbe:
    """A probe that hands out the case's samples in order, as many as each call asks for."""
    taken = {"at": 0}

    def replay(ctx: ProbeContext) -> dict[str, list[float]]:
        start = taken["at"]
        taken["at"] = start + ctx.n
        return {name: [float(v) for v in values[start: start + ctx.n]] for name, values in data.items()}

    return RegisteredProbe("replay", replay, {name: Output("ms") for name in data})


def _number(value: Any) -> Any:
    return repr(float(value)) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def cases() -> Iterator[tuple[str, Claim, RegisteredProbe, tuple[float, ...]]]:
    """Every case: its key, claim, probe and history."""
    seed = 0
    for (rule, params, count), noise, timing in itertools.product(_checks(), NOISES, (True, False)):
        for shift in _shifts(rule):
            seed += 1
            rng = np.random.default_rng(seed)
            data = _groups(rule, params, count, noise, shift, rng)
            labels = ("x",) if count == 1 else ("a", "b")
            check = make_check(rule, params, labels=labels)
            figure = {"at_least": 100.0, "at_most": 100.0, "ratio": 1.0}.get(rule, 1.0)
            histories = HISTORIES.items() if timing else [("first", ())]
            for (hname, relative), indifference in itertools.product(histories, INDIFFERENCE):
                if indifference is not None and (hname != "first" or not timing):
                    continue
                claim = Claim("spine", "t", "s", Source("d.md", "1", "f"), Scope(), ProbeSpec("replay"), check,
                              budget=Budget(min_samples=10, max_samples=N, max_seconds=1e6, exclusive=timing,
                                            looks=LOOKS),
                              indifference=indifference)
                history = tuple((figure + shift if rule != "equivalent" else 1.0) * r for r in (relative or ()))
                key = (f"{rule}:{json.dumps(params, sort_keys=True)}:{noise}:{'timing' if timing else 'shared'}:"
                       f"{shift}:{hname}:{indifference}")
                yield key, claim, _probe(data), history


def record_one(claim: Claim, probe: RegisteredProbe, history: tuple[float, ...]) -> dict[str, Any]:
    """What a reader sees of one case."""
    try:
        result = run_claim_item(claim, "spine", {}, probe, options=RunOptions(seed=1), machine={"backend": "cpu"},
                                history=history)
    except Exception as error:  # noqa: BLE001 - a crash is an outcome to compare too
        return {"crash": f"{type(error).__name__}: {error}"}
    decision = result.decision
    out: dict[str, Any] = {"verdict": result.verdict.value, "reason": _digest(result.reason)}
    if decision is not None:
        between = decision.details.get("between_run") or {}
        out |= {"within_run": between.get("verdict_within_run", result.raw_verdict.value),
                **{name: _number(getattr(decision, name)) for name in
                   ("statistic", "pvalue", "hold_pvalue", "low", "high", "confidence_level")},
                "decision_verdict": decision.verdict.value, "between_run": _number_tree(between)}
    return out


def _digest(text: str) -> str:
    """A reason as a short digest: the file stays small, and any change of wording still shows."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _number_tree(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _number_tree(v) for k, v in value.items()}
    return _number(value)


def main(argv: list[str]) -> int:
    mode, path = argv[1], argv[2]
    found = {key: record_one(claim, probe, history) for key, claim, probe, history in cases()}
    if mode == "record":
        with gzip.open(path, "wt") as handle:
            json.dump(found, handle, indent=0, sort_keys=True)
        print(f"recorded {len(found)} cases")
        return 0
    with gzip.open(path, "rt") as handle:
        expected = json.load(handle)
    differ = [key for key in expected if found.get(key) != expected[key]]
    crashed = [key for key in differ if "crash" in expected[key] and "crash" not in found.get(key, {"crash": ""})]
    moved = [key for key in differ if key not in crashed]
    missing = sorted(set(expected) ^ set(found))
    for key in moved[:10]:
        print(key, "\n  was", expected[key], "\n  now", found.get(key))
    print(f"{len(expected)} cases recorded, {len(found)} run: {len(expected) - len(differ)} identical, "
          f"{len(crashed)} crashed before and decide now, {len(moved)} differ otherwise, {len(missing)} not in both")
    return 1 if moved or missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
