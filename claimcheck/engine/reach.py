"""Can a claim's design hold after its family's adjustment? The smallest hold p-value its budget allows.

A claim that can return *holds* is decided by a test whose hold p-value has a floor set by the
design alone: ``zero_rate`` (and ``rate_at_most``) with no event in n samples gives
``(1 - threshold)**n``; a median decided by the sign test gives ``0.5**n`` when every sample lies on
the claimed side (a two-arm median, ``1 / C(2n, n)``). No data can do better. A family tests member
i first at ``alpha_i * level / sum_j alpha_j`` (Holm's first step, :func:`~claimcheck.engine.families.stop_levels`),
so a member whose floor lies above that level can never keep a *holds*, however true the claim:
the design, not the evidence, decides it is inconclusive. Means (t) and other continuous
statistics have no floor from the design (their p-value falls with the effect and the spread);
they are listed with floor 0.

The floor is computed at the source's own outcome where the source prints one (0 of 924 matches
is "no event"), at the largest n the budget and the probe's design allow. The test
``tests/claims_faithful/test_family_reach.py`` checks the whole suite and prints the table with ``-s``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from claimcheck.claim import Claim

#: Rules whose decision can be *holds* only through a test (exact rules decide with p = 0).
_RATE_RULES = ("zero_rate", "rate_at_most")
_TWO_ARM_RULES = ("ratio", "equivalent", "monotone", "ordering", "level_ratio", "level_equivalent")
#: The default temperature grid of the §1 sweeps (methods E): 12 temperatures.
_SWEEP_PROBES = ("temperature_search", "temperature_fork")
_DEFAULT_TEMPERATURES = 12


@dataclass(frozen=True)
class Reach:
    """One item's design against its family.

    Attributes:
        item_id: the item.
        family: its family's name.
        size: members of the family on this machine (not-applicable items are not members).
        n: the largest number of samples the design can decide on.
        floor: the smallest hold p-value the design can reach (0: no floor from the design).
        level: the level Holm's first step tests this member at.
        test: how the floor was found.
    """

    item_id: str
    family: str
    size: int
    n: int
    floor: float
    level: float
    test: str

    @property
    def can_hold(self) -> bool:
        return self.floor <= self.level

    def line(self) -> str:
        mark = "ok  " if self.can_hold else "FAIL"
        return (f"{mark} {self.item_id}  [{self.family}, {self.size} members]  {self.test}, n = {self.n}: "
                f"floor p = {self.floor:.3g} {'<=' if self.can_hold else '>'} first Holm level {self.level:.3g}")


def design_samples(claim: Claim, params: Mapping[str, Any]) -> int:
    """The most samples one item of ``claim`` decides on: its budget, or fewer where the probe's design yields fewer.

    The §1 temperature sweeps yield temperatures x seeds per prompt (whatever the budget); the
    identity control yields prompts x seeds. Other probes are sampled up to the budget.
    """
    n = int(claim.budget.max_samples)
    probe = claim.probe.name
    if probe in _SWEEP_PROBES and not params.get("search_policy"):
        temperatures = params.get("temperatures")
        count = len(temperatures) if isinstance(temperatures, (list, tuple)) else _DEFAULT_TEMPERATURES
        return min(n, count * int(params.get("seeds", 1)))
    if probe == "identity_control":
        try:
            from probes.curves.curve_prompts import select_prompts

            prompts = len(select_prompts(params.get("prompts", "all")))
        except Exception:  # the probes package is not importable here: the budget is the bound
            return n
        return min(n, prompts * int(params.get("seeds", 1)))
    return n


def hold_floor(claim: Claim, n: int) -> tuple[float, str]:
    """The smallest hold p-value of ``claim``'s test at ``n`` samples, and the test's name."""
    check = claim.check
    rule = check.rule
    if rule in _RATE_RULES:
        threshold = float(check.params["threshold"])
        return (1 - threshold) ** n, f"{rule} at {threshold:g}, no event"
    if rule == "exact":
        return 0.0, "exact"
    named = check.params.get("statistic", "auto")
    median = named == "median" or (named == "auto" and claim.budget.exclusive)
    if not median:
        return 0.0, "mean (t): no design floor"
    if rule in _TWO_ARM_RULES and not check.params.get("paired"):
        return 1 / math.comb(2 * n, n), "unpaired median (rank), every pair on the claimed side"
    return 0.5 ** n, "median (sign test), every sample on the claimed side"


def family_reach(claims: Iterable[Claim], slots: Mapping[str, Any], profile: str | None = None) -> list[Reach]:
    """Every sampled member's floor against its family's first Holm level.

    Args:
        claims: the claims tree.
        slots: item id -> :class:`~claimcheck.engine.families.FamilySlot` (:func:`~claimcheck.engine.family_tree.tree_slots`).
        profile: the machine profile whose overrides apply to budgets and params.
    """
    from claimcheck.claims.loader import expand_grid, item_id
    from claimcheck.engine.families import stop_levels

    levels = stop_levels(slots, "holm")
    sizes: dict[str, int] = {}
    for slot in slots.values():
        sizes[slot.family] = sizes.get(slot.family, 0) + 1
    out = []
    for claim in claims:
        if claim.profiles and profile is not None:
            claim = claim.for_profile(profile)
        for point, params in expand_grid(claim):
            key = item_id(claim.id, point)
            if key not in slots:
                continue
            n = design_samples(claim, params)
            floor, test = hold_floor(claim, n)
            out.append(Reach(key, slots[key].family, sizes[slots[key].family], n, floor, levels[key], test))
    return out


def suite_reach(paths: Sequence[str | Path], machine: Mapping[str, Any] | None = None,
                profile: str = "cpu", unavailable: Any = None) -> list[Reach]:
    """:func:`family_reach` for the claims under ``paths`` on ``machine`` (default: a CPU).

    ``unavailable``: params -> why the item's model is not installed here (those items are not
    members); the plugin's :func:`claimcheck.pytest_plugin.session.unavailable_model`.
    """
    from claimcheck.claims.loader import load_claims
    from claimcheck.engine.family_tree import tree_slots
    from claimcheck.probing.registry import load_probe_modules

    load_probe_modules(str(Path.cwd()))
    claims = load_claims(paths)
    roots = [Path(p) for p in paths] + [Path.cwd()]
    machine = dict(machine or {"backend": "cpu", "device": "cpu"})
    slots = tree_slots(claims, profile, machine, roots, unavailable=unavailable)
    return family_reach(claims, slots, profile=profile)


def report(reach: Sequence[Reach]) -> tuple[list[str], bool]:
    """The table's lines (sorted by family) and whether every member can hold."""
    lines = [entry.line() for entry in sorted(reach, key=lambda r: (r.family, r.item_id))]
    failing = [r for r in reach if not r.can_hold]
    lines.append(f"{len(reach)} sampled members, {len(failing)} whose design cannot hold in its family")
    return lines, not failing
