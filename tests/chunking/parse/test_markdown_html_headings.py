"""Raw HTML headings in markdown (`<h2 id="...">` lines, as READMEs write them)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from chunking import ChunkOptions, Limits, Unit, chunk_document
from chunking.model import BlockKind
from chunking.parse.markdown import markdown_it_parser
from chunking.parse.markdown.outline import parse_markdown
from tests.helpers import paths_and_anchors
from tests.paths import FIXTURES
from tests.strategies import ANCHOR_ID, headings_of

DIALECTS = FIXTURES / "markdown" / "dialects"
SMALL = ChunkOptions(limits=Limits(Unit.CHARACTERS, 300, 0))


def outline_headings(text: str) -> list[tuple[int, str, str | None, str]]:
    """Depth, text, anchor and source span of each heading, the same with either parser."""
    found = []
    for parser_outline in (
        parse_markdown(text),
        parse_markdown(text, parser=markdown_it_parser.parse_blocks),
    ):
        found.append(
            [(h.depth, h.text, h.anchor, text[h.start : h.end]) for h in parser_outline.headings]
        )
    assert found[0] == found[1]
    return found[0]


BODY = "Words of a paragraph long enough to fill most of a small chunk. " * 3


def test_html_heading_sets_depth_path_and_id_anchor() -> None:
    text = (
        f'{BODY}\n\n<h2 id="overview">Overview</h2>\n\n{BODY}\n\n'
        f"### Details\n\n{BODY}\n\n<h2>Second <em>part</em></h2>\n\n{BODY}\n"
    )
    expected = [
        ((), None),
        (("Overview",), "overview"),
        (("Overview", "Details"), "details"),
        (("Second part",), "second-part"),
    ]
    assert paths_and_anchors(text) == expected
    # The same as markdown headings that set the same ids.
    as_markdown = text.replace(
        '<h2 id="overview">Overview</h2>', "## Overview {#overview}"
    ).replace("<h2>Second <em>part</em></h2>", "## Second *part*")
    assert paths_and_anchors(as_markdown) == expected


def test_html_heading_over_lines_with_permalink_and_entities() -> None:
    text = (
        "<h3 class=\"title\"\n    id='known'>Known &amp; fixed\n"
        '<a class="headerlink" href="#known" title="Permanent link">&para;</a></h3>\n\nx\n'
    )
    [(depth, heading_text, anchor, span)] = outline_headings(text)
    assert (depth, heading_text, anchor) == (3, "Known & fixed", "known")
    assert span.startswith("<h3")
    assert span.endswith("</h3>")


def test_html_heading_inside_an_html_block_splits_it() -> None:
    text = (
        '<div align="center">\n  <h1><img src="logo.png" alt="Project"></h1>\n'
        "  <p>Tagline</p>\n</div>\n\nText.\n"
    )
    outline = parse_markdown(text)
    assert [(h.depth, h.text, h.anchor) for h in outline.headings] == [(1, "Project", "project")]
    assert [(b.kind, text[b.start : b.end]) for b in outline.blocks] == [
        (BlockKind.HTML, '<div align="center">'),
        (BlockKind.HEADING, '<h1><img src="logo.png" alt="Project"></h1>'),
        (BlockKind.HTML, "<p>Tagline</p>\n</div>"),
        (BlockKind.PARAGRAPH, "Text."),
    ]


def test_what_is_not_a_heading_element_on_its_own_line_stays_html() -> None:
    text = (
        '<h2><img src="logo.png"></h2>\n\n<p>See <h2>inline</h2> here</p>\n\n'
        "<h2>Unclosed\n\n<header>Header</header>\n\n<h2>A</h2> trailing text\n\n"
        "```html\n<h2>In a fence</h2>\n```\n"
    )
    assert outline_headings(text) == []


def test_html_heading_after_a_byte_order_mark() -> None:
    text = '\ufeff<h1 id="top">Top</h1>\n\nBody.\n'
    assert outline_headings(text) == [(1, "Top", "top", '<h1 id="top">Top</h1>')]


def test_apache_page_gets_its_raw_html_headings() -> None:
    path = DIALECTS / "rawhtml-apache-security-committers.md"
    text = path.read_text(encoding="utf-8")
    headings = outline_headings(text)
    assert (2, "Known vulnerabilities", "known") in [h[:3] for h in headings]
    assert (2, "CVE IDs", "ids") in [h[:3] for h in headings]
    document = chunk_document(text, options=SMALL, format="auto", file_name=path.name)
    paths = {chunk.headings for chunk in document.chunks}
    assert ("Handling a possible vulnerability", "Report") in paths
    assert not [entry for path_ in paths for entry in path_ if "<" in entry or "\u00b6" in entry]


def id_attribute(id_: str | None) -> str:
    """` id="..."`, or nothing."""
    return "" if id_ is None else f' id="{id_}"'


@settings(max_examples=100, deadline=None)
@given(headings_of(st.one_of(st.none(), ANCHOR_ID)))
def test_generated_html_headings(headings: list[tuple[int, list[str], str | None]]) -> None:
    text = "".join(
        f"<h{depth}{id_attribute(id_)}>{' '.join(words)}</h{depth}>\n\nBody.\n\n"
        for depth, words, id_ in headings
    )
    found = outline_headings(text)
    assert [(depth, heading_text) for depth, heading_text, _, _ in found] == [
        (depth, " ".join(words)) for depth, words, _ in headings
    ]
    for (_, _, anchor, _), (_, _, id_) in zip(found, headings, strict=True):
        if id_ is not None:
            assert anchor == id_
