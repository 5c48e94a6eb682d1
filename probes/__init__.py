"""The probes shipped with claimcheck (installed as ``claimcheck_probes``), one subpackage per family.

- ``figures``: a doc's derived figures recomputed from its printed inputs and safetensors headers;
- ``ops``: two MLX ops on the same inputs, timed and compared (``op_pair``, ``op_expr``);
- ``decode``: weight reads against memory bandwidth, MoE expert reads, KV-cache steps, the decode loop;
- ``text``: cloze accuracy on a shipped data set, repetition and diversity of sampled generations;
- ``curves``: sampling curves against the greedy path (fork maps, route hazards, temperature searches).

``data/`` holds the files they read (prompt sets, the cloze items, a worked claim per probe). A claim names
a probe by its registered name, never by its module. The module names of the flat layout
(``claimcheck_probes.op_pair``) still import, with a DeprecationWarning, until 1.0 (:mod:`._moved`).
"""

from types import ModuleType

from . import _moved

_moved.install(__name__, __path__)


def __getattr__(name: str) -> ModuleType:
    """``claimcheck_probes.op_pair`` read as an attribute: the module at its new name, with the warning."""
    return _moved.attribute(__name__, name)
