"""Deal a fixed prompt selection out in groups, look by look, in a seeded order: the sequential design of a curve probe.

A curve experiment samples a fixed set (the fifteen prompts of the set, or the five of a pole)
and decides on one value per prompt. Tracing them all before deciding costs minutes per item on a
CPU; the claim is often decided by the first few. The runner's sequential plan
(:class:`claimcheck.stats.SequentialPlan`, the machinery of the timing rules: alpha spent over
the looks, exact t or sign boundaries where the sizes match the plan, the union bound where they
do not) already asks a probe for ``ctx.n`` more samples at each look; a :class:`PromptDealer`
answers with the next ``n`` prompts of each stratum (each pole), so a look's samples are a
balanced random group of the selection and the statistic is the same per-prompt one.

The order is a permutation drawn from the item's seed (stable across runs), so a run is
reproducible and every prompt is equally likely to be in an early group: an early look estimates
the same quantity as the whole selection, which is what makes stopping at it valid. When the
plan asks for at least the whole selection at once (a one-look budget), every prompt is dealt in
the first group, in selection order, exactly as a probe that returns its whole design.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

import numpy as np

Item = TypeVar("Item")


class PromptDealer(Generic[Item]):
    """The prompts of one selection, dealt ``n`` per stratum at a time in a seeded order.

    Args:
        items: the selection, in its own order.
        seed: the item's seed; the same seed deals the same groups.
        stratum: the stratum of an item (its pole); every stratum gets ``n`` per group.
    """

    def __init__(self, items: Sequence[Item], seed: int, stratum: Callable[[Item], Hashable] = lambda item: "") -> None:
        self.items = list(items)
        self._position = {id(item): index for index, item in enumerate(self.items)}
        rng = np.random.default_rng(int(seed) & 0xFFFFFFFF)
        strata: dict[Hashable, list[Item]] = {}
        for item in self.items:
            strata.setdefault(stratum(item), []).append(item)
        self._queues = {key: [members[i] for i in rng.permutation(len(members))] for key, members in strata.items()}
        self.groups: list[list[Item]] = []

    @property
    def dealt(self) -> int:
        return sum(len(group) for group in self.groups)

    @property
    def exhausted(self) -> bool:
        return self.dealt >= len(self.items)

    def deal(self, n: int) -> list[Item]:
        """The next ``n`` items of every stratum (fewer where one runs out), in selection order.

        Asking for at least a whole stratum's size in the first group deals everything.
        """
        taken = [item for group in self.groups for item in group]
        group: list[Item] = []
        for queue in self._queues.values():
            fresh = [item for item in queue if not any(item is other for other in taken)]
            group += fresh[: max(0, int(n))]
        group.sort(key=lambda item: self._position[id(item)])
        self.groups.append(group)
        return group
