"""Every change of verdict after the decision, in one fixed order.

1. ``between-runs`` (per item, when it finishes): a timing item's decision widened by the
   between-run spread of its figure (earlier runs' estimates, a declared indifference margin, or
   the spread its rule assumes on a first run); a decisive verdict the wider interval does not
   support becomes inconclusive.
2. ``noise-gate`` (per item, when it finishes): a timing item whose samples are
   too noisy or drifting cannot be decided, so its verdict becomes inconclusive.
3. ``family`` (per run): refutations and holds must each survive Holm (or
   Benjamini–Hochberg) within their family: the sampled, in-scope items of the
   claims tree that share the claim's ``family:`` (default: its file); those that
   did not run count at p = 1 (:mod:`claimcheck.engine.families`).
4. ``cascade`` (per run): an item whose premise (``depends_on``) did not hold is stale, and so is
   one whose premise the source itself retracted (``retracted:``), on every machine.

Each step appends an :class:`~claimcheck.engine.result.Adjustment` to the result and
returns the new result; nothing else in the package changes a verdict.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from claimcheck.claim import Claim
from claimcheck.numbers import number
from claimcheck.engine.families import Member, family_level, group_members
from claimcheck.engine.result import Adjustment, ItemResult
from claimcheck.stats import Decision, noise_gate, samples_to_survive, spread_ratio, two_sided_family, widen_between_runs
from claimcheck.verdict import FAILED_PREMISE, Verdict, worst

STEPS = ("between-runs", "noise-gate", "family", "cascade")
ITEM_STEPS = STEPS[:2]  # applied as each item finishes; the rest are its run's
FAMILY_NAMES = {"holm": "Holm", "bh": "Benjamini–Hochberg"}
Groups = Sequence[tuple[str, Sequence[float]]]


def widen(result: ItemResult, history: Sequence[float]) -> ItemResult:
    """Step 1: a timing item's decision widened by its figure's between-run spread (:func:`widen_between_runs`).

    ``history`` holds the item's estimates in earlier complete runs on its machine class (plain numbers
    the caller read from the store). The result keeps the widened decision, whose interval and p-values
    the family and the reports read, and records the step as an adjustment from the within-run verdict,
    kept or weakened, so the verdict path shows what the run alone would have said. A decision whose
    hypothesis declares no between-run spread, a deterministic one and a shared item's are unchanged.
    """
    decision, reread = result.decision, between_runs_rereading(result.claim, history)
    if reread is None or decision is None or result.deterministic:
        return result
    widened = reread(decision)
    if widened is decision:
        return result
    step = Adjustment("between-runs", result.verdict, widened.verdict, widened.reason)
    return dataclasses.replace(result, decision=widened).adjusted(step)


def between_runs_rereading(claim: Claim, history: Sequence[float]) -> Callable[[Decision], Decision] | None:
    """What :func:`widen` will do to a timing item's decision, for its sequential loop to read at each look.

    A look decisive within the run that the between-run component would leave undecided then samples
    on instead of stopping (:class:`claimcheck.stats.Adaptation`); None for an item :func:`widen` leaves alone.
    """
    if not claim.timing:
        return None
    return partial(widen_between_runs, history=tuple(history), indifference=claim.indifference)


def between_runs_inflation(claim: Claim, history: Sequence[float]) -> Callable[[Decision, float, float], Callable[[float], float]] | None:
    """How much :func:`widen` will widen a timing item's SE once its within-run SE has shrunk, for its sequential loop.

    The futility stop then reads the chance of a verdict that survives the between-run component
    (:class:`claimcheck.stats.Adaptation`); None for an item :func:`widen` leaves alone.
    """
    if not claim.timing:
        return None
    return partial(spread_ratio, history=tuple(history), indifference=claim.indifference)


def gate_noise(result: ItemResult, groups: Groups, cv_bound: float) -> ItemResult:
    """Step 2: a timing item decided on a mean, or whose tested quantity is spiky or drifting.

    A mean of timing samples is never decided: rare spikes move it, and a sample can miss them
    all (5% spikes of x1.3 refute a true claim about the mean 46% of the time over looks at
    8/19/30, with or without a gate), so no interval for it is valid; the verdict becomes
    inconclusive with that reason. Timing outputs decide on the median unless a claim names the
    mean. For the median, the sequential loop gated every look (a flagged look kept sampling)
    and left the last look's problem in ``details["noise_gate"]``; a decided median stands,
    since its interval is valid under spikes, and the problem is recorded as an adjustment that
    keeps the verdict, so the reader still sees it.
    """
    decision = result.decision
    if not result.claim.timing or decision is None or result.deterministic:
        return result
    if decision.details.get("statistic") == "mean" and result.verdict is not Verdict.INCONCLUSIVE:
        found = ((label, noise_gate(values, cv_bound=cv_bound)) for label, values in groups)
        seen = next((f"; {label}: {p}" if label else f"; {p}" for label, p in found if p is not None), "")
        reason = (f"too noisy to decide on the mean (a timing output's mean has no interval valid under rare "
                  f"spikes, which {decision.n} samples can miss entirely; the median can be decided{seen}); "
                  f"would have been {result.verdict.value}: {result.reason}")
        return result.adjusted(Adjustment("noise-gate", result.verdict, Verdict.INCONCLUSIVE, reason))
    looks = decision.details.get("sequential") or {}
    if "gate_per_look" in looks:
        problem = decision.details.get("noise_gate")
    else:
        found = ((label, noise_gate(values, cv_bound=cv_bound)) for label, values in groups)
        problem = next((f"{label}: {p}" if label else p for label, p in found if p is not None), None)
    if problem is None:
        return result
    if result.verdict is Verdict.INCONCLUSIVE:
        return result.adjusted(Adjustment("noise-gate", result.verdict, Verdict.INCONCLUSIVE,
                                          f"{result.reason}; also {problem}"))
    if decision.details.get("statistic") == "median":
        reason = f"{result.reason} (noise noted: {problem}; the median's interval is valid under it, so it stands)"
        return result.adjusted(Adjustment("noise-gate", result.verdict, result.verdict, reason))
    reason = f"too noisy to decide ({problem}); would have been {result.verdict.value}: {result.reason}"
    return result.adjusted(Adjustment("noise-gate", result.verdict, Verdict.INCONCLUSIVE, reason))


def family_members(results: Sequence[ItemResult]) -> list[int]:
    """Indices of the results that enter the multiplicity family: a claim's decision with sampling error.

    Positive controls are left out: they test the measurement, not a claim.
    """
    return [index for index, result in enumerate(results)
            if result.decision is not None and not result.deterministic and result.control_for is None]


def correct_family(results: Sequence[ItemResult], method: str, *, collected: Mapping[str, float] | None = None,
                   alpha: float | None = None, families: Mapping[str, str] | None = None) -> list[ItemResult]:
    """Step 3: refutations and holds must each survive their family; one that does not is inconclusive.

    Args:
        results: the run's results.
        method: ``holm``, ``bh`` or ``none``.
        collected: item id -> alpha for every sampled, in-scope item of the suite, whether it ran
            or not; members without a decision count at p = 1, so the family does not depend on
            ``-k``, errors or budgets. None: the family is the run's decided items.
        alpha: each family's level (default: the mean of its members' alphas, so a lax member loosens no other).
        families: item id -> its family (:mod:`claimcheck.engine.families`); each family is adjusted
            on its own. None: every member is one family.

    Every refuted or holding member gets a ``family`` adjustment with the adjusted p-value of
    its own test, so a reader sees that a surviving verdict was tested too.
    """
    out = list(results)
    indices = family_members(results)
    if method == "none" or not indices:
        return out
    for name, group in sorted(group_members(results, indices, collected, families).items()):
        if any(member.position is not None for member in group):
            _correct_one(out, name if families is not None else None, group, method, alpha)
    return out


def _correct_one(out: list[ItemResult], name: str | None, group: Sequence[Member], method: str,
                 alpha: float | None) -> None:
    """Adjust one family's members in ``out`` (in place); ``name`` is said in the reasons when families are declared."""
    members = [m.member for m in group]
    level = family_level([m.alpha for m in members], alpha)
    outcomes = two_sided_family(members, method, level)  # type: ignore[arg-type]  # method is checked by pytest's choices
    size = len(members)
    without = sum(m.position is None for m in group)
    title = FAMILY_NAMES.get(method, method)
    over = (f"{title} over {size} items" + (f" of family {name}" if name else "") +
            (f" ({without} without a decision count at p = 1)" if without else ""))
    for member, outcome in zip(group, outcomes):
        if member.position is None:
            continue
        result = out[member.position]
        if result.verdict not in (Verdict.REFUTED, Verdict.HOLDS):
            continue
        test = "refutation" if result.verdict is Verdict.REFUTED else "hold"
        p_text = number(outcome.pvalue)
        if outcome.survived:
            reason = f"{result.reason} ({over}: adjusted {test} p = {p_text})"
        else:
            raw_p = decision.pvalue if (decision := result.decision) is not None and test == "refutation" else (
                decision.hold_pvalue if decision is not None else 1.0)
            taken = decision.n if decision is not None else 0
            needed = samples_to_survive(taken, raw_p, outcome.pvalue, level)
            budget = (f"; about n = {needed} at the measured effect would let it survive, against this run's "
                      f"n = {taken}") if needed is not None else ""
            reason = (f"{test} does not survive {over} (adjusted {test} p = {p_text} > {number(level)}{budget}); "
                      f"raw: {result.reason}")
        out[member.position] = result.adjusted(Adjustment("family", result.verdict, outcome.verdict, reason,
                                                       outcome.pvalue))


def claim_verdicts(results: Sequence[ItemResult]) -> dict[str, Verdict]:
    """One verdict per claim: its worst item."""
    by_claim: dict[str, list[Verdict]] = {}
    for result in results:
        by_claim.setdefault(result.claim_id, []).append(result.verdict)
    return {claim_id: chosen for claim_id, verdicts in by_claim.items() if (chosen := worst(verdicts))}


def stale_chains(results: Sequence[ItemResult], premises: Mapping[str, Sequence[str]],
                 elsewhere: Mapping[str, Verdict] | None = None,
                 retracted: Mapping[str, str] | None = None) -> dict[str, list[str]]:
    """Claims made stale by a failed or retracted premise, each with the chain down from the root.

    Args:
        results: this run's results.
        premises: claim id -> the ids it depends on (the whole suite's graph).
        elsewhere: verdicts of premises not run now (latest on this machine class).
        retracted: claim id -> why its source withdrew it. Such a premise fails whatever its
            verdict here (run or not): the source's own correction outranks a re-measurement
            of the premise, since the dependants were derived from the source's reasoning.
    """
    verdicts = dict(elsewhere or {})
    verdicts.update(claim_verdicts(results))
    withdrawn = dict(retracted or {})
    chains: dict[str, list[str]] = {}

    def chain_for(claim_id: str, seen: tuple[str, ...] = ()) -> list[str] | None:
        if claim_id in chains:
            return chains[claim_id]
        for premise in premises.get(claim_id, ()):
            if premise in seen:
                continue
            if premise in withdrawn:
                return [f"{premise} ({withdrawn[premise]})", claim_id]
            verdict = verdicts.get(premise)
            if verdict in FAILED_PREMISE:
                deeper = chain_for(premise, seen + (claim_id,))
                assert verdict is not None
                return (deeper or [f"{premise} ({verdict.value})"]) + [claim_id]
            deeper = chain_for(premise, seen + (claim_id,))
            if deeper:
                return deeper + [claim_id]
        return None

    for result in results:  # a figure resting on a withdrawn decomposition is withdrawn itself
        if withdrawn_figure(result):
            assert result.claim.retracted is not None
            chains.setdefault(result.claim_id, [f"{result.claim_id} ({result.claim.retracted.text()})"])
    for claim_id in sorted({r.claim_id for r in results}):
        chain = chain_for(claim_id)
        if chain:
            chains[claim_id] = chain
    return chains


def withdrawn_figure(result: ItemResult) -> bool:
    """True when this item's own figure rests on a decomposition its source withdrew."""
    retraction = result.claim.retracted
    return bool(retraction is not None and retraction.decomposition and result.control_for is None)


def cascade(results: Sequence[ItemResult], chains: Mapping[str, Sequence[str]]) -> list[ItemResult]:
    """Step 4: items that hold (or are undecided, or inconsistent within the source) on a failed premise become stale.

    A refutation stands whatever its premises; a figure that holds only for some of its source's
    readings does not, once the premise it bills is gone (the readings stay in its raw reason).
    A figure that itself rests on a decomposition its source withdrew is stale whatever its own
    verdict, refuted included: the source took back the reasoning it was derived from.
    """
    out = []
    for result in results:
        chain = chains.get(result.claim_id)
        own = withdrawn_figure(result)
        if chain and own and result.verdict in (Verdict.HOLDS, Verdict.INCONCLUSIVE, Verdict.INCONSISTENT,
                                                Verdict.REFUTED):
            retraction = result.claim.retracted
            assert retraction is not None
            reason = f"stale: {retraction.text()} (own verdict {result.verdict.value})"
            result = result.adjusted(Adjustment("cascade", result.verdict, Verdict.STALE, reason, chain=tuple(chain)))
        elif chain and result.verdict in (Verdict.HOLDS, Verdict.INCONCLUSIVE, Verdict.INCONSISTENT):
            how = "was retracted by its source" if "retracted by its source" in chain[0] else "did not hold"
            reason = f"stale: premise {how}: {' -> '.join(chain)} (own verdict {result.verdict.value})"
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
                   premise_verdicts: Callable[[set[str]], Mapping[str, Verdict]] | None = None,
                   collected: Mapping[str, float] | None = None, family_level: float | None = None,
                   retracted: Mapping[str, str] | None = None,
                   families: Mapping[str, str] | None = None) -> RunVerdicts:
    """Steps 3 and 4 over a run's results (steps 1 and 2 were applied as each item finished).

    Args:
        results: every result of the run, in a stable order.
        family: ``holm``, ``bh`` or ``none``.
        premises: claim id -> premise ids, for the whole suite.
        premise_verdicts: looks up verdicts of premises that did not run now.
        collected, family_level: the family's members and level (see :func:`correct_family`).
        retracted: claim id -> why its source withdrew it (see :func:`stale_chains`).
        families: item id -> its family (see :func:`correct_family`); None: one family.
    """
    corrected = correct_family(results, family, collected=collected, alpha=family_level, families=families)
    ran = {r.claim_id for r in corrected}
    wanted = {p for claim_id in ran for p in premises.get(claim_id, ())} - ran
    elsewhere = premise_verdicts(wanted) if wanted and premise_verdicts else {}
    chains = stale_chains(corrected, premises, elsewhere, retracted)
    return RunVerdicts(tuple(cascade(corrected, chains)), chains)
