"""The inventory of the source docs' checkable claims (docs/claims-inventory.tsv) names real claims."""

from __future__ import annotations

import csv
from pathlib import Path

from claimcheck.claims.loader import load_claims

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "docs" / "claims-inventory.tsv"
MOST_LEFT_OUT = 10


def _rows() -> list[dict[str, str]]:
    with INVENTORY.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def test_every_claim_id_in_the_inventory_exists() -> None:
    known = {claim.id for claim in load_claims([ROOT / "claims"])}
    named = [(row["id"], claim_id.strip()) for row in _rows() for claim_id in row["claims"].split(";")
             if claim_id.strip() not in ("", "-")]
    assert named, "the inventory names no claims"
    assert [pair for pair in named if pair[1] not in known] == []


def test_rows_left_out_say_why_and_are_few() -> None:
    rows = _rows()
    left_out = [row for row in rows if row["status"] == "left out"]
    assert len(left_out) <= MOST_LEFT_OUT, [row["id"] for row in left_out]
    assert all(row["note"].strip() and row["claims"] == "-" for row in left_out)
    assert all(row["claims"] not in ("", "-") for row in rows if row["status"] != "left out")
    assert len({row["id"] for row in rows}) == len(rows)
