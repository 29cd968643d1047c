"""`python -m chunking [FILE ...]`: print one JSON object per chunk per line.

The command line lives at the app layer (`skills.commands.chunk`); this entry point only
keeps `python -m chunking` a documented command. It is the one place the core imports
anything of ours outside `chunking/` (the dependency test names it as the exception).
"""

from __future__ import annotations

import sys

from chunking.cli.pipes import run_piped
from skills.commands.chunk import main

if __name__ == "__main__":
    sys.exit(run_piped(main))
