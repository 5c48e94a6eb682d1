"""``claimcheck validate`` is the whole check before anything runs: every error of a file in one pass, unknown
models, measured claims without a control and budgets that can never decide, one line each naming file,
line and field."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from claimcheck import cli

from tests.cli.test_new_claim_to_lock import PROBES

HEAD = '''id: {id}
title: t
statement: s
source: {{doc: d.md, section: s, figure: "1"}}
scope: {{kind: portable, backend: any}}
'''


def _project(tmp_path: Path, claims: str) -> Path:
    (tmp_path / "probes").mkdir()
    (tmp_path / "probes" / "mine.py").write_text(PROBES, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "claims").mkdir()
    (tmp_path / "claims" / "c.yaml").write_text(claims, encoding="utf-8")
    return tmp_path


def _validate(root: Path, capsys) -> tuple[int, list[str]]:
    code = cli.main(["validate", str(root / "claims"), "--root", str(root)])
    out = capsys.readouterr().out
    return code, [line for line in out.splitlines() if line.strip()]


def test_every_field_error_of_a_document_in_one_pass(tmp_path: Path, capsys) -> None:
    root = _project(tmp_path, HEAD.format(id="four-errors") + '''probe: {name: share_pct, params: {model: llama-9000-instruct}}
check: {rule: at_least, output: pct, threshold: high, alpha: "x"}
budget: {min_samples: 10, max_samples: many}
''')
    code, lines = _validate(root, capsys)
    assert code == 1
    path = str(root / "claims" / "c.yaml")
    assert lines == [f"{path}:6: probe.params.model: unknown model `llama-9000-instruct` (did you mean "
                     "`smollm2-135m-instruct`?): not a registered id, a project alias ([tool.claimcheck.models] of "
                     "pyproject.toml), a path or a Hugging Face repo id",
                     f"{path}:7: check.alpha: expected a number, got text 'x'",
                     f"{path}:7: check.threshold: expected a number, got text 'high' (or one per grid point: {{by: "
                     "<grid axis>, values: {<grid value>: <number>, ...}})",
                     f"{path}:8: budget.max_samples: expected a whole number, got text 'many'"]


def test_a_measured_claim_needs_a_control_and_arithmetic_does_not(tmp_path: Path, capsys) -> None:
    root = _project(tmp_path, HEAD.format(id="no-control") + '''probe: {name: share_pct}
check: {rule: at_least, output: pct, threshold: 80}
---
''' + HEAD.format(id="arithmetic") + '''probe: {name: size_gb}
check: {rule: exact, output: gb, expected: 0.694, tolerance: 0.001}
''')
    code, lines = _validate(root, capsys)
    assert code == 1 and lines == [f"{root / 'claims' / 'c.yaml'}:1: control: a measured claim needs a positive "
                                   "control: `control: {params: {...}, why: ...}` (probe params under which it must "
                                   "be refuted), or `control: {none: true, why: ...}`"]


def test_a_budget_that_can_never_decide_is_an_error(tmp_path: Path, capsys) -> None:
    control = 'control: {none: true, why: "none"}\n'
    root = _project(tmp_path, HEAD.format(id="never-holds") + '''probe: {name: share_pct}
check: {rule: zero_rate, output: pct, threshold: 0.1}
budget: {min_samples: 5, max_samples: 20, looks: 1}
''' + control + "---\n" + HEAD.format(id="one-sample") + '''probe: {name: share_pct}
check: {rule: at_least, output: pct, threshold: 80}
budget: {min_samples: 1, max_samples: 1, looks: 1}
''' + control)
    code, lines = _validate(root, capsys)
    path = root / "claims" / "c.yaml"
    # 0 events in n bound the rate below 0.1 at alpha 0.05 only from n = 29 (0.9^29 = 0.047; 0.9^28 = 0.052)
    assert code == 1 and lines == [
        f"{path}:8: budget.max_samples: at most 20 samples, but no event in n shows a rate below 0.1 (alpha 0.05) "
        "only from n = 29: the claim can never hold",
        f"{path}:18: budget.max_samples: 1 sample(s) give no spread, so `at_least` can never decide; allow at least 2"]


def test_the_repository_and_the_example_claims_pass() -> None:
    """Each project validated in a process of its own, as a user runs it: in one process, which ``probes``
    package a project finds would depend on the projects earlier tests loaded."""
    root = Path(__file__).resolve().parents[2]
    for claims, project in ((root / "claims", root), (root / "docs/examples/user-repo/claims",
                                                      root / "docs/examples/user-repo")):
        done = subprocess.run([sys.executable, "-c", "import sys; from claimcheck.cli import main; "
                               "sys.exit(main(sys.argv[1:]))", "validate", str(claims), "--root", str(project)],
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stdout + done.stderr


PAIRED_PROBE = '''

@probe("pair_ms", outputs={"new": Output("ms"), "old": Output("ms")})
def pair_ms(ctx: ProbeContext) -> dict[str, list[float]]:
    """Two interleaved arms, timed."""
    rng = random.Random(ctx.seed * 1_000 + ctx.look)
    return {"new": [rng.gauss(5.0, 0.2) for _ in range(ctx.n)], "old": [rng.gauss(50.0, 2.0) for _ in range(ctx.n)]}
'''


def test_a_paired_median_over_too_few_rounds_is_an_error_naming_the_smallest_n(tmp_path: Path, capsys) -> None:
    control = 'control: {none: true, why: "none"}\n'
    check = "check: {rule: ratio, output: new, reference: old, threshold: 1, bound: at_most, paired: true}\n"
    root = _project(tmp_path, HEAD.format(id="four-rounds") + "probe: {name: pair_ms}\n" + check
                    + "budget: {min_samples: 4, max_samples: 4, looks: 1, exclusive: true}\n" + control + "---\n"
                    + HEAD.format(id="five-rounds") + "probe: {name: pair_ms}\n" + check
                    + "budget: {min_samples: 5, max_samples: 5, looks: 1, exclusive: true}\n" + control)
    (root / "probes" / "mine.py").write_text(PROBES + PAIRED_PROBE, encoding="utf-8")
    code, lines = _validate(root, capsys)
    path = root / "claims" / "c.yaml"
    # 4 rounds: 0.5^4 = 0.0625 > 0.05; 5 rounds reach 0.031, so the second claim passes
    assert code == 1 and lines == [
        f"{path}:8: budget.max_samples: at most 4 rounds, but `ratio` decides the median of the per-round contrast "
        "on a sign test, whose smallest p-value over 4 rounds (0.5^4 = 0.0625) never reaches the last look's level "
        "at alpha 0.05: the claim can never be decided; the smallest n that could decide is 5 rounds"]
