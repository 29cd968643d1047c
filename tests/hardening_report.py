"""Figures the hardening tests collect (inputs tried, faults injected, latency, memory).

The tests add to one `Figures` object; conftest.py prints it in the terminal summary, so
CI logs show the numbers without `-s`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass(slots=True)
class Figures:
    """Counters and measurements, in the order they were first reported."""

    counts: dict[str, int] = field(default_factory=dict)
    """Running totals, e.g. "inputs tried"."""
    notes: dict[str, str] = field(default_factory=dict)
    """Measurements shown as given, e.g. "load: p50 latency"."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, name: str, count: int = 1) -> None:
        """Add `count` to the total `name`."""
        with self.lock:
            self.counts[name] = self.counts.get(name, 0) + count

    def note(self, name: str, value: str) -> None:
        """Record a measurement (the last one wins)."""
        with self.lock:
            self.notes[name] = value

    def lines(self) -> list[str]:
        """The summary lines; none when no hardening test ran."""
        with self.lock:
            return [f"{name}: {count:,}" for name, count in self.counts.items()] + [
                f"{name}: {value}" for name, value in self.notes.items()
            ]


FIGURES = Figures()
"""The session's figures (only ever added to; nothing reads them but the summary)."""
