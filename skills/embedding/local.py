"""Where local embedding models run: their own bounded thread, never the event loop's executor.

`asyncio.wait_for` abandons an await, not the thread behind it. When the local model ran
through `asyncio.to_thread`, every request that reached its deadline left its encode
running (or queued) in the loop's default executor, which parsing, rendering and sizing
share: after a burst, requests that needed no model at all waited minutes for a thread,
while health said "ok". Here the model has one thread of its own; an encode whose request
stopped waiting is dropped before it starts, and a running one stops at its next step.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

T = TypeVar("T")

LOCAL_MODEL_THREADS = 1
"""The model already uses every core; a second encode at once would only contend."""
LOCAL_STEP_TEXTS = 8
"""Texts encoded between two checks that the request still waits (a step takes well under
a second for all-MiniLM-L6-v2 or e5-small on one core)."""


class EncodeDropped(Exception):
    """The request stopped waiting for this encode, so the rest of it was not run."""


@dataclass(frozen=True, slots=True)
class ModelLoad:
    """What a local model is doing right now, for /api/health."""

    running: int
    """Encodes on the model's thread (0 or 1)."""
    queued: int
    """Encodes waiting for the model's thread."""
    abandoned: int
    """Running encodes whose request stopped waiting: they end at their next step."""

    def as_json(self) -> dict[str, int]:
        return {"running": self.running, "queued": self.queued, "abandoned": self.abandoned}


class LocalModelRunner:
    """Runs a local model's encodes on its own thread, in order, one at a time."""

    def __init__(self) -> None:
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._queued = 0
        self._running: list[threading.Event] = []
        """The stop flags of the encodes running now."""

    async def run(self, encode: Callable[[Callable[[], None]], T]) -> T:
        """`encode(check)`'s result; `encode` calls `check()` before each step, which
        raises EncodeDropped once this await has been cancelled (its request answered)."""
        stop = threading.Event()

        def check() -> None:
            if stop.is_set():
                raise EncodeDropped

        def job() -> T:
            with self._lock:
                self._queued -= 1
                self._running.append(stop)
            try:
                check()
                return encode(check)
            finally:
                with self._lock:
                    self._running.remove(stop)

        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    LOCAL_MODEL_THREADS, thread_name_prefix="local-model"
                )
            self._queued += 1
            future = self._executor.submit(job)
        try:
            # Cancelling this await cancels the queued job too (wrap_future passes it on).
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            stop.set()
            if future.cancel():
                with self._lock:
                    self._queued -= 1
            raise

    def load(self) -> ModelLoad:
        with self._lock:
            running = len(self._running)
            abandoned = sum(1 for stop in self._running if stop.is_set())
            return ModelLoad(running, self._queued, abandoned)

    def close(self) -> None:
        """Drop queued encodes and let the thread end after the running step."""
        with self._lock:
            executor, self._executor = self._executor, None
            for stop in self._running:
                stop.set()
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)


def in_steps(
    texts: Sequence[str], check: Callable[[], None], encode: Callable[[list[str]], list[T]]
) -> list[T]:
    """`encode` over `texts` LOCAL_STEP_TEXTS at a time, with `check()` before each step."""
    results: list[T] = []
    for start in range(0, len(texts), LOCAL_STEP_TEXTS):
        check()
        results += encode(list(texts[start : start + LOCAL_STEP_TEXTS]))
    return results
