"""Decode-loop arms (the overlap spike, methods notes section H) and the decode roofline.

Greedy decode of one model, timed per token over ``tokens`` steps after a
prefill that is not timed. Each pass restores the KV cache saved after one
prefill, so every arm decodes from the same state. Arms:

- ``baseline``: the pipelined loop mlx-lm's ``generate_step`` runs: build step
  n+1's graph and ``async_eval`` it before reading step n's token;
- ``prebuilt``: all step graphs are built first, chained through the lazy
  argmax outputs, so the timed loop only dispatches and reads;
- ``serial``: each step is evaluated before the next is built;
- ``spin``: baseline with ``spin_work_ms`` of host busy-work per step at
  ``spin_at`` (``build``: before building the next step, ``pre``: before
  reading the token, ``post``: after reading it);
- ``chain-k``: baseline with ``k`` steps in flight instead of one.

Every arm must produce the same tokens as the baseline; a divergence means
the arms did not run the same computation and is a probe error. The arms themselves, pure Python
over a :class:`~probes.decode.decode_schedules.Session`, are in :mod:`probes.decode.decode_schedules`; this module
gives them MLX's decode step and turns their timings into the probes' outputs.
"""

from __future__ import annotations

from typing import Any, Sequence

from claimcheck.api import (
    Output,
    POSITION,
    PackPlot,
    ProbeContext,
    ProbeError,
    Timer,
    check_bandwidth,
    device_buffer,
    gbps,
    host_read_seconds,
    interleaved_order,
    mlx_core,
    positions_of,
    probe,
    read_ceiling_gbps,
)
from .decode_schedules import Session, compare_arms, make_arm, output_name, padded, pipelined, repeated
from ..figures.weight_bytes import account, kv_bytes_per_token

# --- MLX side ------------------------------------------------------------------------------


def _prompt_ids(lm: Any, context: int, vocab: int) -> list[int]:
    """``context`` prompt token ids: a fixed text through the tokenizer when there is one, else fixed ids."""
    ids: list[int] = []
    if lm.tokenizer is not None:
        text = "The lighthouse keeper climbed the stairs and looked out over the water. "
        while len(ids) < context:
            ids += list(lm.tokenizer.encode(text))
    else:
        ids = [(7919 * i + 13) % vocab for i in range(context)]
    return ids[:context]


class DecodeState:
    """A model plus the KV cache after one prefill; hands out fresh :class:`Session` objects."""

    def __init__(self, lm: Any, *, context: int, tokens: int, timer: Timer) -> None:
        mx = mlx_core()
        from mlx_lm.models.cache import make_prompt_cache

        self.mx, self.lm, self.tokens, self.timer = mx, lm, tokens, timer
        self._make_cache = lambda: make_prompt_cache(lm.model)
        vocab = int(lm.config.get("vocab_size") or lm.config.get("text_config", {}).get("vocab_size"))
        prompt = mx.array(_prompt_ids(lm, context, vocab), dtype=mx.uint32)
        cache = self._make_cache()
        logits = lm.model(prompt[None], cache=cache)
        self.first = mx.argmax(logits[:, -1, :], axis=-1)
        self.saved = [c.state for c in cache]
        mx.eval(self.first, self.saved)
        self.context = context

    def new_session(self) -> Session:
        mx, model = self.mx, self.lm.model
        cache = self._make_cache()
        for c, state in zip(cache, self.saved):
            c.state = state

        def step(token: Any) -> Any:
            logits = model(token[None], cache=cache)
            return mx.argmax(logits[:, -1, :], axis=-1)

        return Session(
            step=step,
            first=self.first,
            tokens=self.tokens,
            async_eval=mx.async_eval,
            read=lambda y: int(y.item()),
            clock=self.timer.clock,
            synchronize=mx.synchronize,
        )


def _load(model: str, variant: str | None, ctx: ProbeContext) -> Any:
    from claimcheck.api import load

    lm = load(model, variant=variant)
    ctx.info.update(lm.info() if hasattr(lm, "info") else {"model": lm.model_id, "variant": lm.variant, "weights_hash": lm.weights_hash})
    return lm


ARM_OUTPUTS = ("baseline", "prebuilt", "serial", "spin", "chain2", "chain3")


def _no_synthetic_model(params: dict[str, Any]) -> dict[str, Any] | None:
    """Warm an item of a shipped model only: a CUDA profile's synthetic 1-B and 4-B models are tens of GB to
    build before quantizing, too much to build beside the run."""
    return None if str(params.get("model", "")).startswith("synthetic:") else params


@probe(
    "decode_arms",
    warm_up=_no_synthetic_model,
    outputs={
        **{f"{arm}_ms": Output("ms/token", False, f"{arm} arm, per token, one value per pass") for arm in ARM_OUTPUTS},
        **{f"{arm}_minus_baseline_ms": Output("ms/token", None, f"{arm} minus baseline in the same round") for arm in ARM_OUTPUTS[1:]},
        "build_ms": Output("ms/token", None, "host graph-building time per token inside the baseline loop"),
        "baseline_plus_build_ms": Output("ms/token", None, "baseline + its own build time, per round: serial's cost if it only exposed the build"),
        "serial_excess_ms": Output("ms/token", None, "(serial - baseline) - baseline's build time, per round"),
        "spin_cost_frac": Output("", False, "(spin - baseline) / injected spin, per round"),
        "spin_bound_ms": Output("ms/token", None, "baseline + spin_bound x injected spin, per round"),
    },
    plot=PackPlot("decode_arms", "Decode arms", "arms", outputs=tuple(f"{arm}_ms" for arm in ARM_OUTPUTS),
                  caption="Per-token time of each arm an item ran, mean with its 95% interval, one row per item."),
)
def decode_arms(
    ctx: ProbeContext,
    *,
    model: str = "smollm2-135m-instruct",
    variant: str | None = None,
    arms: Sequence[str] = ("baseline", "prebuilt"),
    tokens: int = 16,
    context: int = 32,
    spin_work_ms: float = 2.0,
    spin_at: str = "build",
    spin_bound: float = 0.5,
    warmup: int = 1,
    pad_arm: str = "",
    pad_ms: float = 0.0,
    pad_passes: int = 1,
) -> dict[str, list[float]]:
    """Per-token decode time of interleaved loop arms on one model; all arms token-identical.

    Besides each arm's ms/token, the outputs hold per-round combinations that
    let a claim compare two timings directly (a ratio near 1 of two timings is
    measured as precisely as the timings themselves, while a difference near
    zero has no meaningful relative noise): ``baseline_plus_build_ms`` (what
    the serial arm would cost if not pipelining only exposed the build) and
    ``spin_bound_ms`` (baseline plus ``spin_bound`` of the injected work).

    Args:
        model: model id: a registered one, a project alias, an mlx-lm folder or a cached Hugging Face repo.
        variant: which weights of the model to load, one it offers (``fp32``, ``4bit``); ``None``: its
            default (``fp32`` on the CPU, ``4bit`` on a GPU).
        arms: arm names; ``baseline`` is added first when missing (it is the reference).
        tokens: decode steps per pass (timed).
        context: prompt tokens prefilled before the timed steps (not timed); every pass starts from that cache.
        spin_work_ms, spin_at: the ``spin`` arm's injected host work per step and where it goes.
        spin_bound: fraction of ``spin_work_ms`` that ``spin_bound_ms`` adds to the baseline.
        warmup: untimed passes of every arm before the first timed round (first look only).
        pad_arm, pad_ms: host busy-work added to one arm's timed pass before its first step, where
            nothing can overlap it (a positive control: that arm is made slower on purpose).
        pad_passes: the ``pad_arm`` runs this many whole passes per round, timed together (a
            control whose cost scales with the machine's speed, see :func:`.decode_schedules.repeated`).
    """
    arm_names = ["baseline"] + [a for a in arms if a != "baseline"]
    functions = {name: make_arm(name, spin_work_ms=spin_work_ms, spin_at=spin_at) for name in arm_names}
    if pad_arm:
        if pad_arm not in functions:
            raise ValueError(f"`pad_arm` must be one of the arms {arm_names}, got {pad_arm!r}")
        functions[pad_arm] = padded(functions[pad_arm], pad_ms)
    elif pad_passes != 1:
        raise ValueError("`pad_passes` repeats the `pad_arm`: name the arm")
    if int(pad_passes) < 1:
        raise ValueError(f"`pad_passes` must be at least 1, got {pad_passes}")
    for name in arm_names:
        if output_name(name) not in ARM_OUTPUTS:
            raise ValueError(f"arm {name!r} has no declared output; declared: {', '.join(ARM_OUTPUTS)}")
    lm = _load(model, variant, ctx)
    state = DecodeState(lm, context=context, tokens=tokens, timer=Timer())
    if pad_arm and pad_passes != 1:
        functions[pad_arm] = repeated(functions[pad_arm], int(pad_passes), state.new_session)
    # Later looks of the same item reuse the process that look 0 warmed on these exact shapes.
    comparison = compare_arms(functions, state.new_session, ctx.n, warmup=warmup if ctx.look == 0 else 0)
    per_token = {name: [s / tokens * 1e3 for s in comparison.seconds.samples[name]] for name in arm_names}
    out: dict[str, list[float]] = {f"{output_name(n)}_ms": v for n, v in per_token.items()}
    for name in arm_names[1:]:
        out[f"{output_name(name)}_minus_baseline_ms"] = [a - b for a, b in zip(per_token[name], per_token["baseline"])]
    out["build_ms"] = [s / tokens * 1e3 for s in comparison.build_seconds["baseline"]]
    out["baseline_plus_build_ms"] = [a + b for a, b in zip(out["baseline_ms"], out["build_ms"])]
    if "serial" in arm_names:
        out["serial_excess_ms"] = [d - b for d, b in zip(out["serial_minus_baseline_ms"], out["build_ms"])]
    if "spin" in arm_names:
        out["spin_cost_frac"] = [d / spin_work_ms for d in out["spin_minus_baseline_ms"]]
        out["spin_bound_ms"] = [b + spin_bound * spin_work_ms for b in out["baseline_ms"]]
    positions = positions_of(arm_names, comparison.seconds.order)  # lets a paired check model the position
    out.update({f"{output_name(n)}_ms{POSITION}": [float(p) for p in positions[n]] for n in arm_names})
    ctx.artifacts["order"] = comparison.seconds.order
    ctx.artifacts["tokens"] = comparison.tokens
    ctx.info.update({"tokens": tokens, "context": context, "arms": arm_names, "spin": f"{spin_work_ms} ms at {spin_at}",
                     **({"pad": {"arm": pad_arm, "ms": pad_ms}} if pad_arm and pad_ms > 0 else {})})
    return out


@probe(
    "roofline",
    outputs={
        "pct_of_roofline": Output("%", True, "floor time / measured time"),
        "ms_per_token": Output("ms/token", False, "pipelined greedy decode"),
        "floor_ms": Output("ms/token", None, "(weights + KV bytes) / the best read GB/s of the call"),
        "raw_gbps": Output("GB/s", True, "read bandwidth per round, interleaved with the decode passes"),
        "decode_gbps": Output("GB/s", True, "bytes per token / measured time"),
    },
)
def roofline(
    ctx: ProbeContext,
    *,
    model: str,
    variant: str | None = None,
    tokens: int = 16,
    context: int = 32,
    raw_mib: int = 256,
    raw_dtype: str = "bfloat16",
    read: str = "mlx",
    kv_dtype_bytes: int | None = None,
) -> dict[str, list[float]]:
    """Measured decode time against the bandwidth floor (weights + KV bytes over a read bandwidth), in percent.

    Claims sweep ``model`` over same-architecture sizes (``check.over``). The floor's bytes are the
    weights streamed per token (header accounting, as in ``weight_bytes``) plus the KV read at the
    mean context of the timed tokens; its bandwidth is the best read of the call.

    Args:
        model: model id: a registered one, a project alias, an mlx-lm folder or a cached Hugging Face
            repo (claims sweep it over one architecture's sizes).
        variant: which weights of the model to load, one it offers (``fp32``, ``4bit``); ``None``: its
            default (``fp32`` on the CPU, ``4bit`` on a GPU). The floor counts that variant's bytes.
        tokens: decode steps per timed pass; the KV read is counted at ``context + tokens // 2``.
        context: prompt tokens prefilled before the timed steps (not timed).
        raw_mib, raw_dtype: the raw-read buffer (MiB, MLX dtype), read in the same rounds as the decode
            passes, interleaved; its best read in the call sets the floor's bandwidth.
        read: which read bandwidth sets the floor: ``"mlx"``, the doc's raw read (an evaluated
            ``sum()`` of ``raw_mib`` MiB of ``raw_dtype``); or ``"best"``, the larger of that and a
            numpy read of the same size. On the CPU backend MLX's sum is compute-bound, far below
            what memory delivers, so only ``"best"`` gives a physical floor there.
        kv_dtype_bytes: KV cache element size; by default 4 for fp32 models, else 2.
    """
    if read not in ("mlx", "best"):
        raise ValueError(f"`read` must be 'mlx' or 'best', got {read!r}")
    mlx_core()
    from claimcheck.api import named_parameters

    lm = _load(model, variant, ctx)
    sizes = {name: int(v.nbytes) for name, v in named_parameters(lm.model)}
    weights = account(sizes, lm.config).per_token
    if kv_dtype_bytes is None:
        kv_dtype_bytes = 4 if lm.variant == "fp32" else 2
    kv = kv_bytes_per_token(lm.config, context + tokens // 2, dtype_bytes=kv_dtype_bytes)
    floor_bytes = weights + kv
    state = DecodeState(lm, context=context, tokens=tokens, timer=Timer())
    raw = device_buffer(raw_mib, raw_dtype)
    timer = Timer()
    timer.warm_up(lambda: raw.sum())
    comparison = compare_arms({"baseline": pipelined}, state.new_session, 0, warmup=1)
    out: dict[str, list[float]] = {k: [] for k in ("pct_of_roofline", "ms_per_token", "floor_ms", "raw_gbps", "decode_gbps")}
    for round_arms in interleaved_order(["decode", "raw"], ctx.n):
        for arm in round_arms:
            if arm == "raw":
                rate = gbps(raw.nbytes, timer.time(lambda: raw.sum()))
                if read == "best":
                    host_bytes, host_s = host_read_seconds(raw_mib, repeats=1)
                    rate = max(rate, gbps(host_bytes, host_s[0]))
                out["raw_gbps"].append(rate)
            else:
                run = pipelined(state.new_session())
                if run.tokens != comparison.tokens:
                    raise ProbeError("decode produced different tokens from its warm-up pass")
                out["ms_per_token"].append(run.seconds / tokens * 1e3)
    # One floor per call, from the best read of the call (as the doc's table uses one bandwidth figure):
    # read noise then stays out of the per-pass percentages.
    floor_ms = floor_bytes / (max(out["raw_gbps"]) * 1e9) * 1e3
    for ms in out["ms_per_token"]:
        out["floor_ms"].append(floor_ms)
        out["pct_of_roofline"].append(floor_ms / ms * 100)
        out["decode_gbps"].append(gbps(floor_bytes, ms / 1e3))
    ceiling = max(read_ceiling_gbps(floor_bytes / 2**20), *out["raw_gbps"])
    check_bandwidth(out["decode_gbps"], ceiling, what=f"decode of {model}")
    ctx.info.update(
        {"bytes_per_token": floor_bytes, "weight_bytes": weights, "kv_bytes": kv, "tokens": tokens, "context": context,
         "read": f"{raw_dtype} sum of {raw_mib} MiB" + (" or a numpy read, the faster" if read == "best" else "")}
    )
    return out
