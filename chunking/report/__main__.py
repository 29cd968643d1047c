"""`python -m chunking.report FILE -o map.html`: a document's chunk map as one HTML page.

The command and the page live at the app layer (`skills.commands.chunk_map`); this
entry point only keeps `python -m chunking.report` a documented command. With
`chunking/__main__.py` it is the one place the core imports anything of ours outside
`chunking/` (the dependency test names both as the exception).
"""

from __future__ import annotations

import sys

from chunking.cli.pipes import run_piped
from skills.commands.chunk_map.command import main

if __name__ == "__main__":
    sys.exit(run_piped(main))
