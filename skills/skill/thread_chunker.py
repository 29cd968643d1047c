"""Chunking in the app's threads (CHUNK_WORKERS=0, or no worker could start): no
processes, and no way to stop a record that overruns either."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import TYPE_CHECKING

from chunking.plan.scoring import Scoring
from skills.embedding.scoring import blocking_scoring
from skills.skill.chunker_state import ChunkerState, Counts, Done, NotStarted, Outcome, Overran
from skills.skill.worker_process import chunk_safely

if TYPE_CHECKING:
    from collections.abc import Sequence

    from chunking.plan.scoring import Vector
    from skills.embedding.scoring import ScoringService
    from skills.skill.contract import InputRecord
    from skills.skill.records import OutputRecord
    from skills.skill.settings import Settings


class ThreadChunker:
    """Chunks in the app's threads (CHUNK_WORKERS=0): no processes, but no way to stop a
    record either; for hosts that forbid child processes, and for debugging."""

    def __init__(self) -> None:
        self._counts = Counts()

    async def chunk(
        self,
        records: Sequence[InputRecord],
        settings: Settings,
        until: float,
        scoring: ScoringService | None = None,
    ) -> list[Outcome]:
        if not records:
            return []
        loop = asyncio.get_running_loop()
        blocking = None if scoring is None else blocking_scoring(scoring, loop, until)
        run = _ThreadRun(records, settings, self._counts, blocking)
        worker = asyncio.get_running_loop().run_in_executor(None, run.run)
        await asyncio.wait({worker}, timeout=max(until - time.monotonic(), 0.0))
        run.stop.set()
        outcomes: list[Outcome] = [Done(output) for output in list(run.outputs)]
        if len(outcomes) < len(records):
            if run.started:
                # It cannot be stopped: health says degraded until it ends by itself.
                self._counts.add(cancelling=1)
                worker.add_done_callback(lambda _: self._counts.add(cancelling=-1))
                outcomes.append(Overran(run.waiting))
            outcomes += [NotStarted()] * (len(records) - len(outcomes))
        return outcomes

    def state(self) -> ChunkerState:
        return self._counts.state("thread", 0)

    def close_now(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


class _ThreadRun:
    """Chunks records in order on one thread until done or told to stop."""

    __slots__ = (
        "counts",
        "outputs",
        "records",
        "scoring",
        "settings",
        "started",
        "stop",
        "waiting",
    )

    def __init__(
        self,
        records: Sequence[InputRecord],
        settings: Settings,
        counts: Counts,
        scoring: Scoring | None = None,
    ) -> None:
        self.records = records
        self.scoring = None if scoring is None else self._watched(scoring)
        self.waiting: str | None = None
        """The scorer a call is waiting for now (the record's deadline may pass in it)."""
        self.settings = settings
        self.counts = counts
        self.outputs: list[OutputRecord] = []
        """Answers so far, in request order; only the worker appends (atomic under the GIL)."""
        self.started = False
        self.stop = threading.Event()

    def _watched(self, scoring: Scoring) -> Scoring:
        """`scoring`, noting in `waiting` which scorer a call waits for."""

        def embed(texts: Sequence[str], /) -> Sequence[Vector]:
            self.waiting = "embedding"
            try:
                return scoring.embed(texts)
            finally:
                self.waiting = None

        def pairs(batch: Sequence[tuple[str, str]], /) -> Sequence[float]:
            self.waiting = scoring.pair_source
            try:
                return scoring.pairs(batch)
            finally:
                self.waiting = None

        return Scoring(embed=embed, pairs=pairs, pair_source=scoring.pair_source)

    def run(self) -> None:
        self.started = True
        self.counts.add(busy=1)
        try:
            for record in self.records:
                if self.stop.is_set():
                    return
                self.outputs.append(chunk_safely(record, self.settings, self.scoring))
        finally:
            self.counts.add(busy=-1)
