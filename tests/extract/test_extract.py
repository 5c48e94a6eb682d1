"""Drafting claims from a doc: which figures become drafts, with which guessed rule.

The fixture doc imitates the source write-ups (tables with units in cells or headers, ranges,
"~", "0 ... in N", µs/ms/GB/s/tok/s/%/MiB); every expected draft below is read off its text.
"""

from __future__ import annotations

import math

import pytest
import yaml

from claimcheck.extract import dump_drafts, extract, main
from claimcheck.claims.loader import Draft, load_claims_text
from claimcheck.claims.schema import valid_id

DOC = """\
# Kernel notes

Machine: Apple M1 Max, idle.

## 1. Bandwidth

| probe | result |
|---|---|
| qmv 4-bit GEMV 540 MiB | 2.12 ms → **268 GB/s** |
| dependent op chain | **~10–15 µs/op** |

So the kernel reaches **74–88%** of raw bandwidth on large matrices.

## 2. Decode

| model | measured ms (tok/s) | share |
|---|---|---|
| small | 4.06 (246) | **64%** |

Decode takes at most 4.1 ms/tok. Prefill runs at 689 tok/s.
The compiled arm is unchanged (+0.07 ms).
Out of 924 samples we saw 0 exact matches.
A 1.3 MiB matrix reads at ~100 GB/s.
Code like `a 12 ms call` and <!-- 9 GB/s --> comments are not figures.
"""


def summary(drafts):
    out = []
    for draft in drafts:
        check = draft["check"]
        number = check.get("threshold", check.get("expected", check.get("margin")))
        out.append((draft["source"]["line"], check["rule"], number, check.get("unit")))
    return out


def test_drafts_per_sentence_and_cell():
    drafts = extract(DOC, "kernel-notes.md")
    # 1 - 0.05**(1/924): the 95% upper bound on a rate after 0 hits in 924 tries
    zero_bound = round(1 - 0.05 ** (1 / 924), 6)
    assert summary(drafts) == [
        (9, "exact", 268, "GB/s"),  # a table number: exact
        (10, "at_least", 10, "µs/op"),  # a range: a pair of bounds
        (10, "at_most", 15, "µs/op"),
        (12, "ratio", 0.74, None),  # "reaches" a range is a band; "% of" makes each bound a ratio
        (12, "ratio", 0.88, None),
        (18, "exact", 4.06, "ms"),  # the column header gives the unit
        (18, "exact", 64, "%"),
        (20, "at_most", 4.1, "ms/tok"),  # "at most"
        (20, "at_least", 689, "tok/s"),  # no cue: tok/s is higher-is-better
        (21, "equivalent", None, "ms"),  # "unchanged"
        (22, "zero_rate", zero_bound, None),  # "0 exact matches" with 924 samples in the sentence
        (23, "exact", 1.3, "MiB"),  # the sentence's first figure; a size is exact
    ]
    assert math.isclose(zero_bound, 0.003237, rel_tol=1e-3)


def test_per_figure_drafts_every_group():
    drafts = extract(DOC, "kernel-notes.md", per="figure")
    rows = summary(drafts)
    assert (18, "exact", 246, "tok/s") in rows  # the parenthesised number takes the header's second unit
    assert (23, "at_least", 100, "GB/s") in rows  # "~100 GB/s": approximate, so not exact
    assert all(row[0] != 24 for row in rows)  # code spans and comments are not figures


def test_draft_fields():
    drafts = extract(DOC, "kernel-notes.md")
    first = drafts[0]
    assert first["draft"] is True and first["probe"] == {"name": "TODO"}
    assert first["statement"].startswith("TODO: restate")
    assert first["source"] == {"doc": "kernel-notes.md", "section": "1. Bandwidth",
                               "figure": "qmv 4-bit GEMV 540 MiB | result: 2.12 ms → 268 GB/s", "line": 9}
    assert first["check"] == {"rule": "exact", "output": "TODO", "expected": 268, "tolerance": 0.5, "unit": "GB/s"}
    assert first["scope"] == {"kind": "as-stated", "backend": "metal", "device": "*M1 Max*"}
    pair = drafts[1:3]
    assert [d["id"][-4:] for d in pair] == ["-min", "-max"]
    assert pair[0]["source"]["figure"].endswith("~10–15 µs/op")
    ids = [d["id"] for d in drafts]
    assert len(set(ids)) == len(ids) and all(valid_id(i) for i in ids)


def test_drafts_load_as_drafts_and_say_what_is_missing():
    drafts = extract(DOC, "kernel-notes.md")
    loaded = load_claims_text(dump_drafts(drafts), "drafts.yaml", with_drafts=True)
    assert len(loaded) == len(drafts) and all(isinstance(d, Draft) for d in loaded)
    assert {"probe.name (still TODO)", "statement (still a placeholder)"} <= set(loaded[0].missing)
    assert load_claims_text(dump_drafts(drafts), "drafts.yaml") == []  # a draft never runs


def test_portable_scope_without_a_machine():
    drafts = extract("Takes 5 ms.\n", "x.md")
    assert drafts[0]["scope"] == {"kind": "portable", "backend": "any"}
    assert drafts[0]["source"]["section"] == "(top)"


def test_bad_granularity():
    with pytest.raises(ValueError, match="per must be"):
        extract(DOC, "x.md", per="paragraph")


def test_command_line(tmp_path, capsys):
    doc = tmp_path / "kernel-notes.md"
    doc.write_text(DOC, encoding="utf-8")
    assert main([str(doc)]) == 0
    printed = list(yaml.safe_load_all(capsys.readouterr().out))
    assert len(printed) == len(extract(DOC, "kernel-notes.md"))
    folder = tmp_path / "drafts"
    assert main([str(doc), "-o", str(folder)]) == 0
    files = sorted(folder.glob("*.yaml"))
    assert len(files) == len(printed)
    files[0].write_text("# edited by hand\n", encoding="utf-8")
    assert main([str(doc), "-o", str(folder)]) == 0  # existing files are kept
    assert files[0].read_text(encoding="utf-8") == "# edited by hand\n"
    assert f"0 draft(s) written to {folder}, {len(files)} existing file(s) kept" in capsys.readouterr().err
    assert main([str(tmp_path / "absent.md")]) == 2
