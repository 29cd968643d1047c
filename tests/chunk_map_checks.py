"""Checks a chunk map page against its chunked document, shared by the HTML tests and the
browser tests (which check the DOM Chromium built from the same page)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bs4 import BeautifulSoup

if TYPE_CHECKING:
    from bs4 import Tag

    from skills.commands.chunk_map import ChunkMap


PRESERVED = ["pre", "textarea", "span"]
"""BeautifulSoup collapses whitespace-only strings to one newline outside `pre`; a
browser does not (the page's text block is `white-space: pre-wrap`), so neither may we."""


def parse_page(page: str) -> BeautifulSoup:
    """The page as a browser would see its text, whitespace included."""
    return BeautifulSoup(page, "html.parser", preserve_whitespace_tags=PRESERVED)


def check_page(page: str, chunk_map: ChunkMap) -> BeautifulSoup:
    """Assert the page shows every character of the source once, in order, and every
    chunk once: its segments spell its span, its one card shows its prefix and size."""
    soup = parse_page(page)
    document = chunk_map.document
    source = document.source
    pieces = soup.select("main span.seg")
    assert "".join(piece.get_text() for piece in pieces) == source
    offsets = [(int(str(p["data-start"])), int(str(p["data-end"]))) for p in pieces]
    # The segments tile the source: each starts where the one before ended.
    edges = [0, *(end for _, end in offsets)]
    assert [start for start, _ in offsets] == edges[:-1]
    assert edges[-1] == len(source)
    members = [_chunks_of(piece) for piece in pieces]
    for card, chunk in zip(chunk_map.cards, document.chunks, strict=True):
        mine = [p for p, m in zip(pieces, members, strict=True) if chunk.ordinal in m]
        assert "".join(p.get_text() for p in mine) == source[chunk.start : chunk.end]
        assert mine[0]["data-begins"] == str(chunk.ordinal)
        assert str(chunk.ordinal) in str(mine[-1]["data-ends"]).split()
        cards = soup.select(f'aside.card[data-chunk="{chunk.ordinal}"]')
        assert len(cards) == 1
        assert cards[0]["data-size"] == str(chunk.size)
        assert cards[0].select_one(".size").get_text() == str(chunk.size)  # type: ignore[union-attr]
        prefix = cards[0].select_one(".prefix")
        assert prefix is not None
        assert prefix.get_text() == card.prefix.rstrip()
        assert chunk.text.startswith(card.prefix)
        assert cards[0].select_one("details pre").get_text() == chunk.text  # type: ignore[union-attr]
    assert len(soup.select("aside.card")) == len(document.chunks)
    for piece, chunks in zip(pieces, members, strict=True):
        classes = list(piece.get("class") or [])
        assert ("ov" in classes) == (len(chunks) > 1)
        assert ("out" in classes) == (not chunks)
    return soup


def _chunks_of(piece: Tag) -> set[int]:
    return {int(item) for item in str(piece["data-chunks"]).split()}
