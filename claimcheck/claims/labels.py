"""Levels that carry a declared label: a list or mapping value named in item ids and level labels by a word.

A grid axis or an ``over:`` sweep whose values are lists (``shape: [64, 512]``) or mappings
(``inputs: {dist: uniform}``) is written as ``{label: value, ...}``; each value then reaches the
probe as the plain list or mapping it is, while every place that names a level (``shape=small``
in an item id, a sweep's ``over=label`` groups, ``level_ratio``'s ``level:``) reads its label, so
nothing is named by a Python repr.
"""

from __future__ import annotations

from typing import Any

from claimcheck.claims.schema import valid_id


class LabelledList(list[Any]):
    """A list-valued level; ``str()`` and formatting give its label, equality and JSON the list."""

    label: str

    def __str__(self) -> str:
        return self.label

    def __format__(self, spec: str) -> str:
        return format(self.label, spec)


class LabelledDict(dict[str, Any]):
    """A mapping-valued level; ``str()`` and formatting give its label, equality and JSON the mapping."""

    label: str

    def __str__(self) -> str:
        return self.label

    def __format__(self, spec: str) -> str:
        return format(self.label, spec)


def labelled(label: str, value: list[Any] | dict[str, Any]) -> LabelledList | LabelledDict:
    """``value`` carrying ``label``."""
    out: LabelledList | LabelledDict = LabelledList(value) if isinstance(value, list) else LabelledDict(value)
    out.label = label
    return out


def label_problem(label: object, value: object) -> str | None:
    """Why ``label: value`` is not a labelled level, or None."""
    if not isinstance(label, str) or not valid_id(label):
        return f"a level label must be a slug of a-z, 0-9 and '-'; got {label!r}"
    if not isinstance(value, (list, dict)) or not value:
        return (f"label `{label}` names {value!r}: labels are for list or mapping values (a plain value is "
                "named by itself; write the axis as a list)")
    return None


def labelled_levels(levels: dict[Any, Any]) -> list[Any]:
    """``{label: value}`` as a list of labelled values, in the written order (the caller checked each)."""
    return [labelled(str(label), value) for label, value in levels.items()]
