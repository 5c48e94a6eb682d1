"""The statistics core: estimates, intervals and tests that decide numeric claims.

Pure Python + numpy/scipy; nothing here imports MLX, probes, the store, reports or pytest.
Which rule uses which test is the rule objects' business (:mod:`claimcheck.rules`); this
package only provides the procedures, each returning a :class:`Decision` shaped like a
scipy.stats result:

- ``decide_*``: one decision per procedure (bounds, TOST, ratio, steps, binomial rates,
  exact values). A true claim is refuted, and a false one held, with probability at most
  ``alpha`` each.
- :class:`SequentialPlan` / :func:`run_sequential` sample in looks and stop early, spending
  alpha across looks (Lan–DeMets; exact group-sequential boundaries for t and sign tests, the
  union bound elsewhere) so repeated looking keeps both error rates; an :class:`Adaptation` adds
  a non-binding futility stop and a promising-zone extension of the last look.
- :func:`adjust_pvalues` applies Holm (or Benjamini–Hochberg) to a run's p-values;
  :func:`two_sided_family` adjusts a run's refutations and holds with it.
- :func:`mde` / :func:`required_n` / :func:`zero_rate_n` / :func:`sign_test_n` state a run's resolution.
- :func:`quantity_gate` / :func:`noise_gate` flag a tested quantity that is spiky or drifting
  (and, for a mean of timing samples, too noisy).
- :func:`widen_between_runs` folds an item's between-run spread (earlier runs' estimates, as
  plain numbers) into a timing decision; :func:`spread_ratio` says how much wider it makes a later
  look's SE, for the futility stop and the extension to read.
- :class:`Hypothesis`: what a decision tested (edge, side, scale, statistic, assumed between-run
  spread), set by the rule; the corrections above read it, never a rule's name.
"""

from ._between_run import MIN_RUNS, spread_ratio, widen_between_runs
from ._bound import decide_bound
from ._decision import ConfidenceInterval, Decision, check_alpha
from ._dispersion import decide_dispersion, spread
from ._equivalent import decide_equivalent
from ._exact import decide_exact
from ._family import FamilyAdjustment, adjust_family, adjust_pvalues, family_adjustment
from ._family import FamilyMember, FamilyVerdict, family_alpha, samples_to_survive, two_sided_family
from ._family_summary import family_lines
from ._futility import Adaptation
from ._hypothesis import Hypothesis
from ._noise import noise_gate, quantity_gate
from ._power import mde, required_n, sign_test_n, zero_rate_n
from ._proportions import Counts, decide_two_proportions
from ._rates import count_events, decide_rate_at_most, decide_zero_rate
from ._ratio import decide_ratio
from ._relation import decide_relation, relation_value
from ._sequential import Boundary, Gate, SequentialPlan, run_sequential, sequential_pvalue
from ._steps import decide_monotone, decide_ordering

__all__ = [
    "Adaptation",
    "Boundary",
    "MIN_RUNS",
    "ConfidenceInterval",
    "Counts",
    "Decision",
    "FamilyAdjustment",
    "Gate",
    "Hypothesis",
    "FamilyMember",
    "FamilyVerdict",
    "SequentialPlan",
    "adjust_family",
    "adjust_pvalues",
    "check_alpha",
    "count_events",
    "decide_bound",
    "decide_dispersion",
    "decide_equivalent",
    "decide_exact",
    "decide_monotone",
    "decide_ordering",
    "decide_rate_at_most",
    "decide_ratio",
    "decide_relation",
    "relation_value",
    "decide_two_proportions",
    "decide_zero_rate",
    "family_adjustment",
    "family_alpha",
    "family_lines",
    "mde",
    "noise_gate",
    "quantity_gate",
    "required_n",
    "run_sequential",
    "samples_to_survive",
    "sequential_pvalue",
    "sign_test_n",
    "spread",
    "spread_ratio",
    "two_sided_family",
    "widen_between_runs",
    "zero_rate_n",
]
