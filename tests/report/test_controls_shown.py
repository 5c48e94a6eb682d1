"""A claim's positive control travels through the store to the reports and the docs gate."""

from __future__ import annotations

import dataclasses
import json

import pytest

from claimcheck.gate import check_docs
from claimcheck.report import build_reports


def _control(synthetic, verdict: str):
    """The control of qmv-large-bw as the runner stores it: a claim of its own, pointing back."""
    claim = synthetic.claim_record("qmv-large-bw--control")
    control = synthetic.outcome("qmv-large-bw--control", item="size_mib=1", verdict=verdict, claim=claim,
                                statistic=0.2 if verdict == "refuted" else 0.8, low=0.1, high=0.9)
    return dataclasses.replace(control, control_for="qmv-large-bw")


@pytest.mark.parametrize("control_verdict", ["refuted", "holds"])
def test_a_control_that_does_not_refute_is_shown_everywhere(tmp_path, recorded, synthetic, control_verdict) -> None:
    holding = synthetic.outcome(verdict="holds", statistic=0.8, low=0.78, high=0.82)
    store, run_id = recorded([holding, _control(synthetic, control_verdict)])
    (result,) = [r for r in store.results(run_id) if r.claim_id == "qmv-large-bw"]
    assert result.result.control is not None and result.result.control.verdict.value == control_verdict
    (history,) = store.history("qmv-large-bw")
    assert history.result.control == result.result.control, "history attaches the control too"

    out = tmp_path / "reports"
    build_reports(store, run_id, out, plots=False)
    index = (out / "index.md").read_text()
    summary = json.loads((out / "index.json").read_text())
    assert "## Positive controls" in index and "qmv-large-bw--control" in index
    shown = control_verdict == "refuted"
    assert ("## Not shown able to fail here" in index) is not shown
    assert summary["not_shown_able_to_fail"] == ([] if shown else ["qmv-large-bw[size_mib=256]"])
    assert ("Not shown able to fail here" in (out / "index.html").read_text()) is not shown

    claims = tmp_path / "claims"
    claims.mkdir()
    (claims / "c.yaml").write_text(
        "id: qmv-large-bw\ntitle: t\nstatement: s\nsource: {doc: d.md, section: s, figure: \"80%\"}\n"
        "scope: {kind: portable, backend: any}\nprobe: {name: qmv}\n"
        "check: {rule: at_least, output: share, threshold: 0.74, unit: ratio}\n")
    doc = tmp_path / "d.md"
    doc.write_text("qmv reaches 80%. <!-- claim: qmv-large-bw -->\n")
    report = check_docs([doc], store, claim_paths=[claims], machine_class=synthetic.CLASS_A)
    assert report.ok
    assert [p.code for p in report.warnings] == ([] if shown else ["not-shown-able-to-fail"])
