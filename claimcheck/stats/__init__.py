"""Decide numeric claims from samples: holds, refuted or inconclusive, with stated error rates.

Pure Python + numpy/scipy; nothing here imports MLX, and scipy.stats is imported only where used.

- :func:`decide` runs one rule (see :data:`RULES`) on ordered ``(label, samples)`` groups and
  returns a :class:`Decision` shaped like a scipy.stats result. A true claim is refuted, and a
  false one held, with probability at most ``alpha`` each.
- :class:`SequentialPlan` / :func:`run_sequential` sample in looks and stop early, spending
  alpha across looks (Lan–DeMets, union bound) so repeated looking keeps both error rates.
- :func:`adjust_family` applies Holm (or Benjamini–Hochberg) to a run's refutations.
- :func:`mde` / :func:`required_n` / :func:`zero_rate_n` state a run's resolution; an
  ``equivalent`` HOLDS from a run too small to see a margin-sized difference is INCONCLUSIVE.
- :func:`noise_gate` flags timing samples too noisy or drifting to decide anything.

>>> d = decide("at_least", [("gbps", [241.0, 239.5, 243.2, 240.8])], threshold=200)
>>> d.verdict.value
'holds'
"""

from ._decision import ConfidenceInterval, Decision
from ._family import FamilyAdjustment, adjust_family, adjust_pvalues, family_adjustment
from ._noise import noise_gate
from ._power import mde, required_n, zero_rate_n
from ._rules import RULES, RuleInfo, decide, rule_info
from ._sequential import SequentialPlan, run_sequential, sequential_pvalue

__all__ = [
    "RULES",
    "ConfidenceInterval",
    "Decision",
    "FamilyAdjustment",
    "RuleInfo",
    "SequentialPlan",
    "adjust_family",
    "adjust_pvalues",
    "decide",
    "family_adjustment",
    "mde",
    "noise_gate",
    "required_n",
    "rule_info",
    "run_sequential",
    "sequential_pvalue",
    "zero_rate_n",
]
