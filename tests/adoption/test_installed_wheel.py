"""Adoption from another repository: claimcheck built as a wheel, installed (not editable) in a fresh
venv outside this repository, runs the example user repository's claims with the shipped probes, the
user's own probes and a model alias; ``claimcheck validate`` there reports misuse at ``file:line``.

The fresh venv gets only the wheel; its dependencies are made importable from this venv's
site-packages through a folder of links that leaves out claimcheck itself (the editable install), so
nothing is downloaded and nothing of this checkout is importable there.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import site
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "docs" / "examples" / "user-repo"
WHEEL_SOURCES = ("pyproject.toml", "setup.py", "README.md", "claimcheck", "probes", "schema", "docs")
# Safety deadlines for a loaded machine; they only catch a hung step.
BUILD_DEADLINE_S = 600
RUN_DEADLINE_S = 900


@dataclass(frozen=True)
class Installed:
    """A fresh venv holding the claimcheck wheel, and a copy of the example user repository."""

    python: Path
    claimcheck: Path
    site_packages: Path
    repo: Path

    def run(self, *args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "PYTEST"))}
        env["PYTHONNOUSERSITE"] = "1"
        return subprocess.run([str(a) for a in args], cwd=cwd or self.repo, env=env, capture_output=True, text=True,
                              timeout=RUN_DEADLINE_S)


def _pip(*args: str | Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", *map(str, args)], capture_output=True, text=True,
                          timeout=BUILD_DEADLINE_S)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def _build_wheel(work: Path) -> Path:
    """The wheel of this checkout, built from a copy (the build leaves no files in the repository)."""
    sources = work / "claimcheck-checkout"
    for name in WHEEL_SOURCES:
        origin = REPO / name
        if origin.is_dir():
            shutil.copytree(origin, sources / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            sources.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, sources / name)
    # This venv's setuptools builds it when it can build wheels itself; otherwise pip fetches one.
    isolation = [] if importlib.util.find_spec("setuptools.command.bdist_wheel") is None else ["--no-build-isolation"]
    _pip("wheel", "--no-deps", *isolation, "-w", work / "dist", sources)
    (wheel,) = (work / "dist").glob("claimcheck-*.whl")
    return wheel


def _dependency_links(work: Path) -> Path:
    """A folder linking every entry of this venv's site-packages except claimcheck's own."""
    links = work / "dependencies"
    links.mkdir()
    own = ("claimcheck", "__editable__", "__editable___claimcheck")
    for folder in {Path(p) for p in site.getsitepackages()}:
        for entry in folder.iterdir():
            if entry.name.startswith(own) or entry.suffix == ".pth" or (links / entry.name).exists():
                continue
            (links / entry.name).symlink_to(entry)
    return links


def _place_aliased_model(repo: Path) -> None:
    """Put the embedded SmolLM2 (fp32, converted once into the shared cache) where the example's alias points."""
    from claimcheck.models.smollm2 import ensure_converted

    model_dir, _, _ = ensure_converted("fp32")
    target = repo / "models" / "smollm2-135m-instruct-fp32"
    target.parent.mkdir()
    target.symlink_to(model_dir, target_is_directory=True)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    work = tmp_path_factory.mktemp("adoption")
    assert not work.resolve().is_relative_to(REPO)
    wheel = _build_wheel(work)
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=BUILD_DEADLINE_S)
    python = venv / "bin" / "python"
    _pip("--python", python, "install", "--no-deps", "--no-index", wheel)
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    (purelib / "claimcheck-dependencies.pth").write_text(f"{_dependency_links(work)}\n")
    repo = work / "user-repo"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("__pycache__", ".claimcheck", "reports"))
    _place_aliased_model(repo)
    return Installed(python=python, claimcheck=venv / "bin" / "claimcheck", site_packages=purelib, repo=repo)


def _shipped_and_schema(installed: Installed) -> None:
    probe = installed.run(installed.python, "-c", (
        "import json, claimcheck, claimcheck_probes\n"
        "from claimcheck.claims.schema_file import published_schema_path\n"
        "from claimcheck.probing.registry import load_probe_modules, registered_probes\n"
        "load_probe_modules('.')\n"
        "print(json.dumps({'claimcheck': claimcheck.__file__, 'shipped': claimcheck_probes.__file__,"
        " 'schema': str(published_schema_path()),"
        " 'probes': {n: p.module for n, p in registered_probes().items()}}))"))
    assert probe.returncode == 0, probe.stderr
    found = json.loads(probe.stdout)
    for key in ("claimcheck", "shipped", "schema"):
        assert Path(found[key]).is_relative_to(installed.site_packages), (key, found[key])
    assert json.loads(Path(found["schema"]).read_text()) == json.loads((REPO / "schema" / "claim-v1.json").read_text())
    probes = found["probes"]
    assert probes["weight_bytes"] == "claimcheck_probes.figures.weight_bytes"
    assert probes["implied_bandwidth"] == "claimcheck_probes.figures.arithmetic"
    assert probes["kv_budget_tokens"] == "probes.kv_budget" and probes["dice"] == "probes.dice"
    assert probes["kv_cache_step"] == "probes.kv_cache_step"  # the project's own shadows the shipped one
    listing = installed.run(installed.claimcheck, "probes", "op_pair", "proverb_cloze")
    assert listing.returncode == 0, listing.stderr
    assert "family qmm4: shape [m, k, n], k divisible by 64" in listing.stdout and "correct [no unit" in listing.stdout


TIMING_ITEMS = ("claims/shadowing.yaml::kv-concat-slower-than-kvcache",
                "claims/shadowing.yaml::concat-append-cost-rises-with-context")


def _claims_run(installed: Installed) -> None:
    result = installed.run(installed.python, "-m", "pytest", "claims/", "-m", "not timing", "-rA", "-p",
                           "no:cacheprovider", "--claims-no-store")
    output = result.stdout + result.stderr
    assert "rootdir: " + str(installed.repo) in output
    for line in ("PASSED claims/shipped.yaml::floor-implied-bandwidth",  # shipped probes
                 "PASSED claims/shipped.yaml::llama3-8b-kv-per-position",
                 "PASSED claims/own.yaml::llama3-8b-kv-budget",  # the project's own probes
                 "PASSED claims/own.yaml::fair-die-mean",
                 "PASSED claims/models.yaml::smollm2-local-weight-bytes",  # a model alias
                 # YAML only, on shipped probes: op agreement, labelled grids and sweeps, bit-identity
                 "PASSED claims/mlx-ops.yaml::rms-norm-fast-matches-reference[shape=test-width]",
                 "PASSED claims/mlx-ops.yaml::compiled-gelu-bit-identical-by-distribution[inputs=wide-uniform]",
                 "PASSED claims/mlx-ops.yaml::qmm4-error-same-across-m",
                 "PASSED claims/sampling.yaml::temperature-zero-is-argmax",  # the embedded model
                 "PASSED claims/sampling.yaml::top-k-diversity-does-not-fall-with-k",
                 "PASSED claims/quality.yaml::smollm2-4bit-kernels-keep-likelihood",  # the shipped data set
                 "PASSED claims/shadowing.yaml::llama3-8b-kv-step-bytes"):  # the project's probe shadows
        assert line in output, output[-4000:]
    assert "claimcheck: probe `kv_cache_step` of this project" in output
    assert result.returncode == 0, output[-4000:]
    yaml_only = [line for line in output.splitlines() if line.startswith("PASSED claims/")
                 and not line.startswith(("PASSED claims/own.yaml", "PASSED claims/models.yaml"))
                 and "llama3-8b-kv-step-bytes" not in line]
    assert len(yaml_only) >= 20, output[-4000:]


def _timing_run(installed: Installed) -> None:
    """The shipped timing probe reached as ``claimcheck:kv_cache_step``: decided or, on a loaded machine,
    inconclusive (a timing verdict is never a chance failure), but never an error or a refutation."""
    result = installed.run(installed.python, "-m", "pytest", "claims/", "-m", "timing", "-v", "-p",
                           "no:cacheprovider", "--claims-no-store")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    for item in TIMING_ITEMS:
        assert item in output, output[-4000:]
        assert f"FAILED {item}" not in output and f"ERROR {item}" not in output, output[-4000:]


def _validate_misuse(installed: Installed) -> None:
    claims = installed.repo / "claims"
    text = (claims / "own.yaml").read_text()
    text = text.replace("layers: 32,", "layers: thirty-two,").replace("name: dice,", "name: dcie,")
    text = text.replace("id: llama3-8b-kv-budget", "id: misuse-kv").replace("id: fair-die-mean", "id: misuse-dice")
    (claims / "misuse.yaml").write_text(text)
    lines = text.splitlines()
    layers_line = next(i for i, line in enumerate(lines, 1) if "thirty-two" in line)
    dice_line = next(i for i, line in enumerate(lines, 1) if "dcie" in line)
    try:
        result = installed.run(installed.claimcheck, "validate", "claims")
    finally:
        (claims / "misuse.yaml").unlink()
    assert result.returncode == 1, result.stdout + result.stderr
    assert (f"claims/misuse.yaml:{layers_line}: probe.params.layers: probe `kv_budget_tokens` takes `layers` as int"
            in result.stdout), result.stdout
    assert (f"claims/misuse.yaml:{dice_line}: probe.name: unknown probe `dcie` (did you mean `dice`?)"
            in result.stdout), result.stdout
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.slow  # minutes: wheel build, fresh venv, 30 claims with SmolLM2 generation and 4-bit scoring on the CPU
def test_example_repository_from_an_installed_wheel(installed: Installed) -> None:
    """One test, so that one wheel is built even when xdist spreads a module's tests over workers."""
    _shipped_and_schema(installed)  # the wheel holds claimcheck_probes and the JSON schema
    _claims_run(installed)  # pytest claims/: shipped probes, the project's probes, a model alias
    _timing_run(installed)  # the shipped timing probe a project probe shadows, by its qualified name
    _validate_misuse(installed)  # claimcheck validate: file:line for each misuse
