"""Typed chunk records for tests that need an answer without chunking a document."""

from __future__ import annotations

from skills.skill.records import ChunkRecord, Measure


def a_chunk(content: str, ordinal: int = 0, text: str | None = None) -> ChunkRecord:
    """A chunk of `content` (embedded as `text`, default the content) at `ordinal`."""
    return ChunkRecord(
        content=content,
        text=content if text is None else text,
        reader_text=content,
        title="",
        headings=(),
        sections=(),
        ordinal=ordinal,
        offset=Measure(0, 0, 0),
        length=Measure(len(content), len(content), len(content)),
        anchor=None,
        url=None,
        size=len(content),
        id=f"id-{ordinal}",
        page_number_from=None,
        page_number_to=None,
    )
