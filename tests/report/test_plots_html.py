"""Pictures and the self-contained HTML page, including a render in headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from claimcheck.report import build_reports
from claimcheck.report.plots import depth_rows, hazard_rows

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
                                      artifacts={"hazards": {"greedy": {"FORK": 0.05, "REMERGE": 0.2}}}))
    trace = synthetic.claim_record("bisector-late-forks", probe={"name": "bisector_trace"},
                                   check={"rule": "at_least", "output": "depth", "threshold": 8, "alpha": 0.05})
    outcomes.append(synthetic.outcome("bisector-late-forks", item=None, verdict="error", reason="boom", claim=trace,
                                      artifacts={"trace": [{"prompt": "p1", "fork_depth": 3},
                                                           {"prompt": "p2", "fork_depth": None}]}))
    return outcomes


def test_forest_and_pack_plots_are_written_and_embedded(tmp_path, recorded, synthetic) -> None:
    store, run_id = recorded(_pack_run(synthetic))
    out = tmp_path / "reports"
    result = build_reports(store, run_id, out)
    assert result.forest == out / "forest.png" and result.forest.read_bytes().startswith(PNG)
    names = sorted(p.name for p in result.plots)
    assert names == ["bisector_fork_depth.png", "decode_arms.png", "qmv_bandwidth.png", "route_hazard.png"]
    assert all(p.read_bytes().startswith(PNG) for p in result.plots)
    index = (out / "index.md").read_text()
    assert "](forest.png)" in index and "](plots/qmv_bandwidth.png)" in index
    assert result.warnings == []


def test_pack_plots_skip_quietly_without_their_items(tmp_path, recorded, synthetic) -> None:
    claim = synthetic.claim_record("plain-claim", probe={"name": "something_else"})
    store, run_id = recorded([synthetic.outcome("plain-claim", item=None, claim=claim)])
    result = build_reports(store, run_id, tmp_path / "reports")
    assert result.plots == [] and result.warnings == []
    assert result.forest is not None, "the forest plot still shows the one decided figure"


def test_artifact_shapes_the_pack_plots_understand() -> None:
    assert hazard_rows({"greedy": {"fork": 0.1, "remerge": 0.3}}, "?") == [("greedy", "FORK", 0.1),
                                                                            ("greedy", "REMERGE", 0.3)]
    assert hazard_rows({"FORK": 0.2, "REMERGE": 0.4}, "temp=0.8") == [("temp=0.8", "FORK", 0.2),
                                                                      ("temp=0.8", "REMERGE", 0.4)]
    assert hazard_rows([{"policy": "router", "event": "fork", "hazard": 0.43}], "?") == [("router", "FORK", 0.43)]
    assert hazard_rows({"unrelated": [1, 2, 3]}, "?") == []
    assert depth_rows({"fork_depth": {"creative": 3, "factual": None}}) == [("creative", 3.0), ("factual", None)]
    assert depth_rows([{"prompt_id": "a", "depth": 14}]) == [("a", 14.0)]
    assert depth_rows({"tokens": [1, 2, 3]}) == []


def test_html_is_self_contained_and_escapes_claim_text(tmp_path, recorded, synthetic) -> None:
    store, run_id = recorded(_pack_run(synthetic))
    out = tmp_path / "reports"
    build_reports(store, run_id, out)
    page = (out / "index.html").read_text()
    assert "<script" not in page.lower(), "no script element, injected or otherwise"
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; fused decode" in page
    assert "Fused decode is &quot;faster&quot; &amp; &lt;b&gt;cheaper&lt;/b&gt;" in page
    sources = re.findall(r'\bsrc="([^"]*)"', page)
    assert len(sources) == 5 and all(s.startswith("data:image/png;base64,") for s in sources)
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
    build_reports(store, run_id, out)
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}"]
    url = (out / "index.html").resolve().as_uri()
    dom = subprocess.run([*flags, "--dump-dom", url], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    for claim_id in {o.claim_id for o in outcomes}:
        assert claim_id in dom.stdout, f"{claim_id} missing from the rendered page"
    assert "<script" not in dom.stdout.lower(), "the injected title stayed text after parsing"
    assert dom.stdout.count("<img") == 5

    shot = tmp_path / "shot.png"
    done = subprocess.run([*flags, "--window-size=1280,2400", f"--screenshot={shot}", url], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    from PIL import Image

    with Image.open(shot) as image:
        assert image.size == (1280, 2400)
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
        assert colours is not None and len(colours) > 50, "the page rendered more than a blank canvas"
