"""Every change of verdict after the decision, in one fixed order.

1. ``noise-gate`` (per item, when it finishes): a timing item whose samples are
   too noisy or drifting cannot be decided, so its verdict becomes inconclusive.
2. ``family`` (per run): refutations must survive Holm (or Benjamini–Hochberg)
   over the run's statistically decided items.
3. ``cascade`` (per run): an item whose premise (``depends_on``) did not hold is stale.

Each step appends an :class:`~claimcheck.result.Adjustment` to the result and
returns the new result; nothing else in the package changes a verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from claimcheck.numbers import number
from claimcheck.result import Adjustment, ItemResult
from claimcheck.stats import adjust_pvalues, noise_gate
from claimcheck.verdict import FAILED_PREMISE, Verdict, worst

STEPS = ("noise-gate", "family", "cascade")
FAMILY_NAMES = {"holm": "Holm", "bh": "Benjamini–Hochberg"}
Groups = Sequence[tuple[str, Sequence[float]]]


def gate_noise(result: ItemResult, groups: Groups, cv_bound: float) -> ItemResult:
    """Step 1: an exclusive (timing) item with noisy or drifting samples becomes inconclusive."""
    if not result.claim.budget.exclusive or result.decision is None or result.deterministic:
        return result
    for label, values in groups:
        problem = noise_gate(values, cv_bound=cv_bound)
        if problem is None:
            continue
        problem = f"{label}: {problem}" if label else problem
        if result.verdict is Verdict.INCONCLUSIVE:
            reason = f"{result.reason}; also {problem}"
        else:
            reason = f"too noisy to decide ({problem}); would have been {result.verdict.value}: {result.reason}"
        return result.adjusted(Adjustment("noise-gate", result.verdict, Verdict.INCONCLUSIVE, reason))
    return result


def family_members(results: Sequence[ItemResult]) -> list[int]:
    """Indices of the items that enter the multiplicity family: decided with sampling error."""
    return [
        index for index, result in enumerate(results)
        if result.decision is not None and not result.deterministic and result.verdict.decided
    ]


def correct_family(results: Sequence[ItemResult], method: str) -> list[ItemResult]:
    """Step 2: adjust the family's p-values; a refutation that does not survive becomes inconclusive.

    Every member gets a ``family`` adjustment with its adjusted p-value, so a reader sees that
    a surviving refutation was tested too.
    """
    out = list(results)
    members = family_members(results)
    if method == "none" or not members:
        return out
    pvalues = [decision.pvalue for i in members if (decision := results[i].decision) is not None]
    adjusted = adjust_pvalues(pvalues, method=method)  # type: ignore[arg-type]  # method is checked by pytest's choices
    name, size = FAMILY_NAMES.get(method, method), len(members)
    for index, p_adjusted in zip(members, adjusted):
        result = out[index]
        assert result.decision is not None
        alpha = result.decision.alpha
        p_text = number(float(p_adjusted))
        if result.verdict is Verdict.REFUTED and p_adjusted > alpha:
            after = Verdict.INCONCLUSIVE
            reason = (f"refutation does not survive {name} over {size} claims (adjusted p = {p_text} > "
                      f"{number(alpha)}); raw: {result.reason}")
        else:
            after = result.verdict
            reason = f"{result.reason} ({name} over {size} claims: adjusted p = {p_text})"
        out[index] = result.adjusted(Adjustment("family", result.verdict, after, reason, float(p_adjusted)))
    return out


def claim_verdicts(results: Sequence[ItemResult]) -> dict[str, Verdict]:
    """One verdict per claim: its worst item."""
    by_claim: dict[str, list[Verdict]] = {}
    for result in results:
        by_claim.setdefault(result.claim_id, []).append(result.verdict)
    return {claim_id: chosen for claim_id, verdicts in by_claim.items() if (chosen := worst(verdicts))}


def stale_chains(results: Sequence[ItemResult], premises: Mapping[str, Sequence[str]],
                 elsewhere: Mapping[str, Verdict] | None = None) -> dict[str, list[str]]:
    """Claims made stale by a failed premise, each with the chain down from the failing root.

    Args:
        results: this run's results.
        premises: claim id -> the ids it depends on (the whole suite's graph).
        elsewhere: verdicts of premises not run now (latest on this machine class).
    """
    verdicts = dict(elsewhere or {})
    verdicts.update(claim_verdicts(results))
    chains: dict[str, list[str]] = {}

    def chain_for(claim_id: str, seen: tuple[str, ...] = ()) -> list[str] | None:
        if claim_id in chains:
            return chains[claim_id]
        for premise in premises.get(claim_id, ()):
            if premise in seen:
                continue
            verdict = verdicts.get(premise)
            if verdict in FAILED_PREMISE:
                deeper = chain_for(premise, seen + (claim_id,))
                assert verdict is not None
                return (deeper or [f"{premise} ({verdict.value})"]) + [claim_id]
            deeper = chain_for(premise, seen + (claim_id,))
            if deeper:
                return deeper + [claim_id]
        return None

    for claim_id in sorted({r.claim_id for r in results}):
        chain = chain_for(claim_id)
        if chain:
            chains[claim_id] = chain
    return chains


def cascade(results: Sequence[ItemResult], chains: Mapping[str, Sequence[str]]) -> list[ItemResult]:
    """Step 3: items that hold (or are undecided) on a failed premise become stale."""
    out = []
    for result in results:
        chain = chains.get(result.claim_id)
        if chain and result.verdict in (Verdict.HOLDS, Verdict.INCONCLUSIVE):
            reason = f"stale: premise did not hold: {' -> '.join(chain)} (own verdict {result.verdict.value})"
            result = result.adjusted(Adjustment("cascade", result.verdict, Verdict.STALE, reason, chain=tuple(chain)))
        out.append(result)
    return out


@dataclass(frozen=True)
class RunVerdicts:
    """The run's results after every run-level step, and the premise chains behind stale items."""

    results: tuple[ItemResult, ...]
    chains: Mapping[str, Sequence[str]]

    def changed(self, before: Sequence[ItemResult]) -> list[tuple[ItemResult, ItemResult]]:
        """``(before, after)`` pairs whose final verdict moved."""
        return [(old, new) for old, new in zip(before, self.results) if old.verdict is not new.verdict]


def adjudicate_run(results: Sequence[ItemResult], *, family: str, premises: Mapping[str, Sequence[str]],
                   premise_verdicts: Callable[[set[str]], Mapping[str, Verdict]] | None = None) -> RunVerdicts:
    """Steps 2 and 3 over a run's results (step 1 was applied as each item finished).

    Args:
        results: every result of the run, in a stable order.
        family: ``holm``, ``bh`` or ``none``.
        premises: claim id -> premise ids, for the whole suite.
        premise_verdicts: looks up verdicts of premises that did not run now.
    """
    corrected = correct_family(results, family)
    ran = {r.claim_id for r in corrected}
    wanted = {p for claim_id in ran for p in premises.get(claim_id, ())} - ran
    elsewhere = premise_verdicts(wanted) if wanted and premise_verdicts else {}
    chains = stale_chains(corrected, premises, elsewhere)
    return RunVerdicts(tuple(cascade(corrected, chains)), chains)
