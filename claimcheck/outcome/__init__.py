"""What a final verdict means and how it is shown: the verdict policy and one finding per item.

The stage after adjudication. :mod:`claimcheck.outcome.policy` is the one table from a verdict (with its
expectation, role and the run's flags) to its consequences; :mod:`claimcheck.outcome.finding` builds the
:class:`Finding` every surface renders.
"""

from claimcheck.outcome.finding import Finding, figure_of, find, find_all, judged
from claimcheck.outcome.policy import COLOURS, Flags, Role, Treatment, colour, treat

__all__ = ["COLOURS", "Finding", "Flags", "Role", "Treatment", "colour", "figure_of", "find", "find_all", "judged",
           "treat"]
