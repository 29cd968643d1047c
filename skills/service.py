"""Answer a chunk request body: parse it, chunk and embed its records within the deadline, render.

The HTTP endpoint and the command line both go through `answer_chunk_request`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from skills.chunk_records import chunk_record
from skills.contract import (
    OutputRecord,
    RequestError,
    failed_record,
    parse_request,
    render_error,
    render_response,
)
from skills.embed_records import (
    attach_embeddings,
    retry_after_header,
    service_unavailable,
    texts_to_embed,
)
from skills.settings import DEFAULT_DEADLINE_SECONDS, DEFAULT_MAX_REQUEST_BYTES, SettingsError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from skills.contract import InputRecord
    from skills.embedding import Embedder, EmbeddingOutcome
    from skills.settings import Settings

logger = logging.getLogger(__name__)

HTTP_OK = 200
HTTP_UNAVAILABLE = 503
RESPONSE_RESERVE_SECONDS = 5.0
"""Embedding stops this long before the deadline, to leave time to render a large answer
(1,000 chunks of 3,072 floats are ~60 MB of JSON)."""
RESPONSE_RESERVE_FRACTION = 0.1
"""...or this fraction of the deadline, when that is less (short test deadlines)."""
# All-good and mixed batches both get 200. The docs allow 207 for mixed batches, but
# every Microsoft sample answers 200, the per-record `errors` are what the indexer
# reads, and a proxy or client that treats any non-200 2xx oddly would gain nothing.


@dataclass(frozen=True, slots=True)
class Answer:
    """An HTTP answer: status and JSON body."""

    status: int
    body: bytes
    retry_after: int | None = None
    """Seconds for a `Retry-After` header (with 503)."""


def request_limit(settings: Settings | SettingsError) -> int:
    """The largest body accepted; the default when the settings are broken."""
    if isinstance(settings, SettingsError):
        return DEFAULT_MAX_REQUEST_BYTES
    return settings.max_request_bytes


def too_large(size: int, limit: int) -> RequestError:
    """The 413 for a body of `size` bytes (or more) over `limit`."""
    return RequestError(
        413,
        f"The request body is {size} bytes or more; the limit is {limit} bytes "
        "(app setting MAX_REQUEST_BYTES). Lower the skill's batchSize or raise the limit.",
    )


async def answer_chunk_request(
    body: bytes,
    settings: Settings | SettingsError,
    *,
    started: float | None = None,
    embedder: Embedder | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Answer:
    """The full answer to a chunk request body received at `started` (time.monotonic()).

    Records still unfinished at the deadline are answered with an error each, so the
    response always arrives in time and names every recordId. With an `embedder`, every
    chunk of every record is embedded in one go (`progress(done, total)` is told as
    chunks get vectors); when the embedding service gave nothing at all because it is
    throttling or down, the answer is a 503 with Retry-After so the indexer retries.
    """
    started = time.monotonic() if started is None else started
    limit = request_limit(settings)
    if len(body) > limit:
        error = too_large(len(body), limit)
        return Answer(error.status, render_error(error))
    parsed = await asyncio.to_thread(parse_request, body)
    if isinstance(parsed, RequestError):
        return Answer(parsed.status, render_error(parsed))
    deadline = (
        DEFAULT_DEADLINE_SECONDS
        if isinstance(settings, SettingsError)
        else settings.deadline_seconds
    )
    timings = {"read": time.monotonic() - started}
    mark = time.monotonic()
    outputs = await chunk_within_deadline(parsed, settings, deadline - (time.monotonic() - started))
    timings["chunk"], mark = time.monotonic() - mark, time.monotonic()
    if embedder is not None:
        reserve = min(RESPONSE_RESERVE_SECONDS, RESPONSE_RESERVE_FRACTION * deadline)
        embedded = await embed_outputs(outputs, embedder, started + deadline - reserve, progress)
        if isinstance(embedded, Answer):
            return embedded
        outputs = embedded
    timings["embed"], mark = time.monotonic() - mark, time.monotonic()
    answer = Answer(HTTP_OK, await asyncio.to_thread(render_response, outputs))
    timings["render"] = time.monotonic() - mark
    log_request(outputs, timings, time.monotonic() - started)
    return answer


def _chunk_count(output: OutputRecord) -> int:
    chunks = output.data.get("chunks")
    return len(chunks) if isinstance(chunks, list) else 0


def log_request(outputs: Sequence[OutputRecord], timings: dict[str, float], total: float) -> None:
    """One structured line per answered request: where the time went, no document text."""
    fields: dict[str, object] = {
        "records": len(outputs),
        "failed_records": sum(1 for output in outputs if output.errors),
        "chunks": sum(_chunk_count(output) for output in outputs),
        **{f"{stage}_seconds": round(seconds, 4) for stage, seconds in timings.items()},
        "total_seconds": round(total, 4),
    }
    logger.info("chunk request %s", json.dumps(fields), extra={"chunk_request": fields})


async def embed_outputs(
    outputs: list[OutputRecord],
    embedder: Embedder,
    deadline: float,
    progress: Callable[[int, int], None] | None = None,
) -> list[OutputRecord] | Answer:
    """The records with vectors on their chunks (or per-record errors), or a 503 answer."""
    texts = texts_to_embed(outputs)
    if not texts:
        return outputs
    outcome = await embedder.embed([where.text for where in texts], deadline, progress)
    log_embedding(outcome, records=len(outputs), provider=embedder.description)
    if service_unavailable(texts, outcome):
        seconds = retry_after_header(outcome)
        first = outcome.results[0]
        reason = getattr(first, "message", "no details")
        error = RequestError(
            HTTP_UNAVAILABLE,
            f"The embedding service is throttling or unavailable: none of the {len(texts)} "
            f"chunks could be embedded ({reason}). Retry the batch after {seconds} s.",
        )
        return Answer(HTTP_UNAVAILABLE, render_error(error), retry_after=seconds)
    return await asyncio.to_thread(attach_embeddings, outputs, texts, outcome)


def log_embedding(outcome: EmbeddingOutcome, *, records: int, provider: str) -> None:
    """One structured log line per request: counts, tokens and time, never document text."""
    stats = outcome.stats
    fields = {
        "provider": provider,
        "records": records,
        "chunks": stats.inputs,
        "embedded": stats.embedded,
        "failed": stats.failed,
        "tokens": stats.tokens,
        "batches": stats.batches,
        "requests": stats.requests,
        "retries": stats.retries,
        "throttled": stats.throttled,
        "seconds": stats.seconds,
    }
    logger.info("embedding %s", json.dumps(fields), extra={"embedding": fields})


async def chunk_within_deadline(
    records: Sequence[InputRecord], settings: Settings | SettingsError, seconds: float
) -> list[OutputRecord]:
    """Chunk the records in a worker thread, keeping the event loop free, for at most `seconds`.

    A thread cannot be killed: at the deadline the worker is told to stop after its current
    record, and the answer goes out without waiting for it.
    """
    if not records:
        return []
    run = _BatchRun(records, settings)
    worker = asyncio.get_running_loop().run_in_executor(None, run.run)
    await asyncio.wait({worker}, timeout=max(seconds, 0.0))
    run.stop.set()
    finished = list(run.outputs)
    if len(finished) < len(records):
        message = (
            "not chunked: the skill's deadline "
            f"({_deadline_text(settings)}, app setting SKILL_DEADLINE_SECONDS) passed before "
            "this record was finished; the indexer can retry the document later"
        )
        finished += [
            failed_record(record.record_id, message) for record in records[len(finished) :]
        ]
    return finished


def _deadline_text(settings: Settings | SettingsError) -> str:
    seconds = (
        DEFAULT_DEADLINE_SECONDS
        if isinstance(settings, SettingsError)
        else settings.deadline_seconds
    )
    return f"{seconds:g} s"


class _BatchRun:
    """Chunks records in order on a worker thread until done or told to stop."""

    __slots__ = ("outputs", "records", "settings", "stop")

    def __init__(self, records: Sequence[InputRecord], settings: Settings | SettingsError) -> None:
        self.records = records
        self.settings = settings
        self.outputs: list[OutputRecord] = []
        """Answers so far, in request order; only the worker appends (atomic under the GIL)."""
        self.stop = threading.Event()

    def run(self) -> None:
        for record in self.records:
            if self.stop.is_set():
                return
            try:
                output = chunk_record(record, self.settings)
            except Exception:  # a bug outside chunking still stays in its record
                logger.exception("answering record %r failed", record.record_id)
                output = failed_record(
                    record.record_id,
                    "internal error while answering this record; the function app's logs "
                    "have the details",
                )
            self.outputs.append(output)
