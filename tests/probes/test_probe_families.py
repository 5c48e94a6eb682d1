"""The shipped probes are grouped by family (``probes/<family>/``); the module names of the flat layout still
import, as the module at the new name with a DeprecationWarning naming it; every probe name is registered once."""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from claimcheck.probing.registry import load_probe_modules, registered_probes

ROOT = Path(__file__).resolve().parents[2]
PROBES = ROOT / "probes"
FAMILIES = {"curves", "decode", "figures", "ops", "text"}
# The names claims use: moving a module must never change one.
NAMES = {
    "batched_generation", "bisector_trace", "bisector_trace_exact", "decode_arms", "difference_of", "fork_classifier",
    "fork_share", "generation_metrics", "identity_control", "implied_bandwidth", "kv_bytes_per_token", "kv_cache_step",
    "lazy_trap", "moe_gather", "op_chain", "op_expr", "op_pair", "pooled_fork_coherence", "product_of", "proverb_cloze",
    "qmv", "ratio_of", "raw_read", "readings", "roofline", "roofline_arithmetic", "route_exact", "route_hazard",
    "scaling_mismatch", "streamed_weight_gb", "sum_of", "temperature_fork", "temperature_search", "weight_bytes",
}


# modules written after the flat layout was left: they never had a flat name to keep
ADDED_SINCE_THE_FLAT_LAYOUT = {"route_departures"}


@pytest.fixture(scope="module")
def moved() -> dict[str, str]:
    load_probe_modules(str(ROOT))  # this checkout's probes/ as `probes`, whatever claimcheck_probes resolves to
    from probes import _moved

    return dict(_moved.MOVED)


def _family_modules() -> dict[str, str]:
    """Each module of a family folder -> its dotted name under the package (``op_pair`` -> ``ops.op_pair``)."""
    return {path.stem: f"{path.parent.name}.{path.stem}" for path in sorted(PROBES.glob("*/*.py"))
            if path.name != "__init__.py"}


def test_every_shipped_probe_module_lives_in_a_family(moved: dict[str, str]) -> None:
    assert sorted(path.name for path in PROBES.glob("*.py")) == ["__init__.py", "_moved.py"]  # the package, its aliases
    families = {path.parent.name for path in PROBES.glob("*/__init__.py")}
    assert families == FAMILIES
    for family in families:
        docstring = ast.get_docstring(ast.parse((PROBES / family / "__init__.py").read_text(encoding="utf-8")))
        assert docstring and "\n" not in docstring, f"probes/{family}/__init__.py: one line saying what it measures"
    shipped = {name: p for name, p in registered_probes().items() if p.file and Path(p.file).is_relative_to(PROBES)}
    assert set(shipped) == NAMES
    for name, registered in shipped.items():
        assert Path(registered.file).parent.parent == PROBES and Path(registered.file).parent.name in FAMILIES, name
    modules = _family_modules()
    assert set(moved.items()) <= set(modules.items())  # no old name points nowhere
    assert set(modules) - set(moved) == ADDED_SINCE_THE_FLAT_LAYOUT  # every moved module keeps its old name


@pytest.fixture
def forget_old_names(moved: dict[str, str]):
    """Old names are imported afresh by each test (an alias imported once gives no second warning)."""
    import probes

    def drop() -> None:
        for old in moved:
            sys.modules.pop(f"probes.{old}", None)
            probes.__dict__.pop(old, None)

    drop()
    yield
    drop()


@pytest.mark.parametrize("old", sorted(set(_family_modules()) - ADDED_SINCE_THE_FLAT_LAYOUT))
def test_an_old_module_name_is_the_module_at_its_new_name_with_a_warning(old: str, moved: dict[str, str],
                                                                          forget_old_names: None) -> None:
    new = f"probes.{moved[old]}"
    with pytest.warns(DeprecationWarning, match=f"`probes.{old}` moved to `{new}` in claimcheck 0.2.0"):
        module = importlib.import_module(f"probes.{old}")
    assert module is importlib.import_module(new) and module.__name__ == new
    assert module.__spec__.name == new  # the alias leaves the module its own spec


def test_an_old_name_read_from_the_package_is_the_new_module(moved: dict[str, str], forget_old_names: None) -> None:
    import probes

    with pytest.warns(DeprecationWarning, match="`probes.op_pair` moved to `probes.ops.op_pair`"):
        from probes import op_pair
    assert op_pair is importlib.import_module("probes.ops.op_pair")
    with pytest.raises(AttributeError, match="has no attribute 'no_such_module'"):
        probes.no_such_module  # noqa: B018


def test_the_walk_over_the_package_never_imports_an_old_name(moved: dict[str, str]) -> None:
    ours = [name for name in load_probe_modules(str(ROOT)) if name.split(".")[0] == "probes"]  # this checkout's
    assert sorted(ours) == sorted(["probes", *(f"probes.{family}" for family in FAMILIES),
                                   *(f"probes.{new}" for new in moved.values()),
                                   *(f"probes.{_family_modules()[added]}" for added in ADDED_SINCE_THE_FLAT_LAYOUT)])


CHECK = r'''
import json, sys, warnings
from collections import Counter
import claimcheck.probing.registry as registry

made = Counter()
real = registry.RegisteredProbe
def counted(*args, **kwargs):
    made[kwargs["name"]] += 1
    return real(*args, **kwargs)
registry.RegisteredProbe = counted

imported = registry.load_probe_modules(sys.argv[1])
from probes._moved import MOVED
aliases, made_by = {}, {}
for package in ("probes", "claimcheck_probes"):  # the name the walk used, then the installed one
    for old, new in MOVED.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            exec(f"import {package}.{old} as module", globals())
        target = sys.modules[f"{package}.{new}"]
        aliases[f"{package}.{old}"] = {"same": module is target, "name": module.__name__,
                                       "warnings": [str(w.message) for w in caught if w.category is DeprecationWarning]}
    made_by[package] = dict(made)
print(json.dumps({"made": made_by, "imported": imported, "aliases": aliases,
                  "registered": sorted(registry.registered_probes()),
                  "shipped": sys.modules["claimcheck_probes"].__file__}))
'''


def test_each_probe_name_is_registered_once_and_the_installed_names_alias_too(tmp_path: Path,
                                                                              moved: dict[str, str]) -> None:
    """In a fresh process with this checkout installed as ``claimcheck_probes`` (one folder, two names, as an
    editable install): loading the probes and importing every old name of both registers each probe once."""
    (tmp_path / "claimcheck_probes").symlink_to(PROBES, target_is_directory=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", CHECK, str(ROOT)], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout)
    assert Path(found["shipped"]).resolve().parent == PROBES
    # the walk and the old names it was loaded under run each probe module once; the installed name is a second
    # name of the same files, whose definitions the registry already holds (it keeps the first)
    assert found["made"]["probes"] == {name: 1 for name in NAMES}, "a probe module ran twice"
    assert set(found["registered"]) == NAMES
    assert not [name for name in found["imported"] if name.startswith("claimcheck_probes")]
    for package in ("probes", "claimcheck_probes"):
        for old, new in moved.items():
            alias = found["aliases"][f"{package}.{old}"]
            assert alias["same"] and alias["name"] == f"{package}.{new}", (package, old, alias)
            assert alias["warnings"] == [f"`{package}.{old}` moved to `{package}.{new}` in claimcheck 0.2.0 and will "
                                         "be removed in 1.0"], (package, old)
