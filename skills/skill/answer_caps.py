"""Keep a request's answer within MAX_RESPONSE_BYTES, refusing records one by one.

The answer is the one thing that grows with what a record asks for (its chunks, their
text, their vectors) rather than with what it sends, and the app holds ~5x its bytes
at its peak (docs/design/hardening.md, "Bounded answers"). Records are taken in the
batch's order; one whose answer does not fit in what is left is refused with an error
that says what to change, and the records after it may still fit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skills.skill.contract import RESPONSE_CLOSE, RESPONSE_OPEN, render_record
from skills.skill.records import failed_record
from skills.skill.settings import ENV_MAX_RESPONSE_BYTES, ENV_MEMORY_BUDGET_BYTES

if TYPE_CHECKING:
    from collections.abc import Sequence

    from skills.skill.contract import Rendered
    from skills.skill.records import ChunkRecord, OutputRecord
    from skills.skill.settings import Settings

FLOAT_JSON_BYTES = 25
"""The most bytes one vector value takes in the answer: the longest repr of a float
("-2.2250738585072014e-308", 24 characters) and its comma. Typical values take ~21, so
the estimate made before embedding is an upper bound, ~20% over."""
VECTOR_FRAME_BYTES = len(',"embedding":[]')
"""What a chunk's vector adds besides its values."""


def vector_bytes(dimensions: int) -> int:
    """At most how many bytes one chunk's vector adds to the answer."""
    return VECTOR_FRAME_BYTES + dimensions * FLOAT_JSON_BYTES


JSON_BYTES_PER_CHARACTER = 6
"""The most bytes one character of a string takes in the answer (a `\\uXXXX` escape)."""
CHUNK_FIELDS_BYTES = 1_024
"""More than what a chunk's fields other than its strings take in the answer (names,
offsets and lengths in three units, ordinal, size, id, page numbers)."""


def refused_alone(output: OutputRecord, settings: Settings) -> OutputRecord:
    """`output`, or its refusal when its answer alone (with the vectors the settings'
    provider adds) would pass MAX_RESPONSE_BYTES; the same verdict `AnswerCap` gives.

    Worker processes call it on what they chunked, so an answer that can never be sent
    does not cross to the app, which would hold it several times over only to refuse it
    (the soak's 16-million-character record: ~400 MB of answer). Records that surely fit
    are not rendered here (`_surely_fits`)."""
    if not chunk_count(output):
        return output
    embeds = settings.embedding.provider != "none"
    per_chunk = vector_bytes(settings.embedding.dimensions) if embeds else 0
    limit = settings.max_response_bytes
    if _surely_fits(output, limit, per_chunk):
        return output
    return AnswerCap(limit, per_chunk).keep([output])[0]


def _surely_fits(output: OutputRecord, limit: int, per_chunk: int) -> bool:
    """An upper bound of the record's answer is within `limit` (every string escaped at
    its longest)."""
    chunks = output.chunks or ()
    characters = sum(map(_chunk_characters, chunks))
    messages = sum(map(len, (*output.errors, *output.warnings)))
    bound = (characters + messages) * JSON_BYTES_PER_CHARACTER
    return bound + len(chunks) * (CHUNK_FIELDS_BYTES + per_chunk) <= limit


def _chunk_characters(chunk: ChunkRecord) -> int:
    """Characters of the chunk's strings in the answer (`text` twice, as `textItems`
    repeats it)."""
    return (
        len(chunk.content)
        + 2 * len(chunk.text)
        + len(chunk.reader_text)
        + len(chunk.title)
        + sum(map(len, chunk.headings))
        + sum(map(len, chunk.sections))
        + len(chunk.anchor or "")
        + len(chunk.url or "")
        + len(chunk.id)
    )


def chunk_count(output: OutputRecord) -> int:
    """How many chunks a record's answer has."""
    return len(output.chunks or ())


def cap_answer(
    outputs: Sequence[OutputRecord], limit: int, per_chunk: int = 0
) -> list[OutputRecord]:
    """`outputs` with every record whose answer would take the whole past `limit` bytes
    refused; `per_chunk` is what each chunk will still gain (its vector, when embedding
    comes after). Records are measured exactly, as `render_response` writes them."""
    return AnswerCap(limit, per_chunk).keep(outputs)


class AnswerCap:
    """What a request's answer has taken so far; records are measured as they come."""

    __slots__ = ("chunks", "limit", "per_chunk", "records", "used")

    def __init__(self, limit: int, per_chunk: int = 0) -> None:
        self.limit = limit
        self.per_chunk = per_chunk
        self.used = len(RESPONSE_OPEN) + len(RESPONSE_CLOSE)
        """Bytes of the answer so far, vectors to come included."""
        self.records = 0
        self.chunks = 0
        """Chunks of the records kept so far."""

    def keep(
        self, outputs: Sequence[OutputRecord], rendered: Rendered | None = None
    ) -> list[OutputRecord]:
        """`outputs` (the next records of the answer, in order), those that do not fit
        in what is left refused with what to change. With `rendered`, each record
        answered is kept there with its bytes as measured, by recordId, for
        `render_response` to reuse (when nothing changes the records after the cap)."""
        capped: list[OutputRecord] = []
        for given in outputs:
            output = given
            comma = 1 if self.records else 0
            self.records += 1
            chunks = chunk_count(output)
            body = render_record(output)
            size = len(body) + chunks * self.per_chunk
            if self.used + comma + size > self.limit and chunks:
                output = failed_record(
                    given.record_id,
                    _too_big(size, self.limit, self.per_chunk)
                    if size > self.limit
                    else _no_room(size, self.used, self.limit),
                    warnings=given.warnings,
                )
                body = render_record(output)
                size = len(body)
            capped.append(output)
            self.chunks += chunk_count(output)
            self.used += comma + size
            if rendered is not None:
                rendered[output.record_id] = (output, body)
        return capped


def _too_big(size: int, limit: int, per_chunk: int) -> str:
    vectors = " with their vectors" if per_chunk else ""
    return (
        f"not answered: this record's chunks{vectors} would take {size:,} bytes of the "
        f"answer, more than the {limit:,} bytes an answer may take (app setting "
        f"{ENV_MAX_RESPONSE_BYTES}, or less when {ENV_MEMORY_BUDGET_BYTES} leaves less "
        "beside a huge record); make fewer, larger chunks (raise maximumPageLength, "
        "or wordsPerChunk for strategy words; lower pageOverlapLength or wordOverlap), "
        "keep the first ones with maximumPagesToTake, or split the document"
    )


def _no_room(size: int, used: int, limit: int) -> str:
    return (
        f"not answered: this record's chunks would take {size:,} bytes, and the records "
        f"before it in the batch took {used:,} of the {limit:,} bytes an answer may take "
        f"(app setting {ENV_MAX_RESPONSE_BYTES}); lower the skill's batchSize so that a "
        "batch's answer fits"
    )


__all__ = [
    "AnswerCap",
    "cap_answer",
    "chunk_count",
    "refused_alone",
    "vector_bytes",
]
