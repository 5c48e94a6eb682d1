"""What a pytest run does with an item stuck in native code: store its result, close the run, say so.

Kept apart from :mod:`claimcheck.pytest_plugin.evidence` so that configuring pytest imports nothing of the store:
the store is imported only when an item hangs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from claimcheck.engine.result import ItemResult
    from claimcheck.pytest_plugin.session import ClaimSession


def hang_recorder(cs: ClaimSession) -> Callable[[ItemResult], str]:
    """The ``on_hang`` of the run's options (:mod:`claimcheck.engine.hang_watch`), bound to this session."""

    def record(result: ItemResult) -> str:
        from claimcheck.pytest_plugin import evidence

        return evidence.record_hung(cs, result)

    return record
