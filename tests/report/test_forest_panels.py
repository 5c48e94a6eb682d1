"""The forest plot's panels: one honest x axis per kind of number, the claim drawn on the same scale."""

from __future__ import annotations

from claimcheck.report import text
from claimcheck.report.forest import forest, panels

PNG = b"\x89PNG\r\n\x1a\n"


def _items(recorded, synthetic):
    def claim(claim_id, check):
        return synthetic.claim_record(claim_id, check={"alpha": 0.05, "output": "qmv_gbps", **check})

    ratio = {"rule": "ratio", "reference": "raw_gbps", "bound": "at_least", "threshold": 0.74}
    outcomes = [
        synthetic.outcome("near-ratio", item=None, claim=claim("near-ratio", ratio), statistic=0.41, low=0.38,
                          high=0.44),
        synthetic.outcome("far-ratio", item=None, claim=claim("far-ratio", dict(ratio, threshold=1.0)),
                          verdict="holds", statistic=98.0, low=71.0, high=128.0),
        synthetic.outcome("same-speed", item=None, verdict="holds", statistic=1.01, low=0.97, high=1.04,
                          claim=claim("same-speed", {"rule": "equivalent", "reference": "raw_gbps", "margin": 0.05,
                                                     "scale": "log-ratio", "paired": True})),
        synthetic.outcome("rises", item=None, verdict="inconclusive", statistic=0.01, low=-0.2, high=0.3,
                          claim=claim("rises", {"rule": "monotone", "over": "size_mib"})),
    ]
    store, run_id = recorded(outcomes)
    return store.results(run_id)


def test_ratios_share_a_log_panel_and_far_ratios_get_their_own(recorded, synthetic) -> None:
    found = {p.kind + ("-far" if p.kind == "ratio" and p.decade is not None else ""): [i.claim_id for i in p.rows]
             for p in panels(_items(recorded, synthetic))}
    assert found["ratio"] == ["near-ratio", "same-speed"], "a 98x ratio must not squash the ratios near 1"
    assert found["ratio-far"] == ["far-ratio"]
    assert found["order"] == ["rises"], "ordering and monotone get the 'no difference' panel"


def test_a_log_ratio_band_is_drawn_around_one_in_ratio_space(recorded, synthetic) -> None:
    items = {i.claim_id: i for i in _items(recorded, synthetic)}
    band = text.claimed(items["same-speed"])
    assert band.kind == "band" and band.low is not None and band.high is not None
    assert band.low < 1.0 < band.high and abs(band.low * band.high - 1.0) < 1e-9, "symmetric around 1 on a log axis"
    assert band.low <= items["same-speed"].decision.statistic <= band.high
    assert forest(list(items.values())).startswith(PNG)


def test_linear_ticks_read_in_full_with_the_digits_that_tell_them_apart() -> None:
    from claimcheck.report.forest import tick_text

    around_one = [1 - 1e-9, 1 - 5e-10, 1.0, 1 + 5e-10, 1 + 1e-9]
    assert [tick_text(v, around_one) for v in around_one] == [
        "0.999999999", "0.9999999995", "1", "1.0000000005", "1.000000001"], "no '1e-9+1' offset, no repeated '1'"
    quarters = [0.0, 250.0, 500.0, 750.0, 1000.0]
    assert [tick_text(v, quarters) for v in quarters] == ["0", "250", "500", "750", "1000"]
    tiny = [-1e-5, -5e-6, 0.0, 5e-6, 1e-5]
    assert [tick_text(v, tiny) for v in tiny] == ["-1e-05", "-5e-06", "0", "5e-06", "1e-05"]
