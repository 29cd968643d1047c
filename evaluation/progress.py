"""A one-line progress bar on stderr (redrawn in place on a terminal, sparse otherwise)."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import TextIO

BAR_WIDTH = 30
PLAIN_INTERVAL_SECONDS = 10.0
"""Without a terminal (CI logs), print a line at most this often."""


@dataclass(slots=True)
class Progress:
    """Call with (stage, done, total)."""

    stream: TextIO = field(default_factory=lambda: sys.stderr)
    _last: float = 0.0
    _stage: str = ""

    def __call__(self, stage: str, done: int, total: int) -> None:
        """Show how far `stage` is."""
        interactive = self.stream.isatty()
        now = time.monotonic()
        finished = total > 0 and done >= total
        recent = now - self._last < PLAIN_INTERVAL_SECONDS
        if not interactive and stage == self._stage and not finished and recent:
            return
        self._last, self._stage = now, stage
        filled = BAR_WIDTH * done // total if total else BAR_WIDTH
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        line = f"{stage[:60]:<60} [{bar}] {done}/{total}"
        if interactive:
            self.stream.write("\r" + line + ("\n" if finished else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
