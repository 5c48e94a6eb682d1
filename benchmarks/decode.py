"""Decode throughput of the embedded model on this machine: single stream vs mlx-lm batched sampling.

Sampling-heavy probes (curves, routes) draw hundreds of fixed-length samples; whether they finish in
minutes or hours depends on batching. This prints, for SmolLM2-135M-Instruct (fp32 by default):

* single-stream decode tok/s (``mlx_lm.stream_generate``) and prompt (prefill) tok/s;
* batched sampling throughput at batch 8, 32 and 64 (``mlx_lm`` ``BatchGenerator``, temperature 1,
  end-of-sequence ids banned so every sample has the full length), and its ratio to single stream;
* the BLAS in use and the machine it ran on.

Usage: ``python benchmarks/decode.py [--variant fp32|4bit] [--tokens 48] [--batches 8,32,64] [--rounds 1] [--json]``
Takes about a minute with OpenBLAS on a 2-core CPU. Numbers, not asserts: on a shared machine they
move with the load (the load average is printed with them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from claimcheck.harness.blas import ensure_fast_blas  # noqa: E402

PROMPT = "Write a short story about a lighthouse keeper who finds a message in a bottle."
PREFILL_WORDS = 200  # a ~250-token prompt so prefill speed is measured on more than a handful of tokens


def ban(token_ids: list[int]):
    """Logits processor that makes ``token_ids`` impossible (fixed-length samples)."""
    import mlx.core as mx

    masks: dict[int, object] = {}

    def processor(tokens, logits):
        vocab = logits.shape[-1]
        if vocab not in masks:
            masks[vocab] = mx.array([-float("inf") if i in token_ids else 0.0 for i in range(vocab)], dtype=logits.dtype)
        return logits + masks[vocab]

    return processor


def single_stream(loaded, prompt_ids: list[int], tokens: int) -> dict[str, float]:
    """Decode and prefill tok/s of one stream, as ``stream_generate`` reports them."""
    from mlx_lm import stream_generate
    from mlx_lm.sample_utils import make_sampler

    processors = [ban(sorted(loaded.tokenizer.eos_token_ids))]
    last = None
    for last in stream_generate(loaded.model, loaded.tokenizer, prompt_ids, max_tokens=tokens,
                                sampler=make_sampler(temp=1.0), logits_processors=processors):
        pass
    return {"decode_tps": last.generation_tps, "prompt_tps": last.prompt_tps, "tokens": last.generation_tokens,
            "prompt_tokens": last.prompt_tokens}


def batched(loaded, prompt_ids: list[int], batch: int, tokens: int) -> dict[str, float]:
    """Throughput of ``batch`` fixed-length samples generated together."""
    from mlx_lm.generate import BatchGenerator
    from mlx_lm.sample_utils import make_sampler

    generator = BatchGenerator(loaded.model, stop_tokens=None, sampler=make_sampler(temp=1.0),
                               completion_batch_size=batch, prefill_batch_size=batch)
    processors = [[ban(sorted(loaded.tokenizer.eos_token_ids))] for _ in range(batch)]
    started = time.perf_counter()
    generated = 0
    try:
        generator.insert([list(prompt_ids)] * batch, [tokens] * batch, logits_processors=processors)
        with generator.stats() as stats:
            while responses := generator.next_generated():
                generated += sum(1 for response in responses if response.finish_reason != "stop")
    finally:
        generator.close()
    wall = time.perf_counter() - started
    return {"batch": batch, "decode_tps": stats.generation_tps, "prompt_tps": stats.prompt_tps,
            "samples_per_s": batch / wall, "tokens": generated, "wall_s": wall, "overall_tps": generated / wall}


def median_record(records: list[dict]) -> dict:
    """Per-key medians of measured (float) fields; counts (ints) are the same in every round."""
    return {
        key: records[0][key] if isinstance(records[0][key], int) else statistics.median(r[key] for r in records)
        for key in records[0]
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--variant", default="fp32")
    parser.add_argument("--tokens", type=int, default=48, help="tokens per sample")
    parser.add_argument("--single-tokens", type=int, default=64, help="tokens for the single-stream run")
    parser.add_argument("--batches", default="8,32,64")
    parser.add_argument("--rounds", type=int, default=1, help="alternate single/batched runs this many times; print medians")
    parser.add_argument("--json", action="store_true", help="also print one JSON line with every number")
    args = parser.parse_args(argv)

    blas = ensure_fast_blas()
    import mlx.core as mx

    from claimcheck.machine import fingerprint, machine_class
    from claimcheck.models import load

    mx.random.seed(0)
    started = time.perf_counter()
    loaded = load(args.model, variant=args.variant, needs_text=True)
    load_s = time.perf_counter() - started
    tokenizer = loaded.tokenizer
    chat = tokenizer.apply_chat_template([{"role": "user", "content": PROMPT}], add_generation_prompt=True)
    long_prompt = tokenizer.encode(" ".join(["The lighthouse keeper watched the sea."] * (PREFILL_WORDS // 6)))

    single_stream(loaded, chat, 4)  # warm-up: first-call allocations
    batches = [int(b) for b in args.batches.split(",") if b]
    batched(loaded, chat, min(batches), 2)  # warm-up of the batched path
    rounds: list[dict] = []
    for _ in range(args.rounds):  # single and batched runs alternate, so load drift hits both alike
        decode = single_stream(loaded, chat, args.single_tokens)
        prefill = single_stream(loaded, long_prompt, 1)
        single = {**decode, "prompt_tps": prefill["prompt_tps"], "prefill_tokens": prefill["prompt_tokens"]}
        rows = [batched(loaded, chat, batch, args.tokens) for batch in batches]
        for row in rows:
            row["ratio_to_single"] = row["decode_tps"] / single["decode_tps"]
        rounds.append({"single": single, "batched": rows})
    results = {
        "single": median_record([r["single"] for r in rounds]),
        "batched": [median_record([r["batched"][i] for r in rounds]) for i in range(len(batches))],
        "rounds": rounds,
    }

    fp = fingerprint()
    load_avg = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"model      {loaded.model_id} [{loaded.variant}]  weights {loaded.weights_hash[:12]}  "
          f"load {load_s:.2f} s {loaded.timings}")
    print(f"machine    {machine_class(fp)}  ({fp['cpu']}, {fp['cores_available']} cores, {fp['memory_gib']} GiB, "
          f"{fp['os']}, mlx {fp['mlx']}, mlx-lm {fp['mlx_lm']})")
    print(f"blas       {blas.describe()}")
    print(f"load avg   {load_avg[0]:.2f} {load_avg[1]:.2f} {load_avg[2]:.2f}  (timings are unreliable when this exceeds the core count)")
    single = results["single"]
    print(f"single     decode {single['decode_tps']:7.1f} tok/s ({single['tokens']} tokens)   "
          f"prefill {single['prompt_tps']:7.1f} tok/s ({single['prefill_tokens']}-token prompt)")
    if args.rounds > 1:
        print(f"           medians of {args.rounds} rounds; ratios are per round, then the median")
    for row in results["batched"]:
        ratio = row["ratio_to_single"]
        print(f"batch {row['batch']:>3}  decode {row['decode_tps']:7.1f} tok/s = {ratio:5.1f}x single   "
              f"overall {row['overall_tps']:7.1f} tok/s incl. prefill   {row['samples_per_s']:.2f} samples/s "
              f"of {args.tokens} tokens   {row['wall_s']:.1f} s")
    goal = next((row for row in results["batched"] if row["batch"] == 32), None)
    if goal is not None:
        print(f"goal       batch 32 >= 8x single: {'met' if goal['ratio_to_single'] >= 8 else 'NOT met'} ({goal['ratio_to_single']:.1f}x)")
    if args.json:
        print(json.dumps({"model": loaded.model_id, "variant": loaded.variant, "load_s": load_s, "timings": loaded.timings,
                          "machine_class": machine_class(fp), "fingerprint": fp, "load_avg": list(load_avg), **results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
