"""The example user repository's YAML-only claims (shipped probes, no code of the project) validate and
run: MLX op agreement, recomputed figures, and a project probe that shadows a shipped one.

The quick variant of ``test_installed_wheel``: it runs from this checkout's install, without the
model claims (``model``) and the timing claims (``timing``), which the slow wheel test runs too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "docs" / "examples" / "user-repo"
QUICK_FILES = ("claims/mlx-ops.yaml", "claims/mlx-arithmetic.yaml", "claims/shadowing.yaml", "claims/shipped.yaml",
               "claims/mlx-expressions.yaml")
NOTICE = ("claimcheck: probe `kv_cache_step` of this project (probes.kv_cache_step (")


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST", "PYTHONPATH"))}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def _copy(tmp_path: Path) -> Path:
    repo = tmp_path / "user-repo"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("__pycache__", ".claimcheck", "reports"))
    return repo


def test_the_example_holds_at_least_twenty_claims_on_shipped_probes_alone() -> None:
    from claimcheck.claims.loader import load_claims

    claims = load_claims([EXAMPLE / "claims"])
    own = {"kv_budget_tokens", "dice", "kv_cache_step"}  # the project's own probes
    yaml_only = [claim for claim in claims if claim.probe.name not in own]
    assert len(yaml_only) >= 20, [claim.id for claim in yaml_only]
    rules = {claim.check.rule for claim in yaml_only}
    assert {"relation", "level_equivalent", "monotone", "zero_rate"} <= rules
    probes = {claim.probe.name for claim in yaml_only}
    assert {"op_pair", "generation_metrics", "proverb_cloze", "claimcheck:kv_cache_step"} <= probes


def test_the_example_validates_and_its_quick_claims_hold(tmp_path: Path) -> None:
    repo = _copy(tmp_path)
    validated = _run("-m", "claimcheck.cli", "validate", "claims", cwd=repo)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert NOTICE in validated.stderr
    result = _run("-m", "pytest", *QUICK_FILES, "-m", "not timing", "-rA", "-p", "no:cacheprovider",
                  "--claims-no-store", cwd=repo)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    for line in ("PASSED claims/mlx-ops.yaml::compiled-gelu-bit-identical-by-distribution[inputs=wide-uniform]",
                 "PASSED claims/mlx-ops.yaml::rms-norm-fast-matches-reference[shape=test-width]",
                 "PASSED claims/mlx-ops.yaml::qmm4-error-same-across-m",
                 "PASSED claims/mlx-arithmetic.yaml::preallocated-kv-17x-at-4096",
                 "PASSED claims/shadowing.yaml::llama3-8b-kv-step-bytes",
                 "PASSED claims/mlx-expressions.yaml::silu-compiled-bit-identical--bits",
                 "PASSED claims/mlx-expressions.yaml::silu-compiled-bit-identical--error",
                 "PASSED claims/mlx-expressions.yaml::matmul-row-by-row-matches-whole"):
        assert line in output, output[-4000:]
    assert NOTICE in output
    assert "Traceback" not in output
