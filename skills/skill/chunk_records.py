"""Chunk one skill record into its typed answer: a `ChunkRecord` per chunk (rendered as
`chunks` for projections, and `textItems` with the Split skill's parallel arrays, by
`skills.skill.render` only).

Never raises: whatever goes wrong with a record ends up in that record's `errors`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from urllib.parse import quote, urldefrag

from chunking import OptionError, chunk_document
from chunking.options import TooManyChunks
from chunking.parse.decode import blank
from chunking.plan.scoring import ScoringError
from skills.skill.record_inputs import InputErrors, read_record_inputs
from skills.skill.records import ChunkRecord, Measure, OutputRecord, failed_record
from skills.skill.settings import ENV_MAX_CHUNKS_PER_RECORD

if TYPE_CHECKING:
    from collections.abc import Iterable

    from chunking import Chunk, ChunkedDocument
    from chunking.plan.scoring import Scoring
    from skills.skill.contract import InputRecord
    from skills.skill.record_inputs import RecordInputs
    from skills.skill.settings import Settings

logger = logging.getLogger(__name__)

MAX_TERM_BYTES = 32_766
"""The longest value, in bytes of UTF-8, that Azure AI Search indexes in a filterable,
sortable or facetable Edm.String field, where the whole value is one term: a longer one
fails the document ("contains a term that is too large to process"). Index projections
usually map `title` to such a field."""

_UTF8_CONTINUATION_MASK, _UTF8_CONTINUATION = 0xC0, 0x80
"""UTF-8 continuation bytes are 10xxxxxx; a character starts at any other byte."""

FRAGMENT_SAFE = "!$&'()*+,;=:@/?-._~"
"""Characters RFC 3986 allows in a fragment as they are; the rest is percent-encoded."""


def chunk_record(
    record: InputRecord, settings: Settings, scoring: Scoring | None = None
) -> OutputRecord:
    """The answer for one record: its chunks and warnings, or its errors and `data: {}`.

    `scoring` serves the scored strategies (`semantic`, `binary`); a scorer that fails or
    times out fails this record only."""
    inputs = read_record_inputs(record.data, settings)
    if isinstance(inputs, InputErrors):
        return failed_record(record.record_id, *inputs.messages)
    empty = blank(inputs.text)
    if empty is not None:
        return OutputRecord(
            record_id=record.record_id,
            chunks=(),
            warnings=(*inputs.warnings, f"input 'text' {empty}; the record has no chunks"),
        )
    document = _chunked(record.record_id, inputs, scoring)
    if isinstance(document, OutputRecord):
        return document
    if len(document.chunks) > settings.max_chunks_per_record:
        return failed_record(
            record.record_id,
            too_many_chunks(len(document.chunks), settings.max_chunks_per_record, inputs),
            warnings=inputs.warnings,
        )
    warnings = [*inputs.warnings, *document.warnings]
    if not document.chunks:
        warnings.append("the text has no content to chunk; the record has no chunks")
    title, cut = capped_title(document.title)
    if cut:
        warnings.append(cut)
    return OutputRecord(
        record_id=record.record_id,
        chunks=typed_chunks(document, inputs, title),
        warnings=tuple(warnings),
    )


def _chunked(
    record_id: str, inputs: RecordInputs, scoring: Scoring | None
) -> ChunkedDocument | OutputRecord:
    """The record's text chunked, or the failed record saying why it could not be: too
    many chunks, an option out of range, a scorer that failed, or a bug (logged)."""
    try:
        return chunk_document(
            inputs.text,
            options=inputs.options,
            format=inputs.format,
            title=inputs.title,
            file_name=inputs.file_name,
            content_type=inputs.content_type,
            scoring=scoring,
        )
    except TooManyChunks as error:
        return failed_record(
            record_id, too_many_chunks(None, error.limit, inputs), warnings=inputs.warnings
        )
    except OptionError as error:
        return failed_record(record_id, str(error), warnings=inputs.warnings)
    except ScoringError as error:
        return failed_record(
            record_id,
            f"not chunked: strategy {inputs.options.strategy!r} could not score the text: {error}",
            warnings=inputs.warnings,
        )
    except Exception:  # one record's failure must not touch the others
        logger.exception("chunking record %r failed", record_id)
        return failed_record(
            record_id,
            "internal error: the skill failed while chunking this record (the function "
            "app's logs have the details); the indexer may retry the document",
            warnings=inputs.warnings,
        )


def too_many_chunks(count: int | None, limit: int, inputs: RecordInputs) -> str:
    """A record's error when its text makes more chunks than a record may have (`count`,
    or None when planning stopped past the limit), naming the inputs that make fewer."""
    if inputs.options.strategy == "words":
        fewer = "raise wordsPerChunk or lower wordOverlap"
    else:
        fewer = "raise maximumPageLength or lower pageOverlapLength"
    makes = f"more than {limit:,} chunks" if count is None else f"{count:,} chunks"
    return (
        f"not chunked: the text makes {makes}, and a record may have at most {limit:,} "
        f"(app setting {ENV_MAX_CHUNKS_PER_RECORD}); {fewer}, keep the first ones with "
        "maximumPagesToTake, or split the document"
    )


def capped_title(title: str) -> tuple[str, str | None]:
    """`title` cut to MAX_TERM_BYTES of UTF-8 on a character boundary, and the warning
    that says so (None when it fits)."""
    encoded = title.encode("utf-8", "surrogatepass")
    if len(encoded) <= MAX_TERM_BYTES:
        return title, None
    end = MAX_TERM_BYTES
    while encoded[end] & _UTF8_CONTINUATION_MASK == _UTF8_CONTINUATION:
        end -= 1  # encoded[end] is inside a character: keep that character out
    warning = (
        f"the title is {len(encoded)} bytes of UTF-8; each chunk's 'title' keeps its first "
        f"{end} bytes, as Azure AI Search takes at most {MAX_TERM_BYTES} bytes in a "
        "filterable, sortable or facetable field"
    )
    return encoded[:end].decode("utf-8", "surrogatepass"), warning


def typed_chunks(
    document: ChunkedDocument, inputs: RecordInputs, title: str
) -> tuple[ChunkRecord, ...]:
    """One typed record per chunk, each with `title` (the document's, capped by
    `capped_title`)."""
    measures = measure_positions(
        document.source, (p for chunk in document.chunks for p in (chunk.start, chunk.end))
    )
    return tuple(
        ChunkRecord(
            content=chunk.content,
            text=chunk.text,
            reader_text=chunk.reader_text,
            title=title,
            headings=chunk.headings,
            sections=heading_levels(chunk.outline_path, inputs.markdown_header_depth),
            ordinal=chunk.ordinal,
            offset=measures[chunk.start],
            length=measures[chunk.end].minus(measures[chunk.start]),
            anchor=chunk.anchor,
            url=chunk_url(inputs.url, chunk),
            size=chunk.size,
            id=chunk.id,
            page_number_from=chunk.page_from,
            page_number_to=chunk.page_to,
        )
        for chunk in document.chunks
    )


def heading_levels(path: tuple[tuple[int, str], ...], depth: int) -> tuple[str, ...]:
    """The Layout skill's `sections` for a heading path: levels h1 to h`depth`, each the
    text of the path's heading at that level, "" where the path has none (a skipped
    level). A heading below `depth` belongs to the section at `depth`, as Layout rolls
    deeper headings into the last level: its text stays in the content, not a level."""
    sections = [""] * depth
    for level, text in path:
        if level <= depth:
            sections[level - 1] = text
    return tuple(sections)


def chunk_url(base: str | None, chunk: Chunk) -> str | None:
    """The document URL with the chunk's anchor as its fragment, when both are known."""
    if base is None:
        return None
    if chunk.anchor is None:
        return base
    return f"{urldefrag(base).url}#{quote(chunk.anchor, safe=FRAGMENT_SAFE)}"


def measure_positions(source: str, positions: Iterable[int]) -> dict[int, Measure]:
    """`{utf8, utf16, codePoint}` of each code-point position in `source`.

    One pass over the sorted positions encodes each stretch of the source once, so the
    cost is linear in the document however many chunks (and overlaps) there are.
    """
    measures: dict[int, Measure] = {}
    previous = utf8 = utf16 = 0
    for position in sorted(set(positions)):
        stretch = source[previous:position]
        if stretch.isascii():
            utf8 += len(stretch)
            utf16 += len(stretch)
        else:
            utf8 += len(stretch.encode("utf-8", "surrogatepass"))
            utf16 += len(stretch.encode("utf-16-le", "surrogatepass")) // 2
        measures[position] = Measure(utf8, utf16, position)
        previous = position
    return measures
