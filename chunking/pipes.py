"""Command lines that end quietly when their reader goes away (`python -m chunking F | head`)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

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
