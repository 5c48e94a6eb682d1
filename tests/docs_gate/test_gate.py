"""The docs gate against a real evidence store built in a temp folder.

The measured numbers are made up for the tests; what is checked is the gate's arithmetic on
them (a ratio of 0.41 with interval [0.38, 0.44] must not pass a doc quoting 74%).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from claimcheck.gate import (
    Evidence,
    GitError,
    check_docs,
    class_matches,
    machines_named,
    main,
)
from claimcheck.gate._evidence import this_machine_class
from claimcheck.engine.result import ItemResult
from claimcheck.store import EvidenceStore

CPU = "cpu/Test CPU 9xxx/16-32GiB"
M1 = "metal/Apple M1 Max/32-64GiB"

CLAIM_YAML = """\
id: qmv-large-bw
title: qmv reads large matrices at a large share of raw bandwidth
statement: The 4-bit GEMV on large matrices reads at a large share of the raw streaming bandwidth.
source: {doc: decode-roofline-lookagain.md, section: "§1 Measured bandwidth", figure: "74–88% of raw machine bandwidth"}
scope: {kind: portable, backend: any}
probe: {name: qmv_share}
check: {rule: at_least, output: share, threshold: 0.3, unit: ratio}
---
id: weights-gb
title: CPM5 streams 0.694 GB per token
statement: The weights streamed per decode token add up to 0.694 GB.
source: {doc: decode-roofline-lookagain.md, section: "§2", figure: "CPM5-1B 0.694 GB"}
scope: {kind: portable, backend: any}
probe: {name: weight_bytes}
check: {rule: exact, output: gb, expected: 0.694, tolerance: 0.0016, unit: GB}
---
id: temp-zero-matches
title: Pure temperature never reproduces the curve sample
statement: No pure-temperature sample matches the curve-generated text exactly.
source: {doc: curve-bisector-routing.md, section: "§1", figure: "0 exact matches in 924"}
scope: {kind: portable, backend: any}
probe: {name: temp_match}
check: {rule: zero_rate, output: match_rate, threshold: 0.01, unit: rate}
---
id: draft-one
draft: true
title: TODO
statement: TODO restate
source: {doc: x.md, section: s, figure: "5 ms"}
scope: {kind: portable}
probe: {name: TODO}
check: {rule: at_most}
"""


def outcome(claim_id: str, verdict: str, statistic: float | None = None, low: float | None = None,
            high: float | None = None, unit: str | None = "ratio", *, item: str | None = None,
            reason: str = "", params: dict | None = None, computed: bool = False) -> ItemResult:
    decision = None
    if statistic is not None:
        decision = {"rule": "at_least", "statistic": statistic, "low": low, "high": high,
                    "confidence_level": 1.0 if computed else 0.95, "n": 1 if computed else 20, "alpha": 0.05,
                    "details": {"deterministic": True} if computed else {}}
    claim = {"id": claim_id, "check": {"rule": "at_least", "threshold": 0, "unit": unit}}
    return ItemResult.from_record({"claim_id": claim_id, "item_id": item or claim_id, "params": params or {},
                                   "verdict": verdict, "reason": reason or f"{verdict} (test)", "decision": decision,
                                   "claim": claim})


def make_store(path: Path, runs: list[tuple[str, list[ItemResult]]]) -> Path:
    with EvidenceStore(path) as store:
        for number, (machine_class, outcomes) in enumerate(runs):
            run_id = store.begin_run(machine={"device": machine_class}, machine_class=machine_class,
                                     run_id=f"run-{number}")
            for item in outcomes:
                store.record(run_id, item)
            store.finish_run(run_id)
    return path


@pytest.fixture
def claims_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "claims"
    folder.mkdir()
    (folder / "bw.yaml").write_text(CLAIM_YAML, encoding="utf-8")
    return folder


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return make_store(tmp_path / "store.sqlite", [
        (M1, [outcome("qmv-large-bw", "holds", 0.80, 0.78, 0.82)]),
        (CPU, [outcome("qmv-large-bw", "holds", 0.41, 0.38, 0.44),
               outcome("weights-gb", "holds", 0.6936, 0.6936, 0.6936, "GB")]),
    ])


def gate(tmp_path: Path, text: str, store_path: Path | None, claims_dir: Path, **options):
    doc = tmp_path / "docs" / "finding.md"
    doc.parent.mkdir(exist_ok=True)
    doc.write_text(text, encoding="utf-8")
    store = EvidenceStore(store_path, readonly=True) if store_path else None
    try:
        return check_docs([doc], store, claim_paths=[claims_dir], reports_dir=tmp_path / "reports", **options)
    finally:
        if store is not None:
            store.close()


def messages(report) -> list[str]:
    return [str(p) for p in report.problems]


def test_default_gating_class_is_the_latest_run(store_path):
    with EvidenceStore(store_path, readonly=True) as store:
        assert Evidence(store).gating_class == CPU


def test_wrong_quoted_number_fails_with_the_measured_interval(tmp_path, store_path, claims_dir):
    report = gate(tmp_path, "# F\n\nqmv reaches **74%** of raw bandwidth on large matrices. "
                            "<!-- claim: qmv-large-bw -->\n", store_path, claims_dir)
    assert not report.ok
    (line,) = messages(report)
    # 0.41 [0.38, 0.44] as a ratio is 41% [38%, 44%] in the figure's unit
    # the fix leads; no banner is offered for a figure (only for an overturned claim)
    assert re.match(r"^.*finding\.md:3:15: 74% ≠ measured 41% \[38%, 44%\]: write 41% — claim `qmv-large-bw`: "
                    r"stated \"74–88% of raw machine bandwidth\"; measured 41% \[38%, 44%\] n=20 on "
                    r"cpu/Test CPU 9xxx/16-32GiB \(run run-1\)", line), line
    assert "CORRECTION" not in line and len(line.split(" — ")[0].split(": ", 1)[1]) <= 200


@pytest.mark.parametrize("quote", ["**80%**", "~76%", "0.80x", "74–88%", "at least 74%", "0.78–0.82"])
def test_agreeing_quotes_pass(tmp_path, store_path, claims_dir, quote):
    # each overlaps both the stated 74–88% and the M1 Max's measured [78%, 82%]: within its printed
    # precision, 10% more for "~", a range by overlap, "at least" as a lower bound
    report = gate(tmp_path, f"On the M1 Max, qmv reaches {quote} of raw bandwidth. <!-- claim: qmv-large-bw -->\n",
                  store_path, claims_dir)
    assert report.ok, messages(report)


@pytest.mark.parametrize("quote", ["90%", "30x", "1000x", "at most 70%", "0.5x"])
def test_a_figure_on_the_claimed_side_of_a_threshold_is_not_enough(tmp_path, store_path, claims_dir, quote):
    # the claim's threshold is 30%: every quote is on or above it, none agrees with 74–88% and [78%, 82%]
    report = gate(tmp_path, f"On the M1 Max, qmv reaches {quote} of raw bandwidth. <!-- claim: qmv-large-bw -->\n",
                  store_path, claims_dir)
    assert [p.code for p in report.errors] == ["disagrees"], messages(report)


def test_a_figure_in_another_unit_than_the_claims_figure_is_compared(tmp_path, claims_dir):
    (claims_dir / "speedup.yaml").write_text(
        "id: speedup\ntitle: t\nstatement: s\nsource: {doc: d.md, section: s, figure: \"≥ 2\"}\n"
        "scope: {kind: portable, backend: any}\nprobe: {name: p}\n"
        "check: {rule: at_least, output: r, threshold: 2, unit: x}\n", encoding="utf-8")
    store = make_store(tmp_path / "s.sqlite", [(CPU, [outcome("speedup", "holds", 2.4, 2.2, 2.6, "x")])])
    assert gate(tmp_path, "It is 2.4x faster. <!-- claim: speedup -->\n", store, claims_dir).ok
    for quote in ("1.5x", "150%"):
        wrong = gate(tmp_path, f"It is {quote} faster. <!-- claim: speedup -->\n", store, claims_dir)
        assert [p.code for p in wrong.errors] == ["disagrees"], (quote, messages(wrong))
        assert wrong.errors[0].message.startswith(f"{quote} ≠ "), wrong.errors[0].message
        assert "claim `speedup`: stated \"≥ 2\"; measured " in wrong.errors[0].message


def test_a_figure_our_run_measured_is_checked_by_its_measured_marker(tmp_path, store_path, claims_dir):
    ok = gate(tmp_path, "On our CPU qmv reached 41% <!-- measured: qmv-large-bw on cpu -->.\n", store_path,
              claims_dir)
    assert ok.ok, messages(ok)
    wrong = gate(tmp_path, "On our CPU qmv reached 61% <!-- measured: qmv-large-bw on cpu -->.\n", store_path,
                 claims_dir)
    (line,) = messages(wrong)
    assert re.match(r"^.*finding\.md:1:24: figure 61% disagrees with qmv-large-bw: stated 74–88% of raw machine "
                    r"bandwidth / measured 41% \[38%, 44%\] n=20 on cpu/Test CPU 9xxx/16-32GiB \(run run-1\)$",
                    line), line


def test_a_marker_names_one_class_of_a_backend_by_a_prefix_with_spaces(tmp_path, claims_dir):
    """Two classes of one backend: `on cuda` takes the latest; `on cuda/NVIDIA H200` takes that card's run."""
    store = make_store(tmp_path / "s.sqlite", [
        ("cuda/NVIDIA H200/128-256GiB", [outcome("qmv-large-bw", "refuted", 0.25, 0.24, 0.27)]),
        ("cuda/NVIDIA H100 80GB HBM3/64-128GiB", [outcome("qmv-large-bw", "refuted", 0.34, 0.33, 0.35)]),
    ])

    def quoted(figure: str, on: str):
        return gate(tmp_path, f"On the H200 qmv reached {figure} <!-- measured: qmv-large-bw on {on} -->.\n", store,
                    claims_dir)

    assert quoted("0.25", "cuda/NVIDIA H200").ok
    assert quoted("0.25", "cuda/NVIDIA H200 run run-0").ok
    assert [p.code for p in quoted("0.25", "cuda").problems] == ["disagrees"]  # the H100 run is the latest
    wrong = quoted("0.34", "cuda/NVIDIA H200")
    assert [p.code for p in wrong.problems] == ["disagrees"]
    assert "on cuda/NVIDIA H200/128-256GiB (run run-0)" in messages(wrong)[0]


def test_gib_quote_is_converted_before_comparing(tmp_path, store_path, claims_dir):
    # measured 0.6936 GB = 0.646 GiB; a doc may quote either
    ok = gate(tmp_path, "CPM5 streams 0.646 GiB per token. <!-- claim: weights-gb -->\n", store_path, claims_dir)
    assert ok.ok, messages(ok)
    wrong = gate(tmp_path, "CPM5 streams 0.694 GiB per token. <!-- claim: weights-gb -->\n", store_path, claims_dir)
    assert [p.code for p in wrong.problems] == ["disagrees"]


def test_counts_are_compared_as_rates(tmp_path, claims_dir):
    # 0 of 924 observed: rate 0 with a 95% upper bound of 1 - 0.05**(1/924) = 0.00324
    store = make_store(tmp_path / "s.sqlite", [(CPU, [outcome("temp-zero-matches", "holds", 0.0, 0.0, 0.00324,
                                                              "rate")])])

    def run(quote: str):
        return gate(tmp_path, f"Temperature gives {quote}. <!-- claim: temp-zero-matches -->\n", store, claims_dir)

    assert run("0 exact matches in 924 samples").ok
    assert run("0 of 924").ok
    assert run("0%").ok
    for quote in ("9 of 924", "20 of 924", "0 of 900"):  # not the stated "0 of 924", or outside [0, 0.00324]
        wrong = run(quote)
        assert [p.code for p in wrong.problems] == ["disagrees"], quote
    assert "measured 0 [0, 0.00324] n=20" in run("20 of 924").problems[0].message


def test_missing_claim_fails_with_a_suggestion(tmp_path, store_path, claims_dir):
    report = gate(tmp_path, "Reaches 41%. <!-- claim: qmv-large-bws -->\n", store_path, claims_dir)
    (line,) = messages(report)
    assert line.endswith("unknown claim `qmv-large-bws` (did you mean `qmv-large-bw`?)")
    assert re.match(r"^.*finding\.md:1:14: ", line)


def test_broken_claim_file_is_reported_and_the_rest_still_checked(tmp_path, store_path, claims_dir):
    (claims_dir / "broken.yaml").write_text("id: broken\ntitle: t\n", encoding="utf-8")
    report = gate(tmp_path, "On the M1 Max, qmv reaches 80%. <!-- claim: qmv-large-bw -->\n", store_path, claims_dir)
    (problem,) = report.problems
    assert problem.code == "claim-file" and problem.path.endswith("broken.yaml")
    assert "missing required field" in problem.message


def test_claims_given_as_dicts(tmp_path, store_path):
    claim = {"id": "qmv-large-bw", "source": {"figure": "74–88%"}, "check": {"rule": "at_least", "threshold": 0.3,
                                                                              "unit": "ratio"}}
    doc = tmp_path / "f.md"
    doc.write_text("qmv reaches 74%. <!-- claim: qmv-large-bw -->\n", encoding="utf-8")
    with EvidenceStore(store_path, readonly=True) as store:
        report = check_docs([doc], store, claims=[claim])
    assert [p.code for p in report.problems] == ["disagrees"]


def test_draft_claim_cannot_be_cited(tmp_path, store_path, claims_dir):
    report = gate(tmp_path, "Takes 5 ms. <!-- claim: draft-one -->\n", store_path, claims_dir)
    assert [p.code for p in report.problems] == ["draft"]


@pytest.mark.parametrize("verdict", ["refuted", "stale", "inconclusive", "error"])
def test_verdicts_that_are_not_holds_quote_the_suggested_sentence(tmp_path, claims_dir, verdict):
    store = make_store(tmp_path / "s.sqlite", [(CPU, [outcome("qmv-large-bw", verdict, 0.2, 0.1, 0.25)])])
    corrections = tmp_path / "reports" / "corrections"
    corrections.mkdir(parents=True)
    # the shape `claimcheck report` writes: {"kind": ..., "replacement": "> **date CORRECTION ...** ..."}
    (corrections / "qmv-large-bw.json").write_text(json.dumps({"kind": "correction",
                                                               "replacement": "> CORRECTION:\n20%."}))
    report = gate(tmp_path, "qmv reaches 20%. <!-- claim: qmv-large-bw -->\n", store, claims_dir)
    (line,) = messages(report)
    if verdict == "refuted":  # the fix leads; the banner --fix writes is the gate's own, in prose
        assert line.split(": ", 1)[1].startswith("add a dated correction banner above this sentence"), line
        assert f"claim `qmv-large-bw` is refuted on {CPU}: refuted (test)" in line
    else:
        assert f"claim `qmv-large-bw` is {verdict} on {CPU}: {verdict} (test); suggested: > CORRECTION: 20%." in line


def test_missing_result_fails_unless_allowed(tmp_path, claims_dir):
    store = make_store(tmp_path / "s.sqlite", [(CPU, [outcome("weights-gb", "holds", 0.6936, 0.6936, 0.6936, "GB")])])
    report = gate(tmp_path, "qmv reaches 41%. <!-- claim: qmv-large-bw -->\n", store, claims_dir)
    assert [p.code for p in report.errors] == ["missing-result"]
    relaxed = gate(tmp_path, "qmv reaches 41%. <!-- claim: qmv-large-bw -->\n", store, claims_dir, allow_missing=True)
    assert relaxed.ok and [p.code for p in relaxed.warnings] == ["missing-result"]
    no_store = gate(tmp_path, "qmv reaches 41%. <!-- claim: qmv-large-bw -->\n", None, claims_dir)
    assert "no evidence store" in messages(no_store)[0]


def test_other_machine_figure_passes_only_when_the_sentence_names_it(tmp_path, store_path, claims_dir):
    def run(sentence: str):
        return gate(tmp_path, sentence + " <!-- claim: qmv-large-bw -->\n", store_path, claims_dir)

    # the M1 Max measured 0.80 [0.78, 0.82]; the gating CPU measured 0.41 [0.38, 0.44]
    assert run("On the M1 Max, qmv reaches 80% of raw bandwidth.").ok
    unnamed = run("qmv reaches 80% of raw bandwidth.")
    assert [p.code for p in unnamed.problems] == ["disagrees"] and "name it in the sentence" in unnamed.problems[0].message
    wrong_on_m1 = run("On the M1 Max, qmv reaches 86% of raw bandwidth.")  # stated 74–88%, measured [78%, 82%]
    assert [p.code for p in wrong_on_m1.problems] == ["disagrees"]
    assert f"measured 80% [78%, 82%] n=20 on {M1}" in wrong_on_m1.problems[0].message
    # no H200 results in the store: compared with the stated figure only
    assert run("On an H200, qmv reaches 86% of raw bandwidth.").ok
    assert not run("On an H200, qmv reaches 95% of raw bandwidth.").ok


def test_not_applicable_claim_needs_the_machine_named(tmp_path, claims_dir):
    store = make_store(tmp_path / "s.sqlite", [(CPU, [outcome("qmv-large-bw", "not-applicable")])])
    unnamed = gate(tmp_path, "qmv reaches 80%. <!-- claim: qmv-large-bw -->\n", store, claims_dir)
    assert [p.code for p in unnamed.problems] == ["verdict"] and "not applicable" in unnamed.problems[0].message
    named = gate(tmp_path, "On the M1 Max, qmv reaches 80%. <!-- claim: qmv-large-bw -->\n", store, claims_dir)
    assert named.ok, messages(named)


def test_grid_items_each_count(tmp_path, claims_dir):
    store = make_store(tmp_path / "s.sqlite", [(CPU, [
        outcome("qmv-large-bw", "holds", 0.74, 0.73, 0.75, item="qmv-large-bw[size_mib=256]", params={"size_mib": 256}),
        outcome("qmv-large-bw", "holds", 0.88, 0.87, 0.89, item="qmv-large-bw[size_mib=512]", params={"size_mib": 512}),
    ])])
    assert gate(tmp_path, "It reaches 74–88%. <!-- claim: qmv-large-bw -->\n", store, claims_dir).ok
    assert gate(tmp_path, "It reaches 88%. <!-- claim: qmv-large-bw -->\n", store, claims_dir).ok
    between = gate(tmp_path, "It reaches 80%. <!-- claim: qmv-large-bw -->\n", store, claims_dir)
    assert [p.code for p in between.problems] == ["disagrees"]
    assert "size_mib=256" in between.problems[0].message


def test_anchor_placement(tmp_path, store_path, claims_dir):
    text = (
        "Other sentence with 99%. qmv reaches 74% of raw bandwidth.\n<!-- claim: qmv-large-bw -->\n\n"
        "| probe | share |\n|---|---|\n| qmv large | 74% <!-- claim: qmv-large-bw --> |\n\n"
        "Floating.\n\n<!-- claim: qmv-large-bw -->\n"
    )
    report = gate(tmp_path, text, store_path, claims_dir)
    found = [(p.line, p.code or p.message.split(":")[0]) for p in report.problems]
    # after the full stop: anchors the sentence before it (99% is another sentence);
    # in a table: anchors its row; after a blank line: attached to nothing
    assert found == [(1, "disagrees"), (6, "disagrees"), (10, "claim anchor is not attached to a sentence")]


def test_figures_split_between_two_anchors(tmp_path, store_path, claims_dir):
    text = ("On the M1 Max qmv reaches 80% <!-- claim: qmv-large-bw --> and CPM5 streams 0.694 GB "
            "<!-- claim: weights-gb --> per token.\n")
    assert gate(tmp_path, text, store_path, claims_dir).ok


def test_machine_names():
    assert machines_named("On the Apple M1 Max and an H200, unlike the CPU or an RTX 4090") == [
        "Apple M1 Max", "H200", "CPU", "RTX 4090"]
    assert class_matches(M1, "Apple M1 Max") and not class_matches(M1, "M4 Pro")
    assert class_matches(CPU, "CPU") and not class_matches(M1, "CPU")


# --------------------------------------------------------------------------- changed lines


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                   capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    git(root, "init", "-q")
    (root / "docs" / "a.md").write_text("Old figure 300 GB/s stays.\n", encoding="utf-8")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    return root


def test_unanchored_figure_on_a_changed_line_is_reported(repo, store_path, claims_dir):
    doc = repo / "docs" / "a.md"
    doc.write_text("Old figure 300 GB/s stays.\n\nNew: qmv now reaches 280 GB/s on large matrices.\n"
                   "Anchored: on the M1 Max it reaches 80%. <!-- claim: qmv-large-bw -->\n", encoding="utf-8")
    (repo / "docs" / "new.md").write_text("Untracked doc: 5 ms per token.\n", encoding="utf-8")

    def run(**options):
        with EvidenceStore(store_path, readonly=True) as store:
            return check_docs([repo / "docs"], store, claim_paths=[claims_dir], changed_since="HEAD", **options)

    report = run()
    assert report.ok
    found = [(Path(p.path).name, p.line, p.column, p.severity, p.code) for p in report.problems]
    # line 1 did not change; line 4 cites a claim; the untracked doc counts as changed
    assert found == [("a.md", 3, 22, "warning", "unverified"), ("new.md", 1, 16, "warning", "unverified")]
    assert "280 GB/s is unverified: cite the claim that checks it (`<!-- claim: ID -->`)" in str(report.problems[0])
    strict = run(strict=True)
    assert not strict.ok and {p.severity for p in strict.problems} == {"error"}


def test_changed_since_a_bad_ref(repo, claims_dir):
    with pytest.raises(GitError, match="names no commit"):
        check_docs([repo / "docs"], None, claim_paths=[claims_dir], changed_since="no-such-branch")


# --------------------------------------------------------------------------- command line


def test_command_line(tmp_path, store_path, claims_dir, capsys):
    doc = tmp_path / "f.md"
    doc.write_text("qmv reaches 74% of raw bandwidth. <!-- claim: qmv-large-bw -->\n", encoding="utf-8")
    args = [str(doc), "--store", str(store_path), "--claims", str(claims_dir), "--reports", str(tmp_path)]
    assert main(args) == 1
    out, err = capsys.readouterr()
    assert f"{doc}:1:13: 74% ≠ measured 41% [38%, 44%]: write 41%" in out
    assert "1 claim anchor(s) in 1 doc(s) on cpu/Test CPU 9xxx/16-32GiB: 1 error(s)" in err
    doc.write_text("qmv reaches 80% of raw bandwidth. <!-- claim: qmv-large-bw -->\n", encoding="utf-8")
    assert main(args + ["--machine-class", M1]) == 0
    assert main(args) == 1  # 80% is not what the CPU measured
    assert main([str(doc), "--store", str(tmp_path / "absent.sqlite")]) == 2
    capsys.readouterr()


def test_comments_in_code_are_not_anchors(tmp_path, store_path, claims_dir):
    text = ("# F\n\nWrite `<!-- claim: nosuch -->` after the sentence; ``a ` <!-- claim: nosuch -->`` too.\n\n"
            "```markdown\nqmv reaches 95%. <!-- claim: qmv-large-bw -->\n```\n\n"
            "    <!-- claim: nosuch -->\n\n"
            "| how | example |\n|---|---|\n| anchor | `<!-- claim: nosuch -->` |\n")
    report = gate(tmp_path, text, store_path, claims_dir)
    assert report.ok and report.anchors == 0, messages(report)
    real = gate(tmp_path, text + "\nqmv reaches 95%. <!-- claim: qmv-large-bw -->\n", store_path, claims_dir)
    assert real.anchors == 1 and [p.code for p in real.problems] == ["disagrees"]
    assert real.problems[0].line == 15, "the real anchor is found at its own line after the code"


def test_a_computed_claim_checks_figures_whatever_machine_the_sentence_names(tmp_path, claims_dir):
    store = make_store(tmp_path / "s.sqlite", [
        (CPU, [outcome("weights-gb", "holds", 0.6936, 0.6936, 0.6936, "GB", computed=True)]),
        (M1, [outcome("qmv-large-bw", "holds", 0.80, 0.78, 0.82)]),
    ])

    def run(sentence: str, **options):
        return gate(tmp_path, sentence + " <!-- claim: weights-gb -->\n", store, claims_dir, **options)

    assert run("On the M1 Max, CPM5-1B streams 0.694 GB per token.").ok
    for options in ({}, {"machine_class": M1}, {"machine_class": CPU}):
        wrong = run("On the M1 Max, CPM5-1B streams 0.794 GB per token.", **options)
        assert [p.code for p in wrong.problems] == ["disagrees"], (options, messages(wrong))
        assert wrong.problems[0].message.startswith("0.794 GB ≠ computed 0.694 GB [0.692 GB, 0.695 GB]: write 0.694 GB — "
                                                    "claim `weights-gb`: stated \"CPM5-1B 0.694 GB\""), wrong.problems[0]
        assert "the same on every machine" in wrong.problems[0].message
    # a measured (not computed) figure still follows the machine the sentence names
    def measured(sentence: str):
        return gate(tmp_path, sentence + " <!-- claim: qmv-large-bw -->\n", store, claims_dir, machine_class=M1)

    assert [p.code for p in measured("qmv reaches 95% of raw bandwidth.").problems] == ["disagrees"]
    assert measured("On the H200, qmv reaches 85% of raw bandwidth.").ok, "cited for a machine not measured here"


def test_each_computed_item_is_read_from_the_newest_run_that_computed_it(tmp_path):
    """A run that computed one item (a shard, one selected item) does not hide the claim's other items."""
    import dataclasses

    def item(name: str, value: float, wording: str = "w1") -> ItemResult:
        result = outcome("weights-gb", "holds", value, value, value, "GB", computed=True, item=f"weights-gb[{name}]")
        return dataclasses.replace(result, claim=dataclasses.replace(result.claim, content_hash=wording))

    store = make_store(tmp_path / "s.sqlite", [
        (CPU, [item("a", 1.0), item("b", 2.0)]),
        (M1, [item("a", 1.5)]),
        (CPU, [item("old", 9.0, wording="w0")]),
        (CPU, [item("b", 2.5)]),
    ])
    with EvidenceStore(store, readonly=True) as opened:
        rows = Evidence(opened, CPU).computed("weights-gb")
        assert {row.item_id: (row.run_id, row.result.decision.statistic) for row in rows} == {
            "weights-gb[a]": ("run-1", 1.5), "weights-gb[b]": ("run-3", 2.5)}


def test_a_fresh_clone_gates_on_the_committed_profiles(tmp_path, claims_dir, monkeypatch, capsys):
    profiles = tmp_path / "reports" / "profiles"
    profiles.mkdir(parents=True)
    make_store(profiles / "cpu.sqlite", [(CPU, [outcome("weights-gb", "holds", 0.6936, 0.6936, 0.6936, "GB",
                                                        computed=True)])])
    before = (profiles / "cpu.sqlite").read_bytes()
    doc = tmp_path / "docs" / "d.md"
    doc.parent.mkdir()
    doc.write_text("CPM5-1B streams 0.694 GB per token. <!-- claim: weights-gb -->\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["docs", "--claims", str(claims_dir)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == (f"claimcheck docs: evidence committed ({Path('reports/profiles/cpu.sqlite')}); gating on machine "
                     f"class {CPU} (the store's latest run; it has no run of this machine's class "
                     f"{this_machine_class(None)}); runs run-0"), first
    doc.write_text("CPM5-1B streams 0.794 GB per token. <!-- claim: weights-gb -->\n", encoding="utf-8")
    assert main(["docs", "--claims", str(claims_dir)]) == 1
    assert (profiles / "cpu.sqlite").read_bytes() == before, "the committed profile is never written"
    assert not (tmp_path / "reports" / "claimcheck.sqlite").exists()


BANNER = "> **2026-12-01 CORRECTION (cpu)** — measured 20%, not ≥ 30%; the claim does not hold on this machine."


def _refuted_store(tmp_path: Path) -> Path:
    store = make_store(tmp_path / "s.sqlite", [(CPU, [outcome("qmv-large-bw", "refuted", 0.2, 0.1, 0.25)])])
    corrections = tmp_path / "reports" / "corrections"
    corrections.mkdir(parents=True, exist_ok=True)
    (corrections / "qmv-large-bw.json").write_text(json.dumps({"kind": "correction", "replacement": BANNER}))
    return store


def test_a_refuted_claim_needs_its_sentence_corrected_in_the_doc(tmp_path, claims_dir):
    store = _refuted_store(tmp_path)
    sentence = "qmv reaches 20% of raw bandwidth. <!-- claim: qmv-large-bw -->\n"
    bare = gate(tmp_path, "# F\n\n" + sentence, store, claims_dir)
    assert [p.code for p in bare.errors] == ["uncorrected"]
    assert bare.errors[0].message.startswith("add a dated correction banner above this sentence (`claimcheck docs "
                                             "--fix` inserts one) or strike it through")
    assert gate(tmp_path, "# F\n\n" + BANNER + "\n\n" + sentence, store, claims_dir).ok
    assert gate(tmp_path, "# F\n\n~~qmv reaches 20% of raw bandwidth.~~ <!-- claim: qmv-large-bw -->\n", store,
                claims_dir).ok
    undated = gate(tmp_path, "# F\n\n> **CORRECTION** — wrong.\n\n" + sentence, store, claims_dir)
    assert [p.code for p in undated.errors] == ["uncorrected"], "a banner carries its date"


def test_a_banner_above_a_holding_claim_is_an_error(tmp_path, store_path, claims_dir):
    report = gate(tmp_path, "# F\n\n" + BANNER + "\n\nqmv reaches 41%. <!-- claim: qmv-large-bw -->\n", store_path,
                  claims_dir)
    assert [p.code for p in report.errors] == ["needless-correction"]


def test_inconclusive_is_a_warning_unless_strict(tmp_path, claims_dir):
    store = make_store(tmp_path / "s.sqlite", [(CPU, [outcome("qmv-large-bw", "inconclusive", 0.3, 0.1, 0.5)])])
    text = "qmv reaches 30%. <!-- claim: qmv-large-bw -->\n"
    relaxed = gate(tmp_path, text, store, claims_dir)
    assert relaxed.ok and [p.code for p in relaxed.warnings] == ["unconfirmed"]
    assert [p.code for p in gate(tmp_path, text, store, claims_dir, strict=True).errors] == ["unconfirmed"]


def test_fix_inserts_the_suggested_banner_and_the_gate_then_passes(tmp_path, claims_dir, monkeypatch, capsys):
    store = _refuted_store(tmp_path)
    doc = tmp_path / "docs" / "d.md"
    doc.parent.mkdir()
    doc.write_text("# F\n\nIntro.\nqmv reaches 20% of raw bandwidth. <!-- claim: qmv-large-bw -->\nMore.\n",
                   encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    args = ["docs", "docs", "--store", str(store), "--claims", str(claims_dir), "--machine-class", CPU]
    assert main(args) == 1
    assert main([*args, "--fix"]) == 0
    assert "inserted 1 correction banner(s)" in capsys.readouterr().err
    text = doc.read_text(encoding="utf-8")
    banner = text.split("\n")[2]
    # a banner in prose: a date, the class, the measured figures with their units, no reprs
    assert re.fullmatch(r"> \*\*\d{4}-\d\d-\d\d CORRECTION \(cpu/Test CPU 9xxx/16-32GiB\)\*\* — measured 0\.2x "
                        r"\[0\.1x, 0\.25x\] \(claim `qmv-large-bw`\); the sentence below does not hold there\.", banner), banner
    assert text.startswith("# F\n\n" + banner + "\n\nIntro.\nqmv reaches 20%")
    assert main([*args, "--fix"]) == 0 and doc.read_text(encoding="utf-8").count("CORRECTION") == 1


def test_on_a_vm_runner_a_claim_it_cannot_measure_is_cited_with_its_committed_evidence(tmp_path, store_path,
                                                                                       claims_dir):
    vm = make_store(tmp_path / "vm.sqlite", [("metal/Apple Paravirtual device/<8GiB",
                                              [outcome("weights-gb", "holds", 0.6936, 0.6936, 0.6936, "GB")])])
    doc = tmp_path / "docs" / "vm.md"
    doc.parent.mkdir(exist_ok=True)
    doc.write_text("On the M1 Max qmv reaches 80%. <!-- claim: qmv-large-bw -->\n", encoding="utf-8")
    with EvidenceStore(vm, readonly=True) as here, EvidenceStore(store_path, readonly=True) as committed:
        evidence = Evidence(here)
        assert not check_docs([doc], evidence, claim_paths=[claims_dir]).ok, "without the flag: no result is an error"
        evidence.committed = Evidence(committed)
        report = check_docs([doc], evidence, claim_paths=[claims_dir])
    assert report.ok, messages(report)
    (warning,) = report.warnings
    assert warning.code == "not-measurable"
    assert ("claim `qmv-large-bw` is not measurable on this runner (VM) (metal/Apple Paravirtual device/<8GiB); "
            f"committed evidence: holds on {M1} (run run-0)") in warning.message
