"""Progress on stderr: one line redrawn in place on a terminal, a line every few seconds
otherwise, each with the rate and the time left."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from collections.abc import Callable

BAR_WIDTH = 24
STAGE_WIDTH = 34
PLAIN_INTERVAL_SECONDS = 10.0
"""Without a terminal (CI logs), print a line at most this often."""
SECONDS_PER_MINUTE = 60
SECONDS_PER_HOUR = 3600


def duration(seconds: float) -> str:
    """`45 s`, `3 min 20 s`, `1 h 05 min`: how long, to the precision a person plans with."""
    whole = max(round(seconds), 0)
    if whole < SECONDS_PER_MINUTE:
        return f"{whole} s"
    if whole < SECONDS_PER_HOUR:
        return f"{whole // SECONDS_PER_MINUTE} min {whole % SECONDS_PER_MINUTE:02d} s"
    return f"{whole // SECONDS_PER_HOUR} h {whole % SECONDS_PER_HOUR // SECONDS_PER_MINUTE:02d} min"


@dataclass(slots=True)
class Progress:
    """Call with (stage, done, total); a stage's rate counts from its first call."""

    stream: TextIO = field(default_factory=lambda: sys.stderr)
    clock: Callable[[], float] = field(default=time.monotonic)
    """`time.monotonic`, or a stand-in for tests."""
    _last: float | None = None
    """When the last line was written (None: none yet in this stage)."""
    _stage: str = ""
    _started: float = 0.0
    _done_at_start: int = 0
    _drawn: bool = False
    """A line is on screen without its newline (a terminal only)."""

    def __call__(self, stage: str, done: int, total: int) -> None:
        """Show how far `stage` is, how fast it goes and how long it has left."""
        now = self.clock()
        if stage != self._stage:
            self._stage, self._started, self._done_at_start, self._last = stage, now, done, None
        interactive = self.stream.isatty()
        finished = total > 0 and done >= total
        recent = self._last is not None and now - self._last < PLAIN_INTERVAL_SECONDS
        if not interactive and not finished and recent:
            return
        self._last = now
        filled = BAR_WIDTH * done // total if total else BAR_WIDTH
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        pace = self._pace(now, done, total)
        line = f"{stage[:STAGE_WIDTH]:<{STAGE_WIDTH}} [{bar}] {done}/{total}{pace}"
        if interactive:
            self.stream.write("\r" + line + "\x1b[K" + ("\n" if finished else ""))
            self._drawn = not finished
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def note(self, text: str) -> None:
        """A line of its own (an estimate, a warning), below any bar being drawn."""
        if self._drawn:
            self.stream.write("\n")
            self._drawn = False
        self.stream.write(text + "\n")
        self.stream.flush()

    def _pace(self, now: float, done: int, total: int) -> str:
        elapsed = now - self._started
        counted = done - self._done_at_start
        if elapsed <= 0 or counted <= 0:
            return ""
        rate = counted / elapsed
        if done >= total:
            return f", {rate:.1f}/s, took {duration(elapsed)}"
        return f", {rate:.1f}/s, {duration((total - done) / rate)} left"

    def stopped(self, text: str) -> None:
        """The last line after Ctrl-C: on a terminal, below the `^C` it echoed."""
        if self.stream.isatty():
            self._drawn = True
        self.note(text)
