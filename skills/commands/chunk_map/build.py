"""What a chunk map shows: the chunks with their prefixes and continuations, and the
source cut into segments at every boundary (each character in exactly one segment)."""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chunking.pipeline import chunk_document, parse

if TYPE_CHECKING:
    from chunking.model import Chunk, ChunkedDocument, Region, RegionKind
    from chunking.options import ChunkOptions
    from chunking.pipeline import FormatName
    from chunking.plan.scoring import Scoring


@dataclass(frozen=True, slots=True)
class ChunkCard:
    """One chunk and what its card says about it."""

    chunk: Chunk
    prefix: str
    """The title and heading path in front of the content, separator included ('' if none)."""
    continues: RegionKind | None
    """The table or code block this chunk starts inside of (past its header), if any."""


@dataclass(frozen=True, slots=True)
class ChunkMap:
    """One chunked document, ready to render."""

    name: str
    """What the page calls the document (its file name)."""
    document: ChunkedDocument
    options: ChunkOptions
    cards: tuple[ChunkCard, ...]
    """One per chunk, in chunk order."""
    regions: tuple[Region, ...]
    """The document's tables and code blocks."""


@dataclass(frozen=True, slots=True)
class Annotations:
    """What a caller (the evaluation) adds to a map: a banner, one marked span, badges."""

    heading: str = ""
    """A line above the map (the question)."""
    notes: tuple[str, ...] = ()
    """Lines of the banner (where the answer is, what rank 1 returned)."""
    mark: tuple[int, int] | None = None
    """A span of the source to mark (the reference answer)."""
    badges: tuple[tuple[int, str], ...] = ()
    """(chunk ordinal, label) pairs shown on those chunks' cards (`rank 1`)."""
    emphasis: tuple[int, ...] = ()
    """Chunk ordinals drawn bold (the rank-1 chunk)."""
    back: tuple[str, str] | None = None
    """(href, text) of a link back to where the reader came from."""


@dataclass(frozen=True, slots=True)
class Segment:
    """A run of the source between two consecutive boundaries."""

    start: int
    end: int
    chunks: tuple[int, ...]
    """Ordinals of the chunks holding it: none (outside), one, or more (an overlap)."""
    region: RegionKind | None
    """The table or code block it lies in, if any."""
    marked: bool
    """Whether it lies in the annotations' marked span."""


def map_document(
    text: str,
    *,
    options: ChunkOptions,
    name: str,
    format: FormatName = "auto",
    title: str | None = None,
    file_name: str | None = None,
    scoring: Scoring | None = None,
) -> ChunkMap:
    """Chunk `text` as `python -m chunking` would, and gather what its map shows.

    Raises `OptionError` as `chunk_document` does (and `ScoringError` for a scored
    strategy whose `scoring` fails).
    """
    document = chunk_document(
        text, options=options, format=format, title=title, file_name=file_name, scoring=scoring
    )
    # The outline's regions are not part of a chunked document; parsing again with the
    # format it was parsed as gives the same source and so the same regions.
    outline = parse(text, document.format)
    regions = outline.regions if outline.source == document.source else ()
    starts = [r.start for r in regions]
    cards = tuple(
        _card(chunk, _region_at(regions, chunk.start, starts)) for chunk in document.chunks
    )
    return ChunkMap(name, document, options, cards, regions)


def _card(chunk: Chunk, region: Region | None) -> ChunkCard:
    """The card of `chunk`, which starts inside `region` (if not None)."""
    prefix = chunk.prefix
    if region is None or chunk.start < region.lead_end:
        return ChunkCard(chunk, prefix, None)
    return ChunkCard(chunk, prefix, region.kind)


def _region_at(
    regions: tuple[Region, ...], offset: int, starts: list[int] | None = None
) -> Region | None:
    starts = [r.start for r in regions] if starts is None else starts
    index = bisect.bisect_right(starts, offset) - 1
    if index >= 0 and offset < regions[index].end:
        return regions[index]
    return None


def segments(chunk_map: ChunkMap, mark: tuple[int, int] | None = None) -> list[Segment]:
    """The source cut at every chunk, region and mark boundary, in order.

    The segments' spans tile `0..len(source)` exactly, so rendering each once shows
    every character once, however the chunks overlap.
    """
    source = chunk_map.document.source
    chunks = chunk_map.document.chunks
    boundaries = {0, len(source)}
    for chunk in chunks:
        boundaries.update((chunk.start, chunk.end))
    for region in chunk_map.regions:
        boundaries.update((region.start, region.end))
    if mark is not None:
        boundaries.update(min(max(offset, 0), len(source)) for offset in mark)
    starting: dict[int, list[int]] = {}
    ending: dict[int, list[int]] = {}
    for chunk in chunks:
        starting.setdefault(chunk.start, []).append(chunk.ordinal)
        ending.setdefault(chunk.end, []).append(chunk.ordinal)
    active: set[int] = set()
    result: list[Segment] = []
    ordered = sorted(boundaries)
    region_starts = [r.start for r in chunk_map.regions]
    for start, end in itertools.pairwise(ordered):
        active.difference_update(ending.get(start, ()))
        active.update(starting.get(start, ()))
        inside = _region_at(chunk_map.regions, start, region_starts)
        result.append(
            Segment(
                start,
                end,
                tuple(sorted(active)),
                None if inside is None else inside.kind,
                mark is not None and mark[0] <= start and end <= mark[1],
            )
        )
    return result
