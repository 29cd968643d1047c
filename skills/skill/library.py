"""The skill without the Functions host: records in, chunk records (and vectors) out.

Each record's `data` is what the indexer would send the skill (`text`, and optionally
`fileName`, `contentType`, `url`, `title`, `language` and any of the Split-skill options
such as `maximumPageLength`); each answer is what the skill would return for it: its
chunks as typed records (`skills.skill.render.chunk_json` gives the object the index
projection reads), `warnings`, and `errors` (a record that cannot be chunked or embedded
has errors and no chunks). It runs the same functions as
`POST /api/chunk` (`chunk_record`, then the same embedding step), with the same
`Settings`, so the push path and Spark produce the documents the indexer path produces.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skills.skill.chunk_records import chunk_record
from skills.skill.contract import InputRecord
from skills.skill.records import OutputRecord, failed_record
from skills.skill.service import Answer, embed_outputs, misconfigured_message
from skills.skill.settings import SettingsError, settings_from_environment

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from skills.embedding.embedder import Embedder
    from skills.skill.records import ChunkRecord
    from skills.skill.settings import Settings

EMBED_DEADLINE_SECONDS = 600.0
"""Time one `embed_records` call may take: no indexer waits here, so it is long; the
embedder's own retries and Retry-After waits fit in it."""


@dataclass(frozen=True, slots=True)
class RecordChunks:
    """The skill's answer for one record."""

    chunks: tuple[ChunkRecord, ...]
    """The chunks the skill answers in `data.chunks` (with `embedding` once embedded)."""
    warnings: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.errors


def chunk_records(
    records: Iterable[Mapping[str, Any]], settings: Settings | SettingsError | None = None
) -> list[RecordChunks]:
    """Chunk every record as the skill does (no embeddings): one answer per record, in order."""
    chosen = settings_from_environment() if settings is None else settings
    if isinstance(chosen, SettingsError):  # every record is answered with the error
        return [RecordChunks((), (), (misconfigured_message(chosen),)) for _ in records]
    return [
        _answer(chunk_record(InputRecord(str(number), dict(data)), chosen))
        for number, data in enumerate(records)
    ]


def embed_records(
    answers: Sequence[RecordChunks],
    embedder: Embedder,
    *,
    deadline_seconds: float = EMBED_DEADLINE_SECONDS,
    progress: Callable[[int, int], None] | None = None,
    runner: asyncio.Runner | None = None,
) -> list[RecordChunks]:
    """The answers with a vector on every chunk; a record whose chunks could not all be
    embedded gets the skill's per-record error instead (and keeps no chunks).

    The embedder's connections belong to the event loop that first used them: a caller
    that embeds more than once passes one `asyncio.Runner` for all calls (and closes the
    embedder in it); without one, each call runs in a loop of its own.
    """
    outputs = [
        OutputRecord(str(number), a.chunks, warnings=a.warnings)
        if a.ok
        else failed_record(str(number), *a.errors, warnings=a.warnings)
        for number, a in enumerate(answers)
    ]
    deadline = time.monotonic() + deadline_seconds
    work = embed_outputs(outputs, embedder, deadline, progress)
    embedded = asyncio.run(work) if runner is None else runner.run(work)
    if isinstance(embedded, Answer):
        # Nothing got a vector because the service throttles or is down: every record
        # that had chunks fails with the reason, the rest stay as they were.
        reason = _answer_message(embedded)
        return [
            RecordChunks((), a.warnings, (reason,)) if a.ok and a.chunks else a for a in answers
        ]
    return [_answer(output) for output in embedded]


def _answer(output: OutputRecord) -> RecordChunks:
    return RecordChunks(output.chunks or (), output.warnings, output.errors)


def _answer_message(answer: Answer) -> str:
    try:
        return str(json.loads(answer.body)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return f"the embedding service answered HTTP {answer.status}"
