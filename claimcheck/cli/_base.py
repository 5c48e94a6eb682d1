"""What every subcommand shares: exit codes, one-line errors, the argument parser class."""

from __future__ import annotations

import argparse
import sys


OK, FAILED, USAGE = 0, 1, 2
DISPATCH = {"docs": "claimcheck.gate", "extract": "claimcheck.extract"}


class UsageError(Exception):
    """Bad arguments or input; printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line instead of usage text plus message."""

    def error(self, message: str) -> None:  # type: ignore[override]
        where = self.prog.removeprefix("claimcheck").strip()
        raise UsageError(f"{where + ': ' if where else ''}{message} (see `{self.prog} --help`)")


def _fail(message: str, code: int = USAGE) -> int:
    print(f"claimcheck: {' '.join(str(message).split())}", file=sys.stderr)
    return code
