"""Checks ``claimcheck validate`` runs before anything is measured, beyond what the loader needs to build a claim.

The loader stops a document at its first bad field (it cannot build the claim); :func:`field_problems`
sweeps every field of that document, so an author sees all of its errors in one pass. The rest take a
built claim: a model name nothing resolves (under pytest it would only be "not applicable", a silent
skip), a measured claim with no positive control (nothing shows the measurement able to fail), and a
budget too small for the rule ever to decide. Each problem is one :class:`ClaimError` line naming the
file, the line and the field.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from claimcheck import rules
from claimcheck.claim import Claim
from claimcheck.errors import ClaimError

from .schema import SECTIONS
from .yamlsafe import LocatedDocument


def field_problems(doc: LocatedDocument, path: str) -> list[ClaimError]:
    """Every field error of one document, each found on its own (not only the first the build stops at)."""
    from .loader import _Validator  # the one field checker; imported here so the loader keeps no back-edge

    raw = doc.value
    if not isinstance(raw, dict) or raw.get("draft") is True:
        return []
    validator = _Validator(doc, path)
    found: list[ClaimError] = []

    def sweep(value: Any, section: str, schema: str) -> None:
        if not isinstance(value, dict):
            return
        fields = SECTIONS[schema]
        for key, entry in value.items():
            if key not in fields:
                try:
                    validator.section({key: entry}, section, draft=True, schema=schema)  # the unknown-key line
                except ClaimError as error:
                    found.append(error)
                continue
            spec, where = fields[key], validator.join(section, key)
            if entry is None:
                continue
            if spec.kind == "section":
                if not isinstance(entry, dict):
                    found.append(validator.error(where, f"expected a mapping for `{where}`, got "
                                                        f"{type(entry).__name__}"))
                else:
                    sweep(entry, where, key)
                continue
            try:
                validator.field(entry, where, spec)
            except ClaimError as error:
                found.append(error)
        for name, spec in fields.items():
            if spec.required and value.get(name) is None:
                found.append(validator.error(section, f"missing required field `{validator.join(section, name)}` "
                                                      f"({spec.description})"))

    sweep(raw, "", "")
    return found


def merged(first: ClaimError, more: Iterable[ClaimError]) -> list[ClaimError]:
    """``first`` (the build's own error) with the sweep's, each line once, in file order."""
    seen: dict[str, ClaimError] = {str(first): first}
    for error in more:
        seen.setdefault(str(error), error)
    return sorted(seen.values(), key=lambda e: (e.line, e.field))


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    if isinstance(value, dict):  # labelled levels: {label: value}
        return [v for v in value.values() if isinstance(v, str)]
    return []


def _model_fields(value: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(field, model name)`` for every model a claim document (or a built claim's parts) may run on."""

    def section(name: str) -> Mapping[str, Any]:
        found = value.get(name)
        return found if isinstance(found, dict) else {}

    probe = section("probe")
    out = [("probe.params.model", n) for n in _names(dict(probe.get("params") or {}).get("model"))]
    out += [("probe.grid.model", n) for n in _names(dict(probe.get("grid") or {}).get("model"))]
    for name, profile in section("profiles").items():
        if isinstance(profile, dict):
            out += [(f"profiles.{name}.params.model", n) for n in _names(dict(profile.get("params") or {}).get("model"))]
            out += [(f"profiles.{name}.grid.model", n) for n in _names(dict(profile.get("grid") or {}).get("model"))]
    out += [("control.params.model", n) for n in _names(dict(section("control").get("params") or {}).get("model"))]
    return out


def _claim_parts(claim: Claim) -> dict[str, Any]:
    return {"probe": {"params": claim.probe.params, "grid": claim.probe.grid},
            "profiles": {name: {"params": p.params, "grid": p.grid} for name, p in claim.profiles.items()},
            "control": {"params": claim.control.params} if claim.control is not None else {}}


#: ``name -> None`` when a model name can resolve somewhere, else the hint to show (``did you mean``).
ModelCheck = Callable[[str], "str | None"]


def model_problems(claim: Claim | LocatedDocument, unknown: ModelCheck, path: str = "") -> list[ClaimError]:
    """Model names that nothing could ever resolve (``unknown`` says which; the CLI asks the model registry).

    A known model absent from this machine stays "not applicable" at run time; a name nothing could
    ever resolve is a typo, and would otherwise skip the claim on every machine.
    """
    line_of: Callable[[str], int] = claim.line_of
    if isinstance(claim, Claim):
        fields, path = _model_fields(_claim_parts(claim)), claim.path
    else:
        fields = _model_fields(claim.value) if isinstance(claim.value, dict) else []
    out: list[ClaimError] = []
    for where, name in fields:
        hint = unknown(name)
        if hint is not None:
            out.append(ClaimError(path, line_of(where), where,
                                  f"unknown model `{name}`{hint}: not a registered id, a project alias "
                                  "([tool.claimcheck.models] of pyproject.toml), a path or a Hugging Face repo id"))
    return out


def control_problems(claim: Claim, deterministic: bool) -> list[ClaimError]:
    """A measured portable claim must say how it can fail: ``control: {params: ...}`` or ``control: {none: ...}``.

    A deterministic probe (arithmetic, a header read) measures nothing, so it needs no control.
    """
    if deterministic or claim.scope.kind != "portable" or claim.control is not None or claim.no_control is not None:
        return []
    return [ClaimError(claim.path, claim.line, "control",
                       "a measured claim needs a positive control: `control: {params: {...}, why: ...}` (probe "
                       "params under which it must be refuted), or `control: {none: true, why: ...}`")]


def budget_problems(claim: Claim, deterministic: bool, *, alpha: float | None = None) -> list[ClaimError]:
    """Budgets under which the rule can never decide the claim, whatever is measured."""
    if deterministic:
        return []
    from claimcheck.stats import zero_rate_n

    budget, check = claim.budget, claim.check
    where = "budget.max_samples"
    line = claim.line_of(where)
    if budget.max_samples < 2:
        return [ClaimError(claim.path, line, where, f"{budget.max_samples} sample(s) give no spread, so "
                                                    f"`{check.rule}` can never decide; allow at least 2")]
    if check.rule == "zero_rate":
        threshold = float(check.params.get("threshold", 0.0))
        level = check.alpha if alpha is None else alpha
        if 0 < threshold < 1:
            needed = zero_rate_n(threshold, level)
            if budget.max_samples < needed:
                return [ClaimError(claim.path, line, where,
                                   f"at most {budget.max_samples} samples, but no event in n shows a rate below "
                                   f"{threshold:g} (alpha {level:g}) only from n = {needed}: the claim can never hold")]
    problem = median_problem(claim, check.alpha if alpha is None else alpha)
    return [ClaimError(claim.path, line, where, problem)] if problem is not None else []


def median_problem(claim: Claim, alpha: float) -> str | None:
    """Why a median decided on the sign test can never decide within the budget, or None.

    The sign test's smallest p-value over n samples (or rounds of a paired figure) is ``0.5**n``;
    the last look runs at its exact sign-test level under the plan (a one-output timing item
    decides once, on its window, at ``alpha``), and below that no outcome decides. (The effect-size
    test a timing item adds under dependence runs at a share of the same level.)
    """
    budget = claim.budget
    try:
        rule = rules.get(claim.check.rule)
        check = rules.for_timing(claim.check, claim.timing)
        if rules.statistic(check) != "median" or rule.boundary(check) != "sign":
            return None
        paired = rule.max_groups != 1
        window = claim.timing and not paired
        if _sign_decides(budget.max_samples, budget.min_samples, budget.looks, alpha, window):
            return None
        needed = next(n for n in range(budget.max_samples + 1, budget.max_samples + 1000)
                      if _sign_decides(n, budget.min_samples, budget.looks, alpha, window))
    except (ValueError, KeyError, StopIteration):
        return None  # the check's own fields are wrong: their errors say so
    n = budget.max_samples
    unit = "rounds" if paired else "samples"
    what = "the median of the per-round contrast" if paired else "the median"
    return (f"at most {n} {unit}, but `{check.rule}` decides {what} on a sign test, whose smallest p-value over "
            f"{n} {unit} (0.5^{n} = {0.5 ** n:.3g}) never reaches the last look's level at alpha {alpha:g}: the "
            f"claim can never be decided; the smallest n that could decide is {needed} {unit}")


def _sign_decides(n: int, min_samples: int, looks: int, alpha: float, window: bool) -> bool:
    """Whether a sign test over ``n`` samples at the plan's last look can reach that look's level."""
    from claimcheck.stats import SequentialPlan, sign_test_n

    if window:
        return n >= sign_test_n(alpha)
    level = SequentialPlan(alpha, min(min_samples, n), n, looks).levels("sign")[-1]
    return level > 0 and 0.5**n <= level


def claim_problems(claim: Claim, unknown: ModelCheck, probes: Mapping[str, Any] | None) -> list[ClaimError]:
    """Every check of this module on one built claim; ``probes``: the registered probes (``None``: not loaded)."""
    registered = (probes or {}).get(claim.probe.name)
    if probes is None or registered is None:
        return []  # what the claim measures is not known without its probe (its own error, or --no-probes)
    deterministic = bool(getattr(registered, "deterministic", False))
    found = [] if deterministic or claim.scope.kind != "portable" else model_problems(claim, unknown)
    return found + control_problems(claim, deterministic) + budget_problems(claim, deterministic)


def _measured_portable(raw: Any, probes: Mapping[str, Any]) -> bool:
    """Whether a claim document that failed to build names a portable claim of a measuring probe."""
    if not isinstance(raw, dict):
        return False
    scope, probe = raw.get("scope"), raw.get("probe")
    name = probe.get("name") if isinstance(probe, dict) else None
    kind = scope.get("kind", "portable") if isinstance(scope, dict) else "portable"
    registered = probes.get(name) if isinstance(name, str) else None
    return kind == "portable" and registered is not None and not getattr(registered, "deterministic", False)


def validate_problems(paths: Iterable[str | Path], unknown: ModelCheck, probes: Mapping[str, Any] | None) -> list[str]:
    """What :func:`claimcheck.claims.loader.validate_paths` does not report: every field error of a document
    the loader stopped at, and the checks above on every claim it built (one line each)."""
    from .loader import _build_each, iter_claim_files, load_documents

    found: list[str] = []
    for path in iter_claim_files(paths):
        try:
            documents = list(load_documents(path.read_text(encoding="utf-8"), str(path)))
        except (ClaimError, OSError, UnicodeDecodeError):
            continue  # the loader reports an unreadable file
        for doc in documents:
            try:
                each = _build_each(doc, str(path))
            except ClaimError:
                found.extend(str(error) for error in field_problems(doc, str(path)))
                if probes is not None and _measured_portable(doc.value, probes):
                    found.extend(str(error) for error in model_problems(doc, unknown, str(path)))
                continue
            for built in each:
                if isinstance(built, Claim):
                    found.extend(str(error) for error in claim_problems(built, unknown, probes))
    return found
