"""A project's probe named like one an installed package ships shadows it, with one notice line naming
both; ``<package>:<name>`` (``claimcheck:kv_cache_step``) still reaches the shipped definition."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from claimcheck.probing import registry as probe_module
from claimcheck.claims.loader import load_claims_text, probe_problems
from claimcheck.probing.registry import DuplicateProbeError, get_probe, load_probe_modules, shadow_notices


def _probe_file(name: str, value: float, param: str = "context") -> str:
    return textwrap.dedent(f'''\
        from claimcheck.probing.registry import Output, ProbeContext, probe

        @probe("{name}", outputs={{"x": Output("")}}, deterministic=True)
        def measure(ctx: ProbeContext, *, {param}: int = 1) -> dict[str, list[float]]:
            return {{"x": [{value}]}}
        ''')


@pytest.fixture
def shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated: None) -> Path:
    """An installed probe package ``shippedpkg`` registered as the entry ``claimcheck``, with ``kv_cache_step``."""
    package = tmp_path / "site" / "shippedpkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "kv_cache_step.py").write_text(_probe_file("kv_cache_step", 1.0))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(probe_module, "_entry_point_dirs", lambda: {"shippedpkg": package.resolve()})
    monkeypatch.setattr(probe_module, "_entry_names", lambda: {"shippedpkg": "claimcheck"})
    project = tmp_path / "project"
    (project / "probes").mkdir(parents=True)
    return project


def test_a_project_probe_shadows_the_shipped_one_and_the_prefix_reaches_the_shipped(shipped: Path) -> None:
    (shipped / "probes" / "kv_cache_step.py").write_text(_probe_file("kv_cache_step", 2.0, param="steps"))
    load_probe_modules(str(shipped))
    own, theirs = get_probe("kv_cache_step"), get_probe("claimcheck:kv_cache_step")
    assert own.module == "probes.kv_cache_step" and theirs.module == "shippedpkg.kv_cache_step"
    (notice,) = shadow_notices()
    assert notice.startswith("probe `kv_cache_step` of this project (probes.kv_cache_step (")
    assert "shadows the shipped one (shippedpkg.kv_cache_step (" in notice
    assert notice.endswith("claims reach that one as `claimcheck:kv_cache_step`")
    # a claim is checked against the definition it names
    text = ("id: c\ntitle: t\nstatement: s\nsource: {doc: d, section: s, figure: f}\nscope: {kind: portable}\n"
            "probe: {name: NAME, params: {context: 4}}\ncheck: {rule: exact, output: x, expected: 1, tolerance: 0}\n")
    (explicit,) = load_claims_text(text.replace("NAME", "claimcheck:kv_cache_step"), "c.yaml")
    assert probe_problems(explicit)[1] == []
    (plain,) = load_claims_text(text.replace("NAME", "kv_cache_step"), "c.yaml")
    assert "probe `kv_cache_step` has no param `context`" in str(probe_problems(plain)[1][0])


def test_without_a_clash_the_prefix_reaches_the_shipped_probe_and_nothing_is_noticed(shipped: Path) -> None:
    load_probe_modules(str(shipped))
    assert get_probe("claimcheck:kv_cache_step") is get_probe("kv_cache_step")
    assert shadow_notices() == []


def test_two_project_definitions_of_one_name_are_still_an_error(shipped: Path) -> None:
    (shipped / "probes" / "one.py").write_text(_probe_file("twice", 1.0))
    (shipped / "probes" / "two.py").write_text(_probe_file("twice", 2.0))
    with pytest.raises(DuplicateProbeError, match="probe `twice` is defined twice"):
        load_probe_modules(str(shipped))


def test_many_probes_shadowed_from_one_folder_are_one_line(shipped: Path) -> None:
    """A second checkout of a probe package shadows every shipped probe at once: one line, counting them."""
    package = Path(probe_module._entry_point_dirs()["shippedpkg"])
    for name in ("alpha", "beta", "gamma", "delta"):
        (package / f"{name}.py").write_text(_probe_file(name, 1.0))
        (shipped / "probes" / f"{name}.py").write_text(_probe_file(name, 2.0))
    load_probe_modules(str(shipped))
    (notice,) = shadow_notices()
    assert notice.startswith(f"4 probes of this project ({(shipped / 'probes').resolve()}: alpha, beta, delta, ...)")
    assert notice.endswith(f"shadow the shipped ones of the same names ({package}); claims reach those as `claimcheck:NAME`")
    assert get_probe("claimcheck:gamma").module == "shippedpkg.gamma"
