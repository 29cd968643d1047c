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
import dataclasses
import logging
import multiprocessing
import threading
import time
import weakref
from concurrent.futures import Future
from typing import TYPE_CHECKING

from skills.embedding.scoring import blocking_scoring
from skills.skill.admission import LANES, SMALL_ONLY_LANES, SPARE_LANES, Board, Job, lane_of
from skills.skill.chunker_state import (
    NO_ISOLATION_ADVICE,
    ChunkerState,
    Counts,
    Done,
    NotStarted,
    Outcome,
    Overran,
    RecordChunker,
    WorkerLost,
)
from skills.skill.thread_chunker import ThreadChunker
from skills.skill.worker_process import READY, chunk_safely, serve
from skills.skill.worker_scoring import Bridge, ScoringCall

if TYPE_CHECKING:
    from collections.abc import Sequence
    from multiprocessing.connection import Connection
    from multiprocessing.context import ForkServerContext, ForkServerProcess

    from skills.embedding.scoring import ScoringService
    from skills.skill.contract import InputRecord
    from skills.skill.settings import Settings

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


ANSWER_GRACE_SECONDS = 0.5
"""How long past a record's deadline the request waits for its worker's verdict."""


SCORER_LATE_GRACE_SECONDS = 0.25
"""How long past the deadline a worker whose scorer call went unanswered is given to
fail its record in its own words (which name the scorer); within ANSWER_GRACE_SECONDS."""


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
        settings: Settings,
        until: float,
        scoring: ScoringService | None = None,
    ) -> list[Outcome]:
        futures: list[Future[Outcome]] = []
        bridge = None if scoring is None else Bridge(scoring, asyncio.get_running_loop())
        for record in records:
            future: Future[Outcome] = Future()
            lane = lane_of(record, settings if bridge is not None else None)
            self._pool.board.put(Job(record, settings, until, future, lane, bridge))
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
        self.board = Board()
        self.counts = Counts()
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

    def _run(self, job: Job) -> Outcome:
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
                if not isinstance(message, ScoringCall):
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

    def _run_in_thread(self, job: Job) -> Outcome:
        """Chunk in this slot's thread (no worker can start): it cannot be stopped, but the
        request still answers at its deadline, and health says so while it runs long."""
        scoring = None
        if job.bridge is not None:
            scoring = blocking_scoring(job.bridge.service, job.bridge.loop, job.until)
        return Done(chunk_safely(job.record, job.settings, scoring))

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
                target=serve, args=(sending,), name="chunk-worker", daemon=True
            )
            process.start()  # returns once the forkserver (warm) has forked the worker
            sending.close()
            try:
                ready = receiving.poll(WORKER_READY_SECONDS) and receiving.recv() == READY
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
