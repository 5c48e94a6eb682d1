"""The navigable HTML report: contents, items table first, claim sections with history, doc links, machines.

The browser test renders a report built from a small store (written through the store's public API) in
headless Chromium, with a measuring script added to the page's own Content-Security-Policy by hash: the
page must not overflow sideways (with every claim section open), every image must load, each claim's history
chart must render, and the page's own script must filter and sort.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from claimcheck.probing.registry import Output, RegisteredProbe
from claimcheck.probing.plots import PackPlot
from claimcheck.report import build_reports


def _never_called(ctx: object, **params: object) -> dict[str, list[float]]:
    raise AssertionError("the report never runs a probe")


SWEEP = RegisteredProbe("qmv", _never_called, {"qmv_gbps": Output("GB/s"), "raw_gbps": Output("GB/s")},
                        plot=PackPlot("qmv_bandwidth", "Bandwidth vs size", "sweep", outputs=("qmv_gbps", "raw_gbps"),
                                      reference="raw_gbps", x="size_mib", x_unit="MiB"))


def _docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "findings.md").write_text(
        "# Findings\n\nSome context first.\n\n"
        "qmv streams weights at 0.74x of raw read on large matrices. <!-- claim: qmv-large-bw -->\n\n"
        "An unrelated sentence.\n", encoding="utf-8")
    return folder


def _store(recorded, synthetic):
    """Two runs on one machine class and one on another, so the claim has history and a comparison."""
    outcomes = [synthetic.outcome(item=f"size_mib={size}", verdict=verdict, statistic=stat, low=stat - 0.03,
                                  high=stat + 0.03) for size, verdict, stat in ((64, "holds", 0.8), (256, "refuted", 0.41))]
    recorded(outcomes)
    other = [synthetic.outcome(item="size_mib=256", verdict="holds", statistic=0.86, low=0.82, high=0.9,
                               machine=synthetic.MACHINE_B, machine_class=synthetic.CLASS_B)]
    recorded(other, machine_class=synthetic.CLASS_B, machine=synthetic.MACHINE_B)
    latest = [synthetic.outcome(item=f"size_mib={size}", verdict=verdict, statistic=stat, low=stat - 0.02,
                                high=stat + 0.02) for size, verdict, stat in ((64, "holds", 0.79), (256, "refuted", 0.43))]
    latest.append(synthetic.outcome("metal-only", item=None, verdict="not-applicable", reason="backend metal",
                                    claim=synthetic.claim_record("metal-only")))
    return recorded(latest)


def test_page_order_contents_and_claim_sections(tmp_path, recorded, synthetic) -> None:
    store, run_id = _store(recorded, synthetic)
    out = tmp_path / "reports"
    build_reports(store, run_id, out, probes={"qmv": SWEEP}, docs=[_docs(tmp_path)])
    page = (out / "index.html").read_text(encoding="utf-8")
    ids = re.findall(r'<h2 id="([^"]+)"', page)
    assert ids[0] == "items", "the items table comes first"
    assert ids.index("items") < ids.index("corrections") < ids.index("claims") < ids.index("machines")
    toc = page[page.index('<nav class="toc"'):page.index("</nav>")]
    assert all(f'href="#{anchor}"' in toc for anchor in ids), "the contents list every section"
    section = page[page.index('id="claim-qmv-large-bw"'):]
    section = section[:section.index("</details>")]
    assert 'href="../docs/findings.md#L5"' in section and "0.74x of raw read" in section
    history = section[section.index('class="history"'):]
    assert history.count("<tr>") == 1 + 5, "header plus every stored item of the claim across the three runs"
    assert synthetic.CLASS_A in section and synthetic.CLASS_B in section
    machines = page[page.index('id="machines"'):]
    assert "qmv-large-bw[size_mib=256]" in machines[:machines.index("<h2", 10)]
    metal = page[page.index('id="claim-metal-only"'):]
    assert "No doc sentence anchors this claim." in metal[:metal.index("</details>")]


def test_only_the_page_script_may_run(tmp_path, recorded, synthetic) -> None:
    store, run_id = _store(recorded, synthetic)
    out = tmp_path / "reports"
    build_reports(store, run_id, out, probes={"qmv": SWEEP}, docs=[])
    page = (out / "index.html").read_text(encoding="utf-8")
    scripts = re.findall(r"<script>(.*?)</script>", page, flags=re.S)
    assert len(scripts) == 1 and page.lower().count("<script") == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    policy = html.unescape(re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1))
    assert policy.endswith(f"script-src 'sha256-{digest}'"), policy


def _chromium() -> str | None:
    return next((found for name in ("chromium", "chromium-browser", "google-chrome") if (found := shutil.which(name))),
                None)


MEASURE = """
window.addEventListener("load", function () {
  var report = {};
  var images = Array.prototype.slice.call(document.images);
  report.images = images.length;
  report.broken = images.filter(function (i) { return !(i.complete && i.naturalWidth > 0); }).length;
  report.forest = images.map(function (i) { return i.alt; }).filter(function (a) { return a.indexOf("Forest") === 0; });
  Array.prototype.forEach.call(document.querySelectorAll("details"), function (d) { d.open = true; });
  report.charts = Array.prototype.map.call(document.querySelectorAll("svg.history-chart"), function (svg) {
    var box = svg.getBoundingClientRect();
    return [Math.round(box.width), Math.round(box.height), svg.querySelectorAll("circle").length];
  });
  report.overflow = document.documentElement.scrollWidth - window.innerWidth;
  var body = document.getElementById("items-table").tBodies[0];
  var visible = function () { return Array.prototype.filter.call(body.rows, function (r) { return !r.hidden; }); };
  report.rows = visible().length;
  var search = document.getElementById("items-filter");
  search.value = "size_mib=64";
  search.dispatchEvent(new Event("input"));
  report.filtered = visible().map(function (r) { return r.cells[0].textContent; });
  search.value = "";
  search.dispatchEvent(new Event("input"));
  document.getElementById("items-table").tHead.rows[0].cells[0].click();
  report.sorted = visible().map(function (r) { return r.cells[0].textContent; });
  var out = document.createElement("pre");
  out.id = "measured";
  out.textContent = JSON.stringify(report);
  document.body.appendChild(out);
});
"""


def _instrumented(page: str) -> str:
    """The page with the measuring script appended and allowed by its hash beside the page's own."""
    digest = base64.b64encode(hashlib.sha256(MEASURE.encode()).digest()).decode()
    page = page.replace("script-src ", f"script-src &#x27;sha256-{digest}&#x27; ", 1)
    return page.replace("</body>", f"<script>{MEASURE}</script></body>", 1)


def test_report_renders_in_headless_chromium(tmp_path, recorded, synthetic) -> None:
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium); cannot render the HTML report")
    store, run_id = _store(recorded, synthetic)
    out = tmp_path / "reports"
    result = build_reports(store, run_id, out, probes={"qmv": SWEEP}, docs=[_docs(tmp_path)])
    assert [p.name for p in result.plots] == ["qmv_bandwidth.png"] and len(result.forests) == 1
    probe = out / "measured.html"
    probe.write_text(_instrumented((out / "index.html").read_text(encoding="utf-8")), encoding="utf-8")
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--virtual-time-budget=5000",
             f"--user-data-dir={tmp_path / 'profile'}"]
    for width in (1280, 760):
        dom = subprocess.run([*flags, f"--window-size={width},1000", "--dump-dom", probe.resolve().as_uri()],
                             capture_output=True, text=True, timeout=900)
        assert dom.returncode == 0, dom.stderr[-2000:]
        found = re.search(r'<pre id="measured">(.*?)</pre>', dom.stdout, flags=re.S)
        assert found is not None, "the measuring script ran (its hash was accepted)"
        report = json.loads(html.unescape(found.group(1)))
        assert report["images"] == 2 and report["broken"] == 0, report
        assert report["forest"] == ["Forest plot: claims"], "one forest picture for the flat claims folder"
        charts = sorted(report["charts"], key=lambda c: c[2])
        assert [c[2] for c in charts] == [2, 3], "size_mib=64 (2 runs) and size_mib=256 (3 runs); metal-only has none"
        assert all(100 <= w <= 340 and h >= 0.4 * w for w, h, _ in charts), f"charts drawn at a readable size: {charts}"
        assert report["overflow"] <= 0, f"the page is {report['overflow']} px wider than a {width} px window"
        assert report["rows"] == 3
        assert report["filtered"] == ["qmv-large-bw[size_mib=64]"], "the filter keeps matching rows only"
        assert report["sorted"] == sorted(report["sorted"]) and len(report["sorted"]) == 3, "the heading sorts"
    shot = tmp_path / "shot.png"
    done = subprocess.run([*flags, "--window-size=1280,1800", f"--screenshot={shot}", (out / "index.html").as_uri()],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    from PIL import Image

    with Image.open(shot) as image:
        assert image.size == (1280, 1800)
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
        assert colours is not None and len(colours) > 50, "the page rendered more than a blank canvas"
