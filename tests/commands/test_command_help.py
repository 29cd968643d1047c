"""Every command's help teaches: each option says what it does and its default, and the
help ends with examples; `python -m skills --help` names its subcommand (issue 30, item 6)."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from infra.deploy import arguments_parser as deploy_arguments
from infra.replay import arguments_parser as replay_arguments
from skills.__main__ import arguments_parser as skill_arguments
from skills.commands.chunk import _arguments as chunk_arguments
from skills.commands.chunk_map.command import _arguments as map_arguments
from skills.commands.cli import HelpFormatter
from skills.search.push import arguments_parser as push_arguments
from tests.paths import ROOT


def _parsers() -> list[argparse.ArgumentParser]:
    parsers = [
        chunk_arguments(),
        map_arguments(),
        skill_arguments(),
        push_arguments(),
        replay_arguments(),
    ]
    deploy = deploy_arguments()
    parsers.append(deploy)
    for action in deploy._actions:
        if isinstance(action, argparse._SubParsersAction):
            parsers.extend(action.choices.values())
    return parsers


def _needs_a_default(action: argparse.Action) -> bool:
    """Options that take a value and may be left out (flags are off unless given)."""
    flag = isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction)
    return bool(action.option_strings) and not flag and not action.required


@pytest.mark.parametrize("parser", _parsers(), ids=lambda parser: parser.prog)
def test_every_option_says_what_it_does_and_its_default(parser: argparse.ArgumentParser) -> None:
    assert issubclass(parser.formatter_class, HelpFormatter)  # type: ignore[arg-type]
    formatter = HelpFormatter(parser.prog)
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        assert action.help, f"{parser.prog} {action.dest}: no help"
        shown = formatter._get_help_string(action) or ""
        if _needs_a_default(action):
            assert "default" in shown, f"{parser.prog} {action.option_strings}: no default"
    assert parser.epilog is not None
    assert "example" in parser.epilog


def test_the_skill_command_names_its_push_subcommand() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "skills", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert "push PATHS --index NAME" in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith("  python -m skills")
