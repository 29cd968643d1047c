"""`python -m chunking [FILE ...]`: print one JSON object per chunk per line.

The command line lives at the app layer (`skills.commands.chunk`); this entry point only
keeps `python -m chunking` a documented command. It is the one place the core imports
anything of ours outside `chunking/` (the dependency test names it as the exception).
"""

from __future__ import annotations

import os
import sys

from chunking.cli.pipes import run_piped
from skills.commands.chunk import main

if __name__ == "__main__":
    status = run_piped(main)
    # The chunks are out (run_piped flushed stdout): end without the interpreter's
    # teardown, which frees every object one by one, the encoding's 100,000 ranks and
    # tiktoken's tables among them. This process has no file, thread or atexit hook of
    # its own left; a flag error or --help still exits through SystemExit above.
    sys.stderr.flush()
    os._exit(status)
