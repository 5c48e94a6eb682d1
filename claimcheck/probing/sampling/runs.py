"""The experiments on a loaded model, under one name: each lives in its own module.

- :mod:`~claimcheck.probing.sampling.reference`: greedy references, the teacher-forced pass, per-position features.
- :mod:`~claimcheck.probing.sampling.bisector`: the fork map of several prompts (methods, section C).
- :mod:`~claimcheck.probing.sampling.departures`: first departures and the coherence after them (section D).
- :mod:`~claimcheck.probing.sampling.matching`: the text comparisons of the temperature search.
- :mod:`~claimcheck.probing.sampling.temperature_search`: can pure temperature reproduce a curve's sample (section E).

Every function takes an mlx-lm model and token ids and returns JSON-able dicts, so a probe can
cache them and put them in artifacts. Generation is always batched.
"""

from __future__ import annotations

from claimcheck.probing.sampling.bisector import ALL, GENUINE, bisector_traces
from claimcheck.probing.sampling.departures import first_departures, fork_departure_coherence
from claimcheck.probing.sampling.matching import (
    MISS_MARGIN_CHARS,
    STOPWORDS,
    can_still_match,
    common_prefix,
    content_recall,
    content_words,
    normalize_text,
)
from claimcheck.probing.sampling.reference import (
    PositionFeatures,
    Progress,
    ReferencePasses,
    greedy_references,
    position_features,
    reference_pass,
)
from claimcheck.probing.sampling.temperature_search import temperature_search

__all__ = [
    "ALL",
    "GENUINE",
    "MISS_MARGIN_CHARS",
    "STOPWORDS",
    "PositionFeatures",
    "Progress",
    "ReferencePasses",
    "bisector_traces",
    "can_still_match",
    "common_prefix",
    "content_recall",
    "content_words",
    "first_departures",
    "fork_departure_coherence",
    "greedy_references",
    "normalize_text",
    "position_features",
    "reference_pass",
    "temperature_search",
]
