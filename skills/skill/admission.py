"""Which records wait for which workers: a record's lane (tiny, small, scored, large) by
its text's length and strategy, and the board of queued jobs a free worker takes from."""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from chunking.plan.strategies import SCORED_STRATEGIES

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from concurrent.futures import Future

    from skills.skill.chunker_state import Outcome
    from skills.skill.contract import InputRecord
    from skills.skill.settings import Settings
    from skills.skill.worker_scoring import Bridge


LARGE_CHARACTERS = 200_000
"""Records with more text than this are large: they may occupy every worker but one."""


TINY_CHARACTERS = 10_000
"""Records with at most this much text are tiny: they take milliseconds, so they go
before the other small records queued (a one-record request does not wait behind a queue
of whole batches; the others wait at most a few milliseconds per tiny record)."""


SPARE_RETIRE_CHECK_SECONDS = 0.5
"""How often an idle spare worker checks whether a regular worker is free again."""


def text_length(record: InputRecord) -> int | None:
    """Characters in the record's `text`, when it is a string (checked later, per record)."""
    text = record.data.get("text") if isinstance(record.data, dict) else None
    return len(text) if isinstance(text, str) else None


def lane_of(record: InputRecord, scoring: Settings | None = None) -> Lane:
    """The record's lane; with `scoring` (the settings, when a scorer answers calls), a
    record of a scored strategy is `scored` unless large: its worker may wait for the
    scorer up to the deadline (a hung rerank endpoint), so spares never take it, and a
    spare is always there for the records that need no scorer (issue 35)."""
    length = text_length(record) or 0
    if length > LARGE_CHARACTERS:
        return "large"
    if scoring is not None and _scored(record, scoring):
        return "scored"
    return "tiny" if length <= TINY_CHARACTERS else "small"


def _scored(record: InputRecord, settings: Settings) -> bool:
    """The record's strategy (its own, or the settings' default) calls a scorer."""
    given = record.data.get("strategy") if isinstance(record.data, dict) else None
    return (given if isinstance(given, str) else settings.strategy) in SCORED_STRATEGIES


Lane = Literal["tiny", "small", "scored", "large"]


LANES: tuple[Lane, ...] = ("tiny", "small", "scored", "large")
"""The order in which a free worker looks at the lanes."""


SMALL_ONLY_LANES: tuple[Lane, ...] = ("tiny", "small", "scored")
"""The lanes of the worker kept for small records (it never takes a large one)."""


SPARE_LANES: tuple[Lane, ...] = ("tiny", "small")
"""The lanes of a spare: it exists because every worker runs long, so it takes only
records that need no scorer (a hung scorer would hold it too)."""


class Board:
    """Queued records by lane (tiny, small, large), handed out in arrival order within each."""

    def __init__(self) -> None:
        self.ready = threading.Condition()
        self.lanes: dict[Lane, deque[Job]] = {lane: deque() for lane in LANES}
        self.closed = False

    def put(self, job: Job) -> None:
        with self.ready:
            self.lanes[job.lane].append(job)
            self.ready.notify_all()

    def take(self, lanes: Sequence[Lane], retire: Callable[[], bool] | None = None) -> Job | None:
        """The next job of `lanes` (in their order; tiny ones first),
        waiting for one; None once closed, or once `retire()` says so while none waits."""
        with self.ready:
            while not self.closed:
                for lane in lanes:
                    if self.lanes[lane]:
                        return self.lanes[lane].popleft()
                if retire is not None and retire():
                    return None
                self.ready.wait(None if retire is None else SPARE_RETIRE_CHECK_SECONDS)
            return None

    def wake(self) -> None:
        with self.ready:
            self.ready.notify_all()

    def close(self) -> None:
        with self.ready:
            self.closed = True
            self.ready.notify_all()


@dataclass(frozen=True, slots=True)
class Job:
    record: InputRecord
    settings: Settings
    until: float
    future: Future[Outcome]
    lane: Lane
    bridge: Bridge | None = None
