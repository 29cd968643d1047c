"""Structure-aware chunking: parse markdown, HTML or text into an outline, cut it
by section within a size limit, and put the title and heading path in front of
every chunk.  Pure Python, no Azure imports.

    from chunking import chunk_file, chunk_text
    document = chunk_file("guide.md", max_length=512)         # tokens (cl100k_base)
    document = chunk_text(markdown, max_length=2000, unit="characters")
"""

from __future__ import annotations

from chunking.api import chunk_file, chunk_options, chunk_text
from chunking.model import Chunk, ChunkedDocument
from chunking.options import (
    ChunkOptions,
    Limits,
    OptionError,
    SectionPacking,
    SplitMode,
    Unit,
)
from chunking.pipeline import FormatName, chunk_document
from chunking.plan.words_params import WordScope, WordWindows

Sections = SectionPacking
"""`SectionPacking`'s name before "sections" came to mean only a heading's extent; kept so
code written against it still imports."""

__all__ = [
    "Chunk",
    "ChunkOptions",
    "ChunkedDocument",
    "FormatName",
    "Limits",
    "OptionError",
    "SectionPacking",
    "Sections",
    "SplitMode",
    "Unit",
    "WordScope",
    "WordWindows",
    "chunk_document",
    "chunk_file",
    "chunk_options",
    "chunk_text",
]
