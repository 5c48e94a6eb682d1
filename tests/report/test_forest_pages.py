"""Forest pictures per claims pack: named after the first folder under the claims root, split when too tall."""

from __future__ import annotations

import io

from claimcheck.report import build_reports
from claimcheck.report.canvas import DPI
from claimcheck.report.forest import LEGEND_IN, PANEL_IN, ROW_IN, TALL_ROW_IN, draw, panels
from claimcheck.report.claim_paths import pack_names
from claimcheck.report.forest_pages import FEWEST_ROWS, MAX_HEIGHT_IN, pages

PNG = b"\x89PNG\r\n\x1a\n"


def test_a_pack_is_the_first_folder_under_the_claims_root() -> None:
    found = pack_names(["/repo/claims/curves/routing.yaml", "/repo/claims/curves/deep/more.yaml",
                        "/repo/claims/roofline/bandwidth.yaml", "/repo/claims/top.yaml"])
    assert found == {"/repo/claims/curves/routing.yaml": "curves", "/repo/claims/curves/deep/more.yaml": "curves",
                     "/repo/claims/roofline/bandwidth.yaml": "roofline", "/repo/claims/top.yaml": "claims"}


def test_a_flat_or_otherwise_named_claims_folder_is_one_pack_named_after_it() -> None:
    assert set(pack_names(["claims/a.yaml", "claims/b.yaml"]).values()) == {"claims"}
    other = pack_names(["/u/specs/a.yaml", "/u/specs/b.yaml"])
    assert set(other.values()) == {"specs"}, "no folder named claims: the folder the files share"
    nested = pack_names(["/u/specs/fast/a.yaml", "/u/specs/slow/b.yaml"])
    assert nested == {"/u/specs/fast/a.yaml": "fast", "/u/specs/slow/b.yaml": "slow"}
    assert pack_names(["/u/claims/odd name!/a.yaml"]) == {"/u/claims/odd name!/a.yaml": "odd-name"}
    assert pack_names(["<memory>", "/u/specs/a.yaml"]) == {"<memory>": "claims", "/u/specs/a.yaml": "specs"}


def _claim(synthetic, claim_id: str, pack: str, threshold: float = 0.74):
    return synthetic.claim_record(claim_id, path=f"/repo/claims/{pack}/{claim_id}.yaml",
                                  check={"rule": "at_least", "output": "qmv_gbps", "threshold": threshold,
                                         "unit": "GB/s", "alpha": 0.05})


def _run(recorded, synthetic, counts: dict[str, int]):
    """``counts[pack]`` decided items per pack, one claim each, plus an undecided one that draws nothing."""
    outcomes = []
    for pack, count in counts.items():
        for index in range(count):
            claim_id = f"{pack}-claim-{index:03d}"
            stat = 0.5 + index % 7 * 0.1
            outcomes.append(synthetic.outcome(claim_id, item=None, claim=_claim(synthetic, claim_id, pack),
                                              verdict="holds" if stat >= 0.74 else "refuted", statistic=stat,
                                              low=stat - 0.05, high=stat + 0.05))
    outcomes.append(synthetic.outcome("undecided", item=None, claim=_claim(synthetic, "undecided", "public"),
                                      verdict="error", statistic=None, low=None, high=None, reason="boom"))
    return recorded(outcomes)


def test_one_picture_per_pack_sorted_and_a_tall_pack_split_without_losing_a_row(recorded, synthetic) -> None:
    store, run_id = _run(recorded, synthetic, {"roofline": 3, "arithmetic": 170, "curves": 2})
    laid_out = pages(store.results(run_id))
    assert [p.name for p in laid_out] == ["arithmetic-1", "arithmetic-2", "arithmetic-3", "curves", "roofline"]
    assert [p.title for p in laid_out][:3] == ["arithmetic (1 of 3)", "arithmetic (2 of 3)", "arithmetic (3 of 3)"]
    for page in laid_out:
        assert sum(panel.height for panel in page.panels) + LEGEND_IN <= MAX_HEIGHT_IN, page.name
    arithmetic = [row.claim_id for p in laid_out[:3] for panel in p.panels for row in panel.rows]
    assert sorted(arithmetic) == [f"arithmetic-claim-{i:03d}" for i in range(170)], "every row once, none lost"
    assert [panel.continued for p in laid_out[:3] for panel in p.panels] == [False, True, True]
    first = laid_out[0]
    assert sum(panel.height for panel in first.panels) + LEGEND_IN + ROW_IN > MAX_HEIGHT_IN, "a cut fills its picture"
    assert min(p.rows for p in laid_out[:3]) >= FEWEST_ROWS, "no picture holds a stray row or two"


def test_rows_with_two_line_ids_are_taller_so_labels_never_touch(recorded, synthetic) -> None:
    long_id = "identity-curve-is-temperature-one-across-models"
    outcomes = [synthetic.outcome(long_id, item=f"model={name}", claim=_claim(synthetic, long_id, "curves"),
                                  statistic=0.8, low=0.75, high=0.85) for name in ("smollm2-135m-instruct", "gemma")]
    short = [synthetic.outcome("short", item=None, claim=_claim(synthetic, "short", "curves"), statistic=0.8,
                               low=0.75, high=0.85)]
    store, run_id = recorded(outcomes + short)
    rows = store.results(run_id)
    (tall,) = panels([r for r in rows if r.claim_id == long_id])
    (flat,) = panels([r for r in rows if r.claim_id == "short"])
    assert tall.row_height == TALL_ROW_IN and flat.row_height == ROW_IN < TALL_ROW_IN
    (together,) = panels(rows)
    assert abs(together.height - (TALL_ROW_IN * 3 + PANEL_IN)) < 1e-9, "one two-line id makes the panel's rows tall"


def test_a_picture_is_as_tall_as_its_panels_say(recorded, synthetic) -> None:
    store, run_id = _run(recorded, synthetic, {"curves": 5})
    (page,) = pages(store.results(run_id))
    png = draw(page.panels)
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        expected = round((sum(panel.height for panel in page.panels) + LEGEND_IN) * DPI)
        assert abs(image.size[1] - expected) <= 1, (image.size, expected)
    assert round(MAX_HEIGHT_IN * DPI) <= 3000, "the tallest picture stays under about 3,000 px"


def test_the_report_writes_a_picture_per_pack_and_drops_stale_ones(tmp_path, recorded, synthetic) -> None:
    store, run_id = _run(recorded, synthetic, {"roofline": 2, "curves": 3})
    out = tmp_path / "reports"
    (out / "forest").mkdir(parents=True)
    (out / "forest.png").write_bytes(PNG)
    (out / "forest" / "gone.png").write_bytes(PNG)
    result = build_reports(store, run_id, out, probes={}, docs=[])
    assert result.forests == [out / "forest" / "curves.png", out / "forest" / "roofline.png"]
    assert sorted(p.name for p in (out / "forest").iterdir()) == ["curves.png", "roofline.png"]
    assert not (out / "forest.png").exists(), "the single picture of an earlier layout is removed"
    assert all(p.read_bytes().startswith(PNG) for p in result.forests)
    markdown = (out / "index.md").read_text(encoding="utf-8")
    assert markdown.index("](forest/curves.png)") < markdown.index("](forest/roofline.png)")
    page = (out / "index.html").read_text(encoding="utf-8")
    toc = page[page.index('<nav class="toc"'):page.index("</nav>")]
    assert '<a href="#forest-curves">curves</a>' in toc and '<a href="#forest-roofline">roofline</a>' in toc
    assert '<h3 id="forest-curves">Forest plot: curves</h3>' in page
    assert page.count('alt="Forest plot: ') == 2

    none = build_reports(store, run_id, out, plots=False, probes={}, docs=[])
    assert none.forests == [] and list((out / "forest").iterdir()) == [], "no pictures: none left from before"
