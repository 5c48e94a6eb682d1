"""Rate panels: one per distinct table, each titled by the params that set its table apart."""

from __future__ import annotations

from typing import Any

from claimcheck.claim import Claim
from claimcheck.probing.plots import PackPlot
from claimcheck.report import plots
from claimcheck.report.plots import rate_panels, rates
from claimcheck.engine.result import ItemResult
from claimcheck.store import StoredResult
from claimcheck.verdict import Verdict

SPEC = PackPlot("route_hazard", "Route hazard per policy", "rates", artifact="route_table", events=("FORK", "REMERGE"),
                numerator="departures", denominator="at_risk")
MODEL = "smollm2-135m-instruct"


def _table(fork: int, remerge: int) -> dict[str, Any]:
    return {policy: {"departures": {"FORK": fork + i, "REMERGE": remerge + i}, "at_risk": {"FORK": 100, "REMERGE": 80}}
            for i, policy in enumerate(("default", "temp0.8"))}


def _item(claim_id: str, probe_params: dict[str, Any], item_params: dict[str, Any],
          table: dict[str, Any]) -> StoredResult:
    claim = Claim.from_record({"id": claim_id, "probe": {"name": "route_hazard", "params": probe_params}})
    result = ItemResult(claim=claim, item_id=claim_id, params=item_params, raw_verdict=Verdict("holds"), raw_reason="",
                        artifacts={"route_table": table})
    return StoredResult(run_id="run", run_started="", run_status="complete", result=result)


CREATIVE = {"model": MODEL, "prompts": "creative", "seeds": 200}
#: Three claims share the creative table (policy varies between them); one claim has the factual table,
#: whose prompts come from the claim alone (the item's own params do not repeat it).
ITEMS = [
    _item("departs-more-at-remerge", CREATIVE, {**CREATIVE, "policy": "default"}, _table(60, 30)),
    _item("departs-more-at-remerge-temp", CREATIVE, {**CREATIVE, "policy": "temp0.8"}, _table(60, 30)),
    _item("router-raises-departures", CREATIVE, {**CREATIVE, "policy": "curve-router"}, _table(60, 30)),
    _item("factual-router-below-temperature", {"model": MODEL, "prompts": "factual", "seeds": 200},
          {"policy": ["default", "temp0.8"]}, _table(40, 10)),
]


def test_panels_differ_by_the_param_that_differs() -> None:
    creative, factual = rate_panels(SPEC, ITEMS)
    assert creative.title != factual.title
    assert "prompts=creative" in creative.title and "prompts=factual" in factual.title
    assert MODEL in creative.title and MODEL in factual.title
    assert "seeds" not in creative.title + factual.title, "a param with the same value everywhere is not named"
    assert "policy" not in creative.title, "policy varies within the creative table, so it did not make it"
    assert "policy=[default, temp0.8]" in factual.title
    assert [i.claim_id for i in creative.items] == ["departs-more-at-remerge", "departs-more-at-remerge-temp",
                                                    "router-raises-departures"]


def test_a_title_names_the_first_two_claims_then_counts_the_rest() -> None:
    creative, factual = rate_panels(SPEC, ITEMS)
    last = creative.title.splitlines()[-1].replace("\N{NO-BREAK SPACE}", " ")
    assert last == "claims: departs-more-at-remerge, departs-more-at-remerge-temp +1 more"
    assert factual.title.splitlines()[-1] == "claim: factual-router-below-temperature"


def test_titles_wrap_to_the_width_asked() -> None:
    for panel in rate_panels(SPEC, ITEMS, width=30):
        assert all(len(line) <= 30 for line in panel.title.splitlines()), panel.title
        assert len(panel.title.splitlines()) >= 3


def test_identical_tables_are_one_panel_named_by_model_and_claims() -> None:
    (only,) = rate_panels(SPEC, ITEMS[:2])
    assert only.title.splitlines()[0] == MODEL, "nothing differs between tables, so only the model is named"


def test_the_figure_has_the_overall_title_above_one_titled_panel_per_table(monkeypatch) -> None:
    drawn = []
    monkeypatch.setattr(plots, "png_bytes", lambda fig: drawn.append(fig) or b"png")
    assert rates(SPEC, {}, ITEMS) == b"png"
    (fig,) = drawn
    assert fig._suptitle is not None and fig._suptitle.get_text() == SPEC.title
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert len(titles) == 2 and "prompts=creative" in titles[0] and "prompts=factual" in titles[1]
    assert all(SPEC.title not in title for title in titles), "the overall title is said once"
