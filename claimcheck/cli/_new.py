"""``claimcheck new``: scaffold a claim from flags or prompts, ask a measured claim for its control, and print
the commands that take it to the lock."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from claimcheck.errors import ClaimcheckError

from ._base import OK, UsageError, _fail
from ._claims import _load_probes, _loader


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
    if getattr(args, "no_control", None):
        claim["control"] = {"none": True, "why": args.no_control}
    elif getattr(args, "control", None):
        claim["control"] = {"params": _pairs(args.control, "--control"), "why": args.control_why}
    return claim


#: An answer's problem in one line, or None when it is acceptable.
Check = Callable[[str], "str | None"]


def _answer_checks(args: argparse.Namespace) -> dict[str, Check]:
    """What makes an answer acceptable, per field, so a typo is asked again instead of ending the dialogue."""
    from claimcheck import rules
    from claimcheck.claims import schema

    def slug(value: str) -> str | None:
        return None if schema.valid_id(value) else "expected a slug (a-z, 0-9 and -, at most 80 characters)"

    def scope_kind(value: str) -> str | None:
        return None if value in ("portable", "as-stated") else "expected `portable` or `as-stated`"

    def rule(value: str) -> str | None:
        try:
            rules.get(value)
        except ValueError as error:
            return str(error)
        return None

    def probe(value: str) -> str | None:
        if args.no_probes:
            return None
        from claimcheck.probing.registry import UnknownProbeError, get_probe

        try:
            get_probe(value)
        except UnknownProbeError as error:
            return str(error)
        return None

    return {"id": slug, "scope_kind": scope_kind, "rule": rule, "probe": probe}


def _output_check(args: argparse.Namespace) -> Check | None:
    """The probe's declared outputs, when the probe is checked and known."""
    if args.no_probes:
        return None
    from claimcheck.probing.registry import registered_probes

    known = registered_probes().get(args.probe)
    if known is None or not known.outputs:
        return None
    outputs = sorted(known.outputs)
    return lambda value: None if value in outputs else f"probe `{args.probe}` has no output `{value}`; outputs: " \
                                                       f"{', '.join(outputs)}"


def _number(value: str) -> str | None:
    try:
        float(value)
    except ValueError:
        return f"expected a number, got {value!r}"
    return None


def _ask_one(ask: Callable[[str], str], prompt: str, check: Check | None, current: str | None = None) -> str:
    """Ask until the answer is non-empty and passes ``check``; a flag's bad value is asked again too."""
    answer = current
    while True:
        if answer:
            problem = check(answer) if check else None
            if problem is None:
                return answer
            print(f"  {problem}; try again", file=sys.stderr)
        answer = ask(prompt).strip()


def _ask(args: argparse.Namespace, ask: Callable[[str], str]) -> None:
    """Prompt for every required field the flags left out, re-asking each bad answer."""
    checks = _answer_checks(args)
    for attribute, path, prompt in NEW_FIELDS:
        current = getattr(args, attribute)
        setattr(args, attribute, _ask_one(ask, f"{prompt} [{path}]: ", checks.get(attribute), current))
    if args.rule in ("at_least", "at_most", "ratio", "rate_at_most", "zero_rate", "monotone", "exact",
                     "equivalent") and not args.output:
        args.output = _ask_one(ask, "probe output the rule reads [check.output]: ", _output_check(args))
    numeric = {"at_least": "threshold", "at_most": "threshold", "ratio": "threshold", "rate_at_most": "threshold",
               "zero_rate": "threshold", "equivalent": "margin", "exact": "expected"}
    name = numeric.get(args.rule)
    if name and getattr(args, name) is None:
        setattr(args, name, float(_ask_one(ask, f"{name} [check.{name}]: ", _number)))


def render_claim(claim: dict[str, Any]) -> str:
    import yaml

    return yaml.safe_dump(claim, sort_keys=False, allow_unicode=True, width=100)


def cmd_new(args: argparse.Namespace, ask: Callable[[str], str] | None = None) -> int:
    missing = [path for attribute, path, _ in NEW_FIELDS if not getattr(args, attribute)]
    if missing:
        interactive = args.interactive or (args.interactive is None and sys.stdin.isatty())
        if not interactive:
            return _fail(f"new: missing {', '.join(missing)} (give them as flags, or run interactively)")
        if not args.no_probes:
            _load_probes(args.root)  # so that a mistyped probe or output name is asked again
        try:
            _ask(args, ask or input)
        except EOFError:
            return _fail("new: input ended before the claim was complete; nothing written")
    problem = _control_missing(args, ask or input)
    if problem:
        return _fail(problem)
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
    print(next_steps(args.id, target))
    return OK


def next_steps(claim_id: str, target: Path) -> str:
    """The commands that take a new claim to an accepted lock entry, in order."""
    return "\n".join([
        "next:",
        f"  claimcheck validate {target}",
        f"  git add {target} && git commit -m 'Claim {claim_id}'   # a run of a dirty tree is never accepted",
        f"  pytest claims/ -k {claim_id}   # measures it: NO EXPECTATION until its verdict is accepted",
        "  claimcheck accept --update   # adds its verdict to claims/verdicts.lock; review, then commit the lock",
    ])


def _control_missing(args: argparse.Namespace, ask: Callable[[str], str]) -> str | None:
    """A measured portable claim says how it can fail: ask for its control, or say what is missing (one line)."""
    if args.control and not args.control_why:
        return "new: --control needs --control-why (why the claim must be refuted under those params)"
    if args.control or args.no_control or args.no_probes or args.scope_kind != "portable":
        return None
    from claimcheck.probing.registry import registered_probes

    _load_probes(args.root)
    registered = registered_probes().get(args.probe)
    if registered is None or registered.deterministic:
        return None  # an unknown probe has its own error; arithmetic measures nothing to control
    interactive = args.interactive or (args.interactive is None and sys.stdin.isatty())
    if not interactive:
        return ("new: missing control: a measured claim needs --control KEY=VALUE (probe params under which it must "
                "be refuted) with --control-why WHY, or --no-control WHY")
    try:
        answer = _ask_one(ask, "control: probe params under which the claim must be refuted (KEY=VALUE,...), or "
                               "`none` [control]: ", None)
        why = _ask_one(ask, "why [control.why]: ", None)
    except EOFError:
        return "new: input ended before the claim was complete; nothing written"
    if answer.strip().lower() == "none":
        args.no_control = why
    else:
        args.control, args.control_why = [part.strip() for part in answer.split(",") if part.strip()], why
    return None
