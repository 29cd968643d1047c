"""Bound the memory of every request in flight together: an admission budget of bytes.

Each request is capped on its own (MAX_REQUEST_BYTES, MAX_RESPONSE_BYTES,
MAX_CHUNKS_PER_RECORD), but several big requests at once add up, and the instance has
one amount of memory for all of them. So a request reserves by what it holds: the bytes
of its body as they arrive (never what Content-Length declares: a client that declares
64 MiB and sends a byte a second held the whole budget, issue 35), then, once the body
is in, what it may cost: its body, the records decoded from it, and the answer it may
build (`upper_cost`). A request that does not fit beside the requests in flight waits, in
arrival order among those that fit, until enough is released or until half its deadline
has gone; then it gets a 503 with Retry-After, as when every worker was busy. Once its
records are parsed the reservation shrinks to their exact cost (`records_cost`), and a
record that could never fit (only when the budget is set below what the per-request caps
allow) is refused on its own, with an error that says which input or setting to change.

A reservation whose bytes do not move (a body that stopped arriving) is "stalled"; health
says "degraded" while stalled requests hold memory another request waits for, or a
quarter of the budget (`BudgetState.held_hostage`).

The cost model and its figures are in docs/design/hardening.md ("Memory in flight").
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import sys
import threading
import time
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

from skills.skill.contract import RequestError
from skills.skill.memory_cost import (
    answer_allowance,
    answer_held,
    chunking_allowance,
    record_answer_bound,
    record_characters,
    record_cost,
    record_parsed_cost,
    upper_cost,
)
from skills.skill.records import failed_record
from skills.skill.settings import (
    ENV_DEADLINE_SECONDS,
    ENV_MAX_REQUEST_BYTES,
    ENV_MEMORY_BUDGET_BYTES,
    ENV_TRANSFER_DEADLINE_SECONDS,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from skills.skill.contract import InputRecord
    from skills.skill.records import OutputRecord
    from skills.skill.settings import Settings

ADMISSION_WAIT_FRACTION = 0.5
"""A request waits for memory at most this share of its deadline, so that one admitted
at the last moment still has half its deadline to be answered."""
BUSY_RETRY_SECONDS = 30
"""Retry-After when a request could not get memory in time: requests in flight by then
have been answered (their deadline is over)."""
MIN_ANSWER_ROOM = 2**20
"""The least answer a record alone in the whole budget is chunked for (1 MiB); with less
left beside its text, it is refused as too big."""
BODY_READ_HELD = 2
"""How many times its bytes a body holds while it is read: the pieces received, and at
the end their join into one body."""
STALL_FRACTION = 0.25
"""A reservation whose bytes have not moved for this share of the transfer deadline
(TRANSFER_DEADLINE_SECONDS; 7.5 s of the default 30 s) is stalled: its client stopped
sending (or reading), and it holds its memory until the transfer deadline ends it."""
HOSTAGE_SHARE = 0.25
"""Stalled requests holding this share of the budget make health "degraded", even with
no request waiting for it yet."""


@dataclass(frozen=True, slots=True)
class BudgetState:
    """What /api/health reports about memory in flight."""

    budget: int
    """Bytes all requests in flight may reserve together (MEMORY_BUDGET_BYTES)."""
    in_flight: int
    """Bytes reserved now."""
    requests: int
    """Requests holding a reservation now."""
    waiting: int
    """Requests waiting for memory now."""
    waited: int
    """Requests since start that had to wait before they were admitted."""
    turned_away: int
    """Requests since start that got a 503 because memory did not free up in time."""
    peak: int
    """The most bytes reserved at once since start."""
    stalled: int = 0
    """Bytes held now by requests whose body (or answer) has not moved for a while."""
    hostage: bool = False
    """Whether stalled requests hold memory a waiting request needs, or a quarter of the
    budget: health says "degraded" then."""

    def as_json(self) -> dict[str, int | bool]:
        return {
            "budget": self.budget,
            "in_flight": self.in_flight,
            "requests": self.requests,
            "waiting": self.waiting,
            "waited": self.waited,
            "turned_away": self.turned_away,
            "peak": self.peak,
            "stalled": self.stalled,
            "held_by_stalled_requests": self.hostage,
        }


class MemoryBudget:
    """Bytes reserved by the requests in flight, never more than `budget` together.

    Thread-safe, and usable from several event loops (a waiter is woken on its own loop).
    A waiter is admitted as soon as its cost fits, earlier waiters first; a smaller
    request may go ahead of a larger one that does not fit yet, so a one-record request
    never waits behind a huge batch. A reservation whose bytes have not moved for
    `stall_seconds` while its body is read (or its answer sent) counts as stalled."""

    def __init__(self, budget: int, stall_seconds: float = float("inf")) -> None:
        self.budget = budget
        self.stall_seconds = stall_seconds
        # Reentrant: a dropped reservation's __del__ (its backstop) may run while this
        # thread holds the lock.
        self._lock = threading.RLock()
        self._used = 0
        self._requests = 0
        self._waiters: list[_Waiter] = []
        self._waited = 0
        self._turned_away = 0
        self._peak = 0
        self._open: weakref.WeakSet[Reservation] = weakref.WeakSet()

    def open(self) -> Reservation:
        """A reservation of nothing yet, for a request whose body is about to be read."""
        reservation = Reservation(self, 0)
        with self._lock:
            self._requests += 1
            self._open.add(reservation)
        return reservation

    async def reserve(self, cost: int, until: float) -> Reservation | None:
        """A reservation of `cost` bytes (at most the whole budget), or None when it did not
        fit before `until` (time.monotonic())."""
        reservation = self.open()
        if await reservation.grow_to(cost, until):
            return reservation
        reservation.release()
        return None

    async def acquire(self, cost: int, until: float, *, counted: bool) -> bool:
        """Take `cost` more bytes, waiting until `until` for them; False if they did not
        come. `counted`: the request has waited before (count it in `waited` once)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._used + cost <= self.budget:  # even with others waiting: first fit
                self._take(cost)
                return True
            waiter = _Waiter(cost, loop, loop.create_future())
            self._waiters.append(waiter)
            self._waited += 0 if counted else 1
        try:
            await asyncio.wait_for(
                asyncio.shield(waiter.admitted), max(until - time.monotonic(), 0)
            )
        except BaseException as error:  # timed out, or the request was cancelled
            with self._lock:
                # Granted under the lock, maybe just before its wake-up call ran.
                granted = waiter.granted
                if not granted:
                    self._waiters.remove(waiter)
                    self._turned_away += isinstance(error, TimeoutError)
            if not isinstance(error, TimeoutError):
                if granted:
                    self.give_back(cost)
                raise
            return granted
        return True

    def state(self) -> BudgetState:
        now = time.monotonic()
        with self._lock:
            stalled = sum(
                reservation.cost
                for reservation in list(self._open)
                if reservation.stalled_since(now, self.stall_seconds)
            )
            first_fit = min((waiter.cost for waiter in self._waiters), default=None)
            # Would a waiter get in if the stalled requests let go? Then they hold it.
            blocked = first_fit is not None and self._used - stalled + first_fit <= self.budget
            hostage = stalled > 0 and (blocked or stalled >= self.budget * HOSTAGE_SHARE)
            return BudgetState(
                self.budget,
                self._used,
                self._requests,
                len(self._waiters),
                self._waited,
                self._turned_away,
                self._peak,
                stalled,
                hostage,
            )

    def take_now(self, cost: int) -> bool:
        """Take `cost` more bytes if they are free now (first fit, as `acquire`); never
        waits, so a request that holds memory already cannot wait on one that waits."""
        with self._lock:
            if self._used + cost > self.budget:
                return False
            self._take(cost)
            return True

    def take_anyway(self, cost: int) -> None:
        """Count `cost` more bytes as held, over the budget if need be (they are held)."""
        with self._lock:
            self._take(cost)

    def _take(self, cost: int) -> None:
        self._used += cost
        self._peak = max(self._peak, self._used)

    def close(self, reservation: Reservation) -> None:
        """`reservation` is over: it no longer counts as a request."""
        with self._lock:
            self._requests -= 1
            self._open.discard(reservation)

    def give_back(self, cost: int) -> None:
        with self._lock:
            self._used -= cost
            for waiter in list(self._waiters):
                if self._used + waiter.cost <= self.budget:
                    self._waiters.remove(waiter)
                    self._take(waiter.cost)
                    waiter.granted = True
                    waiter.loop.call_soon_threadsafe(_admit, waiter.admitted)


def _admit(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


@dataclass(slots=True)
class _Waiter:
    cost: int
    loop: asyncio.AbstractEventLoop
    admitted: asyncio.Future[None]
    granted: bool = False
    """Set under the budget's lock when its cost was taken for it."""


MOVING = ("reading", "sending")
"""The phases in which a reservation's bytes move only as fast as its client: the body
arriving, the answer being read."""


class Reservation:
    """Bytes a request holds in the budget until its answer has been sent.

    Its `phase` says what the request is doing: "reading" its body, "working" (chunking,
    embedding, rendering), "sending" its answer; while reading or sending, `moved` is
    when its bytes last moved."""

    __slots__ = (
        "__weakref__",
        "_budget",
        "_released",
        "_waits",
        "cost",
        "moved",
        "opened",
        "phase",
    )

    def __init__(self, budget: MemoryBudget, cost: int) -> None:
        self._budget = budget
        self.cost = cost
        self._released = False
        self._waits = 0
        self.phase = "reading"
        self.moved = self.opened = time.monotonic()

    async def grow_to(self, cost: int, until: float) -> bool:
        """Hold `cost` bytes (at most the whole budget) from now on, waiting until `until`
        (time.monotonic()) for the rest; False if it did not come (nothing more is held)."""
        extra = max(min(cost, self.budget), 0) - self.cost
        if self._released or extra <= 0:
            return not self._released
        self._waits += 1
        try:
            granted = await self._budget.acquire(extra, until, counted=self._waits > 1)
        finally:
            self._waits -= 1
            self.moved = time.monotonic()  # a wait for memory is not the client's stall
        if granted:
            self.cost += extra
        return granted

    def stalled_since(self, now: float, seconds: float) -> bool:
        """Whether its bytes have waited on its client for `seconds` by `now`."""
        return (
            self.phase in MOVING
            and not self._waits
            and not self._released
            and now - self.moved >= seconds
        )

    def progress(self) -> None:
        """Its bytes moved just now."""
        self.moved = time.monotonic()

    def settle(self, cost: int) -> None:
        """Hold `cost` bytes from now on, what the request is measured to hold: less gives
        the rest back; more is taken whether or not it is free (the bytes exist; requests
        that come later wait for them), never waited for."""
        if self._released or cost == self.cost:
            return
        if cost < self.cost:
            self.shrink(cost)
            return
        self._budget.take_anyway(cost - self.cost)
        self.cost = cost

    def shrink(self, cost: int) -> None:
        """Hold `cost` bytes from now on, when that is less than what is held."""
        if self._released or cost >= self.cost:
            return
        self._budget.give_back(self.cost - cost)
        self.cost = cost

    @property
    def budget(self) -> int:
        """The whole budget this reservation is part of."""
        return self._budget.budget

    def admit(
        self, records: Sequence[InputRecord], body_bytes: int, settings: Settings
    ) -> Admitted:
        """The records that fit in this reservation (`admit_records`); it shrinks to them."""
        self.phase = "working"
        # The body's bound took the app's default chunk shape; records that ask for
        # smaller chunks may cost more: take the difference if it is free now, never
        # waiting for it (else the records past what is held are refused one by one).
        wanted = admit_records(records, body_bytes, self.budget, self.budget, settings).cost
        extra = min(wanted, self.budget) - self.cost
        if not self._released and extra > 0 and self._budget.take_now(extra):
            self.cost += extra
        admitted = admit_records(records, body_bytes, self.cost, self.budget, settings)
        self.shrink(admitted.cost)
        return admitted

    def release(self) -> None:
        """Give everything back (once; later calls do nothing)."""
        if not self._released:
            self._released = True
            self._budget.give_back(self.cost)
            self._budget.close(self)

    def __del__(self) -> None:
        # A backstop: a response whose background task never ran (the client went away
        # first) must not keep its bytes reserved for ever.
        self.release()


@dataclass(frozen=True, slots=True)
class Admitted:
    """Which records of a request are chunked, and the answers of those refused."""

    records: list[InputRecord]
    """The records to chunk, in order."""
    refused: dict[int, OutputRecord]
    """Index in the request -> the refused record's answer."""
    cost: int
    """What the request costs with only the admitted records, until they are chunked."""
    parsed: int
    """What of `cost` is not the answer's: the body held and the records decoded."""
    answer_limit: int | None = None
    """Bytes the answer may take when memory leaves less than MAX_RESPONSE_BYTES: a
    record that alone costs more than the budget by its answer's bound is chunked
    holding the whole budget, and its answer kept within what is left."""

    def merge(self, answered: Sequence[OutputRecord]) -> list[OutputRecord]:
        """The whole request's answers, in order: `answered` (one per admitted record) with
        the refused ones in their places."""
        given = iter(answered)
        total = len(self.records) + len(self.refused)
        return [self.refused[i] if i in self.refused else next(given) for i in range(total)]


def admit_records(
    records: Sequence[InputRecord],
    body_bytes: int,
    reserved: int,
    budget: int,
    settings: Settings,
) -> Admitted:
    """The records that fit in `reserved` bytes, in order, beside their body's
    `body_bytes`; each one that does not is refused: on its own over `budget`, say what
    to change in it, else say to lower the batch size."""
    kept: list[InputRecord] = []
    refused: dict[int, OutputRecord] = {}
    parsed = body_bytes
    answers = 0
    largest = 0
    limit: int | None = None
    for index, record in enumerate(records):
        characters = record_characters(record)
        own = record_parsed_cost(record)
        bound = record_answer_bound(record, settings)
        total = (
            parsed
            + own
            + answer_allowance(answers + bound, settings)
            + chunking_allowance(max(largest, characters), settings)
        )
        room = max(reserved - (total - answer_allowance(answers + bound, settings)), 0)
        room //= answer_held(settings)
        alone = not kept and reserved >= budget
        if characters and total > reserved and alone and room >= MIN_ANSWER_ROOM:
            # Alone in the whole budget: chunked, its answer capped by what is left
            # (`answer_limit`), rather than refused for a bound its answer rarely nears.
            kept.append(record)
            parsed += own
            answers = limit = room
            largest = characters
            continue
        if characters and total > reserved:
            cost = record_cost(record, settings)
            refused[index] = failed_record(
                record.record_id,
                _too_big(characters, cost, budget)
                if cost > budget
                else _no_room(characters, reserved),
            )
            continue
        kept.append(record)
        parsed += own
        answers += bound
        largest = max(largest, characters)
    cost = parsed + answer_allowance(answers, settings) + chunking_allowance(largest, settings)
    return Admitted(kept, refused, cost, parsed, limit)


def _too_big(characters: int, cost: int, budget: int) -> str:
    return (
        f"not chunked: this record's text ({characters:,} characters) would take about "
        f"{cost:,} bytes of the skill's memory while it is answered, more than the "
        f"{budget:,} bytes all requests in flight may take together (app setting "
        f"{ENV_MEMORY_BUDGET_BYTES}); split the document into smaller ones, or raise "
        f"{ENV_MEMORY_BUDGET_BYTES} on an instance with more memory"
    )


def _no_room(characters: int, reserved: int) -> str:
    return (
        f"not chunked: this record's text ({characters:,} characters) did not fit in the "
        f"{reserved:,} bytes of memory the records before it in the batch left (app "
        f"setting {ENV_MEMORY_BUDGET_BYTES}); lower the skill's batchSize, or "
        f"{ENV_MAX_REQUEST_BYTES} so that a batch fits"
    )


def turned_away_message(budget: int, waited: float) -> str:
    """The 503's message when a request did not get memory within its wait."""
    return (
        f"The skill's memory for requests in flight ({budget:,} bytes, app setting "
        f"{ENV_MEMORY_BUDGET_BYTES}) was taken by other requests for {waited:.0f} s; none "
        f"of this request's records were chunked. Retry the batch after "
        f"{BUSY_RETRY_SECONDS} s, or lower the indexer's degreeOfParallelism or batchSize."
    )


class Admission:
    """One request's way through the budget: its body's bytes as they arrive (`hold`, the
    body reader's memory), then what its body may cost once it is in (`admit_body`).

    Every wait for memory ends by half the request's deadline (a 503 with Retry-After)."""

    __slots__ = ("reservation", "until")

    def __init__(self, reservation: Reservation, until: float) -> None:
        self.reservation = reservation
        self.until = until
        """time.monotonic() when waiting for memory ends in a 503."""

    async def hold(self, size: int) -> RequestError | None:
        """Hold memory for `size` bytes of body received; the 503 when it did not come."""
        self.reservation.progress()
        if await self.reservation.grow_to(size * BODY_READ_HELD, self.until):
            return None
        return self._turned_away()

    async def admit_body(self, body_bytes: int, settings: Settings) -> RequestError | None:
        """Hold what a body of `body_bytes` may cost (`upper_cost`); the 503 when that did
        not come in time (nothing of the request is chunked then)."""
        self.reservation.phase = "working"
        if await self.reservation.grow_to(upper_cost(body_bytes, settings), self.until):
            return None
        return self._turned_away()

    def _turned_away(self) -> RequestError:
        budget = self.reservation.budget
        return RequestError(503, turned_away_message(budget, self.until - self.reservation.opened))


class BudgetSlot:
    """The app's memory budget, built from the settings at first use."""

    def __init__(self) -> None:
        self.budget: MemoryBudget | None = None

    def get(self, settings: Settings) -> MemoryBudget:
        if self.budget is None:
            seconds, _ = transfer_deadline(settings)
            self.budget = MemoryBudget(
                settings.memory_budget_bytes, stall_seconds=seconds * STALL_FRACTION
            )
        return self.budget

    def admission(self, settings: Settings, started: float) -> Admission:
        """The admission of a request received at `started` (time.monotonic()): it holds
        nothing until its body's bytes arrive."""
        budget = self.get(settings)
        deadline = settings.deadline_seconds
        reservation = budget.open()
        reservation.opened = started
        return Admission(reservation, started + deadline * ADMISSION_WAIT_FRACTION)

    @staticmethod
    def turned_away_headers() -> dict[str, str]:
        """The body may not have been read in full: close the connection."""
        return {"Retry-After": str(BUSY_RETRY_SECONDS), "Connection": "close"}


def transfer_deadline(settings: Settings) -> tuple[float, str]:
    """Seconds a body has to arrive (and an answer to be read) in, and the app setting that
    sets them: TRANSFER_DEADLINE_SECONDS, or the skill's deadline when that is shorter."""
    transfer, deadline = settings.transfer_deadline_seconds, settings.deadline_seconds
    if transfer < deadline:
        return transfer, ENV_TRANSFER_DEADLINE_SECONDS
    return deadline, ENV_DEADLINE_SECONDS


__all__ = [
    "Admission",
    "Admitted",
    "BudgetSlot",
    "BudgetState",
    "MemoryBudget",
    "Reservation",
    "admit_records",
    "limit_malloc_arenas",
    "transfer_deadline",
    "turned_away_message",
]


MALLOC_ARENA_MAX = "MALLOC_ARENA_MAX"
"""glibc's setting (environment) for how many malloc arenas a process may have."""
ARENAS = 2
"""glibc gives each thread that allocates its own arena, up to 8 per core, and an arena
keeps what it freed: the app's threads (the workers' feeders, the executor that parses
and renders) each kept a big request's pages. Two arenas held the soak's app at 254 MB
instead of 417-505 MB (bench.soak, 120 s); the threads allocate little at once, so
they hardly contend for them."""
M_ARENA_MAX = -8
"""mallopt's parameter number for the arena limit (glibc malloc.h)."""


def limit_malloc_arenas() -> None:
    """Use at most ARENAS malloc arenas in this process and in the processes it starts
    (the forkserver and its workers inherit the environment), unless MALLOC_ARENA_MAX
    is set already (an app setting). Linux with glibc only; elsewhere nothing changes.

    Called when the app starts, before its threads and workers do."""
    if MALLOC_ARENA_MAX in os.environ or not sys.platform.startswith("linux"):
        return
    os.environ[MALLOC_ARENA_MAX] = str(ARENAS)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").mallopt(M_ARENA_MAX, ARENAS)
