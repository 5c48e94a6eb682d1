"""Tokens the model runs per claim item, from empty caches: what curve reuse saves, counted rather than timed.

Runs ``pytest`` on the given claim paths in a child process with a fresh ``CLAIMCHECK_CACHE`` and no
evidence store, counting every token that goes through a model's forward pass (mlx-lm's llama and
gemma3 text models): decode tokens (inputs one token long: generation) and prefill tokens (longer
inputs: prompts, teacher-forced passes), per item in the order the items ran. Token counts do not
depend on what else runs on the machine, so two trees can be counted side by side; the seconds
printed beside them do. Prints numbers; asserts nothing.

    python benchmarks/curve_tokens.py claims/curves --tree /path/to/other/checkout
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COUNTER = textwrap.dedent('''
    """pytest plugin: count the tokens each item puts through a model's forward pass."""
    import json, os, time
    import pytest

    counts = {"decode": 0, "prefill": 0, "calls": 0}
    rows = []

    def _wrap(cls):
        real = cls.__call__
        def counted(self, inputs, *args, **kwargs):
            shape = getattr(inputs, "shape", ())
            if len(shape) == 2:
                counts["decode" if shape[1] == 1 else "prefill"] += int(shape[0]) * int(shape[1])
                counts["calls"] += 1
            return real(self, inputs, *args, **kwargs)
        cls.__call__ = counted

    def pytest_configure(config):
        from mlx_lm.models import gemma3_text, llama
        for module in (llama, gemma3_text):
            _wrap(module.Model)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(item):
        before, started = dict(counts), time.perf_counter()
        yield
        rows.append({"item": item.name, "seconds": round(time.perf_counter() - started, 2),
                     **{k: counts[k] - before[k] for k in counts}})

    def pytest_unconfigure(config):
        with open(os.environ["CURVE_TOKENS_OUT"], "w") as handle:
            json.dump(rows, handle)
''')


def count(tree: Path, paths: list[str], extra: list[str]) -> list[dict[str, object]]:
    with tempfile.TemporaryDirectory(prefix="claimcheck-tokens-") as scratch:
        Path(scratch, "token_counter.py").write_text(COUNTER)
        out = Path(scratch, "rows.json")
        environment = {**os.environ, "CLAIMCHECK_CACHE": str(Path(scratch, "cache")), "CURVE_TOKENS_OUT": str(out),
                       "PYTHONPATH": os.pathsep.join([scratch, str(tree)])}
        done = subprocess.run([sys.executable, "-m", "pytest", *paths, "-p", "token_counter", "--claims-no-store", "-p", "no:cacheprovider",
                               "-q", *extra], cwd=tree, env=environment, capture_output=True, text=True)
        summary = next((line for line in reversed(done.stdout.splitlines()) if line.strip()), "(no output)")
        print(f"{tree}: {summary}", file=sys.stderr)
        return json.loads(out.read_text()) if out.exists() else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", default=["claims/curves"])
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout to run (default: this one)")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args, extra = parser.parse_known_args()
    rows = count(args.tree.resolve(), args.paths, extra)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    print(f"{'item':70s} {'decode':>9s} {'prefill':>9s} {'calls':>7s} {'s':>7s}")
    for row in rows:
        print(f"{str(row['item'])[:70]:70s} {row['decode']:9d} {row['prefill']:9d} {row['calls']:7d} {row['seconds']:7.1f}")
    total = {k: sum(int(r[k]) for r in rows) for k in ("decode", "prefill", "calls")}
    print(f"{'total (' + str(len(rows)) + ' items)':70s} {total['decode']:9d} {total['prefill']:9d} {total['calls']:7d} "
          f"{sum(float(r['seconds']) for r in rows):7.1f}")


if __name__ == "__main__":
    main()
