"""The prompt group a curve probe measures at this look: the sequential design over a fixed prompt selection.

The runner asks for ``ctx.n`` more samples per decided group at every look of the claim's plan;
a probe with one value per prompt answers with the next ``ctx.n`` prompts of each pole, dealt in
the item's seeded order (:class:`claimcheck.probing.sampling.prompt_groups.PromptDealer`). Which
prompts each look read is kept in the probe's info (``prompt_groups``), which is also how the
dealer is rebuilt at the next look. A one-look plan (``ctx.looks``, set by the runner) gets
the whole selection at once, as before.
"""

from __future__ import annotations

from typing import Sequence

from claimcheck.api import ProbeContext
from .curve_prompts import CurvePrompt

GROUPS_INFO = "prompt_groups"


def prompt_group(ctx: ProbeContext, chosen: Sequence[CurvePrompt]) -> list[CurvePrompt]:
    """The prompts of this look: the next ``ctx.n`` of each pole not yet measured (none once all are).

    With a one-look plan (``ctx.looks == 1``, also a direct call) the whole selection comes at once.
    """
    from claimcheck.api.sampling import PromptDealer

    if ctx.look == 0:
        ctx.info[GROUPS_INFO] = []
    elif not isinstance(ctx.info.get(GROUPS_INFO), list):
        ctx.info[GROUPS_INFO] = [[p.id for p in chosen]]  # a later look with no record: the design came whole
        return []
    record: list[list[str]] = ctx.info[GROUPS_INFO]
    dealer = PromptDealer(list(chosen), ctx.seed, stratum=lambda p: p.pole)
    by_id = {p.id: p for p in chosen}
    for ids in record:
        dealer.groups.append([by_id[name] for name in ids if name in by_id])
    group = dealer.deal(ctx.n if ctx.looks > 1 else len(chosen))
    record.append([p.id for p in group])
    return group
