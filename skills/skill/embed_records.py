"""Put embedding results onto the typed chunk records, or one error per record.

Pure functions between the chunked records and the embedder's outcome: a chunk with its
vector is a new `ChunkRecord` (`dataclasses.replace`), a record with them a new
`OutputRecord`; nothing here is JSON. A record is
complete only if every one of its chunks got a vector; otherwise it is answered with
`data: {}` and an error that says why (throttling, a bad answer, credentials, ...).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from skills.embedding.embedder import TRANSIENT, Failure, FailureKind
from skills.skill.records import failed_record

if TYPE_CHECKING:
    from collections.abc import Sequence

    from skills.embedding.embedder import EmbeddingOutcome
    from skills.skill.records import OutputRecord

DEFAULT_RETRY_AFTER_SECONDS = 10
"""Retry-After of a 503 when the embedding service gave no hint of its own."""
MAX_RETRY_AFTER_SECONDS = 120
"""Longer hints are capped: the indexer retries a 503 only twice anyway."""

RECORD_MESSAGES: dict[FailureKind, str] = {
    FailureKind.THROTTLED: "not embedded: the embedding service was throttled (HTTP 429) and "
    "the skill's retries or deadline ran out; the indexer may retry this document",
    FailureKind.UNAVAILABLE: "not embedded: the embedding service failed or could not be "
    "reached; the indexer may retry this document",
    FailureKind.TIMEOUT: "not embedded: the embedding service was too slow for the skill's "
    "deadline; the indexer may retry this document",
    FailureKind.DEADLINE: "not embedded: the skill's deadline (SKILL_DEADLINE_SECONDS) came "
    "before this record's chunks were embedded; the indexer may retry this document",
    FailureKind.AUTH: "not embedded: the embedding service could not be authenticated to",
    FailureKind.BAD_RESPONSE: "not embedded: the embedding service's answer was wrong",
    FailureKind.REJECTED: "not embedded: the embedding service refused the request",
    FailureKind.CONFIGURATION: "not embedded: the embedding app settings cannot work",
    FailureKind.TOO_LONG: "not embedded: a chunk is too long for the embedding model",
}
"""The first words of a record's error, by failure kind; the failure's details follow."""


@dataclass(frozen=True, slots=True)
class ChunkText:
    """Where one text to embed comes from."""

    record: int
    """Position of the record in the answer."""
    chunk: int
    """Position of the chunk in that record's chunks."""
    text: str
    """The chunk's `text` (title and headings + content): what is embedded."""


def texts_to_embed(outputs: Sequence[OutputRecord]) -> list[ChunkText]:
    """Every chunk text of every record that has chunks, in answer order."""
    found: list[ChunkText] = []
    for record_index, output in enumerate(outputs):
        if output.errors or output.chunks is None:
            continue
        for chunk_index, chunk in enumerate(output.chunks):
            found.append(ChunkText(record_index, chunk_index, chunk.text))
    return found


def attach_embeddings(
    outputs: Sequence[OutputRecord], texts: Sequence[ChunkText], outcome: EmbeddingOutcome
) -> list[OutputRecord]:
    """The records with a vector on each chunk, or an error where some chunk has none."""
    if len(outcome.results) != len(texts):
        raise ValueError("the embedder must return one result per text")
    by_record: dict[int, list[tuple[int, list[float] | Failure, bool]]] = {}
    for position, (where, result) in enumerate(zip(texts, outcome.results, strict=True)):
        by_record.setdefault(where.record, []).append(
            (where.chunk, result, position in outcome.truncated)
        )
    answered: list[OutputRecord] = []
    for record_index, output in enumerate(outputs):
        results = by_record.get(record_index)
        if results is None:
            answered.append(output)
            continue
        failures = [result for _, result, _ in results if isinstance(result, Failure)]
        if failures:
            answered.append(_failed(output, failures, len(results)))
            continue
        chunks = list(output.chunks or ())
        for chunk_index, vector, _ in results:
            if not isinstance(vector, Failure):
                chunks[chunk_index] = replace(chunks[chunk_index], embedding=vector)
        warnings = list(output.warnings)
        truncated = sum(1 for _, _, cut in results if cut)
        if truncated:
            reads = f" ({outcome.read_limit} word pieces)" if outcome.read_limit else ""
            warnings.append(
                f"{truncated} chunk(s) are longer than the local model reads{reads}; only "
                "their beginning was embedded"
            )
        answered.append(replace(output, chunks=tuple(chunks), warnings=tuple(warnings)))
    return answered


def _failed(output: OutputRecord, failures: list[Failure], chunk_count: int) -> OutputRecord:
    """The record's error: the first failure's kind and details, and how many chunks failed."""
    first = failures[0]
    message = (
        f"{RECORD_MESSAGES[first.kind]} ({len(failures)} of {chunk_count} chunks have no "
        f"vector; {first.message})"
    )
    return failed_record(output.record_id, message, warnings=output.warnings)


def service_unavailable(texts: Sequence[ChunkText], outcome: EmbeddingOutcome) -> bool:
    """True when there was something to embed, nothing got a vector, and only for reasons
    that may pass (throttling, outages, time): then the whole batch should be retried."""
    if not texts or outcome.stats.embedded:
        return False
    return all(
        isinstance(result, Failure) and result.kind in TRANSIENT for result in outcome.results
    )


def retry_after_header(outcome: EmbeddingOutcome) -> int:
    """Whole seconds for the Retry-After of a 503: the service's hint, capped, or a default."""
    if outcome.retry_after is None:
        return DEFAULT_RETRY_AFTER_SECONDS
    return max(1, min(math.ceil(outcome.retry_after), MAX_RETRY_AFTER_SECONDS))
