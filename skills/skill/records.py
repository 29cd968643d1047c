"""The skill's answers as typed records, from chunking to the response.

A chunked record stays a tuple of `ChunkRecord`s through the worker pipe, the answer cap
and embedding (a vector is put on with `dataclasses.replace`); only `skills.skill.render`
turns it into the wire JSON, at the response's edge (the answer cap measures that same
rendering). The fields of `ChunkRecord` are the members of the one chunk schema
(`skills.chunk_schema`), in its order, by their Python names (`ChunkMember.attribute`);
a test holds them equal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence


@dataclass(frozen=True, slots=True)
class Measure:
    """A position or length as the Split skill reports it: in three units."""

    utf8: int
    """Bytes of UTF-8."""
    utf16: int
    """UTF-16 code units (.NET `String.Length`)."""
    code_point: int
    """Code points (Python `len`); the wire name is `codePoint`."""

    def minus(self, start: Measure) -> Measure:
        """The length from `start` to this position."""
        return Measure(
            self.utf8 - start.utf8, self.utf16 - start.utf16, self.code_point - start.code_point
        )


@dataclass(frozen=True, slots=True)
class ChunkRecord:
    """One chunk of the skill's `chunks` output, typed; the members of the chunk schema."""

    content: str
    """The chunk's exact span of the source text."""
    text: str
    """What is embedded: title and heading path, then the content."""
    reader_text: str
    """What a reader or a model is handed: title and heading path, a continuation's table
    header rows or opening fence line, the content, the closing fence of code cut short."""
    title: str
    """The document's title (capped to what a filterable field takes)."""
    headings: tuple[str, ...]
    """The heading path at the chunk's start."""
    sections: tuple[str, ...]
    """The Layout skill's heading levels h1, h2, ... (one per level the record keeps, ""
    where the path has none)."""
    ordinal: int
    """0-based position of the chunk in its document."""
    offset: Measure
    """Where `content` starts."""
    length: Measure
    """The length of `content`."""
    anchor: str | None
    """The nearest heading's anchor."""
    url: str | None
    """The document URL with `#anchor` (None without a `url` input)."""
    size: int
    """The size of `text` in the record's unit."""
    id: str
    """A hash of the source, the span and the options."""
    page_number_from: int | None
    """First page of the chunk (None without page markers)."""
    page_number_to: int | None
    """Last page of the chunk (None without page markers)."""
    embedding: Sequence[float] | None = None
    """The embedded `text`'s vector (None until embedded, or without a provider)."""


@dataclass(frozen=True, slots=True)
class OutputRecord:
    """One element of the response's `values`, typed until `render_record` writes it."""

    record_id: str
    chunks: tuple[ChunkRecord, ...] | None = None
    """The record's chunks (its `data` outputs, `skills.skill.render.record_data`), or
    None for `data: {}`: always so with errors (the service ignores data next to errors)."""
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.errors and self.chunks is not None:
            raise ValueError("a record with errors must have empty data")


def failed_record(record_id: str, *messages: str, warnings: Sequence[str] = ()) -> OutputRecord:
    """A record answered with errors and `data: {}`."""
    return OutputRecord(record_id=record_id, errors=tuple(messages), warnings=tuple(warnings))
