"""Fixtures for the probe-discovery tests: a private probe registry, and the project modules they import dropped."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from claimcheck.probing import registry as probe_module

LOCAL_NAMES = ("probes", "tools", "extra_probe", "userpkg", "elsewhere", "x", "pkg_one", "pkg_two", "shippedpkg")


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A private probe registry and no entry points; the project modules these tests import are dropped after."""
    monkeypatch.setattr(probe_module, "_REGISTRY", {})
    monkeypatch.setattr(probe_module, "_QUALIFIED", {})
    monkeypatch.setattr(probe_module, "_PACKAGES", {})
    monkeypatch.setattr(probe_module, "_SHADOWED", {})
    monkeypatch.setattr(probe_module, "_entry_point_dirs", lambda: {})
    monkeypatch.setattr(probe_module, "_entry_names", lambda: {})
    monkeypatch.setattr(sys, "path", list(sys.path))
    saved = {key: module for key, module in sys.modules.items() if key.split(".")[0] in LOCAL_NAMES}
    yield
    for key in [key for key in sys.modules if key.split(".")[0] in LOCAL_NAMES]:
        del sys.modules[key]
    sys.modules.update(saved)
