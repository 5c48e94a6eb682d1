"""Text matching of the temperature search: exact match, and when a sample can no longer match."""

from __future__ import annotations

import pytest

from claimcheck.probing.sampling.runs import MISS_MARGIN_CHARS, can_still_match, content_recall, normalize_text

TARGET = "The fog rolled in, and the keeper saw a light that was not his own."


def test_normalisation_only_touches_whitespace() -> None:
    assert normalize_text("  The  fog\n rolled ") == "The fog rolled"
    assert normalize_text("Fog.") != normalize_text("fog.")


@pytest.mark.parametrize("cut", [0, 1, 5, 20, len(TARGET)])
def test_every_prefix_of_the_target_can_still_match(cut: int) -> None:
    assert can_still_match(TARGET[:cut], TARGET)
    assert can_still_match("  " + TARGET[:cut].replace(" ", "   "), TARGET)  # spacing is not content


def test_a_difference_inside_the_margin_is_not_judged_yet() -> None:
    # The last characters of a token prefix can still change (half a UTF-8 character, a
    # detokenizer joining a space to the next token): only earlier differences count.
    early = TARGET[:30]
    assert can_still_match(early[:-3] + "XYZ", TARGET)
    assert not can_still_match(early[:10] + "X" + early[11:] + "a" * MISS_MARGIN_CHARS, TARGET)


def test_a_longer_text_cannot_match() -> None:
    assert not can_still_match(TARGET + " And then" + " more" * 3, TARGET)


def test_content_recall_ignores_function_words() -> None:
    # content words of TARGET: fog, rolled, keeper, saw, light, own
    assert content_recall("the keeper saw the light", TARGET) == pytest.approx(3 / 6)
    assert content_recall("anything", "the a of") is None
