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
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
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
from typing import TYPE_CHECKING, Any, Protocol

from chunking.scoring import Scoring, ScoringError
from skills.chunk_records import chunk_record
from skills.contract import OutputRecord, failed_record
from skills.scoring import blocking_scoring

if TYPE_CHECKING:
    from collections.abc import Sequence
    from multiprocessing.connection import Connection
    from multiprocessing.context import ForkServerContext, ForkServerProcess

    from chunking.scoring import Vector
    from skills.contract import InputRecord
    from skills.scoring import ScoringService
    from skills.settings import Settings, SettingsError

logger = logging.getLogger(__name__)

PRELOAD = ("skills.worker_warmup",)
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
ANSWER_GRACE_SECONDS = 0.5
"""How long past a record's deadline the request waits for its worker's verdict."""
PR_SET_PDEATHSIG = 1
"""Linux prctl option: a signal for the worker when its parent (the forkserver) dies."""


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

    @property
    def degraded(self) -> bool:
        """Work is being cancelled, so the skill cannot serve at full strength."""
        return self.cancelling > 0

    @property
    def status(self) -> str:
        """`degraded`, `starting` or `ok`, as /api/health says it."""
        if self.degraded:
            return "degraded"
        return "starting" if self.starting else "ok"

    def as_json(self) -> dict[str, object]:
        return {
            "mode": self.mode,
            "workers": self.workers,
            "busy": self.busy,
            "cancelling": self.cancelling,
            "recycled": self.recycled,
            "starting": self.starting,
        }


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

    async def aclose(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Done:
    """The record was chunked (its output may still carry the record's own errors)."""

    output: OutputRecord


@dataclass(frozen=True, slots=True)
class Overran:
    """The record was still being chunked at the deadline; its work was stopped."""


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
    """A fixed number of worker processes; a worker whose record overruns is replaced."""

    def __init__(self, workers: int, *, memory_limit: int = WORKER_MEMORY_BYTES) -> None:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(list(PRELOAD))
        self._jobs = _Board()
        self._counts = _Counts()
        self._slots = [_Slot(context, self._counts, memory_limit) for _ in range(workers)]
        self._threads = [
            threading.Thread(
                target=slot.serve,
                # One worker (of two or more) is kept for small records: however many
                # huge or pathological records arrive, a normal batch never waits for them.
                args=(self._jobs, i == 0 and workers > 1),
                name=f"chunk-worker-{i}",
                daemon=True,
            )
            for i, slot in enumerate(self._slots)
        ]
        for thread in self._threads:
            thread.start()
        # An app dropped without its lifespan shutdown (tests, embedding hosts) still
        # stops its workers and threads when the chunker is garbage collected.
        self._finalizer = weakref.finalize(self, _shut_down, self._jobs, self._slots)

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
            self._jobs.put(_Job(record, settings, until, future, _is_large(record), bridge))
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
        return self._counts.state("processes", len(self._slots))

    def pids(self) -> list[int]:
        """The worker processes' ids, for operators' tools and tests."""
        return [
            slot.process.pid
            for slot in self._slots
            if slot.process is not None and slot.process.pid is not None
        ]

    async def aclose(self) -> None:
        """Stop every worker at once; records still queued are never started."""
        self._finalizer()
        await asyncio.to_thread(self._join)

    def _join(self) -> None:
        for thread in self._threads:
            thread.join(STOP_GRACE_SECONDS)


def _shut_down(jobs: _Board, slots: Sequence[_Slot]) -> None:
    for slot in slots:
        slot.closed = True
    jobs.close()
    for slot in slots:
        slot.kill()


def text_length(record: InputRecord) -> int | None:
    """Characters in the record's `text`, when it is a string (checked later, per record)."""
    text = record.data.get("text") if isinstance(record.data, dict) else None
    return len(text) if isinstance(text, str) else None


def _is_large(record: InputRecord) -> bool:
    return (text_length(record) or 0) > LARGE_CHARACTERS


class _Board:
    """Queued records, small and large apart, handed out in arrival order within each."""

    def __init__(self) -> None:
        self.ready = threading.Condition()
        self.small: deque[_Job] = deque()
        self.large: deque[_Job] = deque()
        self.closed = False

    def put(self, job: _Job) -> None:
        with self.ready:
            (self.large if job.large else self.small).append(job)
            self.ready.notify_all()

    def take(self, small_only: bool) -> _Job | None:
        """The next job (small ones first), waiting for one; None once closed."""
        with self.ready:
            while not self.closed:
                if self.small:
                    return self.small.popleft()
                if self.large and not small_only:
                    return self.large.popleft()
                self.ready.wait()
            return None

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
    large: bool
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

    def add(
        self, *, busy: int = 0, cancelling: int = 0, recycled: int = 0, starting: int = 0
    ) -> None:
        with self.lock:
            self.busy += busy
            self.cancelling += cancelling
            self.recycled += recycled
            self.starting += starting

    def state(self, mode: str, workers: int) -> ChunkerState:
        with self.lock:
            return ChunkerState(
                mode, workers, self.busy, self.cancelling, self.recycled, self.starting
            )


class _Slot:
    """One worker process and the app thread that feeds it; the process is replaceable."""

    def __init__(self, context: ForkServerContext, counts: _Counts, memory_limit: int) -> None:
        self.context = context
        self.counts = counts
        self.memory_limit = memory_limit
        self.process: ForkServerProcess | None = None
        self.connection: Connection | None = None
        self.closed = False
        self.bloated = False
        """The worker kept more than `memory_limit` bytes after its last record."""

    def serve(self, jobs: _Board, small_only: bool) -> None:
        """Take jobs until the board closes; runs on the slot's daemon thread."""
        try:
            self._start()  # before the first record, so it never waits for a worker to start
        except Exception:
            logger.exception("a chunk worker could not be started; retrying at the next record")
        while (job := jobs.take(small_only)) is not None:
            if not job.future.set_running_or_notify_cancel():
                continue
            if job.until - time.monotonic() < MINIMUM_START_SECONDS or self.closed:
                job.future.set_result(NotStarted())
                continue
            self.counts.add(busy=1)
            try:
                outcome = self._run(job)
            except Exception:  # a bug here (or a worker that cannot start) ends only this record
                logger.exception("chunk worker failed on record %r", job.record.record_id)
                with contextlib.suppress(Exception):
                    self.kill()
                outcome = WorkerLost()
            finally:
                self.counts.add(busy=-1)
            job.future.set_result(outcome)
            if self.bloated:
                self._refresh()
        self.kill()

    def _run(self, job: _Job) -> Outcome:
        if self.connection is None:  # its start failed, or the last one was killed
            self._start()
        assert self.connection is not None
        try:
            source = None if job.bridge is None else job.bridge.service.pair_source
            self.connection.send((job.record, job.settings, source))
            while True:
                if not self.connection.poll(max(job.until - time.monotonic(), 0.0)):
                    logger.warning(
                        "record %r overran its deadline; stopping its chunk worker",
                        job.record.record_id,
                    )
                    self._replace()
                    return Overran()
                message = self.connection.recv()
                if not isinstance(message, _ScoringCall):
                    break
                # Only a job with a bridge gets a worker Scoring, so only it can ask.
                assert job.bridge is not None
                self.connection.send(job.bridge.answer(message, job.until))
            output, logs, resident = message
            self.bloated = resident > self.memory_limit
        except (EOFError, OSError):
            if self.closed:
                return NotStarted()
            logger.error("a chunk worker died while chunking record %r", job.record.record_id)
            self._replace()
            return WorkerLost()
        for entry in logs:
            logging.getLogger(entry.name).handle(entry)
        return Done(output)

    def _start(self) -> None:
        self.counts.add(starting=1)
        try:
            receiving, sending = self.context.Pipe()
            process = self.context.Process(
                target=_serve, args=(sending,), name="chunk-worker", daemon=True
            )
            process.start()  # returns once the forkserver (warm) has forked the worker
            sending.close()
            self.process, self.connection = process, receiving
        finally:
            self.counts.add(starting=-1)

    def _replace(self) -> None:
        """Kill the worker and start its replacement; health says degraded meanwhile."""
        self.counts.add(cancelling=1, recycled=1)
        try:
            self.kill()
            if not self.closed:
                self._start()
        finally:
            self.counts.add(cancelling=-1)

    def _refresh(self) -> None:
        """Replace a worker that holds on to a huge record's memory, after its answer went."""
        self.bloated = False
        self.kill()
        if not self.closed:
            self._start()

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
                outcomes.append(Overran())
            outcomes += [NotStarted()] * (len(records) - len(outcomes))
        return outcomes

    def state(self) -> ChunkerState:
        return self._counts.state("thread", 0)

    async def aclose(self) -> None:
        return None


class _ThreadRun:
    """Chunks records in order on one thread until done or told to stop."""

    __slots__ = ("counts", "outputs", "records", "scoring", "settings", "started", "stop")

    def __init__(
        self,
        records: Sequence[InputRecord],
        settings: Settings | SettingsError,
        counts: _Counts,
        scoring: Scoring | None = None,
    ) -> None:
        self.records = records
        self.scoring = scoring
        self.settings = settings
        self.counts = counts
        self.outputs: list[OutputRecord] = []
        """Answers so far, in request order; only the worker appends (atomic under the GIL)."""
        self.started = False
        self.stop = threading.Event()

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
        output = _chunk_safely(record, settings, scoring)
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
