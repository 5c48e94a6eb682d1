"""SQLite evidence store: every run, the claims as they were, every raw sample and decision.

The store is the memory of the suite. A report can be rebuilt from it at any
time, a figure can be followed across runs and machines, and stores from a CI
matrix can be merged into one. It is a single SQLite file in WAL mode so that
several processes can write different runs to it at once (``busy_timeout`` and
``BEGIN IMMEDIATE`` serialise the writers), and each item is written in its own
transaction so a run killed with SIGKILL keeps every item it finished.

Layout (schema version 3, kept in ``PRAGMA user_version``):

* ``runs``: one row per session: the suite and claims commits (``<sha>+dirty`` when the
  tree had uncommitted changes; see :func:`provenance`), machine
  fingerprint and class, options, status ``running | complete | incomplete``,
  and the writer's host and pid so a run whose process died can be told apart
  from one still going.
* ``claims``: each claim as it was in that run (content hash, text, scope,
  check), so a later edit of the YAML never rewrites old evidence.
* ``results``: one row per ``(run_id, item_id)`` with the decision flattened
  into columns for querying and the full outcome record kept as JSON. Written
  once; its verdict is the one the item finished with.
* ``plots``: the plot declaration of each probe the run used (kind, outputs, units), so its
  reports are drawn without importing the probes.
* ``adjustments``: append-only, one row per verdict change after the decision
  (noise gate, family correction, cascade), in order. The final verdict is the
  last one's; no row of ``results`` is ever updated to change a verdict.

A file with a newer or unknown schema is refused with one line and never
modified; an older one (version 0, the pre-release layout, 1 or 2) is migrated in place.
"""

from __future__ import annotations

from ._base import (APPLICATION_ID, BUSY_TIMEOUT_MS, DEFAULT_PATH, RUN_STATUSES, SCHEMA_VERSION, VERDICTS,
                    DuplicateResult, NotAStore, StoreError, dumps)
from ._copying import RunCopy
from ._evidence import evidence_runs, is_evidence, not_evidence, selection_of, shard_of
from ._merge import merge
from ._provenance import (CLAIMS_COMMIT_ENV, SUITE_COMMIT_ENV, Commit, Provenance, commit_environment, git_commits,
                          provenance)
from ._schema import V0_TABLES
from ._selection import ClassChoice, choose_class, this_machine_class
from ._store import EvidenceStore
from ._types import Drift, MergeResult, OutputUnit, RunRows, StoredPlot, StoredResult, StoredRun

__all__ = [
    "APPLICATION_ID", "BUSY_TIMEOUT_MS", "CLAIMS_COMMIT_ENV", "DEFAULT_PATH", "RUN_STATUSES", "SCHEMA_VERSION",
    "SUITE_COMMIT_ENV", "V0_TABLES", "VERDICTS",
    "ClassChoice", "Commit", "Drift", "DuplicateResult", "EvidenceStore", "MergeResult", "Provenance", "RunCopy",
    "NotAStore", "OutputUnit", "RunRows", "StoreError", "StoredPlot", "StoredResult", "StoredRun",
    "choose_class", "commit_environment", "evidence_runs", "is_evidence", "not_evidence", "selection_of", "shard_of", "dumps", "git_commits", "merge", "provenance", "this_machine_class",
]

