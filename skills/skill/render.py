"""Typed answers to the Azure wire JSON: the one place a chunk record becomes JSON.

`record_data` is a record's `data` object; `skills.skill.contract.render_record` writes it
into the response, and the Python paths that need the wire form of a chunk (push's
projections, Spark's rows) take `chunk_json`. Members come in the chunk schema's order
(`skills.chunk_schema.CHUNK_MEMBERS`; a test holds them equal).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skills.chunk_schema import SECTION_DEPTH

if TYPE_CHECKING:
    from skills.skill.records import ChunkRecord, Measure, OutputRecord

SECTION_KEYS = tuple(f"h{level}" for level in range(1, SECTION_DEPTH + 1))
"""The keys of a chunk's `sections`, one per heading level it keeps, h1 first."""


def record_data(record: OutputRecord) -> dict[str, object]:
    """A record's `data`: `{}` for a failed one; else `chunks`, and the Split skill's
    outputs for users mapping those: `textItems` and, item by item, `offsets` and
    `lengths` (the chunk's `offset` and `length`, so they measure `content` in the source,
    not the prefixed text item) and 1-based `ordinalPositions`, as the Split skill counts."""
    if record.chunks is None:
        return {}
    chunks = [chunk_json(chunk) for chunk in record.chunks]
    return {
        "chunks": chunks,
        "textItems": [chunk.text for chunk in record.chunks],
        "offsets": [chunk["offset"] for chunk in chunks],
        "lengths": [chunk["length"] for chunk in chunks],
        "ordinalPositions": list(range(1, len(chunks) + 1)),  # chunk `ordinal` + 1
    }


def chunk_json(chunk: ChunkRecord) -> dict[str, object]:
    """One chunk object of the `chunks` output, shaped for index projections; `embedding`
    only once the chunk has a vector."""
    rendered: dict[str, object] = {
        "content": chunk.content,
        "text": chunk.text,
        "readerText": chunk.reader_text,
        "title": chunk.title,
        "headings": list(chunk.headings),
        "sections": dict(zip(SECTION_KEYS, chunk.sections, strict=False)),
        "ordinal": chunk.ordinal,
        "offset": measure_json(chunk.offset),
        "length": measure_json(chunk.length),
        "anchor": chunk.anchor,
        "url": chunk.url,
        "size": chunk.size,
        "id": chunk.id,
        # Content Understanding's names (its `locationMetadata`): null without page
        # markers in the text.
        "pageNumberFrom": chunk.page_number_from,
        "pageNumberTo": chunk.page_number_to,
    }
    if chunk.embedding is not None:
        rendered["embedding"] = chunk.embedding
    return rendered


def measure_json(measure: Measure) -> dict[str, int]:
    """`{utf8, utf16, codePoint}`."""
    return {"utf8": measure.utf8, "utf16": measure.utf16, "codePoint": measure.code_point}
