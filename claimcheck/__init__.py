"""claimcheck: re-verify the figures of ML-systems docs on real models, with honest statistics.

Probe authors import from :mod:`claimcheck.api`. Module names that moved after 0.1.0 still import,
with a DeprecationWarning (:mod:`claimcheck._moved`).
"""

from claimcheck import _moved

_moved.install()
