"""Items slower on one machine than another, and whether their profile's extra work explains it.

A claim's ``profiles: {cuda: ...}`` may run a bigger model, more tokens or more rounds on a GPU than on
a CPU, so an item's time on the two machines compares fairly only per unit of work. This reads two
recorded runs (an evidence store or a committed profile, and a run id or its unique prefix; by default
the latest run of the committed EPYC and H100 profiles) and prints every item that took more than
``--min-seconds`` longer on the second run than on the first, with the parameters that differ and, for
the decode probes, the work each side did: weight bytes streamed per decoded token (all of a dense
model's weights are read once a token), tokens a round, arms and rounds, so ``GB streamed`` and the
parameters built for a synthetic model (random weights drawn on first use) compare directly. An item
whose parameters are the same on both sides did the same work, so its extra time is the machine's own
(kernel compilation, model loading, host round trips), unless the run moved work onto it: for each such
item it also prints the shared results it computed where the other run reused one (and which item of
that run computed it), and whether it loaded its model where the other run still held it (the runner
keeps the last ``LOADED_KEEP`` models; a profile that runs other models in between evicts it).
Measures nothing; asserts nothing.

    python benchmarks/profile_work.py
    python benchmarks/profile_work.py --runs STORE:RUN STORE:RUN --min-seconds 0.5
"""

from __future__ import annotations

import argparse
import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import recorded_run

ROOT = Path(__file__).resolve().parents[1]
PROFILES = ROOT / "reports" / "profiles"
DEFAULT_RUNS = (f"{PROFILES / 'cpu-epyc.sqlite'}:", f"{PROFILES / 'cuda-nvidia-h100-80gb-hbm3-64-128gib.sqlite'}:")
DECODE_PROBES = {"decode_arms"}  # probes whose per-round work is arms x tokens x the model's weight bytes


@dataclass(frozen=True)
class RecordedItem:
    """One item of a recorded run: what it was asked, what it recorded about itself, and how long it took."""

    probe: str
    params: dict[str, Any]
    info: dict[str, Any]
    n: int | None
    seconds: float
    started: str = ""

    @property
    def model(self) -> tuple[str, str] | None:
        """The (model, variant) the item recorded, if it ran one."""
        model = self.info.get("model")
        return (str(model), str(self.info.get("variant") or "")) if model else None

    @property
    def shared(self) -> dict[str, str]:
        """Shared results the item used, by key: ``computed`` here or ``reused`` from an earlier item."""
        cache = self.info.get("cache")
        return {str(k): str(v) for k, v in cache.items()} if isinstance(cache, dict) else {}


def recorded_items(spec: str) -> tuple[str, dict[str, RecordedItem]]:
    """``STORE:RUN`` (an empty RUN: the store's latest run) -> (its label, items by id)."""
    with recorded_run(spec) as (connection, run_id, machine_class):
        rows = connection.execute("SELECT item_id, probe, params, info, n, duration, started FROM results WHERE run_id = ?",
                                  (run_id,)).fetchall()
    items = {item_id: RecordedItem(probe or "", json.loads(params or "{}"), json.loads(info or "{}"),
                                   None if n is None else int(n), float(duration or 0.0), started or "")
             for item_id, probe, params, info, n, duration, started in rows}
    return f"{run_id} ({machine_class})", items


@functools.lru_cache(maxsize=None)
def model_size(model: str, variant: str) -> tuple[int, int] | None:
    """(random parameters drawn, weight bytes) of a model: a synthetic one from its shapes alone, another as loaded.

    None where the model cannot be loaded on this machine.
    """
    from claimcheck.harness.timing import mlx_core
    from claimcheck.models.arrays import named_parameters

    mlx_core()  # MLX bound to the fast BLAS before anything imports it
    if not model.startswith("synthetic:"):
        from claimcheck.api import load

        try:
            loaded = load(model, variant=variant or None)
        except Exception:  # noqa: BLE001 - a model this machine lacks is reported as not sized
            return None
        return 0, sum(value.nbytes for _, value in named_parameters(loaded.model))
    import mlx.nn as nn

    from claimcheck.models import synthetic

    config = synthetic.model_config(model, variant)
    module = __import__(f"mlx_lm.models.{config['model_type']}", fromlist=["Model"])
    net = module.Model(module.ModelArgs.from_dict(config))  # lazy: shapes only, nothing evaluated
    drawn = sum(value.size for _, value in named_parameters(net))
    if variant != "fp32":
        net.set_dtype(mlx_core().bfloat16)
    if variant == "4bit":
        nn.quantize(net, group_size=synthetic.GROUP_SIZE, bits=synthetic.BITS,
                    class_predicate=lambda _, m: hasattr(m, "to_quantized") and m.weight.shape[-1] % synthetic.GROUP_SIZE == 0)
    return drawn, sum(value.nbytes for _, value in named_parameters(net))


def work(item: RecordedItem) -> str:
    """The decode work an item did, in words; empty for probes whose work this does not model."""
    if item.probe not in DECODE_PROBES:
        return ""
    model, variant = str(item.info.get("model", "")), str(item.info.get("variant", ""))
    size = model_size(model, variant)
    tokens, arms = int(item.info.get("tokens", 0)), len(item.info.get("arms", []))
    rounds = item.n or 0
    if size is None:
        return f"{model} {variant}: {arms} arms x {tokens} tokens x {rounds} rounds (weights not sized: not loadable here)"
    built, weight_bytes = size
    streamed = weight_bytes * tokens * arms * rounds
    drawn = f"{built / 1e9:.2f} B random parameters drawn, " if built else ""
    return (f"{model} {variant}: {drawn}{weight_bytes / 1e9:.2f} GB a token x "
            f"{tokens} tokens x {arms} arms x {rounds} rounds = {streamed / 1e9:.0f} GB streamed")


def moved_work(item_id: str, mine: dict[str, RecordedItem], theirs: dict[str, RecordedItem]) -> list[str]:
    """Shared results ``item_id`` computed in ``mine`` that the same item reused in ``theirs``, with who computed them there."""
    lines = []
    for key, how in sorted(mine[item_id].shared.items()):
        if how == "computed" and theirs[item_id].shared.get(key) == "reused":
            makers = sorted(i for i, item in theirs.items() if item.shared.get(key) == "computed")
            lines.append(f"computed `{key}`, which the other run reused (computed there by {' or '.join(makers) or 'an earlier run'})")
    return lines


def held_models(item_id: str, items: dict[str, RecordedItem], keep: int) -> list[tuple[str, str]]:
    """The models the runner still held when ``item_id`` started: the last ``keep`` distinct ones items used before it."""
    before = sorted((item.started, i) for i, item in items.items() if item.started < items[item_id].started and item.model)
    held: list[tuple[str, str]] = []
    for _, earlier in reversed(before):
        model = items[earlier].model
        if model is not None and model not in held:
            held.append(model)
        if len(held) == keep:
            break
    return held


def model_load(item_id: str, mine: dict[str, RecordedItem], theirs: dict[str, RecordedItem], keep: int) -> str:
    """Where ``item_id`` loaded its model in ``mine`` but found it held in ``theirs``: the models held instead."""
    model, held = mine[item_id].model, held_models(item_id, mine, keep)
    if model is None or model in held or model not in held_models(item_id, theirs, keep):
        return ""
    instead = ", ".join(" ".join(m).strip() for m in held) or "none"
    return f"loaded {' '.join(model).strip()}, which the other run still held (held here instead: {instead})"


def differing(first: dict[str, Any], second: dict[str, Any]) -> str:
    keys = sorted(k for k in first.keys() | second.keys() if first.get(k) != second.get(k))
    return ", ".join(f"{k}: {first.get(k)!r} -> {second.get(k)!r}" for k in keys) or "none"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", nargs=2, metavar="STORE:RUN", default=list(DEFAULT_RUNS),
                        help="the baseline run, then the run whose slower items are listed")
    parser.add_argument("--min-seconds", type=float, default=0.5)
    args = parser.parse_args()
    from claimcheck.models._registry import LOADED_KEEP
    (base_label, base), (other_label, other) = (recorded_items(spec) for spec in args.runs)
    print(f"baseline {base_label}\nother    {other_label}")
    slower = sorted((other[i].seconds - base[i].seconds, i) for i in base.keys() & other.keys()
                    if other[i].seconds - base[i].seconds > args.min_seconds)
    same = moved = 0
    for extra, item_id in reversed(slower):
        a, b = base[item_id], other[item_id]
        params = differing(a.params, b.params)
        same += params == "none"
        explained = [*moved_work(item_id, other, base), model_load(item_id, other, base, LOADED_KEEP)]
        moved += params == "none" and any(explained)
        print(f"\n{item_id}: {a.seconds:.1f} s -> {b.seconds:.1f} s (+{extra:.1f} s), n {a.n} -> {b.n}")
        print(f"  parameters that differ: {params}")
        for label, side in (("baseline", a), ("other", b)):
            if said := work(side):
                print(f"  {label:8s} {said}")
        for said in explained:
            if said:
                print(f"  other    {said}")
    print(f"\n{len(slower)} items slower by more than {args.min_seconds:g} s; {same} of them with the same parameters, "
          f"{moved} of which did work the other run did elsewhere (above); the rest's difference is the machine's own")


if __name__ == "__main__":
    main()
