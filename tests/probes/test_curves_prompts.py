"""The curve probes' prompt set: valid, five per pole, the source's three prompts verbatim."""

from __future__ import annotations

import pytest

from claimcheck.errors import ProbeError
from probes.curves.curve_prompts import CONTROL_POLES, POLES, load_prompt_set, select_prompts

SOURCE_PROMPTS = {
    "creative": "Write the first sentence of a short story about a lighthouse keeper who discovers something strange in the fog.",
    "advice": "My 14-year-old wants to start lifting weights. Is that safe, and how should they begin?",
    "factual": "What is the capital of France, and roughly how many people live there?",
}


def test_five_prompts_per_pole_and_the_source_ones_verbatim() -> None:
    prompts = load_prompt_set()
    for pole in POLES:
        of_pole = [p for p in prompts if p.pole == pole]
        assert len(of_pole) == 5
        assert [p.text for p in of_pole if p.origin == "source"] == [SOURCE_PROMPTS[pole]]


def test_selection_by_all_pole_id_and_list() -> None:
    assert len(select_prompts("all")) == 15
    assert {p.pole for p in select_prompts("all")} == set(POLES), "the control pole is never part of `all`"
    assert [p.pole for p in select_prompts("copy")] == ["copy"] * 3 and CONTROL_POLES == ("copy",)
    assert {p.pole for p in select_prompts("factual")} == {"factual"}
    assert [p.id for p in select_prompts(["paris", "lighthouse", "paris"])] == ["paris", "lighthouse"]
    with pytest.raises(ProbeError, match="no prompt matches `parris`"):
        select_prompts("parris")


def test_a_bad_prompt_file_is_one_clear_error(tmp_path) -> None:
    bad = tmp_path / "p.yaml"
    bad.write_text("prompts:\n  - {id: a, pole: poetry, text: hi}\n")
    with pytest.raises(ProbeError, match=r"prompts\[0\]: `pole` must be one of creative, advice, factual, copy"):
        load_prompt_set(bad)
