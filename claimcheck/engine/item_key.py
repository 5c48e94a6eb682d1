"""An item's content key: everything its result depends on, hashed with the result cache's own key.

Two runs of an item under the same key measure the same thing in the same way, so a later run
may carry the earlier result forward instead of measuring again (``pytest --claims-changed``).
The key holds the item's claim document as resolved for the run (profile and grid point applied;
where the claim sits in its file is left out, so an edit of a neighbouring claim changes nothing),
the code and data the probe's measurement is made of (:mod:`claimcheck.engine.probe_code`), the identity of the model weights it names, the run
options that change a measurement (seed, alpha, budget scale, CV bound), and the result cache's
environment part (mlx, mlx-lm and claimcheck versions, machine class).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from claimcheck.claim import Claim
from claimcheck.engine.cache import content_key, environment_key
from claimcheck.engine.options import RunOptions
from claimcheck.engine.probe_code import measurement_digest
from claimcheck.probing.registry import RegisteredProbe

#: Bumped when the key's parts change meaning, so no older result is carried under a new rule.
KEY_VERSION = 2  # 2: the probe's imported modules and data files, not only its own file
#: What a claim record holds about where it was read, not what it says.
_PLACE = ("path", "line", "content_hash")


def claim_document(claim: Claim, params: Mapping[str, Any]) -> dict[str, Any]:
    """The item's claim as resolved for the run, without the file position."""
    record = claim.at_point(params).to_record()
    return {name: value for name, value in record.items() if name not in _PLACE}


@functools.lru_cache(maxsize=None)
def _file_digest(path: str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


def probe_source(probe: RegisteredProbe) -> str:
    """sha256 of the files the probe's measurement is made of: its module, what that imports, the data named.

    Falls back to the probe's own file, then to its module's name, where its source cannot be read.
    """
    module = probe.module or getattr(inspect.unwrap(probe.function), "__module__", "")
    code = measurement_digest(module) if module else ""
    if code:
        return code
    path = probe.file
    if not path:
        try:
            path = inspect.getsourcefile(inspect.unwrap(probe.function)) or ""
        except TypeError:
            path = ""
    return _file_digest(path) if path else f"module:{probe.module or probe.function.__module__}"


def model_name(probe: RegisteredProbe, params: Mapping[str, Any]) -> str | None:
    """The model an item measures: its ``model`` param, else the probe's default for it (None: no model)."""
    if "model" in params:
        return str(params["model"])
    try:
        default = inspect.signature(probe.function).parameters["model"].default
    except (KeyError, TypeError, ValueError):
        return None
    return None if default is inspect.Parameter.empty or default is None else str(default)


def item_key(claim: Claim, params: Mapping[str, Any], probe: RegisteredProbe, options: RunOptions,
             *, weights: str | None, environment: Mapping[str, Any] | None = None) -> str:
    """The item's content key (hex sha256), from the result cache's key function.

    Args:
        claim: the item's claim with the run's profile applied.
        params: the item's probe params.
        weights: the identity of the weights of the model the item measures
            (:func:`claimcheck.models.identity.weights_identity` of :func:`model_name`); None: no model.
        environment: the environment part; default the result cache's (versions, machine class).
    """
    parts = {
        "kind": "item-result",
        "version": KEY_VERSION,
        "probe": probe.name,
        "claim": claim_document(claim, params),
        "params": dict(params),
        "probe_source": probe_source(probe),
        "weights": weights,
        "options": {"seed": options.seed, "alpha": options.alpha, "budget_scale": options.budget_scale,
                    "cv_bound": options.cv_bound},
    }
    canonical = json.loads(json.dumps(parts, default=str))  # labelled levels and tuples as the store writes them
    return content_key(canonical, _environment() if environment is None else environment)


@functools.lru_cache(maxsize=1)
def _environment() -> dict[str, str]:
    """The result cache's environment part, read once per process (it reads the machine's fingerprint)."""
    return environment_key()
