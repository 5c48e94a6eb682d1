"""Running claim items: scope, sequential sampling, the decision, the noise gate, family and cascade.

A probe's samples go in (:mod:`.runner`, :mod:`.sampler`); a typed, adjudicated
:class:`~claimcheck.engine.result.ItemResult` comes out (:mod:`.adjudicate`), judged against the
expected verdicts (:mod:`.expectations`) by the outcome layer that follows.
"""
