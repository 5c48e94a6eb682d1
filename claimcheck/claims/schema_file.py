"""Where the published JSON Schema of claim files lies, installed or in a checkout.

Editors validate claim files against ``claim-v1.json`` (generated from :mod:`claimcheck.claims.schema`).
A wheel ships it inside the package as ``claimcheck/schemas/claim-v1.json``; a checkout keeps it
at ``schema/claim-v1.json`` beside the package. The loader never reads it: it checks claims
against :mod:`claimcheck.claims.schema` itself, so the two cannot disagree.
"""

from __future__ import annotations

from pathlib import Path

SCHEMA_NAME = "claim-v1.json"
_PACKAGE = Path(__file__).resolve().parents[1]


def published_schema_path() -> Path:
    """The JSON Schema file this installation carries.

    Raises:
        FileNotFoundError: neither the installed nor the checkout copy exists.
    """
    for candidate in (_PACKAGE / "schemas" / SCHEMA_NAME, _PACKAGE.parent / "schema" / SCHEMA_NAME):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"no {SCHEMA_NAME} beside {_PACKAGE}: reinstall claimcheck")
