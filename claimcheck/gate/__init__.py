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
3. every figure in the sentence in a unit the claim states or measures agrees, two-sided, with
   the claim's own stated figure (``source.figure`` read with its printed precision, bounds such
   as "≥ 2" one-sided) and does not contradict the interval measured on the gating class; a
   figure on the claimed side of a threshold but not the source's figure is an error. With
   several anchors in a sentence, each anchor takes the figures between it and the previous one.
4. A figure measured elsewhere is allowed only when the sentence names that machine
   (``M1 Max``, ``H200``, ``CPU``...): its measured side is then checked against that machine
   class's result if the evidence has one.

A ``<!-- measured: ID ... on CLASS -->`` marker anchors the figure before it to the run that
measured it: it must lie within that run's interval, widened only by its printed precision.

With ``--changed-since REF``, figures on lines changed since ``REF`` that anchor no claim are
reported (errors with ``--strict-changed``, with figures citing undecided claims or in units the
parser cannot read), and a coverage line counts verified, unanchored and undecided figures.

Every problem is one line, ``file:line:column: message``; the exit status is 1 when any
error was found and 2 when the gate could not run (bad git ref, unreadable store, missing
path or doc, unknown machine class).
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
