"""The embedding cache: vectors keyed by everything that decides them, looked up before a call.

A key is the SHA-256 of the provider, the model, the deployment, the dimensions, the
answer's encoding and the exact text; a value is the vector as the provider returned it
(float32 bytes when every element is a float32 value, as base64 answers and local models
give, else float64: lossless either way). No text is stored. A store is the I/O edge
(`skills.embedding.cache_stores`: a SQLite file, or blobs in Azure Storage); this module
is the policy around it: lookups within their own time budget, writes on a bounded
background thread after the answer is assembled, and a store that fails only ever
costs a miss, never a record.
"""

from __future__ import annotations

import array
import asyncio
import concurrent.futures
import contextlib
import hashlib
import json
import logging
import math
import queue
import struct
import sys
import threading
import time
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from skills.embedding.embedder import Vector

logger = logging.getLogger(__name__)

KEY_FORMAT = 1
"""Part of every key: a change of what a key covers starts a new key space."""
MAGIC = b"EVC1"
"""The first bytes of every stored value."""
_HEADER = struct.Struct("<4scII")
"""Magic, element type (`f` float32, `d` float64), element count, CRC-32 of the elements."""
LOOKUP_SHARE = 0.25
"""A lookup never takes more than this share of the time left before the deadline."""
STORE_SHARE = 0.8
"""The share of a lookup's budget the store has to answer in; it keeps what it found by
then, and the rest of the budget is the margin for handing it back."""
MAX_LOOKUPS_IN_FLIGHT = 4
"""Lookups still running on a stalled store, at most; past it, requests skip the cache."""
WRITE_QUEUE_BYTES = 64 * 1024 * 1024
"""Encoded vectors waiting to be written, at most (~10,900 at 1,536 float32 dimensions);
past it, new vectors are not cached (health counts them as writes dropped). Bounded in
bytes, not entries: the memory budget's room (skills/skill/settings.py) is in bytes."""
WRITE_BATCH_ENTRIES = 256
"""Vectors one write call hands the store."""
REST_SECONDS = 5.0
"""After a lookup fails or overruns its budget, requests skip the store this long: during
an outage each request pays the lookup budget once per rest, not every time."""
FLUSH_SECONDS = 10.0
"""How long closing the embedder waits for queued writes (command lines, push, replay)."""


@dataclass(frozen=True, slots=True)
class CacheIdentity:
    """What, besides the text, decides a vector: the part of the key every text shares."""

    provider: str
    model: str
    deployment: str | None
    dimensions: int
    variant: str
    """What else changes the floats: the answer's encoding (`base64`, `float`) for remote
    providers, the role (`passage`, `query`) for local ones."""


def cache_key(identity: CacheIdentity, text: str) -> str:
    """The hex SHA-256 of the identity and the exact text (nothing else)."""
    payload = json.dumps(
        [
            KEY_FORMAT,
            identity.provider,
            identity.model,
            identity.deployment,
            identity.dimensions,
            identity.variant,
            text,
        ],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def encode_vector(vector: Sequence[float]) -> bytes:
    """The stored value: float32 when that loses nothing, else float64; with a CRC."""
    try:
        single = array.array("f", vector)
    except OverflowError:
        single = None
    values = single if single is not None and single.tolist() == list(vector) else None
    if values is None:
        values = array.array("d", vector)
    if sys.byteorder != "little":  # pragma: no cover - every Azure host is little-endian
        values.byteswap()
    payload = values.tobytes()
    kind = b"f" if values.typecode == "f" else b"d"
    return _HEADER.pack(MAGIC, kind, len(values), zlib.crc32(payload)) + payload


def decode_vector(data: bytes, dimensions: int) -> Vector | None:
    """The vector a stored value holds; None when it is corrupt or not `dimensions` long."""
    if len(data) < _HEADER.size:
        return None
    magic, kind, count, crc = _HEADER.unpack_from(data)
    payload = data[_HEADER.size :]
    if magic != MAGIC or kind not in (b"f", b"d") or count != dimensions:
        return None
    values = array.array(kind.decode("ascii"))
    if len(payload) != count * values.itemsize or zlib.crc32(payload) != crc:
        return None
    values.frombytes(payload)
    if sys.byteorder != "little":  # pragma: no cover
        values.byteswap()
    vector = values.tolist()
    # A stored NaN would make the answer invalid JSON; the CRC makes this all but
    # impossible, but a value written by something else must not get through.
    if not all(math.isfinite(value) for value in vector):
        return None
    return vector


class CacheStoreError(Exception):
    """A store could not answer; the message is in the skill's words (no secrets, no text)."""


class CacheStore(Protocol):
    """Where keys and vectors live; synchronous, called on the cache's own threads."""

    description: str
    """What and where, for health and logs; never a key or a connection string."""

    def get_many(self, keys: Sequence[str], timeout: float) -> dict[str, bytes]:
        """The stored values of those `keys` that are stored; raises CacheStoreError."""
        ...

    def put_many(self, entries: Mapping[str, bytes]) -> None:
        """Store the entries (a concurrent write of the same key is harmless: same bytes)."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


@dataclass(frozen=True, slots=True)
class CacheState:
    """What /api/health says about the cache."""

    mode: str
    store: str
    state: str
    """`ok`, `failing` (the last lookup or write failed), or `unused` (nothing asked yet)."""
    lookups: int
    hits: int
    misses: int
    skipped: int
    """Chunks looked up while the store was failing, slow or busy: counted as misses."""
    corrupt: int
    """Entries that were unreadable or of the wrong length: ignored, then replaced."""
    writes: int
    write_errors: int
    writes_dropped: int
    last_error: str | None

    def as_json(self) -> dict[str, object]:
        looked = self.hits + self.misses
        return {
            "mode": self.mode,
            "store": self.store,
            "state": self.state,
            "lookups": self.lookups,
            "hits": self.hits,
            "misses": self.misses,
            "hitRate": round(self.hits / looked, 4) if looked else None,
            "skipped": self.skipped,
            "corruptEntries": self.corrupt,
            "writes": self.writes,
            "writeErrors": self.write_errors,
            "writesDropped": self.writes_dropped,
            "lastFailure": self.last_error,
        }


class EmbeddingCache:
    """Lookups within a budget, background writes, counters; a failing store is a miss."""

    def __init__(
        self,
        store: CacheStore,
        identity: CacheIdentity,
        *,
        mode: str,
        lookup_seconds: float,
    ) -> None:
        self.store = store
        self.identity = identity
        self.mode = mode
        self.lookup_seconds = lookup_seconds
        self._lock = threading.Lock()
        self._lookups_in_flight = threading.BoundedSemaphore(MAX_LOOKUPS_IN_FLIGHT)
        # Its own threads: a stalled store must not hold the loop's default executor,
        # which sizes the texts.
        self._lookup_threads = concurrent.futures.ThreadPoolExecutor(
            MAX_LOOKUPS_IN_FLIGHT, thread_name_prefix="embedding-cache-lookup"
        )
        self._queue: queue.Queue[tuple[str, bytes] | None] = queue.Queue()
        self._queued_bytes = 0
        self._writer: threading.Thread | None = None
        self._counts = dict.fromkeys(
            (
                "lookups",
                "hits",
                "misses",
                "skipped",
                "corrupt",
                "writes",
                "write_errors",
                "writes_dropped",
            ),
            0,
        )
        self._failing = False
        self._last_error: str | None = None
        self._rest_until = 0.0

    def keys(self, texts: Sequence[str]) -> list[str]:
        """The key of each text, in order."""
        return [cache_key(self.identity, text) for text in texts]

    async def lookup(self, keys: Sequence[str], deadline: float) -> dict[str, Vector]:
        """The cached vectors of those keys that have one; never raises, never waits past
        its budget (`lookup_seconds`, and a quarter of the time left)."""
        if not keys:
            return {}
        budget = min(self.lookup_seconds, (deadline - time.monotonic()) * LOOKUP_SHARE)
        unique = list(dict.fromkeys(keys))
        self._count(lookups=1)
        resting = time.monotonic() < self._rest_until
        if resting or budget <= 0 or not self._lookups_in_flight.acquire(blocking=False):
            self._count(misses=len(unique), skipped=len(unique))
            return {}
        task = asyncio.get_running_loop().run_in_executor(
            # The store gets most of the budget: what it found by then is still used.
            self._lookup_threads,
            self._get,
            unique,
            budget * STORE_SHARE,
        )
        # A lookup given up on still ends on its thread; its error is read, not left to
        # asyncio's "never retrieved" log line.
        task.add_done_callback(lambda done: done.cancelled() or done.exception())
        try:
            found, corrupt = await asyncio.wait_for(asyncio.shield(task), budget)
        except TimeoutError:
            self._failed(f"a lookup took longer than its {budget:.3g} s budget")
            self._count(misses=len(unique), skipped=len(unique))
            return {}
        except CacheStoreError as error:
            self._failed(str(error))
            self._count(misses=len(unique), skipped=len(unique))
            return {}
        with self._lock:
            self._failing = False
        self._count(hits=len(found), misses=len(unique) - len(found), corrupt=corrupt)
        return found

    def _get(self, keys: list[str], budget: float) -> tuple[dict[str, Vector], int]:
        """The vectors found (decoded here, off the event loop) and how many entries were
        corrupt or of the wrong length (misses: the new vector is written over them)."""
        try:
            stored = self.store.get_many(keys, budget)
            found: dict[str, Vector] = {}
            for key, data in stored.items():
                vector = decode_vector(data, self.identity.dimensions)
                if vector is not None:
                    found[key] = vector
            return found, len(stored) - len(found)
        except CacheStoreError:
            raise
        except Exception as error:  # a store's own bug must not fail a record either
            logger.warning("embedding cache lookup failed: %s", type(error).__name__)
            raise CacheStoreError("the cache's store failed (the logs name the error)") from error
        finally:
            self._lookups_in_flight.release()

    def save(self, entries: Mapping[str, Vector]) -> None:
        """Queue new vectors for the writer thread; returns at once (drops when full)."""
        if not entries:
            return
        self._start_writer()
        dropped = 0
        for key, vector in entries.items():
            data = encode_vector(vector)
            with self._lock:
                room = self._queued_bytes + len(data) <= WRITE_QUEUE_BYTES
                if room:
                    self._queued_bytes += len(data)
            if room:
                self._queue.put_nowait((key, data))
            else:
                dropped += 1
        if dropped:
            self._count(writes_dropped=dropped)

    def _start_writer(self) -> None:
        with self._lock:
            if self._writer is None or not self._writer.is_alive():
                self._writer = threading.Thread(
                    target=self._write_loop, name="embedding-cache-writer", daemon=True
                )
                self._writer.start()

    def _write_loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                self._queue.task_done()
                return
            batch = {item[0]: item[1]}
            done = 1
            while len(batch) < WRITE_BATCH_ENTRIES:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                done += 1
                if more is None:
                    self._queue.put_nowait(None)  # stop after this batch
                    self._queue.task_done()
                    done -= 1
                    break
                batch[more[0]] = more[1]
            try:
                self.store.put_many(batch)
                self._count(writes=len(batch))
            except Exception as error:  # the store's own errors, or a bug in it
                message = str(error) if isinstance(error, CacheStoreError) else None
                if message is None:
                    logger.warning("embedding cache write failed: %s", type(error).__name__)
                self._failed(message or "a write failed (the logs name the error)", rest=False)
                self._count(write_errors=len(batch))
            finally:
                with self._lock:
                    self._queued_bytes -= sum(map(len, batch.values()))
                for _ in range(done):
                    self._queue.task_done()

    def flush(self, timeout: float = FLUSH_SECONDS) -> bool:
        """Wait up to `timeout` seconds for queued writes; True when all were made."""
        until = time.monotonic() + timeout
        while self._queue.unfinished_tasks:
            if time.monotonic() >= until:
                return False
            time.sleep(0.01)
        return True

    async def aclose(self) -> None:
        """Write what is queued (within FLUSH_SECONDS), stop the writer, close the store."""
        await asyncio.to_thread(self.flush)
        writer = self._writer
        if writer is not None and writer.is_alive():
            with contextlib.suppress(queue.Full):
                self._queue.put_nowait(None)
        self._lookup_threads.shutdown(wait=False, cancel_futures=True)
        await asyncio.to_thread(self.store.close)

    def state(self) -> CacheState:
        with self._lock:
            counts = dict(self._counts)
            failing, last_error = self._failing, self._last_error
        used = counts["lookups"] or counts["writes"] or counts["write_errors"]
        return CacheState(
            mode=self.mode,
            store=self.store.description,
            state="failing" if failing else ("ok" if used else "unused"),
            lookups=counts["lookups"],
            hits=counts["hits"],
            misses=counts["misses"],
            skipped=counts["skipped"],
            corrupt=counts["corrupt"],
            writes=counts["writes"],
            write_errors=counts["write_errors"],
            writes_dropped=counts["writes_dropped"],
            last_error=last_error,
        )

    def _count(self, **amounts: int) -> None:
        with self._lock:
            for name, amount in amounts.items():
                self._counts[name] += amount

    def _failed(self, message: str, *, rest: bool = True) -> None:
        logger.warning("embedding cache: %s; the chunks are embedded as without it", message)
        with self._lock:
            if rest:
                self._rest_until = time.monotonic() + REST_SECONDS
            self._failing = True
            self._last_error = message
