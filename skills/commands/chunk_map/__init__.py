"""The chunk map: one document as the chunker sees it, as a self-contained HTML page.

`map_document` chunks a text and gathers what the page shows (prefixes, table and code
continuations); `segments` cuts the source at every chunk boundary so each character is
shown once; `render_chunk_map` is a pure function from those to an HTML string.
"""

from __future__ import annotations

from skills.commands.chunk_map.build import (
    Annotations,
    ChunkCard,
    ChunkMap,
    Segment,
    map_document,
    segments,
)
from skills.commands.chunk_map.page import render_chunk_map

__all__ = [
    "Annotations",
    "ChunkCard",
    "ChunkMap",
    "Segment",
    "map_document",
    "render_chunk_map",
    "segments",
]
