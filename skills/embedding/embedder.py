"""Embed texts: batch by count and tokens, send concurrently, retry within a deadline, check.

`BatchEmbedder.embed` returns exactly one result per input, in order: a vector of the
configured size, or a `Failure` that says why that input has none. The I/O is behind the
`EmbeddingClient` protocol (one request, no retries); everything else here is policy.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Protocol

from skills.embedding.local import LocalModelRunner

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from chunking.measure.sizing import TextSizer
    from skills.embedding.cache import EmbeddingCache
    from skills.embedding.local import ModelLoad

Vector = list[float]

logger = logging.getLogger(__name__)

MIN_ATTEMPT_SECONDS = 0.05
"""Do not start a request with less time than this left before the deadline."""
BACKOFF_JITTER = 0.25
"""Backoff waits are shortened by up to this fraction, so parallel retries spread out."""


class FailureKind(Enum):
    """Why an input has no vector."""

    THROTTLED = "throttled"
    """HTTP 429: the deployment's rate limit."""
    UNAVAILABLE = "unavailable"
    """HTTP 5xx or no connection."""
    TIMEOUT = "timeout"
    """A request took longer than the time left."""
    DEADLINE = "deadline"
    """The skill's deadline came before the input's request could be (re)sent."""
    AUTH = "auth"
    """Credentials refused (401/403) or no token could be had."""
    BAD_RESPONSE = "bad_response"
    """Wrong number of vectors, wrong dimensions, or an unreadable answer."""
    REJECTED = "rejected"
    """Any other 4xx: the service refused the request as it is."""
    CONFIGURATION = "configuration"
    """The settings cannot work: no such deployment (404), a URL scheme or a key that
    cannot be sent; only a change of app settings helps."""
    TOO_LONG = "too_long"
    """Above the model's input limit; never sent."""


RETRYABLE = frozenset({FailureKind.THROTTLED, FailureKind.UNAVAILABLE, FailureKind.TIMEOUT})
"""Failures that a later attempt of the same request may not have."""
TRANSIENT = RETRYABLE | {FailureKind.DEADLINE}
"""Failures that say "try again later" rather than "this will never work"."""


@dataclass(frozen=True, slots=True)
class Failure:
    """Why one input (or one request's inputs) got no vector."""

    kind: FailureKind
    message: str
    """For a person reading the indexer's errors; never contains document text."""
    retry_after: float | None = None
    """The service's Retry-After hint in seconds, when it gave one."""


class EmbeddingRequestError(Exception):
    """One embedding request failed; raised by an EmbeddingClient."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


@dataclass(frozen=True, slots=True)
class ClientReply:
    """What one successful request returned."""

    vectors: list[Vector]
    """One per input, in input order (the client sorts by the response's `index`)."""
    truncated: tuple[int, ...] = ()
    """Positions of inputs the model read only in part (a local model's window)."""
    read_limit: int | None = None
    """Word pieces the model reads of each input, where it cuts them itself (local models)."""


class EmbeddingClient(Protocol):
    """Sends one embeddings request; no retries, no batching (the I/O edge)."""

    description: str
    """Provider, model and endpoint, for logs and health (no secrets)."""

    async def embed_batch(self, texts: Sequence[str], timeout: float) -> ClientReply:
        """Vectors for `texts`; raises EmbeddingRequestError. `timeout` is in seconds."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How long to wait and how often to try again."""

    max_retries: int
    """Retries per request after its first attempt."""
    initial_backoff: float = 0.5
    """Seconds before the first retry when the service gives no Retry-After."""
    max_backoff: float = 8.0
    """Longest wait between attempts without a Retry-After (the openai client's own cap)."""
    request_timeout: float = 60.0
    """Longest single request; the time left before the deadline shortens it further."""


@dataclass(frozen=True, slots=True)
class EmbeddingStats:
    """What embedding one skill call cost; logged per request (no document content)."""

    inputs: int
    embedded: int
    failed: int
    tokens: int
    """Tokens (cl100k_base) of the inputs that got vectors from the service (not the cache)."""
    batches: int
    requests: int
    """HTTP requests sent, retries included."""
    retries: int
    throttled: int
    """Answers with HTTP 429."""
    seconds: float
    cached: int = 0
    """Inputs whose vectors came from the embedding cache (counted in `embedded` too)."""


@dataclass(frozen=True, slots=True)
class EmbeddingOutcome:
    """One result per input, in order, and what it cost."""

    results: tuple[Vector | Failure, ...]
    stats: EmbeddingStats
    truncated: frozenset[int] = frozenset()
    """Inputs the model read only in part."""
    retry_after: float | None = None
    """The longest Retry-After hint the service gave, in seconds."""
    read_limit: int | None = None
    """Word pieces the model read of each truncated input, for the warning that says so."""


class Embedder(Protocol):
    """Turns texts into vectors: exactly one result per input, in order, always."""

    description: str

    async def embed(
        self,
        texts: Sequence[str],
        deadline: float,
        progress: Callable[[int, int], None] | None = None,
    ) -> EmbeddingOutcome:
        """Results for `texts`, finished by `deadline` (a time.monotonic() value)."""
        ...

    async def aclose(self) -> None:
        """Release the client's connections."""
        ...


def plan_batches(
    sizes: Sequence[tuple[int, int]], max_inputs: int, max_tokens: int
) -> list[tuple[int, ...]]:
    """Group (input index, tokens) pairs, in order, into requests within both limits.

    Greedy and order-preserving: a request is closed when the next input would pass
    `max_inputs` inputs or `max_tokens` tokens. An input larger than `max_tokens` on its
    own still gets a request of its own (callers keep such inputs out beforehand).
    """
    batches: list[tuple[int, ...]] = []
    current: list[int] = []
    tokens = 0
    for index, size in sizes:
        if current and (len(current) >= max_inputs or tokens + size > max_tokens):
            batches.append(tuple(current))
            current, tokens = [], 0
        current.append(index)
        tokens += size
    if current:
        batches.append(tuple(current))
    return batches


def backoff_seconds(policy: RetryPolicy, retry: int, jitter: float) -> float:
    """Exponential backoff for the `retry`-th retry (0-based), shortened by `jitter` in [0, 1)."""
    base = min(policy.initial_backoff * 2.0**retry, policy.max_backoff)
    return base * (1.0 - BACKOFF_JITTER * jitter)


class BatchEmbedder:
    """The Embedder over an EmbeddingClient: batching, concurrency, retries, checks."""

    def __init__(
        self,
        client: EmbeddingClient,
        sizer: TextSizer,
        *,
        dimensions: int,
        max_input_tokens: int,
        batch_size: int,
        batch_tokens: int,
        concurrency: int,
        retry: RetryPolicy,
        cache: EmbeddingCache | None = None,
    ) -> None:
        """With a `cache`, inputs are looked up first and only the misses are sent."""
        self.client = client
        self.sizer = sizer
        self.dimensions = dimensions
        self.max_input_tokens = max_input_tokens
        self.batch_size = batch_size
        self.batch_tokens = batch_tokens
        self.concurrency = concurrency
        self.retry = retry
        self.cache = cache
        self.description = client.description

    async def aclose(self) -> None:
        """Release the client's connections (and write what the cache has queued)."""
        await self.client.aclose()
        if self.cache is not None:
            await self.cache.aclose()

    def load(self) -> ModelLoad | None:
        """What a local model's thread is doing (None for a remote service)."""
        runner = getattr(self.client, "runner", None)
        return runner.load() if isinstance(runner, LocalModelRunner) else None

    async def embed(
        self,
        texts: Sequence[str],
        deadline: float,
        progress: Callable[[int, int], None] | None = None,
    ) -> EmbeddingOutcome:
        """One result per input, in order: its vector, or why it has none."""
        started = time.monotonic()
        sizes = await asyncio.to_thread(lambda: [self.sizer.size(text) for text in texts])
        results: list[Vector | Failure | None] = [None] * len(texts)
        sendable = self._screen(texts, sizes, results)
        keys = await self._look_up(texts, sendable, results, deadline)
        missed = [(index, size) for index, size in sendable if results[index] is None]
        cached = len(sendable) - len(missed)
        batches = plan_batches(missed, self.batch_size, self.batch_tokens)
        run = _Run(self, texts, deadline, progress, total=len(sendable))
        if cached:
            run.done = cached
            if progress is not None:
                progress(cached, len(sendable))
        tasks = await _send_until(run, batches, deadline)
        truncated, read_limit = _file_answers(batches, tasks, results)
        final = tuple(result for result in results if result is not None)
        assert len(final) == len(texts)  # one result per input, always
        if self.cache is not None:
            # Encoded here (off the event loop) and queued for the cache's writer thread:
            # the answer does not wait for the writes. A vector the model made of part of
            # its text is not kept (its warning would be lost on a hit).
            await asyncio.to_thread(
                self.cache.save,
                {
                    keys[index]: made
                    for index, _ in missed
                    if not isinstance(made := final[index], Failure) and index not in truncated
                },
            )
        embedded = [size for (index, size) in missed if not isinstance(final[index], Failure)]
        stats = EmbeddingStats(
            inputs=len(texts),
            embedded=len(embedded) + cached,
            failed=len(texts) - len(embedded) - cached,
            tokens=sum(embedded),
            batches=len(batches),
            requests=run.requests,
            retries=run.retries,
            throttled=run.throttled,
            seconds=round(time.monotonic() - started, 3),
            cached=cached,
        )
        return EmbeddingOutcome(
            final, stats, frozenset(truncated), run.retry_after, read_limit=read_limit
        )

    def _screen(
        self, texts: Sequence[str], sizes: Sequence[int], results: list[Vector | Failure | None]
    ) -> list[tuple[int, int]]:
        """(index, tokens) of each text the service may take; a Failure in `results` for
        each it may not (empty, or over the model's input limit), which is never sent."""
        sendable: list[tuple[int, int]] = []
        for index, (text, size) in enumerate(zip(texts, sizes, strict=True)):
            if not text.strip():
                results[index] = Failure(FailureKind.REJECTED, "a chunk's text is empty")
            elif size > self.max_input_tokens:
                results[index] = Failure(
                    FailureKind.TOO_LONG,
                    f"a chunk has {size} tokens, above the embedding model's limit of "
                    f"{self.max_input_tokens}; it was not sent (lower maximumPageLength "
                    "or use unit azureOpenAITokens)",
                )
            else:
                sendable.append((index, size))
        return sendable

    async def _look_up(
        self,
        texts: Sequence[str],
        sendable: list[tuple[int, int]],
        results: list[Vector | Failure | None],
        deadline: float,
    ) -> dict[int, str]:
        """Fill `results` with the cache's vectors; the key of each sendable input."""
        if self.cache is None or not sendable:
            return {}
        indexes = [index for index, _ in sendable]
        # Hashing a large record's texts takes a while: off the event loop, as sizing is.
        hashed = await asyncio.to_thread(self.cache.keys, [texts[i] for i in indexes])
        keys = dict(zip(indexes, hashed, strict=True))
        found = await self.cache.lookup(list(keys.values()), deadline)
        for index, key in keys.items():
            vector = found.get(key)
            if vector is not None:
                results[index] = list(vector)
        return keys

    def check_reply(self, reply: ClientReply, count: int) -> Failure | None:
        """Why a reply cannot be used, or None: wrong count, wrong size, non-finite values."""
        if len(reply.vectors) != count:
            return Failure(
                FailureKind.BAD_RESPONSE,
                f"the embedding service returned {len(reply.vectors)} vectors for {count} "
                "inputs; none of them was used",
            )
        for vector in reply.vectors:
            if len(vector) != self.dimensions:
                return Failure(
                    FailureKind.BAD_RESPONSE,
                    f"the embedding service returned vectors of {len(vector)} dimensions, "
                    f"expected {self.dimensions} (app setting EMBEDDING_DIMENSIONS); check that "
                    "the deployment runs the model named in EMBEDDING_MODEL",
                )
            # A NaN or infinity would make the response invalid JSON; a sum is non-finite
            # as soon as one element is, and costs far less than a check per element.
            if not math.isfinite(math.fsum(vector)):
                return Failure(
                    FailureKind.BAD_RESPONSE,
                    "the embedding service returned a vector with NaN or infinite values",
                )
        return None


class _Run:
    """The state of one `embed` call: counters and the shared concurrency limit."""

    def __init__(
        self,
        embedder: BatchEmbedder,
        texts: Sequence[str],
        deadline: float,
        progress: Callable[[int, int], None] | None,
        total: int,
    ) -> None:
        self.embedder = embedder
        self.texts = texts
        self.deadline = deadline
        self.progress = progress
        self.total = total
        self.done = 0
        self.requests = 0
        self.retries = 0
        self.throttled = 0
        self.retry_after: float | None = None
        self.not_before = 0.0
        """No request starts before this time.monotonic(): a 429's Retry-After holds back
        every batch, not just the one that got it, so the skill stops hammering a
        throttled deployment (and stops at once if the wait passes the deadline)."""
        self.slots = asyncio.Semaphore(embedder.concurrency)

    async def send(self, batch: tuple[int, ...]) -> ClientReply | Failure:
        """The batch's reply, retrying what is retryable while the deadline allows."""
        policy = self.embedder.retry
        texts = [self.texts[index] for index in batch]
        async with self.slots:
            retry = faults = 0
            while True:
                held = await self._hold()
                if held is not None:
                    return held
                left = self.deadline - time.monotonic()
                if left < MIN_ATTEMPT_SECONDS:
                    return Failure(
                        FailureKind.DEADLINE,
                        "the skill's deadline came before this chunk's embedding request "
                        "could be sent",
                    )
                failure = await self._attempt(texts, min(left, policy.request_timeout))
                if isinstance(failure, ClientReply):
                    self.done += len(batch)
                    if self.progress is not None:
                        self.progress(self.done, self.total)
                    return failure
                if failure.kind is FailureKind.THROTTLED:
                    self.throttled += 1
                if failure.retry_after is not None:
                    self.retry_after = max(self.retry_after or 0.0, failure.retry_after)
                    if failure.kind is FailureKind.THROTTLED:
                        until = time.monotonic() + failure.retry_after
                        self.not_before = max(self.not_before, until)
                if failure.kind not in RETRYABLE:
                    return failure
                # A 429 that says when to come back is the quota at work, not a fault:
                # it is retried for as long as the deadline allows, so a skill sharing a
                # deployment's quota with others still finishes its records.
                paced = failure.kind is FailureKind.THROTTLED and failure.retry_after is not None
                if not paced:
                    faults += 1
                if faults > policy.max_retries:
                    return _gave_up(failure, f"after {retry + 1} attempts (EMBEDDING_MAX_RETRIES)")
                wait = (
                    failure.retry_after
                    if failure.retry_after is not None
                    else backoff_seconds(policy, retry, random.random())
                )
                if time.monotonic() + wait > self.deadline - MIN_ATTEMPT_SECONDS:
                    return _gave_up(
                        failure,
                        f"after {retry + 1} attempts: waiting {wait:.3g} s more would pass "
                        "the skill's deadline (SKILL_DEADLINE_SECONDS)",
                    )
                retry += 1
                self.retries += 1
                await asyncio.sleep(wait)

    async def _hold(self) -> Failure | None:
        """Wait out a Retry-After another batch was given; a Failure if it passes the deadline."""
        wait = self.not_before - time.monotonic()
        if wait <= 0:
            return None
        if self.not_before > self.deadline - MIN_ATTEMPT_SECONDS:
            return Failure(
                FailureKind.THROTTLED,
                f"not sent: the embedding service asked to wait {wait:.3g} s more (HTTP 429 "
                "Retry-After), past the skill's deadline (SKILL_DEADLINE_SECONDS)",
                self.retry_after,
            )
        await asyncio.sleep(wait)
        return None

    async def _attempt(self, texts: list[str], timeout: float) -> ClientReply | Failure:
        self.requests += 1
        try:
            # wait_for bounds the attempt even if the client overruns its own timeout.
            reply = await asyncio.wait_for(
                self.embedder.client.embed_batch(texts, timeout), timeout + MIN_ATTEMPT_SECONDS
            )
        except EmbeddingRequestError as error:
            return error.failure
        except TimeoutError:
            return Failure(
                FailureKind.TIMEOUT, f"the embedding service did not answer within {timeout:.3g} s"
            )
        return self.embedder.check_reply(reply, len(texts)) or reply


async def _send_until(
    run: _Run, batches: list[tuple[int, ...]], deadline: float
) -> list[asyncio.Task[ClientReply | Failure]]:
    """Start every batch (the run's semaphore bounds how many are in flight) and wait for
    them until the deadline; what has not finished by then is cancelled."""
    tasks = [asyncio.create_task(run.send(batch)) for batch in batches]
    if tasks:
        _, pending = await asyncio.wait(tasks, timeout=max(deadline - time.monotonic(), 0))
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    return tasks


def _file_answers(
    batches: list[tuple[int, ...]],
    tasks: list[asyncio.Task[ClientReply | Failure]],
    results: list[Vector | Failure | None],
) -> tuple[set[int], int | None]:
    """Put each batch's vectors, or its failure, in `results` at its inputs' indexes; the
    inputs the model truncated, and the service's read limit if a reply named one."""
    truncated: set[int] = set()
    read_limit: int | None = None
    for batch, task in zip(batches, tasks, strict=True):
        answer = _task_answer(task)
        if isinstance(answer, ClientReply):
            read_limit = answer.read_limit if answer.read_limit is not None else read_limit
            for position, (index, vector) in enumerate(zip(batch, answer.vectors, strict=True)):
                results[index] = vector
                if position in answer.truncated:
                    truncated.add(index)
        else:
            failure = answer or Failure(
                FailureKind.DEADLINE,
                "the skill's deadline passed before this chunk's embedding request finished",
            )
            for index in batch:
                results[index] = failure
    return truncated, read_limit


def _task_answer(task: asyncio.Task[ClientReply | Failure]) -> ClientReply | Failure | None:
    """A batch task's answer; None if it never finished; a Failure if it crashed (a bug)."""
    if not task.done() or task.cancelled():
        return None
    error = task.exception()
    if error is None:
        return task.result()
    logger.error("embedding batch failed unexpectedly", exc_info=error)
    return Failure(
        FailureKind.BAD_RESPONSE,
        "internal error while embedding; the function app's logs have the details",
    )


def _gave_up(failure: Failure, why: str) -> Failure:
    return Failure(failure.kind, f"{failure.message}; gave up {why}", failure.retry_after)
