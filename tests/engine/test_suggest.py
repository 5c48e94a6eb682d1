"""The did-you-mean hint is one wording everywhere, and silent when nothing is close."""

from claimcheck.suggest import closest, did_you_mean


def test_a_near_miss_is_suggested_in_the_one_wording() -> None:
    assert did_you_mean("at_leat", ["at_least", "at_most"]) == " (did you mean `at_least`?)"
    assert closest(5, ["5", "50"]) == "5"


def test_nothing_close_gives_no_hint() -> None:
    assert did_you_mean("zzz", ["at_least"]) == "" and closest("zzz", []) is None
