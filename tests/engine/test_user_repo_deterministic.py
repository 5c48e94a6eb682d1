"""A user's own repository with a deterministic probe: every rule decides on every returned value.

These were wrong before the rule objects: a deterministic `ratio` was read as a bound on its first
output, `monotone`/`ordering`/`equivalent` raised TypeError, and `exact` read only the last value.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PROBE = '''\
"""A user's probe: returns the numbers it is given."""

from claimcheck.probing.registry import Output, ProbeContext, probe


@probe("given", outputs={"a": Output(""), "b": Output(""), "y": Output("")}, deterministic=True)
def given(ctx: ProbeContext, *, a: list[float] | None = None, b: list[float] | None = None,
          y: float = 0.0, level: int = 0, bits: int = 4) -> dict[str, list[float]]:
    """Hand back ``a`` and ``b``; ``y`` is the value at a swept ``level``."""
    return {"a": a or [0.0], "b": b or [0.0], "y": [y if level == 0 else float(level)]}
'''

CLAIM = """\
id: {id}
title: t
statement: s
source: {{doc: d.md, section: "1", figure: "f"}}
scope: {{kind: portable, backend: any}}
probe: {{name: given, params: {params}}}
check: {check}
"""

CASES = {
    "ratio-holds": ("{a: [500], b: [100]}", "{rule: ratio, output: a, reference: b, bound: at_least, threshold: 2}",
                    "passed"),
    "monotone-holds": ("{level: [1, 2, 3]}", "{rule: monotone, output: y, over: level, direction: increasing}",
                       "passed"),
    "ordering-holds": ("{a: [500], b: [100]}", "{rule: ordering, outputs: [a, b]}", "passed"),
    "equivalent-holds": ("{a: [100], b: [100]}",
                         "{rule: equivalent, output: a, reference: b, margin: 0.1, scale: log-ratio}", "passed"),
    "exact-refuted": ("{a: [5, 0]}", "{rule: exact, output: a, expected: 0, tolerance: 0}", "failed"),
}


def _project(root: Path) -> None:
    (root / "probes").mkdir()
    (root / "probes" / "__init__.py").write_text("")
    (root / "probes" / "given.py").write_text(PROBE)
    (root / "claims").mkdir()
    docs = [CLAIM.format(id=claim_id, params=params, check=check) for claim_id, (params, check, _) in CASES.items()]
    (root / "claims" / "user.yaml").write_text("---\n".join(docs))


def test_deterministic_rules_decide_on_every_value(demo_project: pytest.Pytester) -> None:
    import shutil

    shutil.rmtree(demo_project.path / "probes")
    shutil.rmtree(demo_project.path / "claims")
    _project(demo_project.path)
    result = demo_project.runpytest("claims", "--claims-no-store", "-rA")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == 4 and outcomes.get("failed") == 1, result.stdout.str()
    for claim_id, (_, _, expected) in CASES.items():
        word = "PASSED" if expected == "passed" else "REFUTED"  # the policy's word: why it failed
        result.stdout.fnmatch_lines([f"{word} claims/user.yaml::{claim_id}*"])
    result.stdout.fnmatch_lines(["*computed 5; the doc's figure 0 ± 0 does not follow from its own inputs*"])


BAD = {
    "zero-threshold": ("{a: [0]}", "{rule: zero_rate, output: a,\n  threshold: 0}",
                       "user.yaml:{line}: check.threshold: `threshold` must lie in (0, 1); got 0"),
    "wrong-type": ("{a: [1],\n  bits: four}", "{rule: at_least, output: a, threshold: 0}",
                   "user.yaml:{line}: probe.params.bits: probe `given` takes `bits` as int; got text 'four'"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_validate_catches_run_time_errors_at_the_field_line(tmp_path: Path, case: str) -> None:
    _project(tmp_path)
    params, check, expected = BAD[case]
    text = CLAIM.format(id="bad", params=params, check=check)
    (tmp_path / "claims" / "user.yaml").write_text(text)
    field = "threshold: 0" if case == "zero-threshold" else "bits: four"
    line = next(i for i, row in enumerate(text.splitlines(), start=1) if field in row)
    run = subprocess.run([sys.executable, "-m", "claimcheck.cli", "validate", "claims", "--root", str(tmp_path)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=900)
    assert run.returncode == 1, run.stdout + run.stderr
    lines = [row for row in (run.stdout + run.stderr).splitlines() if "user.yaml" in row]
    assert len(lines) == 1 and expected.format(line=line) in lines[0], lines
    assert "Traceback" not in run.stderr
