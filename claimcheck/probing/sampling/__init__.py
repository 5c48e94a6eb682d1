"""Curve sampler, sampling policies with matched seeds, seeded batched generation, fork-map bookkeeping.

Re-exports only; each concern lives in its own module:

- :mod:`~claimcheck.probing.sampling.curves`: the monotone transfer curve (pure numpy maths, MLX evaluation).
- :mod:`~claimcheck.probing.sampling.seeds`: the per-(seed, step) uniform draws.
- :mod:`~claimcheck.probing.sampling.policies`: policies and mlx-lm compatible seeded samplers.
- :mod:`~claimcheck.probing.sampling.generate`: seeded continuous-batching generation with shared prefixes.
- :mod:`~claimcheck.probing.sampling.runs`: the experiments (trace, route departures, temperature search) on a model.
- :mod:`~claimcheck.probing.sampling.forkmap`: reconvergence scores, node labels, fork shares.
- :mod:`~claimcheck.probing.sampling.routes`: first departures, hazards, jackknife pseudo-values.

Nothing here imports MLX at module level.
"""

from claimcheck.probing.sampling.curves import NAMED_CURVE_POINTS, TransferCurve, named_curve
from claimcheck.probing.sampling.forkmap import (
    DIVERGED,
    FORK,
    LOCKED,
    PARTIAL,
    RECONVERGED,
    REMERGE,
    ForkSummary,
    Node,
    TraceRules,
    classify_branch,
    longest_common_run,
    make_node,
    position_labels,
    reconvergence_score,
    summarize,
    traced_positions,
)
from claimcheck.probing.sampling.generate import (
    DEFAULT_STOP_IDS,
    Generation,
    GenerationRequest,
    GenerationStats,
    Root,
    generate_batch,
    prefill,
    teacher_forced_logprobs,
)
from claimcheck.probing.sampling.policies import (
    ROUTE_POLICIES,
    CdfTable,
    Policy,
    SeededSampler,
    curve_policy,
    draw_tokens,
    get_policy,
    log_softmax,
    make_curve_sampler,
    temperature_policy,
    truncation_mask,
)
from claimcheck.probing.sampling.routes import (
    Counts,
    Value,
    first_departure,
    hazard,
    jackknife_pseudovalues,
    sample_counts,
    selectivity,
)
from claimcheck.probing.sampling.seeds import uniform_draw, uniform_draws

__all__ = [
    "DEFAULT_STOP_IDS",
    "DIVERGED",
    "FORK",
    "LOCKED",
    "NAMED_CURVE_POINTS",
    "PARTIAL",
    "RECONVERGED",
    "REMERGE",
    "ROUTE_POLICIES",
    "CdfTable",
    "Counts",
    "ForkSummary",
    "Generation",
    "GenerationRequest",
    "GenerationStats",
    "Node",
    "Policy",
    "Root",
    "SeededSampler",
    "TraceRules",
    "TransferCurve",
    "Value",
    "classify_branch",
    "curve_policy",
    "draw_tokens",
    "first_departure",
    "generate_batch",
    "get_policy",
    "hazard",
    "log_softmax",
    "prefill",
    "truncation_mask",
    "jackknife_pseudovalues",
    "longest_common_run",
    "make_curve_sampler",
    "make_node",
    "named_curve",
    "position_labels",
    "reconvergence_score",
    "sample_counts",
    "selectivity",
    "summarize",
    "teacher_forced_logprobs",
    "temperature_policy",
    "uniform_draw",
    "uniform_draws",
]
