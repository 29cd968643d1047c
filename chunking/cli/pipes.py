"""Command lines that end quietly when their reader goes away (`python -m chunking F | head`),
and refuse a bad flag in one line."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from collections.abc import Callable

EXIT_BROKEN_PIPE = 128 + 13
"""What a shell reports for a program ended by SIGPIPE; scripts can tell it apart."""


def run_piped(main: Callable[[], int]) -> int:
    """`main()`'s exit status, or EXIT_BROKEN_PIPE without a traceback once stdout's
    reader has gone away."""
    try:
        status = main()
        sys.stdout.flush()  # a late failure is still inside the try
    except BrokenPipeError:
        # The interpreter flushes stdout again at exit and would fail once more: point
        # stdout at /dev/null first (the recipe in Python's signal module docs).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    return status


def command_name(module: str, *scripts: str) -> str:
    """What the user typed to start this command, for its usage line and messages: the
    console script among `scripts` that started this process (`chunk-deploy`; an entry may
    name a subcommand, `chunk-skill push`), else `module` (`python -m infra.deploy`)."""
    started = os.path.basename(sys.argv[0]) if sys.argv else ""
    return next((script for script in scripts if script.split()[0] == started), module)


NEAR_FLAG_CUTOFF = 0.7
"""difflib's similarity above which a misspelt flag is shown its nearest one."""


class OneLineParser(argparse.ArgumentParser):
    """argparse that refuses in one line (exit status 2), naming the nearest flag of a
    misspelt one: `--quikc: did you mean --quick?`."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}{self.nearest_flags(message)}\n")

    def nearest_flags(self, message: str) -> str:
        """` (--maxx: did you mean --max?)` for each unrecognized flag near one of ours."""
        if not message.startswith("unrecognized arguments: "):
            return ""
        # A subcommand's flags too: the top parser reports what a subcommand did not take.
        parsers = [self] + [
            parser
            for action in self._actions
            if isinstance(action, argparse._SubParsersAction)
            for parser in action.choices.values()
        ]
        flags = sorted(
            {flag for p in parsers for flag in p._option_string_actions if flag.startswith("--")}
        )
        import difflib  # noqa: PLC0415  # for a wrong flag only: start-up skips it

        hints = []
        for given in message.removeprefix("unrecognized arguments: ").split():
            name = given.split("=", 1)[0]
            near = difflib.get_close_matches(name, flags, n=1, cutoff=NEAR_FLAG_CUTOFF)
            if name.startswith("-") and near:
                hints.append(f"{name}: did you mean {near[0]}?")
        return f" ({'; '.join(hints)})" if hints else ""
