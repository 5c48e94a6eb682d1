"""Turn claim YAML files into validated :class:`~claimcheck.claim.Claim` objects.

Every problem is reported as one :class:`~claimcheck.errors.ClaimError` line
naming ``file:line`` and the field path, with what was expected and what was
found (and a did-you-mean for misspelt keys). Nothing in a claim file is ever
evaluated: values are data, probes are looked up by name.
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import json
import math
import collections.abc
import dataclasses
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from claimcheck import rules
from claimcheck.claim import Budget, Check, Claim, Control, PointValues, Profile, ProbeSpec, Retraction, Scope, Source
from claimcheck.errors import ClaimError
from claimcheck.claims.labels import label_problem, labelled_levels
from claimcheck.claims.per_point import point_problems, read_points, rule_check_problems
from claimcheck.claims.premises import dependency_problems, duplicate_problems
from claimcheck.probing.registry import RegisteredProbe, UnknownProbeError, get_probe
from claimcheck.claims.schema import SECTIONS, Field, valid_id
from claimcheck.claims.yamlsafe import LocatedDocument, load_documents
from claimcheck.suggest import closest, did_you_mean

CLAIM_SUFFIXES = (".yaml", ".yml")
MAX_GRID_ITEMS = 10_000
DRAFT_PROBE = "TODO"


@dataclass(frozen=True)
class Draft:
    """A drafted claim: readable, never run; lists what a person must still fill in."""

    id: str
    path: str
    line: int
    missing: tuple[str, ...]


def _type_name(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"boolean {value!r}"
    if isinstance(value, (int, float)):
        return f"number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"text {shown!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


class _Validator:
    """Checks one located document against :data:`claimcheck.claims.schema.SECTIONS`."""

    def __init__(self, doc: LocatedDocument, path: str) -> None:
        self.doc = doc
        self.path = path

    def error(self, field: str, message: str) -> ClaimError:
        return ClaimError(self.path, self.doc.line_of(field), field, message)

    def section(self, value: Any, section: str, *, draft: bool = False, schema: str | None = None) -> dict[str, Any]:
        where = section or "claim"
        if not isinstance(value, dict):
            raise self.error(section, f"expected a mapping for `{where}`, got {_type_name(value)}")
        fields = SECTIONS[section if schema is None else schema]
        for key in value:
            if key not in fields:
                match = closest(key, fields)
                hint = f"; did you mean `{match}`?" if match else f"; known: {', '.join(fields)}"
                raise self.error(self.join(section, key), f"unknown key `{key}`{hint}")
        out: dict[str, Any] = {}
        for name, spec in fields.items():
            path = self.join(section, name)
            if name not in value or value[name] is None:
                if spec.required and not draft:
                    raise self.error(section, f"missing required field `{path}` ({spec.description})")
                continue
            if spec.kind == "section":
                out[name] = self.section(value[name], path, draft=draft, schema=name)
            else:
                out[name] = self.field(value[name], path, spec)
        return out

    def labelled(self, levels: dict[Any, Any], path: str) -> list[Any]:
        """``{label: value}`` levels as labelled values, each label and value checked."""
        for label, level in levels.items():
            problem = label_problem(label, level)
            if problem:
                raise self.error(path, problem)
        return labelled_levels(levels)

    @staticmethod
    def join(section: str, name: str) -> str:
        return f"{section}.{name}" if section else name

    def field(self, value: Any, path: str, spec: Field) -> Any:
        def wrong(expected: str) -> ClaimError:
            return self.error(path, f"expected {expected}, got {_type_name(value)}")

        kind = spec.kind
        if kind == "str":
            if not isinstance(value, str) or not value.strip():
                raise wrong("non-empty text")
        elif kind == "bool":
            if not isinstance(value, bool):
                raise wrong("true or false")
        elif kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise wrong("a whole number")
        elif kind == "number":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise wrong("a number")
            value = float(value)
        elif kind == "point-number":
            if isinstance(value, dict):
                return read_points(value, path, self.error)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self.error(path, f"expected a number, got {_type_name(value)} (or one per grid point: "
                                       "{by: <grid axis>, values: {<grid value>: <number>, ...}})")
            value = float(value)
        elif kind == "scalar":
            if isinstance(value, (dict, list)) or value == "":
                raise wrong("one value (text, a number or a boolean)")
        elif kind == "str-list":
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise wrong("a list of text values")
            value = tuple(value)
        elif kind == "map":
            if not isinstance(value, dict):
                raise wrong("a mapping")
        elif kind == "checks":
            if not isinstance(value, list) or len(value) < 2 or not all(isinstance(v, dict) for v in value):
                raise wrong("a list of at least two checks, each {name: <slug>, rule: ..., ...}")
        elif kind == "profiles":
            if not isinstance(value, dict):
                raise wrong("a mapping of profile name -> params/grid/budget")
            value = {str(name): self.section(body, f"{path}.{name}", schema="profile")
                     for name, body in value.items()}
        elif kind == "grid":
            if not isinstance(value, dict):
                raise wrong("a mapping of param -> list of values")
            value = dict(value)
            for key, values in value.items():
                if isinstance(values, dict) and values:
                    value[key] = self.labelled(values, f"{path}.{key}")
                    continue
                if not isinstance(values, list) or not values:
                    raise self.error(f"{path}.{key}", f"expected a non-empty list of values, got {_type_name(values)}")
                for item in values:
                    if isinstance(item, (dict, list)):
                        raise self.error(f"{path}.{key}", "list or mapping values need a label each: write the axis "
                                                          "as {label: value, ...} (e.g. {small: [64, 512]})")
        if spec.choices and value not in spec.choices:
            hint = did_you_mean(value, spec.choices)
            raise self.error(path, f"expected one of {', '.join(spec.choices)}, got {value!r}{hint}")
        if spec.pattern and isinstance(value, str) and not valid_id(value):
            raise self.error(path, f"expected a slug of a-z, 0-9 and '-' (at most 80 characters), got {value!r}")
        if isinstance(value, float):
            low, high = spec.minimum, spec.maximum
            if low is not None and (value <= low if spec.exclusive_bounds else value < low):
                raise self.error(path, f"expected a number {'>' if spec.exclusive_bounds else '>='} {low:g}, got {value:g}")
            if high is not None and (value >= high if spec.exclusive_bounds else value > high):
                raise self.error(path, f"expected a number {'<' if spec.exclusive_bounds else '<='} {high:g}, got {value:g}")
        if kind == "int" and spec.minimum is not None and value < spec.minimum:
            raise self.error(path, f"expected a whole number >= {spec.minimum:g}, got {value}")
        if kind == "int" and spec.maximum is not None and value > spec.maximum:
            raise self.error(path, f"expected a whole number <= {spec.maximum:g}, got {value}")
        return value


def _content_hash(doc: LocatedDocument) -> str:
    """Hash of what the claim states; its positive control is not part of it (adding one changes no verdict)."""
    value = {k: v for k, v in doc.value.items() if k != "control"} if isinstance(doc.value, dict) else doc.value
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _samples_in_order(budget: dict[str, Any]) -> bool:
    """Whether a budget's ``min_samples`` (where given) is within its ``max_samples`` (where given)."""
    return bool(budget.get("min_samples", 1) <= budget.get("max_samples", budget.get("min_samples", 1)))


def _build(doc: LocatedDocument, path: str) -> Claim | Draft:
    validator = _Validator(doc, path)
    raw = doc.value
    draft = isinstance(raw, dict) and raw.get("draft") is True
    if isinstance(raw, dict) and "family" in raw and raw["family"] is None:  # a family left empty names none
        raise validator.error("family", "expected non-empty text (the family's name), got nothing")
    data = validator.section(raw, "", draft=draft)
    if draft:
        return _draft(data, doc, path)
    if "check" not in data:
        raise validator.error("", "missing required field `check` (the decision rule and its numbers), "
                                  "or `checks:` for several on one measurement")
    if "name" in data["check"]:
        raise validator.error("check.name", "`name` names one of several `checks:`; a single `check:` takes none")
    check = data["check"]
    rule_check_problems(check, validator.error)
    point_problems(check, data, validator.error)
    budget = data.get("budget", {})
    if not _samples_in_order(budget):
        raise validator.error("budget.min_samples", "must not exceed `budget.max_samples`")
    probe = data["probe"]
    params, grid = probe.get("params", {}), probe.get("grid", {})
    items = math.prod(len(values) for values in grid.values())
    if items > MAX_GRID_ITEMS:
        raise validator.error("probe.grid", f"grid expands to {items} items; at most {MAX_GRID_ITEMS} are allowed")
    for key in grid:
        if key in params:
            raise validator.error(f"probe.grid.{key}", f"`{key}` is both a fixed param and a grid axis")
    over = check.get("over")
    if over is not None and isinstance(params.get(over), dict):
        params = {**params, over: validator.labelled(params[over], f"probe.params.{over}")}
    if over is not None:
        values = params.get(over)
        if not isinstance(values, list) or len(values) < 2:
            raise validator.error("check.over", f"`check.over` names `{over}`, which must be a probe param with a list of >= 2 values")
        level_problems = rules.get(check["rule"]).level_problems(check, values)
        if level_problems:
            raise validator.error(level_problems[0].field, level_problems[0].message)
    scope = data["scope"]
    control = data.get("control")
    no_control = None
    if control is not None and control.get("none"):
        if control.get("params"):
            raise validator.error("control.none", "a control either replaces probe params or says `none: true`, not both")
        no_control, control = control["why"], None
    elif control is not None and not control.get("params"):
        raise validator.error("control.params", "a control must replace at least one probe param "
                                                "(or say `none: true` with the reason in `why`)")
    if control is not None and not _samples_in_order({**budget, **(control.get("budget") or {})}):
        raise validator.error("control.budget.min_samples", "the control's budget would measure more samples "
                                                            "before its first decision than `max_samples` allows")
    return Claim(
        id=data["id"],
        title=data["title"],
        statement=data["statement"],
        source=Source(**{k: v for k, v in data["source"].items() if k != "line"}),
        scope=Scope(**scope),
        probe=ProbeSpec(name=probe["name"], params=dict(params), grid=dict(grid)),
        check=_check(check),
        budget=Budget(**budget),
        tags=tuple(data.get("tags", ())),
        depends_on=tuple(data.get("depends_on", ())),
        notes=data.get("notes"),
        indifference=float(data["indifference"]) if data.get("indifference") is not None else None,
        profiles={name: Profile(**body) for name, body in data.get("profiles", {}).items()},
        control=Control(dict(control["params"]), control["why"], dict(control.get("budget") or {}))
        if control is not None else None,
        no_control=no_control,
        retracted=Retraction(**data["retracted"]) if data.get("retracted") is not None else None,
        family=data["family"].strip() if data.get("family") is not None else None,
        path=path,
        line=doc.start_line,
        content_hash=_content_hash(doc),
        field_lines=dict(doc.lines),
    )


def _build_each(doc: LocatedDocument, path: str) -> list[Claim | Draft]:
    """The claims of one document: one, or one per entry of its ``checks:`` (each sharing the measurement)."""
    raw = doc.value
    if not isinstance(raw, dict) or "checks" not in raw or raw.get("draft") is True:
        return [_build(doc, path)]
    validator = _Validator(doc, path)
    if "check" in raw:
        raise validator.error("checks", "give either `check:` or `checks:`, not both")
    entries = validator.field(raw["checks"], "checks", SECTIONS[""]["checks"])
    base = raw.get("id")
    names: dict[str, int] = {}
    out: list[Claim | Draft] = []
    for index, entry in enumerate(entries):
        where = f"checks[{index}]"
        name = entry.get("name")
        if not isinstance(name, str) or not valid_id(name):
            raise validator.error(f"{where}.name" if "name" in entry else where,
                                  f"each of `checks:` needs `name:`, a slug of a-z, 0-9 and '-'; got {name!r}")
        if name in names:
            raise validator.error(f"{where}.name", f"check name `{name}` is used twice (also `checks[{names[name]}]`)")
        names[name] = index
        value = {**{k: v for k, v in raw.items() if k != "checks"}, "check": {k: v for k, v in entry.items()
                                                                               if k != "name"}}
        if isinstance(base, str):
            value["id"] = f"{base}--{name}"
        lines = {key: line for key, line in doc.lines.items() if not key.startswith("checks")}
        lines.update({"check" + key[len(where):]: line for key, line in doc.lines.items() if key.startswith(where)})
        try:
            built = _build(LocatedDocument(value, lines, doc.start_line), path)
        except ClaimError as error:
            field = error.field
            if field == "check" or field.startswith("check."):
                field = where + field[len("check"):]
            raise ClaimError(error.path, error.line, field, str(error.message).replace("`check.", f"`{where}.")) from None
        if isinstance(built, Claim):
            built = dataclasses.replace(built, measurement=base if isinstance(base, str) else None)
        out.append(built)
    return out


def _check(fields: dict[str, Any]) -> Check:
    """The typed check: selectors as fields, the rule's parameters (with its defaults) in ``params``."""
    rule = rules.get(fields["rule"])
    return Check(
        rule=rule.name, output=fields.get("output"), reference=fields.get("reference"), outputs=fields.get("outputs"),
        over=fields.get("over"), unit=fields.get("unit"), alpha=fields.get("alpha", 0.05),
        params=rule.values({k: v for k, v in fields.items() if not isinstance(v, PointValues)}),
        by_point={k: v for k, v in fields.items() if isinstance(v, PointValues)},
    )


def _draft(data: dict[str, Any], doc: LocatedDocument, path: str) -> Draft:
    missing = []
    for section, fields in SECTIONS.items():
        holder = data if not section else data.get(section, {})
        for name, spec in fields.items():
            if spec.required and (not isinstance(holder, dict) or name not in holder):
                missing.append(f"{section}.{name}" if section else name)
    if data.get("probe", {}).get("name") in (None, DRAFT_PROBE):
        missing.append("probe.name (still TODO)")
    if "statement" in data and "TODO" in data["statement"]:
        missing.append("statement (still a placeholder)")
    return Draft(id=data.get("id", "?"), path=path, line=doc.start_line, missing=tuple(dict.fromkeys(missing)))


def load_claims_text(text: str, path: str = "<text>", *, with_drafts: bool = False) -> list[Any]:
    """Parse every claim document in ``text``; drafts are returned only if asked for."""
    out: list[Any] = []
    for doc in load_documents(text, path):
        for built in _build_each(doc, path):
            if isinstance(built, Claim) or with_drafts:
                out.append(built)
    return out


def iter_claim_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Claim files under ``paths`` (files as given, folders searched recursively), sorted."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.suffix in CLAIM_SUFFIXES and p.is_file())
        elif path.suffix in CLAIM_SUFFIXES:
            yield path


def read_claim_file(path: Path, *, with_drafts: bool = False) -> list[Any]:
    """Read and parse one claim file; unreadable bytes become a one-line error."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ClaimError(str(path), 1, "", f"not UTF-8 text ({error.reason} at byte {error.start})") from None
    except OSError as error:
        raise ClaimError(str(path), 0, "", f"cannot read: {error.strerror}") from None
    return load_claims_text(text, str(path), with_drafts=with_drafts)


def load_claims(paths: Iterable[str | Path]) -> list[Claim]:
    """Load every claim under ``paths`` and check ids are unique across them."""
    claims: list[Claim] = []
    for path in iter_claim_files(paths):
        claims.extend(read_claim_file(path))
    check_unique_ids(claims)
    return claims


def check_unique_ids(claims: Iterable[Claim]) -> None:
    """Raise at the second occurrence of an id."""
    problems = duplicate_problems(claims)
    if problems:
        raise problems[0]


def check_dependencies(claims: Iterable[Claim]) -> None:
    """Unknown premises and cycles in ``depends_on`` are collection errors (the first is raised)."""
    problems = dependency_problems(list(claims))
    if problems:
        raise problems[0]


def check_probe(claim: Claim) -> RegisteredProbe:
    """Resolve the claim's probe and check params, grid values and outputs against it; raise the first problem."""
    registered, problems = probe_problems(claim)
    if problems:
        raise problems[0]
    assert registered is not None
    return registered


def probe_problems(claim: Claim) -> tuple[RegisteredProbe | None, list[ClaimError]]:
    """The claim's probe and every problem of the claim against it, each at the field's own line.

    Checks param names and types against the probe function's signature (grid and ``over``
    values one by one), output names against its declared outputs, and whether the rule
    can be decided from a deterministic probe.
    """

    def problem(field_path: str, message: str) -> ClaimError:
        return ClaimError(claim.path, claim.line_of(field_path), field_path, message)

    try:
        registered = get_probe(claim.probe.name)
    except UnknownProbeError as error:
        return None, [problem("probe.name", str(error))]
    found: list[ClaimError] = []
    signature = inspect.signature(registered.function)
    accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values())
    known = [name for name in signature.parameters if name != "ctx"]
    hints = _type_hints(registered)
    values: list[tuple[str, str, Any]] = []  # (field path, param name, one value the probe will receive)
    for name, value in claim.probe.params.items():
        if name == claim.check.over and isinstance(value, list):
            values.extend((f"probe.params.{name}", name, level) for level in value)
        else:
            values.append((f"probe.params.{name}", name, value))
    for name, axis in claim.probe.grid.items():
        values.extend((f"probe.grid.{name}", name, value) for value in axis)
    for profile_name, profile in claim.profiles.items():
        where = f"profiles.{profile_name}"
        values.extend((f"{where}.params.{name}", name, value) for name, value in profile.params.items()
                      if not (name == claim.check.over and isinstance(value, list)))
        values.extend((f"{where}.grid.{name}", name, value) for name, axis in profile.grid.items() for value in axis)
    if claim.control is not None:  # a control may list the `over` levels anew (e.g. in reverse)
        for name, value in claim.control.params.items():
            levels = value if name == claim.check.over and isinstance(value, list) else [value]
            values.extend((f"control.params.{name}", name, level) for level in levels)
    reported: set[str] = set()
    for field_path, name, value in values:
        if field_path in reported:
            continue
        if not accepts_any and name not in known:
            hint = did_you_mean(name, known) or f"; it takes: {', '.join(known) or 'nothing'}"
            found.append(problem(field_path, f"probe `{registered.name}` has no param `{name}`{hint}"))
            reported.add(field_path)
            continue
        expected = hints.get(name)
        if expected is not None and not _conforms(value, expected):
            found.append(problem(field_path, f"probe `{registered.name}` takes `{name}` as {_type_text(expected)}; "
                                             f"got {_type_name(value)}"))
            reported.add(field_path)
    found.extend(_declared_param_problems(claim, registered, problem, reported))
    if registered.outputs:
        check = claim.check
        for output in [check.output, check.reference, *(check.outputs or ())]:
            if output is not None and output not in registered.outputs:
                hint = did_you_mean(output, registered.outputs)
                found.append(problem("check.output", f"probe `{registered.name}` has no output `{output}`{hint}; "
                                                     f"it gives: {', '.join(registered.outputs)}"))
    if registered.deterministic:
        why = rules.get(claim.check.rule).needs_repeats(claim.check)
        if why:
            found.append(problem("check.rule", f"probe `{registered.name}` is deterministic: {why}"))
    return registered, found


def _declared_param_problems(claim: Claim, registered: RegisteredProbe, problem: Any,
                             reported: set[str]) -> list[ClaimError]:
    """The probe's own check of each param set the claim runs (grid points, ``over`` levels), once per message."""
    if registered.check_params is None:
        return []
    over = claim.check.over
    found: dict[str, ClaimError] = {}
    for _, params in expand_grid(claim):
        levels = params[over] if over and isinstance(params.get(over), list) else [None]
        for level in levels:
            point = {**params, over: level} if over and level is not None else params
            for name, message in registered.check_params(point):
                top = name.partition(".")[0]  # a probe may name a field inside a param: `a.expr`, `inputs.x.shape`
                where = f"probe.grid.{name}" if top in claim.probe.grid else f"probe.params.{name}"
                if where not in reported and f"probe.params.{top}" not in reported:
                    found.setdefault(f"{where}: {message}", problem(where, message))
    if claim.control is not None:  # the control runs the first grid point with its own params in place
        point = {**expand_grid(claim)[0][1], **claim.control.params}
        for name, message in registered.check_params(point):
            top = name.partition(".")[0]
            if top in claim.control.params and f"control.params.{top}" not in reported:
                where = f"control.params.{name}"
                found.setdefault(f"{where}: {message}", problem(where, message))
    return list(found.values())


def _type_hints(registered: RegisteredProbe) -> dict[str, Any]:
    """The probe function's resolved annotations; unresolvable ones are skipped, not guessed."""
    try:
        return typing.get_type_hints(registered.function)
    except Exception:  # noqa: BLE001 - a probe's annotations may name things not importable here
        return {}


def _conforms(value: Any, expected: Any) -> bool:
    """Whether a YAML value fits a probe parameter's annotation (unknown annotations accept anything)."""
    origin = typing.get_origin(expected)
    if expected is Any or expected is inspect.Parameter.empty:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_conforms(value, option) for option in typing.get_args(expected))
    if origin is typing.Literal:
        return value in typing.get_args(expected)
    if expected is type(None):
        return value is None
    if expected is bool:
        return isinstance(value, bool)
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if expected is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected is str:
        return isinstance(value, str)
    if origin in (list, tuple, collections.abc.Sequence) or expected in (list, tuple):
        if not isinstance(value, list):
            return False
        args = [arg for arg in typing.get_args(expected) if arg is not Ellipsis]
        return all(_conforms(item, args[0]) for item in value) if len(args) == 1 else True
    if origin is dict or expected is dict:
        return isinstance(value, dict)
    return True


def _type_text(expected: Any) -> str:
    """An annotation as a reader would write it: ``int``, ``list[float]``, ``str | None``."""
    if isinstance(expected, type) and not typing.get_args(expected):
        return expected.__name__
    return str(expected).replace("typing.", "")


def _format_value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def item_id(claim_id: str, grid_name: str) -> str:
    """The pytest item name of one grid point, ``claim-id[size_mib=256]`` (the claim id alone without a grid)."""
    return f"{claim_id}[{grid_name}]" if grid_name else claim_id


def expand_grid(claim: Claim) -> list[tuple[str, dict[str, Any]]]:
    """One ``(item name, params)`` per grid combination, e.g. ``("size_mib=256", {...})``."""
    if not claim.probe.grid:
        return [("", dict(claim.probe.params))]
    axes = list(claim.probe.grid)
    items = []
    for combination in itertools.product(*(claim.probe.grid[axis] for axis in axes)):
        params = dict(claim.probe.params)
        params.update(zip(axes, combination))
        name = ",".join(f"{axis}={_format_value(value)}" for axis, value in zip(axes, combination))
        items.append((name, params))
    return items


def validate_paths(paths: Iterable[str | Path], *, probes: bool = True,
                   tree: Iterable[str | Path] = ()) -> tuple[list[str], list[Draft]]:
    """Lint every claim file under ``paths`` without running anything; every problem, not the first.

    Args:
        paths: the files or folders to check.
        probes: also check each claim against its probe's signature.
        tree: the whole claims tree, whose claims premises may name (validating one file
            must not fail on a premise that lives in another).
    """
    errors: list[str] = []
    drafts: list[Draft] = []
    claims: list[Claim] = []
    for path in iter_claim_files(paths):
        built, problems = _read_each_document(path)
        errors.extend(str(problem) for problem in problems)
        for item in built:
            (drafts if isinstance(item, Draft) else claims).append(item)
    chosen = {Path(c.path).resolve() for c in claims}
    others: list[Claim] = []
    for path in iter_claim_files(tree):
        if path.resolve() not in chosen:
            others.extend(item for item in _read_each_document(path)[0] if isinstance(item, Claim))
    errors.extend(str(problem) for problem in duplicate_problems([*claims, *others])
                  if Path(problem.path).resolve() in chosen)
    errors.extend(str(problem) for problem in dependency_problems(claims, others))
    if probes:
        for claim in claims:
            errors.extend(str(error) for error in probe_problems(claim)[1])
    return errors, drafts


def _read_each_document(path: Path) -> tuple[list[Any], list[ClaimError]]:
    """Every document of a claim file, each parsed on its own so one bad document hides none of the others."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        return [], [ClaimError(str(path), 1, "", f"not UTF-8 text ({error.reason} at byte {error.start})")]
    except OSError as error:
        return [], [ClaimError(str(path), 0, "", f"cannot read: {error.strerror}")]
    try:
        documents = list(load_documents(text, str(path)))
    except ClaimError as error:
        return [], [error]
    built: list[Any] = []
    problems: list[ClaimError] = []
    for doc in documents:
        try:
            built.extend(_build_each(doc, str(path)))
        except ClaimError as error:
            problems.append(error)
    return built, problems
