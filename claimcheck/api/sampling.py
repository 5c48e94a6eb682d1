"""The text-sampling library the curve, fork and route probes are built on, for probes of the same kind.

Seeded sampling policies and batched generation, the monotone transfer curve, fork maps, route
departures and the temperature search; see :mod:`claimcheck.probing.sampling` for what each does.
Imports NumPy (not MLX), so it is a module of its own and ``claimcheck.api`` stays light.
"""

from __future__ import annotations

from claimcheck.probing.sampling import (
    ROUTE_POLICIES,
    Counts,
    GenerationRequest,
    GenerationStats,
    TraceRules,
    curve_policy,
    generate_batch,
    get_policy,
    hazard,
    jackknife_pseudovalues,
    log_softmax,
    sample_counts,
    selectivity,
    teacher_forced_logprobs,
    temperature_policy,
)
from claimcheck.probing.sampling.classify import auc, jackknife_auc
from claimcheck.probing.sampling.countdown import Countdown
from claimcheck.probing.sampling.curves import NAMED_CURVE_POINTS, TransferCurve
from claimcheck.probing.sampling.departures import first_departures, fork_departure_coherence
from claimcheck.probing.sampling.generate import Root
from claimcheck.probing.sampling.prompt_groups import PromptDealer
from claimcheck.probing.sampling.reference import ReferencePasses
from claimcheck.probing.sampling.routes import Value, ratio
from claimcheck.probing.sampling.runs import (
    bisector_traces,
    can_still_match,
    common_prefix,
    content_recall,
    normalize_text,
    temperature_search,
)

__all__ = [
    "NAMED_CURVE_POINTS", "ROUTE_POLICIES", "Countdown", "Counts", "GenerationRequest", "GenerationStats",
    "PromptDealer", "ReferencePasses", "Root", "TraceRules", "TransferCurve", "Value", "auc", "bisector_traces",
    "can_still_match", "common_prefix", "content_recall", "curve_policy", "first_departures",
    "fork_departure_coherence", "generate_batch", "get_policy", "hazard", "jackknife_auc", "jackknife_pseudovalues",
    "log_softmax", "normalize_text", "ratio", "sample_counts", "selectivity", "teacher_forced_logprobs",
    "temperature_policy", "temperature_search",
]
