"""What a record chunker promises and reports: the `RecordChunker` protocol, each
record's outcome (`Done`, `Overran`, `NotStarted`, `WorkerLost`), and the state
/api/health shows (`ChunkerState`, counted by `Counts`)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

    from skills.embedding.scoring import ScoringService
    from skills.skill.contract import InputRecord
    from skills.skill.records import OutputRecord
    from skills.skill.settings import Settings


NO_ISOLATION_ADVICE = (
    "chunk worker processes could not be started, so records are chunked in threads: "
    "a record that overruns its deadline can no longer be stopped. Most likely the script "
    'that builds the app has no `if __name__ == "__main__":` guard (each worker process '
    "re-runs it); add the guard, or serve the app with `uvicorn function_app:api`, or set "
    "CHUNK_WORKERS=0 to choose threads on purpose"
)
"""Health's warning and the log's, when chunking fell back to threads."""


@dataclass(frozen=True, slots=True)
class ChunkerState:
    """What /api/health reports about chunking."""

    mode: str
    """`processes` (killable workers) or `thread` (CHUNK_WORKERS=0: in the app's threads)."""
    workers: int
    busy: int
    """Workers (or threads) chunking a record right now."""
    cancelling: int
    """Overrunning work being stopped: killed workers not yet replaced, or threads still
    running past their deadline (those cannot be stopped)."""
    recycled: int
    """Workers killed since start because a record overran its deadline or a worker died."""
    starting: int = 0
    """Workers being started (the first start loads and warms the chunking code)."""
    long_running: int = 0
    """Workers (or threads) on a record that has run longer than LONG_RUNNING_SECONDS."""
    spare: int = 0
    """Spare workers started because every worker was on a record that ran long."""
    warning: str | None = None
    """Why chunking is not as configured (workers could not start), and what to do."""

    @property
    def degraded(self) -> bool:
        """Work is being cancelled, or every worker is stuck on a record that ran long, so
        the skill cannot serve at full strength."""
        stuck = self.workers > 0 and self.long_running >= self.workers
        return self.cancelling > 0 or stuck

    @property
    def status(self) -> str:
        """`degraded`, `starting` or `ok`, as /api/health says it."""
        if self.degraded:
            return "degraded"
        return "starting" if self.starting else "ok"

    def as_json(self) -> dict[str, object]:
        document: dict[str, object] = {
            "mode": self.mode,
            "workers": self.workers,
            "busy": self.busy,
            "cancelling": self.cancelling,
            "recycled": self.recycled,
            "starting": self.starting,
            "long_running": self.long_running,
            "spare": self.spare,
        }
        if self.warning is not None:
            document["warning"] = self.warning
        return document


class RecordChunker(Protocol):
    """Chunks a request's records, answering every one of them by `until`."""

    async def chunk(
        self,
        records: Sequence[InputRecord],
        settings: Settings,
        until: float,
        scoring: ScoringService | None = None,
    ) -> list[Outcome]:
        """One outcome per record, in order, all by `until` (time.monotonic()).

        `scoring` answers the scored strategies' calls (sentence embeddings, pair scores)
        in the caller's event loop; without it they fail their record with a clear error."""
        ...

    def state(self) -> ChunkerState: ...

    def close_now(self) -> None:
        """Stop all work without waiting (for a host that ends the event loop first)."""
        ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Done:
    """The record was chunked (its output may still carry the record's own errors)."""

    output: OutputRecord


@dataclass(frozen=True, slots=True)
class Overran:
    """The record was still being chunked at the deadline; its work was stopped."""

    scorer: str | None = None
    """The scorer (`embedding`, `rerank`, `crossEncoder`) the record was waiting for when
    the deadline came: the scorer took the time, not the record's size."""


@dataclass(frozen=True, slots=True)
class NotStarted:
    """Every worker was busy with earlier records until the deadline."""


@dataclass(frozen=True, slots=True)
class WorkerLost:
    """The worker died while chunking the record (out of memory, killed from outside)."""


Outcome = Done | Overran | NotStarted | WorkerLost


class Counts:
    """Busy, cancelling and recycled counts, shared by the slots' threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.busy = 0
        self.cancelling = 0
        self.recycled = 0
        self.starting = 0
        self.long_running = 0
        self.spare = 0

    def add(
        self,
        *,
        busy: int = 0,
        cancelling: int = 0,
        recycled: int = 0,
        starting: int = 0,
        long_running: int = 0,
        spare: int = 0,
    ) -> None:
        with self.lock:
            self.busy += busy
            self.cancelling += cancelling
            self.recycled += recycled
            self.starting += starting
            self.long_running += long_running
            self.spare += spare

    def state(self, mode: str, workers: int) -> ChunkerState:
        with self.lock:
            return ChunkerState(
                mode,
                workers,
                self.busy,
                self.cancelling,
                self.recycled,
                self.starting,
                self.long_running,
                self.spare,
            )
