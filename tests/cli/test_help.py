"""``claimcheck --help`` and every subcommand's ``--help`` say in one line what the command is for."""

from __future__ import annotations

import argparse

import pytest

from claimcheck import cli


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = cli.build_parser()
    sub = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    return dict(sub.choices)


def test_the_top_level_help_has_a_summary_for_every_subcommand_and_points_to_pytest(capsys) -> None:
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "pytest claims/" in out
    assert "see `claimcheck" not in out  # the handed-off commands have summaries of their own
    for name in _subcommands():
        line = next(line for line in out.splitlines() if line.strip().startswith(name))
        assert len(line.split()) > 1 or name in ("adjudicate",), f"`{name}` has no summary"


@pytest.mark.parametrize("name", sorted(set(_subcommands()) - set(cli.DISPATCH)))
def test_every_subcommand_help_opens_with_a_description_and_documents_every_argument(name: str, capsys) -> None:
    assert cli.main([name, "--help"]) == 0
    out = capsys.readouterr().out
    description = out.split("\n\n")[1]
    assert description.strip().endswith(".") and len(description.split()) >= 3, out[:400]
    undocumented = [action.dest for action in _subcommands()[name]._actions if not action.help]
    assert undocumented == []
