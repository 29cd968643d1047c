"""Answer a chunk request body: parse it, chunk and embed its records within the deadline, render.

The HTTP endpoint and the command line both go through `answer_chunk_request`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from skills.embedding.scoring import ScoringService
from skills.skill.admission import text_length
from skills.skill.answer_caps import AnswerCap, chunk_count, vector_bytes
from skills.skill.chunker_state import Done, NotStarted, Overran, WorkerLost
from skills.skill.contract import RequestError, parse_request, render_error, render_response
from skills.skill.embed_records import (
    attach_embeddings,
    retry_after_header,
    service_unavailable,
    texts_to_embed,
)
from skills.skill.memory_cost import answered_cost
from skills.skill.records import OutputRecord, failed_record
from skills.skill.settings import (
    ENV_CHUNK_WORKERS,
    ENV_DEADLINE_SECONDS,
    MAX_DEADLINE_SECONDS,
    SettingsError,
    settings_or_defaults,
)
from skills.skill.thread_chunker import ThreadChunker

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from skills.embedding.embedder import Embedder, EmbeddingOutcome
    from skills.skill.chunker_state import Outcome, RecordChunker
    from skills.skill.contract import InputRecord, Rendered
    from skills.skill.memory_budget import Admitted, Reservation
    from skills.skill.settings import Settings

logger = logging.getLogger(__name__)

HTTP_OK = 200
HTTP_UNAVAILABLE = 503
RESPONSE_RESERVE_SECONDS = 5.0
"""Embedding stops this long before the deadline, to leave time to render a large answer
(1,000 chunks of 3,072 floats are ~60 MB of JSON)."""
RESPONSE_RESERVE_FRACTION = 0.1
"""...or this fraction of the deadline, when that is less (short test deadlines)."""
SLICE_CHARACTERS = 8_000_000
"""Records are chunked in slices of about this much text: a slice's answers (~4x its text
without vectors) are capped before the next slice is chunked, so memory follows the
answer kept, not the request (bench.answer_memory). A batch of less text is one slice,
chunked all at once as before; in a larger one, a record that overruns the deadline
holds its slice, and the records of later slices are then answered as not started."""
BUSY_RETRY_SECONDS = 30
"""Retry-After when every worker was busy until the deadline: the overrunning work that
kept them busy has been stopped by then."""
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
    chunker: RecordChunker | None = None,
    progress: Callable[[int, int], None] | None = None,
    scoring: ScoringService | None = None,
    reservation: Reservation | None = None,
) -> Answer:
    """The full answer to a chunk request body received at `started` (time.monotonic()).

    Records still unfinished at the deadline are answered with an error each, so the
    response always arrives in time and names every recordId. `chunker` chunks them (the
    app's killable worker processes); without one, a thread does. With an `embedder`, every
    chunk of every record is embedded in one go (`progress(done, total)` is told as
    chunks get vectors); when the embedding service gave nothing at all because it is
    throttling or down, the answer is a 503 with Retry-After so the indexer retries.
    `scoring` serves the scored strategies' sentence embeddings and pair scores; without
    it, they use `embedder` for embeddings and have no pair scorer. With a memory
    `reservation`, records that do not fit in it are refused one by one and it shrinks
    to what the others cost. A SettingsError stops here: the body is read within the
    default limits and every record answered with it (nothing below sees one).
    """
    started = time.monotonic() if started is None else started
    read = await _read_records(body, settings_or_defaults(settings), reservation)
    if isinstance(read, Answer):
        return read
    parsed, admitted = read
    timings = {"read": time.monotonic() - started}
    if isinstance(settings, SettingsError):
        return await _misconfigured(settings, parsed, admitted, timings, started)
    settings = _within_memory(settings, admitted)
    until = _work_until(started, settings.deadline_seconds)
    mark = time.monotonic()
    # Without vectors to come, the bytes the cap measures are the answer's: kept to reuse.
    rendered: Rendered | None = None if embedder is not None else {}
    cap = answer_cap(settings, embeds=embedder is not None)
    work = (until, chunker or ThreadChunker(), scoring or ScoringService(embedder=embedder))
    chunked = await chunk_and_cap(parsed, settings, *work, rendered=rendered, cap=cap)
    if isinstance(chunked, Answer):
        return chunked
    _settle(reservation, admitted, cap, settings)
    outputs = chunked if admitted is None else admitted.merge(chunked)
    timings["chunk"], mark = time.monotonic() - mark, time.monotonic()
    if embedder is not None:
        embedded = await embed_outputs(outputs, embedder, until, progress)
        if isinstance(embedded, Answer):
            return embedded
        outputs = embedded
    timings["embed"] = time.monotonic() - mark
    return await _respond(outputs, rendered, timings, started)


async def _misconfigured(
    error: SettingsError,
    records: Sequence[InputRecord],
    admitted: Admitted | None,
    timings: dict[str, float],
    started: float,
) -> Answer:
    """The answer while the app settings are broken: every record admitted fails with
    `error` (those memory refused keep their own refusal)."""
    failed = [failed_record(r.record_id, misconfigured_message(error)) for r in records]
    outputs = failed if admitted is None else admitted.merge(failed)
    return await _respond(outputs, {}, timings, started)


def _settle(
    reservation: Reservation | None, admitted: Admitted | None, cap: AnswerCap, settings: Settings
) -> None:
    """The answer is measured now, vectors to come included: what the reservation's bound
    held beyond it goes back before the embedding, the longest part of a request."""
    if admitted is not None and reservation is not None:
        reservation.settle(answered_cost(admitted.parsed, cap.used, cap.chunks, settings))


def _work_until(started: float, deadline: float) -> float:
    """When chunking and embedding must be done by: the request's deadline, less the time
    kept to render the answer."""
    return started + deadline - min(RESPONSE_RESERVE_SECONDS, RESPONSE_RESERVE_FRACTION * deadline)


async def _respond(
    outputs: list[OutputRecord],
    rendered: Rendered | None,
    timings: dict[str, float],
    started: float,
) -> Answer:
    """The 200 answer holding `outputs` (reusing the renderings in `rendered`), logged."""
    mark = time.monotonic()
    answer = Answer(HTTP_OK, await asyncio.to_thread(render_response, outputs, rendered))
    timings["render"] = time.monotonic() - mark
    log_request(outputs, timings, time.monotonic() - started)
    return answer


def misconfigured_message(error: SettingsError) -> str:
    """A record's error when the app settings cannot work: which ones, and where to look."""
    return (
        f"the skill is misconfigured: {error}. Fix the app setting(s) named here; until "
        "then no record is chunked (GET /api/health reports the same)"
    )


async def _read_records(
    body: bytes, settings: Settings, reservation: Reservation | None
) -> tuple[Sequence[InputRecord], Admitted | None] | Answer:
    """The request's records to chunk, and with a memory `reservation` what it admitted
    (the records that fit; the others are refused one by one), or the answer refusing
    the whole body: too large, or unreadable."""
    limit = settings.max_request_bytes
    if len(body) > limit:
        error = too_large(len(body), limit)
        return Answer(error.status, render_error(error))
    parsed = await asyncio.to_thread(parse_request, body)
    if isinstance(parsed, RequestError):
        return Answer(parsed.status, render_error(parsed))
    if reservation is None:
        return parsed, None
    admitted = reservation.admit(parsed, len(body), settings)
    return admitted.records, admitted


def log_request(outputs: Sequence[OutputRecord], timings: dict[str, float], total: float) -> None:
    """One structured line per answered request: where the time went, no document text."""
    fields: dict[str, object] = {
        "records": len(outputs),
        "failed_records": sum(1 for output in outputs if output.errors),
        "chunks": sum(chunk_count(output) for output in outputs),
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
        "cached": stats.cached,
        "failed": stats.failed,
        "tokens": stats.tokens,
        "batches": stats.batches,
        "requests": stats.requests,
        "retries": stats.retries,
        "throttled": stats.throttled,
        "seconds": stats.seconds,
    }
    logger.info("embedding %s", json.dumps(fields), extra={"embedding": fields})


async def chunk_and_cap(
    records: Sequence[InputRecord],
    settings: Settings,
    until: float,
    chunker: RecordChunker,
    scoring: ScoringService,
    *,
    rendered: Rendered | None = None,
    cap: AnswerCap,
) -> list[OutputRecord] | Answer:
    """Every record's answer, chunked a slice of the batch at a time, each slice's answers
    kept within MAX_RESPONSE_BYTES as they come (`cap_answer`, vectors to come counted).
    With `rendered`, the last slice's records are kept there with their bytes as the cap
    measured them, for the response to reuse: nothing is chunked after that slice, so
    holding them does not raise the peak (bench.answer_memory: an earlier slice's bytes,
    held while later ones are chunked, did).

    In slices, the app holds the answers kept so far and one slice's, never every
    record's chunks at once: 200 records of 100 KB made ~64 MB of answer, held ~6x over.
    """
    answered: list[OutputRecord] = []
    slices = text_slices(records, SLICE_CHARACTERS)
    for index, part in enumerate(slices):
        chunked = await chunk_within_deadline(part, settings, until, chunker, scoring)
        if isinstance(chunked, Answer):
            if index == 0:
                return chunked  # nothing could be started: the 503 for the whole batch
            chunked = [_unfinished(record, NotStarted(), settings) for record in part]
        # Before embedding: a record refused here costs no embedding tokens.
        last = index == len(slices) - 1
        answered += await asyncio.to_thread(cap.keep, chunked, rendered if last else None)
    return answered


def _within_memory(settings: Settings, admitted: Admitted | None) -> Settings:
    """`settings` with MAX_RESPONSE_BYTES lowered to what memory leaves the request
    (`Admitted.answer_limit`), so that the workers refuse an answer that would not fit
    before sending it."""
    limit = None if admitted is None else admitted.answer_limit
    if limit is None:
        return settings
    return replace(settings, max_response_bytes=min(settings.max_response_bytes, limit))


def answer_cap(settings: Settings, *, embeds: bool) -> AnswerCap:
    """What keeps the answer within MAX_RESPONSE_BYTES (vectors to come counted when the
    request `embeds`)."""
    per_chunk = vector_bytes(settings.embedding.dimensions) if embeds else 0
    return AnswerCap(settings.max_response_bytes, per_chunk)


def text_slices(records: Sequence[InputRecord], characters: int) -> list[list[InputRecord]]:
    """`records` in order, in consecutive slices of about `characters` of text each (a
    record with more is a slice of its own)."""
    slices: list[list[InputRecord]] = [[]]
    size = 0
    for record in records:
        length = text_length(record) or 0
        if slices[-1] and size + length > characters:
            slices.append([])
            size = 0
        slices[-1].append(record)
        size += length
    return slices


async def chunk_within_deadline(
    records: Sequence[InputRecord],
    settings: Settings,
    until: float,
    chunker: RecordChunker,
    scoring: ScoringService | None = None,
) -> list[OutputRecord] | Answer:
    """Every record's answer by `until`, or a 503 when no record could even be started.

    A record still running at `until` is stopped (with the process chunker) and answered
    with an error that names its size; records no worker was free for are answered too.
    """
    if not records:
        return []
    outcomes = await chunker.chunk(records, settings, until, scoring)
    if all(isinstance(outcome, NotStarted) for outcome in outcomes):
        error = RequestError(
            HTTP_UNAVAILABLE,
            f"The skill was busy chunking other records until its deadline "
            f"({_deadline_text(settings)}); none of the {len(records)} records could be "
            f"started. Retry the batch after {BUSY_RETRY_SECONDS} s.",
        )
        return Answer(HTTP_UNAVAILABLE, render_error(error), retry_after=BUSY_RETRY_SECONDS)
    return [
        outcome.output if isinstance(outcome, Done) else _unfinished(record, outcome, settings)
        for record, outcome in zip(records, outcomes, strict=True)
    ]


def _unfinished(record: InputRecord, outcome: Outcome, settings: Settings) -> OutputRecord:
    deadline = f"{_deadline_text(settings)}, app setting {ENV_DEADLINE_SECONDS}"
    size = _text_size(record)
    if isinstance(outcome, Overran) and outcome.scorer is not None:
        # A small record waiting for a hung scorer is not helped by splitting it.
        message = (
            f"not chunked: this record's text{size} was waiting for the {outcome.scorer} "
            f"scorer at the skill's deadline ({deadline}); the scorer did not answer in "
            "time: check that it is up and answering, or "
            f"raise {ENV_DEADLINE_SECONDS} together with the skill's timeout in the skillset"
        )
    elif isinstance(outcome, Overran):
        message = (
            f"not chunked: this record's text{size} was still being chunked at the skill's "
            f"deadline ({deadline}), so its work was stopped; split the document into "
            f"smaller ones, or raise {ENV_DEADLINE_SECONDS} (up to {MAX_DEADLINE_SECONDS:g}) "
            "together with the skill's timeout in the skillset"
        )
    elif isinstance(outcome, WorkerLost):
        message = (
            f"not chunked: the worker process chunking this record's text{size} stopped "
            "unexpectedly (most likely it ran out of memory); split the document into "
            "smaller ones or give the function app more memory"
        )
    else:
        message = (
            f"not chunked: every chunk worker was busy with other records until the skill's "
            f"deadline ({deadline}); the indexer can retry the document later (app setting "
            f"{ENV_CHUNK_WORKERS} sets how many records are chunked at once)"
        )
    return failed_record(record.record_id, message)


def _text_size(record: InputRecord) -> str:
    length = text_length(record)
    return "" if length is None else f" ({length:,} characters)"


def _deadline_text(settings: Settings) -> str:
    return f"{settings.deadline_seconds:g} s"
