"""Subcommands that list what a project can use: its probes (``probes``) and its claims' models (``models``).

``claimcheck probes --markdown`` writes the probe reference (``docs/probes.md`` in this repository)
from the probes' own declarations: params, outputs, what their name-valued params may be, and one
worked claim each (the probe's ``example``, else the one its package ships in ``data/examples.yaml``).
"""

from __future__ import annotations

from claimcheck.suggest import closest, did_you_mean
import argparse
import inspect
import sys
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from ._base import OK, UsageError, _fail
from ._claims import _load_probes

if TYPE_CHECKING:
    from claimcheck.claim import Claim
    from claimcheck.probing.registry import RegisteredProbe


def _type_text(annotation: Any) -> str:
    """An annotation as a reader writes it: ``int``, ``list[float]``, ``str | None``."""
    if annotation is inspect.Parameter.empty:
        return "any"
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


UNDOCUMENTED = "(undocumented: the probe's docstring has no `Args:` line for it)"


def parameter_meanings(registered: RegisteredProbe) -> list[tuple[str, str]]:
    """``(name: type = default, meaning)`` for each parameter a claim may set, the meaning from the docstring."""
    from ._param_docs import param_meanings

    meanings = param_meanings(registered.function)
    return [(line, meanings.get(line.split(":")[0], UNDOCUMENTED)) for line in probe_parameters(registered)]


def probe_parameters(registered: RegisteredProbe) -> list[str]:
    """``name: type = default`` for each parameter a claim may set (``ctx`` left out), in signature order."""
    function = registered.function
    try:
        hints = typing.get_type_hints(function)
    except Exception:  # an annotation that does not evaluate: show it as written
        hints = {}
    lines = []
    for index, parameter in enumerate(inspect.signature(function).parameters.values()):
        if index == 0 or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue  # the ProbeContext, and catch-alls a claim cannot name
        annotation = hints.get(parameter.name, parameter.annotation)
        default = "required" if parameter.default is parameter.empty else f"= {parameter.default!r}"
        lines.append(f"{parameter.name}: {_type_text(annotation)} {default}")
    return lines


def _location(registered: RegisteredProbe, root: Path) -> str:
    if not registered.file:
        return registered.module
    file = Path(registered.file)
    return str(file.relative_to(root)) if file.is_relative_to(root) else str(file)


def probe_listing(registered: RegisteredProbe, root: Path) -> list[str]:
    """One probe as ``pytest --fixtures`` shows a fixture: name and place, then its description, params and outputs."""
    flags = [flag for flag, on in (("deterministic", registered.deterministic), ("reads text", registered.reads_text))
             if on]
    lines = [f"{registered.name} -- {_location(registered, root)}" + (f" ({', '.join(flags)})" if flags else "")]
    lines.append(f"    {registered.description or '(no description: the probe function has no docstring)'}")
    parameters = parameter_meanings(registered)
    lines.append("    params:" + ("" if parameters else " none"))
    for line, meaning in parameters:
        lines += [f"        {line}", f"            {meaning}"]
    lines.append("    outputs:" + ("" if registered.outputs else " none declared"))
    for name, output in registered.outputs.items():
        lines.append(f"        {name} {_output_unit(output)}" + (f": {output.description}" if output.description else ""))
    if registered.catalogue is not None:
        lines += [f"    {line}" for line in registered.catalogue()]
    return lines


def _output_unit(output: Any) -> str:
    better = {True: ", higher is better", False: ", lower is better", None: ""}[output.higher_is_better]
    return f"[{output.unit or 'no unit'}{better}]"


EXAMPLES_FILE = Path("data") / "examples.yaml"


def shipped_examples(registered: RegisteredProbe) -> dict[str, str]:
    """Probe name -> worked claim (YAML text) from ``data/examples.yaml`` beside the probe's module or in a
    package above it (probes grouped by family share their package's), the nearest first; empty if none."""
    from claimcheck.probing.registry import source_package

    module = sys.modules.get(registered.module)
    folders = [Path(str(getattr(module, "__file__", "") or registered.file or ".")).parent]
    parts = registered.module.split(".")
    top = len(source_package(registered.module).split("."))
    for depth in range(len(parts) - 1, top - 1, -1):  # the enclosing packages up to the probe source's, innermost first
        package = sys.modules.get(".".join(parts[:depth]))
        folders += [Path(str(location)) for location in getattr(package, "__path__", [])]
    found: dict[str, str] = {}
    for path in dict.fromkeys(folder / EXAMPLES_FILE for folder in folders):
        if path.is_file():
            for name, example in _examples_in(str(path)).items():
                found.setdefault(name, example)
    return found


def _examples_in(path: str) -> dict[str, str]:
    from claimcheck.claims.yamlsafe import load_documents

    text = Path(path).read_text(encoding="utf-8")
    chunks = [chunk.strip("\n") for chunk in text.split("\n---\n")]
    found: dict[str, str] = {}
    for chunk in chunks:
        body = "\n".join(line for line in chunk.splitlines() if not line.startswith("#")).strip("\n")
        for doc in load_documents(body, path):
            probe = doc.value.get("probe", {}) if isinstance(doc.value, dict) else {}
            if isinstance(probe, dict) and isinstance(probe.get("name"), str):
                found.setdefault(probe["name"], body + "\n")
    return found


def worked_example(registered: RegisteredProbe) -> str:
    """The probe's worked claim: its declared ``example``, else its package's shipped one ("" if none)."""
    return registered.example or shipped_examples(registered).get(registered.name, "")


def probe_markdown(probes: Sequence[RegisteredProbe], root: Path) -> str:
    """The probe reference as Markdown: one section per probe, from its declarations alone."""
    out = ["# Probe reference", "",
           "Generated by `claimcheck probes --markdown` from the probes' own declarations; do not edit by hand.",
           "Each probe lists the params a claim may set (type, default, meaning), its outputs (unit, which direction is "
           "better), what its name-valued params may be, and one worked claim.", ""]
    out += [f"- [`{p.name}`](#{p.name})" + (f": {p.description}" if p.description else "")
            for p in probes]
    for registered in probes:
        flags = [flag for flag, on in (("deterministic", registered.deterministic),
                                       ("reads text", registered.reads_text)) if on]
        out += ["", f"## `{registered.name}`", "",
                f"{registered.description or '(no description)'}" + (f" *({', '.join(flags)})*" if flags else ""),
                "", f"Defined in `{_location(registered, root)}`.", "", "**Params**", ""]
        out += [f"- `{line}`: {meaning}" for line, meaning in parameter_meanings(registered)] or ["- none"]
        out += ["", "**Outputs**", ""]
        out += [f"- `{name}` {_output_unit(output)}" + (f": {output.description}" if output.description else "")
                for name, output in registered.outputs.items()] or ["- none declared"]
        if registered.catalogue is not None:
            out += ["", "**Registered values**", "", "```text", *registered.catalogue(), "```"]
        example = worked_example(registered)
        if example:
            out += ["", "**Worked claim**", "", "```yaml", example.rstrip("\n"), "```"]
    return "\n".join(out) + "\n"


def cmd_probes(args: argparse.Namespace) -> int:
    from claimcheck.probing.registry import UnknownProbeError, get_probe, registered_probes

    _load_probes(args.root)
    known = registered_probes()
    names = args.names or sorted(known)
    chosen = {}
    for name in names:
        try:  # as a claim names it: a project's own probe, or `claimcheck:NAME` for the shipped one it shadows
            chosen[name] = get_probe(name)
        except UnknownProbeError:
            hint = did_you_mean(name, sorted(known))
            raise UsageError(f"probes: unknown probe `{name}`{hint}; known probes: {', '.join(sorted(known)) or 'none'}"
                             + ("" if known else f" ({_no_probes_hint(args.root)})")) from None
    root = Path(args.root).resolve()
    if args.markdown:
        text = probe_markdown([chosen[name] for name in names], _shipped_root(root))
        if args.output:
            Path(args.output).write_text(text, encoding="utf-8")
        else:
            print(text, end="")
        return OK
    for index, name in enumerate(names):
        if index:
            print()
        print("\n".join(probe_listing(chosen[name], root)))
    return OK


def _shipped_root(root: Path) -> Path:
    """Where locations are shown from: a shipped probe's file as ``claimcheck_probes/x.py`` wherever it is installed."""
    import importlib.util

    spec = importlib.util.find_spec("claimcheck_probes")
    if spec is None or not spec.submodule_search_locations:
        return root
    folder = Path(list(spec.submodule_search_locations)[0]).resolve()
    return root if folder.is_relative_to(root) else folder.parent


def _no_probes_hint(root: str) -> str:
    return (f"nothing registers probes under {Path(root).resolve()}: run from the project root or pass "
            "--root PROJECT (the folder holding probes/ or the pyproject.toml that names them)")


@dataclass(frozen=True)
class ModelUse:
    """One model name the claims use, and the claims that use it."""

    name: str
    claims: tuple[str, ...]


def _names_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def model_names(claim: Claim) -> list[str]:
    """Every model name a claim may run on: its params, grid, profiles and positive control."""
    found = _names_in(claim.probe.params.get("model")) + _names_in(claim.probe.grid.get("model"))
    for profile in claim.profiles.values():
        found += _names_in(profile.params.get("model")) + _names_in(profile.grid.get("model"))
    if claim.control is not None:
        found += _names_in(claim.control.params.get("model"))
    return list(dict.fromkeys(found))


def model_uses(claims: Sequence[Claim]) -> list[ModelUse]:
    uses: dict[str, list[str]] = {}
    for claim in claims:
        for name in model_names(claim):
            uses.setdefault(name, []).append(claim.id)
    return [ModelUse(name, tuple(ids)) for name, ids in sorted(uses.items())]


def resolution(name: str, root: Path) -> tuple[bool, str]:
    """``(resolves, what)``: how the model registry would load ``name`` here, or why it cannot."""
    from claimcheck.errors import ClaimcheckError, NotApplicable
    from claimcheck.models import aliases, registered_models, resolve

    registered = registered_models()
    try:
        spec = resolve(name)
    except NotApplicable as error:
        reason = str(error).removeprefix(f"model {name} not installed: ")
        if aliases.lookup(name) is not None or name in registered:
            return False, reason
        match = closest(name, sorted(registered) + sorted(aliases.active()))
        hint = f"did you mean `{match}`? " if match else ""
        return False, (f"not a registered id, an alias, a directory or a cached Hugging Face repo; {hint}map it in "
                       f"[{aliases.TABLE}] of {root / 'pyproject.toml'}")
    except ClaimcheckError as error:  # an alias that reuses a registered id
        return False, str(error)
    if spec.key in registered:
        kind = "registered prefix" if spec.key.endswith(":") else "registered id"
        return True, f"{kind}: {spec.source}"
    return True, spec.source


def cmd_models(args: argparse.Namespace) -> int:
    from claimcheck.claim import Claim
    from claimcheck.errors import ClaimcheckError
    from claimcheck.claims.loader import iter_claim_files, read_claim_file
    from claimcheck.models import aliases

    root = Path(args.root).resolve()
    paths = args.paths or [str(root / "claims")]
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        return _fail(f"models: no such file or folder: {', '.join(missing)}")
    aliases.use_project(root)
    claims: list[Claim] = []
    for path in iter_claim_files(paths):
        try:
            claims += [item for item in read_claim_file(path) if isinstance(item, Claim)]
        except ClaimcheckError as error:
            print(f"models: skipped {error} (see `claimcheck validate`)", file=sys.stderr)
    uses = model_uses(claims)
    if not uses:
        return _fail(f"models: no claim under {', '.join(paths)} names a model")
    width = max(len(use.name) for use in uses)
    resolved = 0
    for use in uses:
        ok, what = resolution(use.name, root)
        resolved += ok
        shown = ", ".join(use.claims[:3]) + (f" and {len(use.claims) - 3} more" if len(use.claims) > 3 else "")
        print(f"{use.name:<{width}}  {'->' if ok else 'unresolved:'} {what}")
        print(f"{'':<{width}}  used by {len(use.claims)} claim(s): {shown}")
    unused = sorted(set(aliases.active()) - {use.name for use in uses})
    for name in unused:
        print(f"alias `{name}` ({aliases.active()[name].declared_at}) is not used by any claim")
    print(f"{len(uses)} model name(s): {resolved} resolve here, {len(uses) - resolved} do not")
    return OK
