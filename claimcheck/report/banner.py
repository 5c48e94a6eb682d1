"""The dated sentence a doc author pastes above a figure: a correction, or a note when unconfirmed.

It says what was measured (with its interval and the claimed bound), on what (the machine, or the
model when that differs from the source's), and, for arithmetic claims, which of the source's own
inputs the figure follows from.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from claimcheck.numbers import number, with_unit
from claimcheck.report.text import Result, claimed, decision_of, grid_label, is_computed, item_of, measured, model_name, run_date, statistic, unit
from claimcheck.verdict import Verdict
from claimcheck.store import StoredRun


def readings_of(result: Result) -> list[Mapping[str, Any]]:
    """The readings an arithmetic item was checked on (name, value, holds), empty for one reading."""
    decision = decision_of(result)
    found = decision.details.get("readings") if decision is not None else None
    return [r for r in found if isinstance(r, Mapping)] if isinstance(found, list) else []


def readings_sentence(result: Result) -> str:
    """``holds for reading A (16.4 %), B (17.4 %), not for C (19 %)``, or the values when none (or all) hold."""
    found = readings_of(result)

    def listed(chosen: Sequence[Mapping[str, Any]]) -> str:
        return ", ".join(f"{r.get('reading')} ({with_unit(number(r.get('value')), unit(result))})" for r in chosen)

    agree = [r for r in found if r.get("holds")]
    differ = [r for r in found if not r.get("holds")]
    if agree and differ:
        return f"holds for reading {listed(agree)}, not for {listed(differ)}"
    return f"{'every' if agree else 'no'} reading gives it: {listed(found)}"


def measured_setup(items: Sequence[Result], machine: Mapping[str, Any] | None) -> tuple[str, bool]:
    """What this run measured on, in words, and whether a model is named (then the model differs from the source's).

    A curve claim refuted on SmolLM2 is a finding about that model, not about the machine: the
    sentence says so instead of "on this machine".
    """
    machine = machine or {}
    models = sorted({text for item in items if (text := model_name(item_of(item).info))})
    where = ", ".join(p for p in (f"{machine['backend']} backend" if machine.get("backend") else "",
                                  str(machine.get("device") or "")) if p)
    pinned = any(item_of(item).claim.scope.model for item in items)  # as-stated on the source's own model
    if models and not pinned:
        return f"model {' and '.join(models)}" + (f" (on the {where})" if where else ""), True
    on = f"this machine ({where})" if where else "this machine"
    return on + (f" with model {' and '.join(models)}" if models else ""), False


def banner(*, verdict: Verdict, run: StoredRun, items: Sequence[Result], stands: Iterable[str]) -> str:
    """The suggested correction sentence for a doc, as a dated block quote.

    ``verdict`` says which sentence: refuted (a correction: the figure is overturned), inconsistent (a
    correction: the source's own inputs disagree on the figure, each reading named) or inconclusive
    (a note: the figure could not be confirmed). A measured claim names what
    differs from the source: the model it ran on, the backend and device.
    """
    first = items[0]
    bound = claimed(first)
    figures = []
    for item in items:
        label = grid_label(item)
        figures.append(measured(item) + (f" at {label}" if label and len(items) > 1 else ""))
    machine_class = run.machine_class or "this machine"
    date = run_date(run.started)
    measured_list = "; ".join(figures)
    stands_text = " ".join(s if s.endswith(".") else s + "." for s in stands)
    if verdict is Verdict.INCONSISTENT or any(readings_of(item) for item in items):
        claim_part = f" {bound.text}" if bound.text else ""
        said = "; ".join(readings_sentence(item) + (f" at {grid_label(item)}" if grid_label(item) and len(items) > 1
                                                     else "") for item in items)
        if verdict is Verdict.INCONSISTENT:
            text = (f"> **{date} CORRECTION (arithmetic, inconsistent within the source)** — the printed figure"
                    f"{claim_part} {said}; the source prints several inputs for it and does not say which it used, "
                    "on any machine.")
        else:
            text = (f"> **{date} CORRECTION (arithmetic)** — recomputed from each of the source's printed inputs, "
                    f"the figure{claim_part}: {said}; it follows from none of them, on any machine.")
        return text + (f" {stands_text}" if stands_text else "")
    if all(is_computed(item) for item in items):
        measured_list = "; ".join(
            with_unit(number(statistic(item)), unit(item))
            + (f" at {grid_label(item)}" if grid_label(item) and len(items) > 1 else "")
            for item in items
        )
        claim_part = f", not {bound.text}" if bound.text else ""
        verb = "does not follow" if verdict is Verdict.REFUTED else "cannot be checked"
        text = (
            f"> **{date} CORRECTION (arithmetic)** — recomputed from the source's own inputs: {measured_list}"
            f"{claim_part}; the printed figure {verb} from its inputs, on any machine."
        )
        return text + (f" {stands_text}" if stands_text else "")
    setup, model_named = measured_setup(items, run.machine)
    if verdict is Verdict.REFUTED:
        claim_part = f", not {bound.text}" if bound.text else ""
        differs = (f"the claim does not hold for {setup}, a model other than the source's"
                   if model_named else f"the claim does not hold on {setup}")
        text = f"> **{date} CORRECTION ({machine_class})** — measured {measured_list}{claim_part}; {differs}."
    else:
        claim_part = f" whether {bound.text}" if bound.text else " whether it holds"
        on = f"for {setup}" if model_named else f"on {setup}"
        text = (
            f"> **{date} NOTE ({machine_class})** — measured {measured_list}; this run cannot tell{claim_part} "
            f"{on}. The figure is unconfirmed here, not overturned."
        )
    return text + (f" {stands_text}" if stands_text else "")
