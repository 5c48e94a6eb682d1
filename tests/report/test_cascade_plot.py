"""The cascade picture covers exactly the dependency components that hold a failure."""

from __future__ import annotations

from claimcheck.claim import Claim
from claimcheck.report.cascade import cascade, claim_graph, failing_components, layers
from claimcheck.engine.result import ItemResult
from claimcheck.store import StoredResult
from claimcheck.verdict import Verdict


def _item(claim_id: str, verdict: str, depends_on: list[str] | None = None) -> StoredResult:
    claim = Claim.from_record({"id": claim_id, "depends_on": depends_on or []})
    result = ItemResult(claim=claim, item_id=claim_id, params={}, raw_verdict=Verdict(verdict), raw_reason="")
    return StoredResult(run_id="run", run_started="", run_status="complete", result=result)


ITEMS = [
    _item("root", "refuted"), _item("child", "stale", ["root"]), _item("grandchild", "stale", ["child"]),
    _item("fine", "holds"), _item("fine-child", "holds", ["fine"]), _item("alone", "refuted"),
]


def test_only_failing_components_are_drawn() -> None:
    verdicts, edges = claim_graph(ITEMS)
    assert edges == [("child", "grandchild"), ("fine", "fine-child"), ("root", "child")]
    assert failing_components(verdicts, edges) == {"root", "child", "grandchild"}
    assert layers({"root", "child", "grandchild"}, edges) == {"root": 0, "child": 1, "grandchild": 2}


def test_picture_is_a_png_and_absent_without_cascade() -> None:
    assert cascade(ITEMS)[:8] == b"\x89PNG\r\n\x1a\n"
    assert cascade([_item("fine", "holds"), _item("fine-child", "holds", ["fine"])]) is None
