"""A byte order mark at the start of markdown: the first line still counts, offsets hold."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from chunking import ChunkOptions, Limits, Unit, chunk_document
from chunking.parse.detect import detect_format
from chunking.parse.markdown import markdown_it_parser
from chunking.parse.markdown.outline import parse_markdown

if TYPE_CHECKING:
    from chunking.pipeline import FormatName

BOM = "\ufeff"
SMALL = ChunkOptions(limits=Limits(Unit.CHARACTERS, 300, 0))
CASES = {
    "atx": (f"{BOM}## Usage\n\nBody.\n", None, [(("Usage",), "usage")]),
    "mdx id": (f"{BOM}## Usage {{/*use*/}}\n\nBody.\n", None, [(("Usage",), "use")]),
    "front matter": (
        f"{BOM}---\ntitle: From front matter\n---\n\n## Two {{#two}}\n\nBody.\n",
        "From front matter",
        [(("Two",), "two")],
    ),
    "crlf": (f"{BOM}## First\r\n\r\nBody.\r\n", None, [(("First",), "first")]),
    # The list item is what makes `auto` read it as markdown (with or without a BOM).
    "raw html": (f'{BOM}<h2 id="top">Top</h2>\n\n- Item.\n', None, [(("Top",), "top")]),
}


@pytest.mark.parametrize("format", ["auto", "markdown"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_first_line_after_a_bom_is_a_heading_or_front_matter(case: str, format: FormatName) -> None:
    text, title, expected = CASES[case]
    document = chunk_document(text, options=SMALL, format=format)
    assert document.format == "markdown"
    assert document.source is text
    for chunk in document.chunks:
        assert chunk.content == text[chunk.start : chunk.end]
        assert BOM not in chunk.content
    assert [(chunk.headings, chunk.anchor) for chunk in document.chunks] == expected
    if title is not None:
        assert document.title == title


@pytest.mark.parametrize("case", sorted(CASES))
def test_both_parsers_read_the_first_line_after_a_bom(case: str) -> None:
    text = CASES[case][0]
    outlines = [
        parse_markdown(text),
        parse_markdown(text, parser=markdown_it_parser.parse_blocks),
    ]
    found = [[(h.start, h.end, h.depth, h.text, h.anchor) for h in o.headings] for o in outlines]
    assert found[0] == found[1]
    [(start, end, *_)] = found[0]
    assert text[start] in "#<"
    assert text[start:end].strip() == text[start:end]


def test_format_sniffing_ignores_a_bom() -> None:
    assert detect_format(f"{BOM}## Usage\n\nBody.\n") == "markdown"
    assert detect_format(f"{BOM}---\ntitle: x\n---\nBody.\n") == "markdown"
    assert detect_format(f"{BOM}Just words.\n") == "text"
    assert detect_format(f"{BOM}<!doctype html><p>x</p>") == "html"
