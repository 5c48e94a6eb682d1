"""Which machine class a reading command shows by default: the same rule for ``report``, ``docs`` and ``history``.

A store holds runs of several machine classes (merged profiles, a CI matrix). A
figure from another machine is a different measurement, so every reading command
starts from this machine's class, unless told otherwise with ``--machine-class``,
and says which class it chose and why.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._reading import StoreReading


@dataclass(frozen=True)
class ClassChoice:
    """The machine class chosen and how (printed by every command that reads runs)."""

    machine_class: str | None
    how: str

    def describe(self) -> str:
        """``machine class cpu/AMD EPYC/16-32GiB (this machine's class)``."""
        return f"machine class {self.machine_class or 'none'} ({self.how})"


def this_machine_class() -> str | None:
    """This machine's class, or ``None`` when it cannot be measured here."""
    try:
        from claimcheck.machine import machine_class

        return machine_class()
    except Exception:  # noqa: BLE001 - without MLX the fingerprint may be partial: fall back below
        return None


def choose_class(store: StoreReading | None, explicit: str | None = None, mine: str | None = None) -> ClassChoice:
    """This machine's class when the store has a run of it; else the class of the store's latest run.

    Args:
        store: the store read (``None``: nothing measured yet).
        explicit: ``--machine-class``, which always wins.
        mine: this machine's class when already known (measured once per command).
    """
    if explicit:
        return ClassChoice(explicit, "given with --machine-class")
    mine = mine if mine is not None else this_machine_class()
    if store is None:
        return ClassChoice(mine, "this machine's class; no evidence store")
    if mine and store.runs(mine, limit=1):
        return ClassChoice(mine, "this machine's class")
    latest = store.latest_run()
    if latest is None:
        return ClassChoice(mine, "this machine's class; the store has no runs")
    return ClassChoice(latest.machine_class,
                       f"the store's latest run; it has no run of this machine's class {mine or '(unknown)'}")
