"""Check values set per grid point: ``threshold: {by: size_mib, values: {32: 0.5, 128: 0.7}}``.

The loader reads the mapping's shape here and checks it against the claim: ``by`` names a grid
axis, every value of that axis (in ``probe.grid``, in each profile's grid, and the control's)
has a number, no number is for a value no grid lists, and each number is valid for the rule.
Each problem is one :class:`~claimcheck.errors.ClaimError` at its own field's line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from claimcheck.claim import PointValues
from claimcheck.errors import ClaimError
from claimcheck.claims.schema import rule_problems

ErrorAt = Callable[[str, str], ClaimError]  # (field path, message) -> the error at that field's line


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return f"boolean {value!r}"
    if isinstance(value, (int, float)):
        return f"number {value!r}"
    if isinstance(value, str):
        return f"text {value!r}"
    return "nothing" if value is None else "a list" if isinstance(value, list) else "a mapping"


def read_points(value: dict[str, Any], path: str, error: ErrorAt) -> PointValues:
    """A number set per grid point, ``{by: axis, values: {grid value: number}}`` (its shape only)."""
    for key in value:
        if key not in ("by", "values"):
            raise error(f"{path}.{key}", f"unknown key `{key}` in a per-point value; it takes `by` "
                                         "(a grid axis) and `values` (grid value -> number)")
    axis, values = value.get("by"), value.get("values")
    if not isinstance(axis, str) or not axis:
        raise error(f"{path}.by" if "by" in value else path,
                    f"a per-point value needs `by: <grid axis>`, got {_type_name(axis)}")
    if not isinstance(values, dict) or not values:
        raise error(f"{path}.values" if "values" in value else path,
                    f"a per-point value needs `values: {{<grid value>: <number>, ...}}`, got {_type_name(values)}")
    pairs = []
    for key, number in values.items():
        if isinstance(number, bool) or not isinstance(number, (int, float)):
            raise error(f"{path}.values.{key}", f"expected a number, got {_type_name(number)}")
        pairs.append((str(key), float(number)))
    return PointValues(axis, tuple(pairs))


def point_problems(check: dict[str, Any], data: dict[str, Any], error: ErrorAt) -> None:
    """Raise the first problem of the check's per-point values against the claim's grids and control."""
    grid = data["probe"].get("grid", {})
    profiles = data.get("profiles", {})
    for name, points in check.items():
        if not isinstance(points, PointValues):
            continue
        where = f"check.{name}"
        if points.axis not in grid:
            raise error(f"{where}.by", f"`{name}` is set per `{points.axis}`, which is not a grid axis of "
                                       f"`probe.grid` (axes: {', '.join(grid) or 'none'})")
        keys = [key for key, _ in points.values]
        places = [("probe.grid", grid[points.axis])]
        places += [(f"profiles.{profile}.grid", body["grid"][points.axis]) for profile, body in profiles.items()
                   if points.axis in body.get("grid", {})]
        covered: set[str] = set()
        for place, axis_values in places:
            covered |= {str(v) for v in axis_values}
            missing = [str(v) for v in axis_values if str(v) not in keys]
            if missing:
                raise error(f"{where}.values", f"`{name}` has no value for {points.axis} = {', '.join(missing)} "
                                               f"(`{place}.{points.axis}` lists it)")
        extra = [key for key in keys if key not in covered]
        if extra:
            raise error(f"{where}.values.{extra[0]}", f"`{name}` gives a value for {points.axis} = {extra[0]}, "
                                                      f"which no grid lists (grid: {', '.join(map(str, grid[points.axis]))})")
        control = (data.get("control") or {}).get("params", {})
        if points.axis in control and str(control[points.axis]) not in keys:
            raise error(f"control.params.{points.axis}", f"the control sets {points.axis} = "
                                                         f"{control[points.axis]}, for which `{where}` has no value")


def rule_check_problems(check: dict[str, Any], error: ErrorAt) -> None:
    """Raise the rule's first problem with the check, at every grid point of a per-point value."""
    per_point = {name: value for name, value in check.items() if isinstance(value, PointValues)}
    if not per_point:
        found = [(field, message) for field, message in rule_problems(check)]
    else:
        found = []
        first = {name: points.values[0][1] for name, points in per_point.items()}
        for name, points in per_point.items():
            for key, number in points.values:
                at_point = {**check, **first, name: number}
                found += [(f"check.{name}.values.{key}" if field == f"check.{name}" else field, message)
                          for field, message in rule_problems(at_point)]
    if found:
        raise error(*found[0])
