"""Claim schema v1, declared once: the loader validates against it and the
published JSON Schema is generated from it by :func:`json_schema`, so editors
and the loader can never disagree. That file is ``schema/claim-v1.json`` in a
checkout and ``claimcheck/schemas/claim-v1.json`` in an installed package
(:func:`claimcheck.claims.schema_file.published_schema_path` says which). The
``check`` section's rule parameters come from the rule objects
(:mod:`claimcheck.rules`), not from this module."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from claimcheck import rules

SCHEMA_VERSION = 1
ID_PATTERN = r"^[a-z0-9][a-z0-9-]{0,79}$"
_ID_RE = re.compile(ID_PATTERN)


def valid_id(value: str) -> bool:
    """Claim ids become file names in reports/, so they are strict slugs."""
    return bool(_ID_RE.match(value))


@dataclass(frozen=True)
class Field:
    """One YAML field: its type, whether it is required, and what it means."""

    kind: str  # "str" | "int" | "number" | "point-number" | "scalar" | "bool" | "str-list" | "map" | "grid" | "section"
    description: str
    required: bool = False
    choices: tuple[str, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_bounds: bool = False
    pattern: str | None = None


def _rule_param_fields() -> dict[str, Field]:
    """One schema field per rule parameter name, across every rule (first declaration wins)."""
    out: dict[str, Field] = {}
    for rule in rules.registry().values():
        for param in rule.params:
            if param.name in out:
                known = out[param.name]
                if known.choices and param.choices:  # the union: each rule checks its own choices
                    merged = known.choices + tuple(c for c in param.choices if c not in known.choices)
                    out[param.name] = Field(known.kind, known.description, choices=merged)
                continue
            # a number may also be set per grid point: {by: axis, values: {grid value: number}}
            kind = getattr(param, "schema_kind", None) or {"number": "point-number", "choice": "str",
                                                           "bool": "bool"}[param.kind]
            out[param.name] = Field(kind, param.description, choices=param.choices or None)
    return out


SECTIONS: dict[str, dict[str, Field]] = {
    "": {
        "id": Field("str", "unique slug; used in pytest ids and report file names", True, pattern=ID_PATTERN),
        "title": Field("str", "one-line title", True),
        "statement": Field("str", "the claim in this project's own words", True),
        "source": Field("section", "where the claim was written", True),
        "scope": Field("section", "where the claim is asserted to hold", True),
        "probe": Field("section", "which registered probe measures it", True),
        "check": Field("section", "the decision rule and its numbers (or `checks:`, several on one measurement)"),
        "checks": Field("checks", "several checks on one measurement: each `{name: <slug>, rule: ..., ...}` becomes "
                        "its own item `<id>--<name>`; the probe is sampled once for all of them"),
        "budget": Field("section", "how much measuring it may cost"),
        "tags": Field("str-list", "labels; each becomes a pytest marker"),
        "depends_on": Field("str-list", "ids of claims this one takes as premises"),
        "family": Field("str", "the multiplicity family its items are tested in (Holm within it); default: "
                        "the claim file, as its path relative to the claims folder"),
        "notes": Field("str", "why the threshold or margin is what it is"),
        "indifference": Field("number", "margin of indifference at the edge (threshold units; a ratio's relative): "
                              "a timing item without 3 earlier runs must clear it to decide; it stands in for "
                              "the between-run spread, so declare no less than that spread", minimum=0),
        "draft": Field("bool", "a drafted claim that never runs until completed"),
        "control": Field("section", "positive control: probe params under which the claim must be refuted "
                         "(run beside the claim with --claims-controls)"),
        "retracted": Field("section", "where the source itself withdrew this claim: every claim resting on it "
                           "is stale on every machine, whatever this one measures"),
        "profiles": Field("profiles", "machine profile name (cpu, cuda, metal, or one chosen with "
                          "--claims-profile) -> params/grid/budget that scale the measurement to that machine"),
    },
    "profile": {
        "params": Field("map", "probe params replaced under this profile"),
        "grid": Field("grid", "grid axes replaced under this profile"),
        "budget": Field("section", "budget fields replaced under this profile"),
    },
    "control": {
        "params": Field("map", "probe params replaced for the control (grid axes it does not set take their "
                        "first value); required unless `none` is true"),
        "budget": Field("section", "budget fields replaced for the control alone (e.g. more rounds, so that a "
                        "large effect in serially dependent timings can be decided)"),
        "none": Field("bool", "no positive control exists for this claim (`why` gives the reason)"),
        "why": Field("str", "why the claim must be refuted under these params, or why no control exists", True),
    },
    "retracted": {
        "section": Field("str", "the section of the source that withdrew the claim", True),
        "figure": Field("str", "the source's own words withdrawing it, verbatim", True),
        "decomposition": Field("str", "the withdrawn decomposition this claim's figure rests on (e.g. \"§4(b)/(c)\"): "
                               "the figure itself is stale too, whatever it measures"),
    },
    "source": {
        "doc": Field("str", "source document file name", True),
        "section": Field("str", "section heading or number", True),
        "figure": Field("str", "the figure(s) the claim restates, verbatim", True),
        "line": Field("int", "line in the source document", minimum=1),
    },
    "scope": {
        "kind": Field("str", "as-stated: only where the doc measured; portable: everywhere", True,
                      choices=("as-stated", "portable")),
        "backend": Field("str", "MLX backend the claim is about", choices=("metal", "cuda", "cpu", "any")),
        "device": Field("str", "shell-style pattern matched against the device or chip name"),
        "model": Field("str", "shell-style pattern matched against the model under test"),
        "min_memory_gib": Field("number", "machines with less memory cannot run it", minimum=0),
    },
    "probe": {
        "name": Field("str", "registered probe name", True),
        "params": Field("map", "fixed keyword arguments for the probe"),
        "grid": Field("grid", "param -> list of values; one pytest item per combination"),
    },
    "check": {
        "rule": Field("str", "decision rule", True, choices=rules.names()),
        "output": Field("str", "probe output the rule reads (numerator, arm A)"),
        "reference": Field("str", "second probe output (denominator, arm B)"),
        "outputs": Field("str-list", "outputs in claimed order, for `ordering` (first > second > ...)"),
        "over": Field("str", "list-valued probe param swept inside one item (`monotone`, `ordering`, `level_ratio`)"),
        "unit": Field("str", "unit of the figure, for reports"),
        "alpha": Field("number", "error rate of the decision", minimum=0, maximum=0.5, exclusive_bounds=True),
        "name": Field("str", "in `checks:` only: the check's name (a slug); its item is `<id>--<name>`",
                      pattern=ID_PATTERN),
        **{name: spec for name, spec in _rule_param_fields().items()},
    },
    "budget": {
        "min_samples": Field("int", "samples before the first decision", minimum=1),
        "max_samples": Field("int", "samples at most", minimum=1),
        "max_seconds": Field("number", "wall-clock budget of the item", minimum=0, exclusive_bounds=True),
        "exclusive": Field("bool", "timing probe: never run beside another item"),
        "looks": Field("int", "sequential looks at the data", minimum=1, maximum=20),
    },
}

def rule_problems(check: dict[str, Any]) -> list[tuple[str, str]]:
    """Every ``(field, message)`` problem of a check's fields for its rule (empty when they fit)."""
    rule = check.get("rule")
    if rule not in rules.names():
        return []
    return [(problem.field, problem.message) for problem in rules.get(str(rule)).problems(check)]


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) equivalent of :data:`SECTIONS`."""

    def field_schema(name: str, spec: Field) -> dict[str, Any]:
        if spec.kind == "section":
            return section_schema(name)
        if spec.kind == "checks":
            return {"type": "array", "minItems": 2, "items": {"$ref": "#/properties/check"},
                    "description": spec.description}
        kinds: dict[str, dict[str, Any]] = {
            "str": {"type": "string"},
            "int": {"type": "integer"},
            "number": {"type": "number"},
            "bool": {"type": "boolean"},
            "str-list": {"type": "array", "items": {"type": "string"}},
            "map": {"type": "object"},
            "grid": {"type": "object", "additionalProperties": {"oneOf": [  # values, or {label: list or mapping}
                {"type": "array", "minItems": 1}, {"type": "object", "minProperties": 1}]}},
            "scalar": {"type": ["string", "number", "boolean"]},
            "point-number": {"oneOf": [{"type": "number"}, {
                "type": "object", "required": ["by", "values"], "additionalProperties": False,
                "properties": {"by": {"type": "string"},
                               "values": {"type": "object", "minProperties": 1,
                                          "additionalProperties": {"type": "number"}}}}]},
        }
        base = dict(kinds.get(spec.kind) or {"type": "object", "additionalProperties": section_schema("profile")})
        base["description"] = spec.description
        if spec.choices:
            base["enum"] = list(spec.choices)
        if spec.pattern:
            base["pattern"] = spec.pattern
        if spec.minimum is not None:
            base["exclusiveMinimum" if spec.exclusive_bounds else "minimum"] = spec.minimum
        if spec.maximum is not None:
            base["exclusiveMaximum" if spec.exclusive_bounds else "maximum"] = spec.maximum
        return base

    def section_schema(section: str) -> dict[str, Any]:
        fields = SECTIONS[section]
        return {
            "type": "object",
            "additionalProperties": False,
            "required": [name for name, spec in fields.items() if spec.required],
            "properties": {name: field_schema(name, spec) for name, spec in fields.items()},
        }

    schema = section_schema("")
    schema["properties"]["check"]["allOf"] = [
        {
            "if": {"properties": {"rule": {"const": rule.name}}, "required": ["rule"]},
            "then": {
                "required": sorted({*rule.required_selectors, *(p.name for p in rule.params if p.required)}),
                "properties": {name: True for name in sorted(rule.fields() | rules.COMMON_FIELDS | {"name"})},
                "additionalProperties": False,
            },
        }
        for rule in rules.registry().values()
    ]
    schema["oneOf"] = [{"required": ["check"]}, {"required": ["checks"]}]
    schema.update(
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://claimcheck.invalid/schema/claim-v1.json",
            "title": f"claimcheck claim (schema v{SCHEMA_VERSION})",
        }
    )
    return schema
