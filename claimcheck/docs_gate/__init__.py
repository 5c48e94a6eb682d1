"""Docs gate: a sentence that cites a claim must agree with the claim's latest evidence.

A doc ties a sentence to a claim with an HTML comment, invisible on GitHub and in any
Markdown renderer::

    mlx's qmv kernel reaches **74–88%** of raw bandwidth on large matrices. <!-- claim: qmv-large-bw -->

Several claims: ``<!-- claim: qmv-large-bw, qmv-small-bw -->``. The comment anchors the
sentence it sits in, or the sentence it directly follows (same paragraph); in a table it
anchors its row. For every anchor the gate checks, on the *gating machine class*
(``--machine-class``, default: the class of the store's latest run):

1. the claim exists (and is not a draft);
2. its latest result there holds. Refuted, stale, inconclusive, error and missing results fail
   the gate, quoting the replacement sentence of the claim's correction report when there is one;
3. every figure in the sentence of the claim's unit family (``GB/s`` and ``TB/s`` alike;
   ``%`` and ``x`` and ratios alike) agrees with the measured interval, converted to the
   figure's unit, or with the band the claim states (threshold, expected ± tolerance). A
   point agrees when it lies inside (allowing its printed rounding, and 10% more for ``~``),
   a range when it overlaps. With several anchors in a sentence, each anchor takes the figures
   between it and the previous anchor; figures after the last anchor go to the last one.
4. A figure measured elsewhere is allowed only when the sentence names that machine
   (``M1 Max``, ``H200``, ``CPU``...): it is then checked against that machine class's result
   if the store has one, and otherwise accepted as a cited external figure.

With ``--changed-since REF``, figures with performance units on lines changed since ``REF``
(its merge base with ``HEAD``; untracked docs count as changed) in sentences that anchor no
claim are reported: a warning, or an error with ``--strict``.

Every problem is one line, ``file:line:column: message``; the exit status is 1 when any
error was found and 2 when the gate could not run (bad git ref, unreadable store).
"""

from __future__ import annotations

from ._agreement import item_interval
from ._anchors import class_matches, find_anchors, machines_named
from ._changes import GitError, changed_lines
from ._cli import main
from ._evidence import Evidence, claim_verdict, suggested_sentence
from ._gate import GateReport, check_docs, doc_files
from ._model import Anchor, ClaimInfo, Problem, load_claim_index

__all__ = [
    "Anchor", "ClaimInfo", "Evidence", "GateReport", "GitError", "Problem", "changed_lines", "check_docs",
    "claim_verdict", "class_matches", "doc_files", "find_anchors", "item_interval", "load_claim_index",
    "machines_named", "main", "suggested_sentence",
]
