"""Exceptions that cross module boundaries, each rendered as one readable line."""

from __future__ import annotations


class ClaimcheckError(Exception):
    """Base class for every error claimcheck reports to a user."""


class ClaimError(ClaimcheckError):
    """A claim file is malformed; carries file, line and the field path.

    ``str(error)`` is the one line shown to the user, e.g.
    ``claims/bw.yaml:12: check.alpha: expected a number in (0, 1), got 'high'``.
    """

    def __init__(self, path: str, line: int, field: str, message: str) -> None:
        field, message = _one_line(field), _one_line(message)
        self.path = path
        self.line = line
        self.field = field
        self.message = message
        where = f"{path}:{line}" if line else path
        prefix = f"{field}: " if field else ""
        super().__init__(f"{where}: {prefix}{message}")


def _one_line(text: str) -> str:
    """Escape line breaks so an error is always exactly one line, whatever the input held."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


class ProbeError(ClaimcheckError):
    """A probe ran but its result cannot be trusted (e.g. outputs were not evaluated)."""


class Undecidable(ClaimcheckError):
    """The probe ran, but a check of its own measurement failed here, so nothing can be decided.

    Raised when the measurement's premise does not hold on this machine (e.g. a seeded draw that
    does not reproduce itself, so exact matches cannot be counted): the item is inconclusive with
    this reason, which is not a probe failure and not a verdict on the claim.
    """


class NotApplicable(ClaimcheckError):
    """The claim cannot be checked here (model missing, backend unsupported); not a failure."""
