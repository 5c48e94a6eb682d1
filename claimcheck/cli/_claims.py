"""Subcommands over claim files: validate and new."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Sequence

from claimcheck.errors import ClaimcheckError

from ._base import FAILED, OK, UsageError, _fail


def _loader() -> ModuleType:
    """The claim loader, imported only by the commands that read claim files."""
    from claimcheck import loader

    return loader


def _load_probes(root: str) -> None:
    from claimcheck.probe import load_probe_modules

    try:
        load_probe_modules(root)
    except Exception as error:  # noqa: BLE001 - a broken probe module is an input error, shown in one line
        raise UsageError(f"cannot import the probes under {root}: {type(error).__name__}: {error}") from None


def _claims_tree(root: str, paths: Sequence[str]) -> list[Path]:
    """The claims folders premises may live in: ``<root>/claims`` and any ``claims`` folder above a path."""
    tree = [Path(root) / "claims"]
    for raw in paths:
        tree += [parent for parent in Path(raw).resolve().parents if parent.name == "claims"]
    return sorted({folder.resolve() for folder in tree if folder.is_dir()})


def cmd_validate(args: argparse.Namespace) -> int:
    paths = args.paths or ["claims"]
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        return _fail(f"validate: no such file or folder: {', '.join(missing)}")
    if not args.no_probes:
        _load_probes(args.root)
    errors, drafts = _loader().validate_paths(paths, probes=not args.no_probes, tree=_claims_tree(args.root, paths))
    for error in errors:
        print(error)
    for draft in drafts:
        print(f"{draft.path}:{draft.line}: draft `{draft.id}` is not run until completed: missing "
              f"{', '.join(draft.missing)}")
    files = list(_loader().iter_claim_files(paths))
    if errors:
        print(f"{len(errors)} problem(s) in {len(files)} file(s)", file=sys.stderr)
        return FAILED
    print(f"{len(files)} claim file(s) valid" + (f", {len(drafts)} draft(s)" if drafts else ""))
    return OK


def _parse_value(text: str) -> Any:
    """A flag value as YAML would read it (numbers, booleans, lists), else the text."""
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return text if value is None or isinstance(value, dict) else value


def _pairs(values: Sequence[str] | None, flag: str, *, as_list: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for entry in values or []:
        key, sep, raw = entry.partition("=")
        if not sep or not key:
            raise UsageError(f"new: {flag} expects key=value, got {entry!r}")
        if as_list:
            out[key] = [_parse_value(v) for v in raw.split(",")]
        else:
            out[key] = _parse_value(raw)
    return out


NEW_FIELDS: tuple[tuple[str, str, str], ...] = (
    # (attribute, claim path, prompt)
    ("id", "id", "claim id (slug: a-z, 0-9, -)"),
    ("title", "title", "one-line title"),
    ("statement", "statement", "the claim in your own words"),
    ("doc", "source.doc", "source document"),
    ("section", "source.section", "section of the source"),
    ("figure", "source.figure", "the figure restated, verbatim"),
    ("scope_kind", "scope.kind", "scope kind (portable / as-stated)"),
    ("probe", "probe.name", "probe name"),
    ("rule", "check.rule", "decision rule"),
)


def build_claim(args: argparse.Namespace) -> dict[str, Any]:
    """The claim mapping in schema order, from the flags (only what was given)."""
    claim: dict[str, Any] = {"id": args.id, "title": args.title, "statement": args.statement}
    claim["source"] = {"doc": args.doc, "section": args.section, "figure": args.figure}
    scope = {"kind": args.scope_kind, "backend": args.backend, "device": args.device, "model": args.model,
             "min_memory_gib": args.min_memory_gib}
    claim["scope"] = {k: v for k, v in scope.items() if v is not None}
    probe: dict[str, Any] = {"name": args.probe}
    if args.param:
        probe["params"] = _pairs(args.param, "--param")
    if args.grid:
        probe["grid"] = _pairs(args.grid, "--grid", as_list=True)
    claim["probe"] = probe
    check = {
        "rule": args.rule, "output": args.output, "reference": args.reference,
        "outputs": args.outputs.split(",") if args.outputs else None, "over": args.over,
        "threshold": args.threshold, "bound": args.bound, "margin": args.margin, "scale": args.scale,
        "direction": args.direction, "expected": args.expected, "tolerance": args.tolerance, "unit": args.unit,
        "alpha": args.alpha,
    }
    claim["check"] = {k: v for k, v in check.items() if v is not None}
    if args.tags:
        claim["tags"] = [t.strip() for t in args.tags.split(",") if t.strip()]
    if args.depends_on:
        claim["depends_on"] = [t.strip() for t in args.depends_on.split(",") if t.strip()]
    if args.notes:
        claim["notes"] = args.notes
    return claim


def _ask(args: argparse.Namespace, ask: Callable[[str], str]) -> None:
    """Prompt for every required field the flags left out."""
    for attribute, path, prompt in NEW_FIELDS:
        while not getattr(args, attribute):
            answer = ask(f"{prompt} [{path}]: ").strip()
            if answer:
                setattr(args, attribute, answer)
    if args.rule in ("at_least", "at_most", "ratio", "rate_at_most", "zero_rate", "monotone", "exact",
                     "equivalent") and not args.output:
        args.output = ask("probe output the rule reads [check.output]: ").strip() or None
    numeric = {"at_least": "threshold", "at_most": "threshold", "ratio": "threshold", "rate_at_most": "threshold",
               "zero_rate": "threshold", "equivalent": "margin", "exact": "expected"}
    name = numeric.get(args.rule)
    if name and getattr(args, name) is None:
        answer = ask(f"{name} [check.{name}]: ").strip()
        if answer:
            try:
                setattr(args, name, float(answer))
            except ValueError:
                raise UsageError(f"new: check.{name} must be a number, got {answer!r}") from None


def render_claim(claim: dict[str, Any]) -> str:
    import yaml

    return yaml.safe_dump(claim, sort_keys=False, allow_unicode=True, width=100)


def cmd_new(args: argparse.Namespace, ask: Callable[[str], str] | None = None) -> int:
    missing = [path for attribute, path, _ in NEW_FIELDS if not getattr(args, attribute)]
    if missing:
        interactive = args.interactive or (args.interactive is None and sys.stdin.isatty())
        if not interactive:
            return _fail(f"new: missing {', '.join(missing)} (give them as flags, or run interactively)")
        _ask(args, ask or input)
    claim = build_claim(args)
    target = Path(args.out) if args.out else Path(args.claims_dir) / f"{args.id}.yaml"
    rendered = render_claim(claim)
    loader = _loader()
    try:
        (built,) = loader.load_claims_text(rendered, str(target))
        if not args.no_probes:
            _load_probes(args.root)
            loader.check_probe(built)
    except ClaimcheckError as error:
        return _fail(f"new: {error}")
    if args.stdout:
        sys.stdout.write(rendered)
        return OK
    if not args.force:
        for path in loader.iter_claim_files([args.claims_dir, target] if Path(args.claims_dir).exists() else [target]):
            if not path.exists():
                continue
            try:
                ids = [c.id for c in loader.read_claim_file(path, with_drafts=True)]
            except ClaimcheckError:
                continue  # a broken neighbour is `validate`'s business, not a reason to refuse
            if args.id in ids:
                return _fail(f"new: claim id `{args.id}` already exists in {path} (use --force to write anyway)")
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists() and target.read_text(encoding="utf-8").strip():
        with target.open("a", encoding="utf-8") as handle:
            handle.write("---\n" + rendered)
    else:
        target.write_text(rendered, encoding="utf-8")
    print(f"wrote claim `{args.id}` to {target}")
    return OK
