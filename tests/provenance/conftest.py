"""Fixtures: the synthetic outcomes of tests/store/synthetic.py."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

_spec = importlib.util.spec_from_file_location("cc_synthetic", Path(__file__).resolve().parents[1] / "store" / "synthetic.py")
synth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(synth)


@pytest.fixture
def synthetic() -> Any:
    return synth
