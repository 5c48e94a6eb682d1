"""The plugin's side of finding a project: the ``claims_probes`` ini option, and one-line errors when
the rootdir misses the project or the probes cannot load (real pytest sessions, pytester)."""

from __future__ import annotations

import pytest

PROBE = '''\
from claimcheck.probing.registry import Output, ProbeContext, probe


@probe("{name}", outputs={{"x": Output("")}}, deterministic=True)
def {function}(ctx: ProbeContext, *, x: float = 1.0) -> dict[str, list[float]]:
    return {{"x": [x]}}
'''

CLAIM = """\
id: {id}
title: t
statement: s
source: {{doc: d.md, section: "1", figure: "f"}}
scope: {{kind: portable, backend: any}}
probe: {{name: {probe}, params: {{x: 2}}}}
check: {{rule: exact, output: x, expected: 2, tolerance: 0}}
"""


@pytest.fixture
def project(mlx_imported: None, pytester: pytest.Pytester) -> pytest.Pytester:
    """A project with one probe (``own``, in ``probes/`` without ``__init__.py``) and one claim on it."""
    pytester.makepyfile(**{"probes/own.py": PROBE.format(name="own", function="own")})
    (pytester.path / "claims").mkdir()
    (pytester.path / "claims" / "own.yaml").write_text(CLAIM.format(id="own-holds", probe="own"))
    return pytester


def test_probes_folder_without_init_is_found(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\n")
    result = project.runpytest("claims", "--claims-no-store")
    result.assert_outcomes(passed=1)


def test_claims_probes_ini_names_other_sources(project: pytest.Pytester) -> None:
    project.makepyfile(**{"tools/measures/other.py": PROBE.format(name="other", function="other")})
    (project.path / "claims" / "other.yaml").write_text(CLAIM.format(id="other-holds", probe="other"))
    project.makeini("[pytest]\nclaims_probes = tools/measures probes\n")
    result = project.runpytest("claims", "--claims-no-store")
    result.assert_outcomes(passed=2)


def test_rootdir_inside_claims_is_an_error_saying_how(project: pytest.Pytester,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """No config file and pytest started inside claims/: the rootdir is claims/ itself."""
    (project.path / "claims" / "second.yaml").write_text(CLAIM.format(id="second", probe="own"))
    monkeypatch.chdir(project.path / "claims")
    result = project.runpytest("--claims-no-store")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # collection problems stop the session
    output = result.stdout.str()
    assert output.count("claimcheck: pytest's rootdir is") == 1, output
    result.stdout.fnmatch_lines([
        f"claimcheck: pytest's rootdir is {project.path / 'claims'} (no pytest config file), so the claims in "
        f"{project.path / 'claims'} and the project's probes are not found: add a pyproject.toml with "
        f"[[]tool.pytest.ini_options[]] (or a pytest.ini) to {project.path} and run pytest there, "
        f"or pass --rootdir={project.path}",
    ])
    assert "Traceback" not in output


def test_rootdir_beside_the_project_is_an_error(project: pytest.Pytester) -> None:
    outside = project.path.parent
    result = project.runpytest(str(project.path / "claims"), f"--rootdir={outside}", "--claims-no-store")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # collection problems stop the session
    result.stdout.fnmatch_lines([f"claimcheck: pytest's rootdir is {outside} (no pytest config file)*"])


def test_duplicate_probe_name_fails_collection_once(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\n")
    project.makepyfile(**{"probes/again.py": PROBE.format(name="own", function="own")})
    (project.path / "claims" / "second.yaml").write_text(CLAIM.format(id="second", probe="own"))
    result = project.runpytest("claims", "--claims-no-store")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # collection problems stop the session
    output = result.stdout.str()
    assert output.count("is defined twice") == 1, output
    result.stdout.fnmatch_lines(["probe `own` is defined twice: in probes.again (*again.py) and in probes.own (*own.py)*"])
    assert "Traceback" not in output

