"""Modules that moved after 0.1.0 stay importable under their old names, with a DeprecationWarning.

A probe written against 0.1.0 (``from claimcheck.probe import probe, Output, ProbeContext``) keeps
working: the old name is an alias of the module that now holds the code (the same module object,
so classes and registries are shared), and the warning names the new home and ``claimcheck.api``.
Old package names alias their submodules too (``claimcheck.sampling.runs``). Removal: 1.0.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import CodeType, ModuleType

# old name -> where it lives now (a package entry also maps its submodules)
MOVED = {
    "claimcheck.probe": "claimcheck.probing.registry",
    "claimcheck.probe_plot": "claimcheck.probing.plots",
    "claimcheck.sampling": "claimcheck.probing.sampling",
    "claimcheck.cache": "claimcheck.engine.cache",
    "claimcheck.locking": "claimcheck.engine.exclusive",
    "claimcheck.loader": "claimcheck.claims.loader",
    "claimcheck.schema": "claimcheck.claims.schema",
    "claimcheck.schema_file": "claimcheck.claims.schema_file",
    "claimcheck.runner": "claimcheck.engine.runner",
    "claimcheck.sampler": "claimcheck.engine.sampler",
    "claimcheck.result": "claimcheck.engine.result",
    "claimcheck.run_options": "claimcheck.engine.options",
    "claimcheck.docs_gate": "claimcheck.gate",
}
PACKAGES = {"claimcheck.sampling", "claimcheck.docs_gate"}


def new_name(old: str) -> str | None:
    """Where the module once imported as ``old`` lives now, None when it never moved."""
    if old in MOVED:
        return MOVED[old]
    package, _, rest = old.rpartition(".")
    while package:
        if package in PACKAGES:
            return f"{MOVED[package]}.{old[len(package) + 1:]}"
        package, _, rest = package.rpartition(".")
    return None


class _Alias(importlib.abc.Loader):
    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(f"`{self.old}` moved to `{self.new}` in claimcheck 0.2.0 and will be removed in 1.0; "
                      "probes should import from `claimcheck.api`", DeprecationWarning, stacklevel=2)  # warnings skips the import machinery's frames
        return importlib.import_module(self.new)

    def exec_module(self, module: ModuleType) -> None:
        """The module is the one at its new name, already executed."""

    def get_code(self, fullname: str) -> CodeType | None:
        """The new module's code, for ``python -m <old name>`` (runpy runs it as ``__main__``)."""
        spec = importlib.util.find_spec(self.new)
        loader = spec.loader if spec is not None else None
        return loader.get_code(self.new) if isinstance(loader, importlib.abc.InspectLoader) else None


class MovedFinder(importlib.abc.MetaPathFinder):
    """Answers the old names with an alias of the module at the new one."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        new = new_name(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(fullname, new), is_package=fullname in PACKAGES)


def install() -> None:
    """Put the finder on ``sys.meta_path`` once."""
    if not any(isinstance(finder, MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedFinder())  # before the path finder: an old package's submodule is never imported twice
