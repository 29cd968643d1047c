"""The chunk type: a span of a source text, with its context as metadata."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chunking.model import Format


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk. `content == source[start:end]`; `text` is what gets embedded."""

    ordinal: int
    """0-based position among the document's chunks."""
    start: int
    """Offset (code points) of the first character in the source."""
    end: int
    """Offset just past the last character in the source."""
    content: str
    """The source slice `source[start:end]`."""
    text: str
    """Prefix (title and heading path) + continuation lead + content: what is embedded."""
    title: str
    """The document title."""
    headings: tuple[str, ...]
    """Heading path of the smallest section holding the chunk, outermost first, no title."""
    anchor: str | None
    """Fragment id of the nearest heading or element at or before the chunk's start."""
    size: int
    """Size of `text` in the chosen unit; never above `maximumPageLength`."""
    id: str
    """Deterministic id: a hash of the source, the span and the settings."""
    outline_path: tuple[tuple[int, str], ...] = ()
    """(depth, text) of each heading on the chunk's path, outermost first, the title
    heading included (`headings` leaves it out): what Layout-style `sections` show."""
    page_from: int | None = None
    """1-based page of the chunk's first character (page markers and spaces aside), for
    a document with page markers (Layout markdown: `<!-- PageBreak -->`); None without."""
    page_to: int | None = None
    """1-based page of the chunk's last character (page markers aside), or None."""


@dataclass(frozen=True, slots=True)
class ChunkedDocument:
    """The result of chunking one document."""

    source: str
    """The text the chunk offsets point into (the HTML rendering for HTML)."""
    format: Format
    """The format the document was parsed as."""
    title: str
    chunks: tuple[Chunk, ...]
    warnings: tuple[str, ...]
    """Things a user should know: dropped parts, shortened headings, fallbacks."""
