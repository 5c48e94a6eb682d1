"""Every measured portable claim of the repository says how it can fail: a control, or why none exists."""

from __future__ import annotations

from pathlib import Path

from claimcheck.claims.loader import load_claims
from claimcheck.probing.registry import get_probe, load_probe_modules

ROOT = Path(__file__).resolve().parents[2]


def test_every_measured_portable_claim_has_a_control_or_says_why_not() -> None:
    load_probe_modules(str(ROOT))
    missing = []
    for claim in load_claims([ROOT / "claims"]):
        if claim.scope.kind != "portable":
            continue
        if get_probe(claim.probe.name).function.__module__.rsplit(".", 1)[-1] == "arithmetic":
            continue  # the source's own arithmetic: nothing is measured, so there is no measurement to control
        if claim.control is None and claim.no_control is None:
            missing.append(f"{claim.path}:{claim.line}: {claim.id}")
    assert not missing, "add `control: {params: ..., why: ...}` or `control: {none: true, why: ...}` to:\n" + "\n".join(missing)
