"""Pictures and the self-contained HTML page, including a render in headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from claimcheck.probing.registry import Output, RegisteredProbe
from claimcheck.probing.plots import PackPlot
from claimcheck.report import build_reports

PNG = b"\x89PNG\r\n\x1a\n"


def _pack_run(synthetic) -> list[dict]:
    """One item for every pack plot, plus a refuted claim whose title is an HTML injection attempt."""
    outcomes = []
    for size, verdict, stat in ((64, "holds", 0.8), (256, "refuted", 0.41)):
        outcomes.append(synthetic.outcome(
            item=f"size_mib={size}", verdict=verdict, statistic=stat, low=stat - 0.03, high=stat + 0.03,
            samples={"qmv_gbps": [stat * 98 + i % 3 for i in range(12)], "raw_gbps": [98.0 + i % 2 for i in range(12)]},
        ))
    arms = synthetic.claim_record("decode-arms-fused", title="<script>alert('x')</script> fused decode",
                                  statement='Fused decode is "faster" & <b>cheaper</b>',
                                  probe={"name": "decode_arms", "params": {}, "grid": {}},
                                  check={"rule": "at_most", "output": "fused_ms", "threshold": 12.0, "unit": "ms",
                                         "alpha": 0.05})
    outcomes.append(synthetic.outcome("decode-arms-fused", item=None, claim=arms, statistic=14.2, low=13.1, high=15.0,
                                      samples={"fused_ms": [14 + i % 4 * 0.3 for i in range(12)],
                                               "unfused_ms": [16 + i % 3 * 0.4 for i in range(12)]}))
    hazard = synthetic.claim_record("route-hazard-selectivity", probe={"name": "route_hazard"},
                                    check={"rule": "at_most", "output": "fork", "threshold": 0.1, "alpha": 0.05})
    outcomes.append(synthetic.outcome("route-hazard-selectivity", item=None, verdict="holds", statistic=0.05,
                                      low=0.03, high=0.07, claim=hazard,
                                      artifacts={"route_table": {"greedy": {"departures": {"FORK": 5, "REMERGE": 20},
                                                                            "at_risk": {"FORK": 100, "REMERGE": 100},
                                                                            "fork_hazard": {"value": 0.05}}}}))
    trace = synthetic.claim_record("bisector-late-forks", probe={"name": "bisector_trace"},
                                   check={"rule": "at_least", "output": "depth", "threshold": 8, "alpha": 0.05})
    outcomes.append(synthetic.outcome("bisector-late-forks", item=None, verdict="error", reason="boom", claim=trace,
                                      artifacts={"trace": [{"prompt": "p1", "fork_depth": 3},
                                                           {"prompt": "p2", "fork_depth": None}]}))
    return outcomes


def _never_called(ctx: object, **params: object) -> dict[str, list[float]]:
    raise AssertionError("the report never runs a probe")


#: The probes of the pack run with their declared plots (the bisector declares none).
PROBES = {
    "qmv": RegisteredProbe("qmv", _never_called, {"qmv_gbps": Output("GB/s"), "raw_gbps": Output("GB/s")},
                           plot=PackPlot("qmv_bandwidth", "qmv bandwidth", "sweep", outputs=("qmv_gbps", "raw_gbps"),
                                         reference="raw_gbps", x="size_mib", x_unit="MiB")),
    "decode_arms": RegisteredProbe("decode_arms", _never_called,
                                   {"fused_ms": Output("ms/token"), "unfused_ms": Output("ms/token")},
                                   plot=PackPlot("decode_arms", "Decode arms", "arms", outputs=("fused_ms", "unfused_ms"))),
    "route_hazard": RegisteredProbe("route_hazard", _never_called, {"fork": Output("fraction")},
                                    plot=PackPlot("route_hazard", "Route hazard", "rates", artifact="route_table",
                                                  events=("FORK", "REMERGE"), numerator="departures",
                                                  denominator="at_risk")),
    "bisector_trace": RegisteredProbe("bisector_trace", _never_called, {"depth": Output("tokens")}),
}


def test_forest_and_pack_plots_are_written_and_embedded(tmp_path, recorded, synthetic) -> None:
    store, run_id = recorded(_pack_run(synthetic))
    out = tmp_path / "reports"
    result = build_reports(store, run_id, out, probes=PROBES, docs=[])
    assert result.forests == [out / "forest" / "claims.png"], "a flat claims folder is one pack named after it"
    assert result.forests[0].read_bytes().startswith(PNG)
    names = sorted(p.name for p in result.plots)
    assert names == ["decode_arms.png", "qmv_bandwidth.png", "route_hazard.png"], "the declared plots, no other"
    assert all(p.read_bytes().startswith(PNG) for p in result.plots)
    index = (out / "index.md").read_text()
    assert "](forest/claims.png)" in index and "](plots/qmv_bandwidth.png)" in index
    assert result.warnings == []


def test_pack_plots_skip_quietly_without_their_items(tmp_path, recorded, synthetic) -> None:
    claim = synthetic.claim_record("plain-claim", probe={"name": "something_else"})
    store, run_id = recorded([synthetic.outcome("plain-claim", item=None, claim=claim)])
    result = build_reports(store, run_id, tmp_path / "reports", probes=PROBES, docs=[])
    assert result.plots == [] and result.warnings == []
    assert len(result.forests) == 1, "the forest plot still shows the one decided figure"


def test_declared_data_of_another_shape_draws_nothing(tmp_path, recorded, synthetic) -> None:
    hazard = synthetic.claim_record("route-hazard-selectivity", probe={"name": "route_hazard"},
                                    check={"rule": "at_most", "output": "fork", "threshold": 0.1, "alpha": 0.05})
    counts_only = {"route_table": {"greedy": {"departures": 900, "at_risk": 1450}}, "hazards": {"FORK": 0.2}}
    store, run_id = recorded([synthetic.outcome("route-hazard-selectivity", item=None, verdict="holds",
                                                statistic=0.05, low=0.03, high=0.07, claim=hazard,
                                                artifacts=counts_only)])
    result = build_reports(store, run_id, tmp_path / "reports", probes=PROBES, docs=[])
    assert result.plots == [] and result.warnings == [], "no guessing at an artifact the probe did not declare"


def test_a_plot_declaration_names_the_data_its_kind_needs() -> None:
    with pytest.raises(ValueError, match="needs artifact, events, numerator, denominator"):
        PackPlot("route_hazard", "Route hazard", "rates")
    with pytest.raises(ValueError, match="is not one of"):
        PackPlot("guess", "Guess", "whatever-fits")


def test_html_links_its_pictures_from_the_report_folder_and_escapes_claim_text(tmp_path, recorded, synthetic) -> None:
    """Pictures are files beside the page, never inlined bytes (which made the published page megabytes)."""
    store, run_id = recorded(_pack_run(synthetic))
    out = tmp_path / "reports"
    build_reports(store, run_id, out, probes=PROBES, docs=[])
    page = (out / "index.html").read_text()
    assert page.lower().count("<script") == 1, "only the page's own script element, none injected"
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; fused decode" in page
    assert "Fused decode is &quot;faster&quot; &amp; &lt;b&gt;cheaper&lt;/b&gt;" in page
    sources = re.findall(r'\bsrc="([^"]*)"', page)
    assert len(sources) == 4 and all(not s.startswith("data:") and (out / s).is_file() for s in sources)
    assert "base64" not in page
    assert all(h.startswith("#") for h in re.findall(r'\bhref="([^"]*)"', page)), "links stay inside the page"
    assert "http://" not in page and "https://" not in page and "@import" not in page


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def test_html_renders_in_headless_chromium(tmp_path, recorded, synthetic) -> None:
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium); cannot render the HTML report")
    outcomes = _pack_run(synthetic)
    outcomes.append(synthetic.outcome("metal-only", item=None, verdict="not-applicable", reason="backend metal",
                                      claim=synthetic.claim_record("metal-only")))
    store, run_id = recorded(outcomes)
    out = tmp_path / "reports"
    build_reports(store, run_id, out, probes=PROBES, docs=[])
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}"]
    url = (out / "index.html").resolve().as_uri()
    dom = subprocess.run([*flags, "--dump-dom", url], capture_output=True, text=True, timeout=900)
    assert dom.returncode == 0, dom.stderr[-2000:]
    for claim_id in {o.claim_id for o in outcomes}:
        assert claim_id in dom.stdout, f"{claim_id} missing from the rendered page"
    assert dom.stdout.lower().count("<script") == 1, "the injected title stayed text after parsing"
    assert dom.stdout.count("<img") == 4

    shot = tmp_path / "shot.png"
    done = subprocess.run([*flags, "--window-size=1280,2400", f"--screenshot={shot}", url], capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    from PIL import Image

    with Image.open(shot) as image:
        assert image.size == (1280, 2400)
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
        assert colours is not None and len(colours) > 50, "the page rendered more than a blank canvas"
