"""Chunk records where overrunning work can be stopped: a small pool of worker processes.

A thread cannot be killed. When chunking ran in the event loop's threads, a record still
running at its deadline kept its thread; a few such records took every thread, and from
then on every request (even a malformed one) hung while /api/health said "ok". A process
can be killed: each worker chunks one record at a time, and when a record is still running
at its request's deadline, its worker is killed and a fresh one takes its place. So no
record holds a worker past its deadline, and the next request is served normally.

Workers are forked from a forkserver that has already imported the chunking code, so a
replacement is ready in milliseconds (and never inherits the app's threads or locks, as a
plain fork would). Each worker has a daemon thread in the app that hands it records over a
pipe and waits for the answer, never longer than the record's deadline; the waiting threads
never compute, so the event loop and its executor stay free.

Capacity for small records stays free even when records run long: a record still running
after `LONG_RUNNING_SECONDS` has "run long" whatever its size, and while every worker holds
such a record, a spare worker (up to as many as configured) takes the small records, and
health says "degraded". A spare retires once a regular worker is free again.

Workers die with the app: each asks Linux to kill it when the forkserver dies, and the
forkserver exits when the app (its parent) is gone, even after a SIGKILL.

When no worker can start at all (a script that builds the app without an
`if __name__ == "__main__":` guard: each worker re-runs it), chunking falls back to the
slots' threads, as with CHUNK_WORKERS=0, and health and the log say why and what to do.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import dataclasses
import logging
import multiprocessing
import os
import sys
import threading
import time
import weakref
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from chunking.plan.strategies import SCORED_STRATEGIES
from chunking.scoring import Scoring, ScoringError
from skills.embedding.scoring import blocking_scoring
from skills.skill.answer_caps import refused_alone
from skills.skill.chunk_records import chunk_record
from skills.skill.contract import OutputRecord, failed_record

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from multiprocessing.connection import Connection
    from multiprocessing.context import ForkServerContext, ForkServerProcess

    from chunking.scoring import Vector
    from skills.embedding.scoring import ScoringService
    from skills.skill.contract import InputRecord
    from skills.skill.settings import Settings, SettingsError

logger = logging.getLogger(__name__)

PRELOAD = ("skills.skill.worker_warmup",)
"""Imported once by the forkserver, so every worker starts with chunking loaded and warm."""
MINIMUM_START_SECONDS = 0.05
"""A record is not handed to a worker with less time than this left: it could only overrun."""
STOP_GRACE_SECONDS = 5.0
"""How long a killed worker is waited for before its slot starts a replacement anyway."""
WORKER_MEMORY_BYTES = 256 * 1024 * 1024
"""A worker holding more than this after a record (Python keeps a huge document's arenas)
is replaced by a fresh fork (~75 MB) once its answer is sent."""
LARGE_CHARACTERS = 200_000
"""Records with more text than this are large: they may occupy every worker but one."""
TINY_CHARACTERS = 10_000
"""Records with at most this much text are tiny: they take milliseconds, so they go
before the other small records queued (a one-record request does not wait behind a queue
of whole batches; the others wait at most a few milliseconds per tiny record)."""
ANSWER_GRACE_SECONDS = 0.5
"""How long past a record's deadline the request waits for its worker's verdict."""
SCORER_LATE_GRACE_SECONDS = 0.25
"""How long past the deadline a worker whose scorer call went unanswered is given to
fail its record in its own words (which name the scorer); within ANSWER_GRACE_SECONDS."""
PR_SET_PDEATHSIG = 1
"""Linux prctl option: a signal for the worker when its parent (the forkserver) dies."""
LONG_RUNNING_SECONDS = 1.0
"""A record still being chunked after this long has run long: most records take
milliseconds, so one this slow may well run to its deadline, and it no longer counts as
capacity for small records."""
WORKER_READY_SECONDS = 20.0
"""How long a new worker may take to say it is ready (a fork of the warm forkserver takes
milliseconds; a script re-imported by each worker may take longer)."""
START_FAILURES_BEFORE_THREADS = 2
"""Workers that failed to start in a row before chunking falls back to threads (the two
first starts of the default two workers; a worker killed from outside restarts fine)."""
SPARE_RETIRE_CHECK_SECONDS = 0.5
"""How often an idle spare worker checks whether a regular worker is free again."""
PARENT_CHECK_SECONDS = 0.25
"""How often the forkserver checks that the app that started it is still alive."""
_READY = "ready"
"""A worker's first message: it has started and waits for records."""
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
        settings: Settings | SettingsError,
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


def build_chunker(workers: int) -> RecordChunker:
    """Killable worker processes, or with `workers == 0` the app's own threads."""
    return ThreadChunker() if workers == 0 else ProcessChunker(workers)


class ProcessChunker:
    """Worker processes, one record each at a time; a worker whose record overruns is
    replaced, and small records keep a worker free of records that ran long."""

    def __init__(
        self,
        workers: int,
        *,
        memory_limit: int = WORKER_MEMORY_BYTES,
        long_running_seconds: float = LONG_RUNNING_SECONDS,
    ) -> None:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(list(PRELOAD))
        self._pool = _Pool(context, workers, memory_limit, long_running_seconds)
        # An app dropped without its lifespan shutdown (tests, embedding hosts) still
        # stops its workers and threads when the chunker is garbage collected.
        self._finalizer = weakref.finalize(self, self._pool.shut_down)

    async def chunk(
        self,
        records: Sequence[InputRecord],
        settings: Settings | SettingsError,
        until: float,
        scoring: ScoringService | None = None,
    ) -> list[Outcome]:
        futures: list[Future[Outcome]] = []
        bridge = None if scoring is None else _Bridge(scoring, asyncio.get_running_loop())
        for record in records:
            future: Future[Outcome] = Future()
            lane = _lane(record, settings if bridge is not None else None)
            self._pool.board.put(_Job(record, settings, until, future, lane, bridge))
            futures.append(future)
        waiting = [asyncio.wrap_future(future) for future in futures]
        # A worker answers Overran itself at `until`; the grace covers the kill, and the
        # request stops waiting then whatever happens.
        timeout = max(until - time.monotonic(), 0.0) + ANSWER_GRACE_SECONDS
        await asyncio.wait(waiting, timeout=timeout)
        outcomes: list[Outcome] = []
        for future in futures:
            if future.cancel():  # still queued: no worker was free in time
                outcomes.append(NotStarted())
            elif future.done():
                outcomes.append(future.result())
            else:  # running past its deadline; its slot is stopping it
                outcomes.append(Overran())
        return outcomes

    def state(self) -> ChunkerState:
        return self._pool.state()

    def pids(self) -> list[int]:
        """The worker processes' ids (spares included), for operators' tools and tests."""
        return self._pool.pids()

    def close_now(self) -> None:
        """Stop every worker at once, without waiting for anything (safe at any time)."""
        self._finalizer()

    async def aclose(self) -> None:
        """Stop every worker at once; records still queued are never started.

        Waits for the slots' threads by polling, not in an executor: at process exit a
        host may have shut the loop's executor down already."""
        self._finalizer()
        give_up = time.monotonic() + STOP_GRACE_SECONDS
        while self._pool.threads_alive() and time.monotonic() < give_up:
            await asyncio.sleep(_JOIN_POLL_SECONDS)


_JOIN_POLL_SECONDS = 0.01
"""How often aclose looks whether the slots' threads have ended."""


class _Pool:
    """The slots (regular and spare), the board they take jobs from, and the watch that
    notices records running long; every change of a slot's state goes through `changed`."""

    def __init__(
        self,
        context: ForkServerContext,
        workers: int,
        memory_limit: int,
        long_running_seconds: float,
    ) -> None:
        self.context = context
        self.workers = workers
        self.memory_limit = memory_limit
        self.long_running_seconds = long_running_seconds
        self.board = _Board()
        self.counts = _Counts()
        self.changed = threading.Condition()
        self.slots: list[_Slot] = []
        self.threads: list[threading.Thread] = []
        self.closed = False
        self.start_failures = 0
        """Workers that failed to start since the last one that started."""
        self.fallback: str | None = None
        """Set once no worker could start: records are chunked in the slots' threads."""
        with self.changed:
            for i in range(workers):
                # One worker (of two or more) is kept for small records: however many
                # huge records arrive, a normal batch never waits for them.
                self._add_slot(small_only=i == 0 and workers > 1, spare=False)
            watch = threading.Thread(target=self._watch, name="chunk-watch", daemon=True)
            self.threads.append(watch)
        for thread in self.threads:
            thread.start()

    def _add_slot(self, *, small_only: bool, spare: bool) -> threading.Thread:
        slot = _Slot(self, small_only=small_only, spare=spare)
        self.slots.append(slot)
        thread = threading.Thread(
            target=slot.serve,
            name=f"chunk-{'spare' if spare else 'worker'}-{len(self.slots) - 1}",
            daemon=True,
        )
        self.threads.append(thread)
        return thread

    def _watch(self) -> None:
        """Mark records that run long, and start a spare worker when every worker is on one."""
        with self.changed:
            while not self.closed:
                now = time.monotonic()
                wake: float | None = None
                for slot in self.slots:
                    if slot.running_since is None or slot.long:
                        continue
                    at = slot.running_since + self.long_running_seconds
                    if at <= now:
                        slot.long = True
                        self.counts.add(long_running=1)
                    else:
                        wake = at if wake is None else min(wake, at)
                spares = sum(1 for slot in self.slots if slot.spare)
                if not self._free_slots() and spares < self.workers:
                    self._add_slot(small_only=True, spare=True).start()
                    self.counts.add(spare=1)
                self.changed.wait(None if wake is None else wake - now)

    def _free_slots(self, besides: _Slot | None = None) -> int:
        """Slots not on a record that ran long (so small records will get them soon)."""
        return sum(1 for slot in self.slots if not slot.long and slot is not besides)

    def spare_unneeded(self, slot: _Slot) -> bool:
        """An idle spare may retire: another slot is free of long-running records."""
        with self.changed:
            return self.closed or self._free_slots(besides=slot) > 0

    def began(self, slot: _Slot) -> None:
        with self.changed:
            slot.running_since = time.monotonic()
            self.changed.notify_all()

    def ended(self, slot: _Slot) -> None:
        with self.changed:
            if slot.long:
                self.counts.add(long_running=-1)
            slot.running_since, slot.long = None, False
            self.changed.notify_all()
        self.board.wake()  # idle spares look whether they may retire

    def retired(self, slot: _Slot) -> None:
        with self.changed:
            if slot in self.slots:
                self.slots.remove(slot)
                self.counts.add(spare=-1)
            self.changed.notify_all()

    def started(self) -> None:
        with self.changed:
            self.start_failures = 0

    def start_failed(self, why: str) -> None:
        """Count a worker that could not start; after a few in a row, use threads."""
        with self.changed:
            self.start_failures += 1
            if self.fallback is not None or self.start_failures < START_FAILURES_BEFORE_THREADS:
                return
            self.fallback = why
        logger.warning("%s (last failure: %s)", NO_ISOLATION_ADVICE, why)

    def state(self) -> ChunkerState:
        mode = "processes" if self.fallback is None else "threads (fallback)"
        state = self.counts.state(mode, self.workers)
        if self.fallback is None:
            return state
        return dataclasses.replace(state, warning=NO_ISOLATION_ADVICE)

    def pids(self) -> list[int]:
        with self.changed:
            slots = list(self.slots)
        return [
            process.pid
            for slot in slots
            if (process := slot.process) is not None and process.pid is not None
        ]

    def threads_alive(self) -> bool:
        with self.changed:
            threads = list(self.threads)
        return any(thread.is_alive() for thread in threads)

    def shut_down(self) -> None:
        with self.changed:
            self.closed = True
            slots = list(self.slots)
            self.changed.notify_all()
        for slot in slots:
            slot.closed = True
        self.board.close()
        for slot in slots:
            slot.kill()


def text_length(record: InputRecord) -> int | None:
    """Characters in the record's `text`, when it is a string (checked later, per record)."""
    text = record.data.get("text") if isinstance(record.data, dict) else None
    return len(text) if isinstance(text, str) else None


def _lane(record: InputRecord, scoring: Settings | SettingsError | None = None) -> Lane:
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


def _scored(record: InputRecord, settings: Settings | SettingsError) -> bool:
    """The record's strategy (its own, or the settings' default) calls a scorer."""
    given = record.data.get("strategy") if isinstance(record.data, dict) else None
    default = getattr(settings, "strategy", None)  # a SettingsError has none
    return (given if isinstance(given, str) else default) in SCORED_STRATEGIES


Lane = Literal["tiny", "small", "scored", "large"]
LANES: tuple[Lane, ...] = ("tiny", "small", "scored", "large")
"""The order in which a free worker looks at the lanes."""
SMALL_ONLY_LANES: tuple[Lane, ...] = ("tiny", "small", "scored")
"""The lanes of the worker kept for small records (it never takes a large one)."""
SPARE_LANES: tuple[Lane, ...] = ("tiny", "small")
"""The lanes of a spare: it exists because every worker runs long, so it takes only
records that need no scorer (a hung scorer would hold it too)."""


class _Board:
    """Queued records by lane (tiny, small, large), handed out in arrival order within each."""

    def __init__(self) -> None:
        self.ready = threading.Condition()
        self.lanes: dict[Lane, deque[_Job]] = {lane: deque() for lane in LANES}
        self.closed = False

    def put(self, job: _Job) -> None:
        with self.ready:
            self.lanes[job.lane].append(job)
            self.ready.notify_all()

    def take(self, lanes: Sequence[Lane], retire: Callable[[], bool] | None = None) -> _Job | None:
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
class _Job:
    record: InputRecord
    settings: Settings | SettingsError
    until: float
    future: Future[Outcome]
    lane: Lane
    bridge: _Bridge | None = None


@dataclass(frozen=True, slots=True)
class _Bridge:
    """Answers a worker's scoring calls with the app's ScoringService, in the app's loop."""

    service: ScoringService
    loop: asyncio.AbstractEventLoop

    def answer(self, call: _ScoringCall, until: float) -> _ScoringAnswer:
        """The answer to one call, never later than `until`; failures are answers too."""
        scoring = blocking_scoring(self.service, self.loop, until, grace=0.0)
        try:
            result = scoring.embed(call.texts) if call.pairs is None else scoring.pairs(call.pairs)
        except ScoringError as error:
            return _ScoringAnswer(error=str(error))
        except Exception:  # a bug in a scorer fails only its record
            logger.exception("a scoring call failed")
            return _ScoringAnswer(error="internal error while scoring; the logs have the details")
        return _ScoringAnswer(result=list(result))


@dataclass(frozen=True, slots=True)
class _ScoringCall:
    """What a worker asks the app: embeddings of `texts`, or scores of `pairs`."""

    texts: tuple[str, ...] = ()
    pairs: tuple[tuple[str, str], ...] | None = None


@dataclass(frozen=True, slots=True)
class _ScoringAnswer:
    result: list[Any] | None = None
    error: str | None = None


def _worker_scoring(connection: Connection, pair_source: str) -> Scoring:
    """A worker's `Scoring`: each call goes to the app over the pipe and waits for it."""

    def ask(call: _ScoringCall) -> list[Any]:
        connection.send(call)
        answer: _ScoringAnswer = connection.recv()
        if answer.error is not None or answer.result is None:
            raise ScoringError(answer.error or "the scorer gave no answer")
        return answer.result

    def embed(texts: Sequence[str], /) -> Sequence[Vector]:
        return ask(_ScoringCall(texts=tuple(texts)))

    def pairs(pairs: Sequence[tuple[str, str]], /) -> Sequence[float]:
        return ask(_ScoringCall(pairs=tuple(pairs)))

    return Scoring(embed=embed, pairs=pairs, pair_source=pair_source)


class _Counts:
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


class WorkerStartError(Exception):
    """A worker process exited or stayed silent before it was ready for records."""


class _Slot:
    """One worker process and the app thread that feeds it; the process is replaceable."""

    def __init__(self, pool: _Pool, *, small_only: bool, spare: bool) -> None:
        self.pool = pool
        self.counts = pool.counts
        self.small_only = small_only
        self.spare = spare
        """Started because every worker was on a record that ran long; retires when idle
        and another worker is free."""
        self.process: ForkServerProcess | None = None
        self.connection: Connection | None = None
        self.closed = False
        self.bloated = False
        """The worker kept more than `memory_limit` bytes after its last record."""
        self.running_since: float | None = None
        """When the current record began (time.monotonic()); None while idle."""
        self.long = False
        """The current record has run longer than LONG_RUNNING_SECONDS."""

    def serve(self) -> None:
        """Take jobs until the board closes (or a spare is not needed); runs on the
        slot's daemon thread."""
        # Before the first record, so it never waits for a worker to start.
        self._start_or_count()
        retire = (lambda: self.pool.spare_unneeded(self)) if self.spare else None
        lanes = SPARE_LANES if self.spare else SMALL_ONLY_LANES if self.small_only else LANES
        while (job := self.pool.board.take(lanes, retire)) is not None:
            if not job.future.set_running_or_notify_cancel():
                continue
            if job.until - time.monotonic() < MINIMUM_START_SECONDS or self.closed:
                job.future.set_result(NotStarted())
                continue
            self.counts.add(busy=1)
            self.pool.began(self)
            try:
                outcome = self._run(job)
            except Exception:  # a bug here ends only this record
                logger.exception("chunk worker failed on record %r", job.record.record_id)
                with contextlib.suppress(Exception):
                    self.kill()
                outcome = WorkerLost()
            finally:
                self.pool.ended(self)
                self.counts.add(busy=-1)
            job.future.set_result(outcome)
            if self.bloated:
                self._refresh()
        self.kill()
        if self.spare:
            self.pool.retired(self)

    def _run(self, job: _Job) -> Outcome:
        if self.connection is None and self.pool.fallback is None:
            self._start_or_count()  # its start failed, or the last one was killed
        if self.connection is None:
            if self.pool.fallback is None:
                return WorkerLost()
            return self._run_in_thread(job)
        try:
            source = None if job.bridge is None else job.bridge.service.pair_source
            self.connection.send((job.record, job.settings, source))
            late: str | None = None
            """The scorer whose call was still unanswered at the deadline."""
            while True:
                wait = job.until - time.monotonic()
                if late is not None:  # the worker fails the record itself, in ~ms
                    wait = max(wait, SCORER_LATE_GRACE_SECONDS)
                if not self.connection.poll(max(wait, 0.0)):
                    logger.warning(
                        "record %r overran its deadline; stopping its chunk worker",
                        job.record.record_id,
                    )
                    self._replace()
                    return Overran(late)
                message = self.connection.recv()
                if not isinstance(message, _ScoringCall):
                    break
                # Only a job with a bridge gets a worker Scoring, so only it can ask.
                assert job.bridge is not None
                answer = job.bridge.answer(message, job.until)
                if answer.error is not None and time.monotonic() >= job.until:
                    late = "embedding" if message.pairs is None else source
                self.connection.send(answer)
            output, logs, resident = message
            self.bloated = resident > self.pool.memory_limit
        except (EOFError, OSError):
            if self.closed:
                return NotStarted()
            logger.error("a chunk worker died while chunking record %r", job.record.record_id)
            self._replace()
            return WorkerLost()
        for entry in logs:
            logging.getLogger(entry.name).handle(entry)
        return Done(output)

    def _run_in_thread(self, job: _Job) -> Outcome:
        """Chunk in this slot's thread (no worker can start): it cannot be stopped, but the
        request still answers at its deadline, and health says so while it runs long."""
        scoring = None
        if job.bridge is not None:
            scoring = blocking_scoring(job.bridge.service, job.bridge.loop, job.until)
        return Done(_chunk_safely(job.record, job.settings, scoring))

    def _start_or_count(self) -> None:
        """Start a worker; a failure is logged and counted (enough of them: threads)."""
        if self.pool.fallback is not None or self.closed:
            return
        try:
            self._start()
        except Exception as error:  # any reason at all: the record still gets an answer
            why = str(error) if isinstance(error, WorkerStartError) else type(error).__name__
            logger.warning("a chunk worker could not be started: %s", why)
            self.pool.start_failed(why)
        else:
            self.pool.started()

    def _start(self) -> None:
        self.counts.add(starting=1)
        try:
            receiving, sending = self.pool.context.Pipe()
            process = self.pool.context.Process(
                target=_serve, args=(sending,), name="chunk-worker", daemon=True
            )
            process.start()  # returns once the forkserver (warm) has forked the worker
            sending.close()
            try:
                ready = receiving.poll(WORKER_READY_SECONDS) and receiving.recv() == _READY
            except (EOFError, OSError):
                ready = False
            if not ready:
                with contextlib.suppress(OSError, ValueError):
                    process.kill()
                process.join(STOP_GRACE_SECONDS)
                receiving.close()
                raise WorkerStartError(
                    f"the worker process ended before it was ready (exit code {process.exitcode})"
                    if process.exitcode is not None
                    else f"the worker process was not ready within {WORKER_READY_SECONDS:g} s"
                )
            self.process, self.connection = process, receiving
        finally:
            self.counts.add(starting=-1)

    def _replace(self) -> None:
        """Kill the worker and start its replacement; health says degraded meanwhile."""
        self.counts.add(cancelling=1, recycled=1)
        try:
            self.kill()
            if not self.closed:
                self._start_or_count()
        finally:
            self.counts.add(cancelling=-1)

    def _refresh(self) -> None:
        """Replace a worker that holds on to a huge record's memory, after its answer went."""
        self.bloated = False
        self.kill()
        if not self.closed:
            self._start_or_count()

    def kill(self) -> None:
        process, connection = self.process, self.connection
        self.process = self.connection = None
        if process is not None:
            with contextlib.suppress(OSError, ValueError):
                process.kill()
            process.join(STOP_GRACE_SECONDS)
        if connection is not None:
            connection.close()


class ThreadChunker:
    """Chunks in the app's threads (CHUNK_WORKERS=0): no processes, but no way to stop a
    record either; for hosts that forbid child processes, and for debugging."""

    def __init__(self) -> None:
        self._counts = _Counts()

    async def chunk(
        self,
        records: Sequence[InputRecord],
        settings: Settings | SettingsError,
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
        settings: Settings | SettingsError,
        counts: _Counts,
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
                self.outputs.append(_chunk_safely(record, self.settings, self.scoring))
        finally:
            self.counts.add(busy=-1)


def _chunk_safely(
    record: InputRecord, settings: Settings | SettingsError, scoring: Scoring | None = None
) -> OutputRecord:
    try:
        return chunk_record(record, settings, scoring)
    except Exception:  # a bug outside chunking still stays in its record
        logger.exception("answering record %r failed", record.record_id)
        return failed_record(
            record.record_id,
            "internal error while answering this record; the function's logs have the details",
        )


def _serve(connection: Connection) -> None:
    """A worker process: chunk each record it is sent, until the app closes the pipe."""
    _die_with_parent()
    connection.send(_READY)
    collected = _Collector()
    root = logging.getLogger()
    root.addHandler(collected)
    root.setLevel(logging.INFO)
    while True:
        try:
            record, settings, pair_source = connection.recv()
        except (EOFError, OSError):
            return  # the app is gone, or replaced this worker
        scoring = None if pair_source is None else _worker_scoring(connection, pair_source)
        # An answer too big to send is refused here, so it never crosses to the app.
        output = refused_alone(_chunk_safely(record, settings, scoring), settings)
        connection.send((output, collected.drain(), _resident_bytes()))


def _resident_bytes() -> int:
    """This process's resident memory (Linux; 0 elsewhere, so it is never refreshed)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


def _die_with_parent() -> None:
    """Ask Linux to kill this worker when the forkserver (and so the app) is gone, even in
    the middle of a record; elsewhere the closed pipe ends the worker after its record."""
    if sys.platform != "linux":
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)


def exit_with_parent() -> None:
    """Exit this process (the forkserver) once the app that started it is gone, even if
    the app was SIGKILLed; its workers then die too (they asked for PR_SET_PDEATHSIG).

    The forkserver's own check (its pipe from the app reaching end of file) did not fire
    when the app was SIGKILLed, so a thread watches the parent's process id instead."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


class _Collector(logging.Handler):
    """Keeps a worker's log records to send back with the record's answer, so they reach
    the app's own handlers (the Functions host collects logs from the app process only)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.entries: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        # Pickle-safe: the message rendered and the traceback as text, as QueueHandler does.
        message = self.format(record)
        record.msg, record.args, record.exc_info, record.exc_text = message, None, None, None
        self.entries.append(record)

    def drain(self) -> list[logging.LogRecord]:
        entries, self.entries = self.entries, []
        return entries
