"""Layout page markers in HTML input: the same comments as in Layout markdown give pages.

`<!-- PageBreak -->`, `<!-- PageHeader="..." -->`, `<!-- PageFooter="..." -->` and
`<!-- PageNumber="..." -->` in an HTML page (Layout markdown converted to HTML, or a
converter writing the same comments) give each chunk `pageNumberFrom` / `pageNumberTo`;
the text in the header and footer comments is never content. The rendering itself does
not change: the comments only add the page map.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking import ChunkOptions, Limits, Unit, chunk_document
from chunking.pipeline import parse
from tests.helpers import chunk_and_audit
from tests.layout_markdown import LAYOUT_PARAGRAPHS, LayoutParagraphs
from tests.paths import FIXTURES

if TYPE_CHECKING:
    from collections.abc import Sequence

    from chunking.model import Chunk

FIXTURES = FIXTURES / "html"
HEADER = '<!-- PageHeader="Contoso Ltd. — Confidential" -->'

PAGE = f"""<!DOCTYPE html>
<html><head><title>Operations report</title></head>
<body>
{HEADER}
<h1>Operations report</h1>
<h2>Summary</h2>
<p>The first page says how the year went in the data centers of the company.</p>
<!-- PageFooter="Page 1 of 3" -->
<!-- PageNumber="1" -->
<!-- PageBreak -->
{HEADER}
<h2>Capacity</h2>
<p>Capacity grew by a fifth over the year, and the text on page two runs along and then
<!-- PageFooter="Page 2 of 3" --><!-- PageBreak -->{HEADER}
continues on page three.</p>
<table><tr><th>Site</th><th>Racks</th></tr><tr><td>North</td><td>180</td></tr></table>
<!-- PageFooter="Page 3 of 3" -->
<!-- PageNumber="3" -->
</body></html>
"""
SMALL = ChunkOptions(limits=Limits(unit=Unit.CHARACTERS, maximum_page_length=300))


def _chunk_of(chunks: Sequence[Chunk], words: str) -> Chunk:
    return next(chunk for chunk in chunks if words in chunk.content)


def test_an_html_page_with_layout_markers_gets_page_ranges() -> None:
    chunks = chunk_document(PAGE, options=SMALL, format="html").chunks
    summary = _chunk_of(chunks, "how the year went")
    capacity = _chunk_of(chunks, "Capacity grew")
    assert (summary.page_from, summary.page_to) == (1, 1)
    # The paragraph a page break interrupts is on pages 2 and 3.
    assert capacity.page_from == 2
    assert _chunk_of(chunks, "continues on page three").page_to == 3
    assert _chunk_of(chunks, "North").page_to == 3
    for chunk in chunks:
        assert chunk.page_from is not None
        assert chunk.page_to is not None


def test_header_and_footer_comments_are_not_content() -> None:
    for chunk in chunk_document(PAGE, options=SMALL, format="html").chunks:
        for words in ("Contoso", "Confidential", "Page 1 of", "PageBreak"):
            assert words not in chunk.content
            assert words not in chunk.text


def test_the_markers_change_the_rendering_not_at_all() -> None:
    bare = re.sub(r"<!--.*?-->", "", PAGE)
    assert parse(PAGE, "html").source == parse(bare, "html").source
    assert parse(bare, "html").pages is None
    with_pages = parse(PAGE, "html").pages
    assert with_pages is not None
    assert len(with_pages.starts) == 3


def test_other_comments_give_no_pages() -> None:
    for page in (
        "<p>Text. <!-- a comment --> More.</p>",
        "<p>Text.</p><!-- PageBreakish --><p>More.</p>",
        '<p>Text.</p><!-- Page="2" --><p>More.</p>',
    ):
        assert parse(page, "html").pages is None
        [chunk] = chunk_document(page, format="html").chunks
        assert (chunk.page_from, chunk.page_to) == (None, None)


def test_a_page_header_alone_puts_everything_on_page_one() -> None:
    # As in markdown: page markers without a break are a one-page document.
    page = f"<body>{HEADER}<p>Only one page of text.</p></body>"
    [chunk] = chunk_document(page, format="html").chunks
    assert (chunk.page_from, chunk.page_to) == (1, 1)


def test_a_page_break_inside_a_table_counts_from_the_table_s_end() -> None:
    # The renderer writes a table when it closes: rows after the break are on the
    # page the table ends on, rows before it too (one table, one page range).
    page = (
        "<p>Before the table.</p><table><tr><th>A</th></tr><tr><td>one</td></tr>"
        "<!-- PageBreak --><tr><td>two</td></tr></table><p>After the table.</p>"
    )
    outline = parse(page, "html")
    assert outline.pages is not None
    table_end = outline.source.index("two") + len("two")
    assert outline.pages.page_at(outline.source.index("one")) == 1
    assert outline.pages.page_at(outline.source.index("After")) == 2
    assert outline.pages.starts[1] >= table_end


@pytest.mark.parametrize("name", ["git-rebase.html", "gitglossary.html"])
def test_markers_between_the_blocks_of_a_real_page_keep_its_chunks(name: str) -> None:
    """A page break after every fourth paragraph of a real page: the same chunks (spans,
    text, headings), now with page ranges that grow with the document."""
    html = (FIXTURES / name).read_text(encoding="utf-8")
    count = 0

    def mark(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        if count % 4:
            return match.group(0)
        return f'{match.group(0)}<!-- PageFooter="Page {count}" --><!-- PageBreak -->{HEADER}'

    paged = re.sub(r"</p>", mark, html)
    assert count >= 8
    options = ChunkOptions(limits=Limits(unit=Unit.CHARACTERS, maximum_page_length=2000))
    before = chunk_document(html, options=options, format="html").chunks
    document, audit = chunk_and_audit(paged, options, format="html")
    assert not audit.violations, audit.examples
    after = document.chunks
    assert [(c.start, c.end, c.text, c.headings) for c in after] == [
        (c.start, c.end, c.text, c.headings) for c in before
    ]
    assert all(c.page_from is None for c in before)
    ranges = [(c.page_from, c.page_to) for c in after]
    assert all(low is not None and high is not None and low <= high for low, high in ranges)
    assert ranges[-1][1] == max(high for _, high in ranges if high is not None) > 1
    assert [low for low, _ in ranges] == sorted(low for low, _ in ranges if low is not None)


def _html(paragraphs: LayoutParagraphs) -> tuple[str, int]:
    """The paragraphs as HTML, each word tagged with its page (`alpha3`), markers after
    any line; and the number of pages."""
    parts = ["<html><body>", HEADER]
    page = 1
    for paragraph in paragraphs:
        parts.append("<p>")
        for words, end, page_break in paragraph:
            parts.append(" ".join(f"{word}{page}" for word in words.split()) + end + "\n")
            if page_break:
                parts.append(f'<!-- PageFooter="Contoso Ltd. — Page {page}" -->')
                parts.append(f"<!-- PageBreak -->{HEADER}")
                page += 1
        parts.append("</p>")
    parts.append("</body></html>")
    return "\n".join(parts), page


@settings(max_examples=60, deadline=None)
@given(
    paragraphs=LAYOUT_PARAGRAPHS,
    limit=st.sampled_from([300, 500, 800]),
    overlap=st.sampled_from([0, 60]),
)
def test_page_ranges_hold_wherever_the_markers_fall_in_html(
    paragraphs: LayoutParagraphs, limit: int, overlap: int
) -> None:
    """Every chunk's page range is exactly the pages of the words it holds; no header or
    footer text in any chunk."""
    html, pages = _html(paragraphs)
    options = ChunkOptions(
        limits=Limits(unit=Unit.CHARACTERS, maximum_page_length=limit, page_overlap_length=overlap)
    )
    for chunk in chunk_document(html, options=options, format="html").chunks:
        held = {int(tag) for tag in re.findall(r"[a-z](\d+)\b", chunk.content)}
        assert held
        assert (chunk.page_from, chunk.page_to) == (min(held), max(held))
        assert 1 <= min(held) <= max(held) <= pages
        assert "Contoso" not in chunk.content
        assert "Contoso" not in chunk.text
