"""The module names of the flat layout (``claimcheck_probes.op_pair``) still import, with a DeprecationWarning.

Until 0.2.0 every probe module sat at the top of the package; now they are grouped by family
(``claimcheck_probes.ops.op_pair``). An old name is an alias of the module at its new one: the same
module object, so its probes are registered once and its registries (the op registry) are shared. No file
holds an old name, so the registry's walk over the package never meets one; a finder on ``sys.meta_path``
answers them, and the package's ``__getattr__`` answers ``claimcheck_probes.op_pair`` as an attribute.
The warning names the new home. Removal: 1.0.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import warnings
from collections.abc import Iterable, Sequence
from types import ModuleType

#: old module name (under the package) -> where it lives now
MOVED = {
    "arithmetic": "figures.arithmetic",
    "weight_bytes": "figures.weight_bytes",
    "op_declarations": "ops.op_declarations",
    "op_expr": "ops.op_expr",
    "op_inputs": "ops.op_inputs",
    "op_pair": "ops.op_pair",
    "op_registry": "ops.op_registry",
    "bandwidth": "decode.bandwidth",
    "batched_generation": "decode.batched_generation",
    "decode_loop": "decode.decode_loop",
    "decode_schedules": "decode.decode_schedules",
    "kv_cache_step": "decode.kv_cache_step",
    "moe": "decode.moe",
    "generation_metrics": "text.generation_metrics",
    "generation_sets": "text.generation_sets",
    "quality": "text.quality",
    "text_metrics": "text.text_metrics",
    "curve_cache": "curves.curve_cache",
    "curve_groups": "curves.curve_groups",
    "curve_prompts": "curves.curve_prompts",
    "curve_setup": "curves.curve_setup",
    "curve_text": "curves.curve_text",
    "fork_map": "curves.fork_map",
    "fork_map_exact": "curves.fork_map_exact",
    "identity_control": "curves.identity_control",
    "route_coherence": "curves.route_coherence",
    "route_exact": "curves.route_exact",
    "route_hazard": "curves.route_hazard",
    "temperature_controls": "curves.temperature_controls",
    "temperature_fork": "curves.temperature_fork",
    "temperature_search": "curves.temperature_search",
}


def warn(old: str, new: str, stacklevel: int) -> None:
    """The one DeprecationWarning an old name gives, naming the module's new home."""
    warnings.warn(f"`{old}` moved to `{new}` in claimcheck 0.2.0 and will be removed in 1.0",
                  DeprecationWarning, stacklevel=stacklevel + 1)


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module at its new one, already executed there."""

    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new
        self.spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warn(self.old, self.new, stacklevel=2)  # warnings skips the import machinery's frames
        module = importlib.import_module(self.new)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing runs again; the module keeps its own spec (the import system set the alias's on it)."""
        if self.spec is not None:
            module.__spec__ = self.spec


class AliasFinder(importlib.abc.MetaPathFinder):
    """Answers ``<package>.<old name>`` while ``<package>`` is the folder that installed it.

    Another project's ``probes`` package in the same process (the registry loads a project's own folder
    under that name) gets nothing from it: the parent's ``__path__`` must be this folder.
    """

    def __init__(self, package: str, folders: Iterable[str]) -> None:
        self.package = package
        self.folders = frozenset(os.path.realpath(folder) for folder in folders)
        self.aliases = (package, self.folders)

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        parent, _, old = fullname.rpartition(".")
        if parent != self.package or old not in MOVED or path is None:
            return None
        if not any(os.path.realpath(folder) in self.folders for folder in path):
            return None
        if any(os.path.exists(os.path.join(folder, old + ".py")) or os.path.isdir(os.path.join(folder, old))
               for folder in self.folders):
            return None  # a module of that name is back in the folder: it is imported, not the alias
        return importlib.machinery.ModuleSpec(fullname, _Alias(fullname, f"{self.package}.{MOVED[old]}"))


def install(package: str, folders: Iterable[str]) -> None:
    """Put one finder for ``package`` at ``folders`` first on ``sys.meta_path``.

    First, so that no other finder (an editable install's, mapping the package name to another checkout)
    answers an old name with a file from elsewhere; it answers nothing but the old names of its own folder.
    """
    finder = AliasFinder(package, folders)
    for existing in [f for f in sys.meta_path if getattr(f, "aliases", None) == finder.aliases]:
        sys.meta_path.remove(existing)
    sys.meta_path.insert(0, finder)


def attribute(package: str, name: str) -> ModuleType:
    """``package.<old name>`` read as an attribute: the module at its new name, with the warning."""
    if name not in MOVED:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    new = f"{package}.{MOVED[name]}"
    module = sys.modules.get(f"{package}.{name}")
    if module is None:
        warn(f"{package}.{name}", new, stacklevel=3)  # the line that reads the attribute
        module = importlib.import_module(new)
        sys.modules[f"{package}.{name}"] = module
    return module
