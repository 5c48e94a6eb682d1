"""What the curve benchmarks share: the repository on ``sys.path`` and the model/prompt options."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def curve_parser(doc: str | None) -> argparse.ArgumentParser:
    """An argument parser with ``--model``, ``--variant`` and ``--prompt`` (the embedded SmolLM2's defaults)."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0] if doc else None)
    parser.add_argument("--model", default="smollm2-135m-instruct")
    parser.add_argument("--variant", default="fp32")
    parser.add_argument("--prompt", default="lighthouse", help="prompt id from probes/data/curve-prompts.yaml")
    return parser
