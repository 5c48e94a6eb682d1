"""Each claim's history as inline SVG: estimate and interval over runs, one colour per machine class."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from claimcheck.report import build_reports
from claimcheck.report.canvas import COLOURS
from claimcheck.report.html_history import CLASS_COLOURS, history_charts

SVG = "{http://www.w3.org/2000/svg}"


def _history(recorded, synthetic):
    """Three runs of qmv-large-bw (two on class A, one on class B) and a claim never measured with an interval."""
    def no_figure():
        return synthetic.outcome("no-figure", item=None, verdict="error", statistic=None, low=None, high=None,
                                 reason="<b>boom</b>", claim=synthetic.claim_record("no-figure"))

    recorded([synthetic.outcome(item="size_mib=256", verdict="refuted", statistic=0.41, low=0.38, high=0.44),
              no_figure()])
    recorded([synthetic.outcome(item="size_mib=256", verdict="holds", statistic=0.86, low=0.82, high=0.9,
                                machine=synthetic.MACHINE_B, machine_class=synthetic.CLASS_B)],
             machine_class=synthetic.CLASS_B, machine=synthetic.MACHINE_B)
    return recorded([synthetic.outcome(item="size_mib=256", verdict="inconclusive", statistic=0.7, low=0.6,
                                       high=0.8), no_figure()])


def _svg(markup: str) -> ET.Element:
    start = markup.index('<svg class="history-chart"')
    return ET.fromstring(markup[start:markup.index("</svg>", start) + len("</svg>")]
                         .replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))


def test_dots_follow_the_estimates_in_run_order_with_class_and_verdict_colours(recorded, synthetic) -> None:
    store, _ = _history(recorded, synthetic)
    rows = store.history("qmv-large-bw")
    html = "\n".join(history_charts(rows, [synthetic.CLASS_A, synthetic.CLASS_B]))
    svg = _svg(html)
    dots = svg.findall(f".//{SVG}circle")
    assert [d.get("fill") for d in dots] == [COLOURS[v] for v in ("refuted", "holds", "inconclusive")], "run order"
    assert [d.get("stroke") for d in dots] == [CLASS_COLOURS[0], CLASS_COLOURS[1], CLASS_COLOURS[0]]
    xs = [float(d.get("cx")) for d in dots]
    ys = [float(d.get("cy")) for d in dots]
    assert xs == sorted(xs) and len(set(xs)) == 3, "x is the run, in order of its start"
    assert ys[1] < ys[2] < ys[0], "a larger estimate sits higher (0.86 > 0.70 > 0.41)"
    threshold = [line for line in svg.iter(f"{SVG}line") if line.get("stroke-dasharray")]
    assert len(threshold) == 1, "the claim's at-least threshold is one dashed line"
    y_bound = float(threshold[0].get("y1"))
    assert ys[1] < y_bound < ys[0], "0.74 lies between the refuted 0.41 and the holding 0.86"
    assert synthetic.CLASS_A in html and synthetic.CLASS_B in html and "claimed threshold" in html, "the legend"


def test_a_band_claim_draws_its_band_and_figures_without_interval_draw_nothing(recorded, synthetic) -> None:
    claim = synthetic.claim_record("same-speed", check={"rule": "equivalent", "output": "qmv_gbps",
                                                        "reference": "raw_gbps", "margin": 0.05,
                                                        "scale": "log-ratio", "paired": True, "alpha": 0.05})
    store, _ = recorded([synthetic.outcome("same-speed", item=None, verdict="holds", statistic=1.01, low=0.98,
                                           high=1.03, claim=claim)])
    svg = _svg("".join(history_charts(store.history("same-speed"), [synthetic.CLASS_A])))
    (band,) = svg.findall(f"{SVG}rect")
    (dot,) = svg.findall(f".//{SVG}circle")
    top, height = float(band.get("y")), float(band.get("height"))
    assert top < float(dot.get("cy")) < top + height, "1.01 lies inside the band [1/1.05, 1.05]"
    _history(recorded, synthetic)
    assert history_charts(store.history("no-figure"), [synthetic.CLASS_A]) == []


def test_each_claim_section_charts_its_history_above_the_table(tmp_path, recorded, synthetic) -> None:
    store, run_id = _history(recorded, synthetic)
    out = tmp_path / "reports"
    build_reports(store, run_id, out, probes={}, docs=[])
    page = (out / "index.html").read_text(encoding="utf-8")
    section = page[page.index('id="claim-qmv-large-bw"'):]
    section = section[:section.index("</details>")]
    chart = section[section.index('<svg class="history-chart"'):]
    assert section.count('<svg class="history-chart"') == 1 and chart[:chart.index("</svg>")].count("<circle") == 3
    assert section.index('class="history-chart"') < section.index('<table class="history">'), "chart, then table"
    other = page[page.index('id="claim-no-figure"'):]
    assert "history-chart" not in other[:other.index("</details>")], "no interval, no chart"
    assert "<b>boom</b>" not in page
    assert not re.search(r"<script(?![^>]*>\s*\(function)", page), "charts add no script"
