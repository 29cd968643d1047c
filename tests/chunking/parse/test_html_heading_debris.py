"""Permalink debris inside HTML headings stays out of heading paths and the rendering."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from chunking import chunk_document
from chunking.parse.html.render import parse_html
from tests.paths import FIXTURES, SHARED

if TYPE_CHECKING:
    from pathlib import Path

REALWORLD = SHARED / "realworld" / "html"
SPHINX_PAGES = sorted(REALWORLD.glob("sphinx-*.html")) if REALWORLD.is_dir() else []
SPHINX_FIXTURE = FIXTURES / "html" / "sphinx-hypertools-tutorial-plot.html"
"""One of those pages, kept here so CI (which may lack ../shared) checks a real one."""


def _paths(html: str) -> list[tuple[str, ...]]:
    return [chunk.headings for chunk in chunk_document(html, format="html").chunks]


def _page(heading: str) -> str:
    return f"<html><body><main>{heading}<p>Body text under the heading.</p></main></body></html>"


@pytest.mark.parametrize(
    ("heading", "title"),
    [
        # Sphinx (old title, new title, and the Korean build's title attribute).
        (
            '<h2 id="bar">Bar<a class="headerlink" href="#bar"'
            ' title="Permalink to this headline">¶</a></h2>',
            "Bar",
        ),
        (
            '<h2 id="bar">Bar<a class="headerlink" href="#bar"'
            ' title="Link to this heading">¶</a></h2>',
            "Bar",
        ),
        ('<h2 id="bar">Bar <a class="headerlink" href="#bar" title="제목 주소">¶</a></h2>', "Bar"),
        # MediaWiki edit sections, current and old markup.
        (
            '<h2><span class="mw-headline" id="Baz">Baz</span><span class="mw-editsection">'
            '<span class="mw-editsection-bracket">[</span><a href="/w/index.php?title=X&amp;'
            'action=edit&amp;section=1" title="Edit section: Baz">edit</a>'
            '<span class="mw-editsection-bracket">]</span></span></h2>',
            "Baz",
        ),
        ('<h2><span class="editsection">[<a href="/edit?s=1">edit</a>]</span> Baz</h2>', "Baz"),
        # Blog and GitHub style anchors: a lone glyph, before or after the title.
        ('<h2 id="title">Title <a href="#title">#</a></h2>', "Title"),
        ('<h2 id="title"><a class="header-anchor" href="#title">#</a> Title</h2>', "Title"),
        ('<h2 id="title">Title <a class="anchor" href="#title">🔗</a></h2>', "Title"),
        ('<h2 id="title">Title <a href="#title">⚓︎</a></h2>', "Title"),
        ('<h2 id="title">Title <a href="https://example.com/post#title">§</a></h2>', "Title"),
        (
            '<h2 id="title">Title<a class="hash-link" href="#title"'
            ' aria-label="Direct link">\u200b</a></h2>',
            "Title",
        ),
        # Visually hidden or hidden link labels.
        (
            '<h2 id="t">Title <a href="#t">'
            '<span class="visually-hidden">Link to this heading</span></a></h2>',
            "Title",
        ),
        ('<h2 id="t">Title <span class="sr-only">Permalink</span></h2>', "Title"),
        (
            '<h2 id="t">Title <a class="anchor" href="#t">'
            '<span aria-hidden="true">#</span></a></h2>',
            "Title",
        ),
        ('<h2 id="t">Title <span hidden>¶</span></h2>', "Title"),
        ('<h2 id="t">Title <span style="display: none">¶</span></h2>', "Title"),
        ('<h2 id="t">Title <a href="#t">permalink</a></h2>', "Title"),
    ],
)
def test_debris_is_not_in_the_heading_path(heading: str, title: str) -> None:
    paths = _paths(_page(heading))
    assert paths
    assert all(path == (title,) for path in paths), paths


@pytest.mark.parametrize(
    ("heading", "title"),
    [
        ('<h2><a href="/page">Real title</a></h2>', "Real title"),
        ('<h2 id="x"><a href="#x">Linked to itself</a></h2>', "Linked to itself"),
        (
            '<h2><a class="toc-backref" href="#id1">Positional Arguments</a></h2>',
            "Positional Arguments",
        ),
        ('<h2 id="x"><a href="#x">Link aggregation</a></h2>', "Link aggregation"),
        ('<h2>Rating <a href="/stars">★</a></h2>', "Rating ★"),
        ('<h2>C# <a href="#x">C#</a></h2>', "C# C#"),
        (
            '<h2>Steps <span class="sr-only">for screen readers</span></h2>',
            "Steps for screen readers",
        ),
    ],
)
def test_real_heading_text_stays(heading: str, title: str) -> None:
    assert _paths(_page(heading))[0] == (title,)


def test_debris_is_left_out_of_the_rendering_and_its_ids_kept() -> None:
    outline = parse_html(
        _page('<h2>Bar<a class="headerlink" id="bar-link" href="#bar">¶</a> done</h2>')
    )
    assert "¶" not in outline.source
    (heading,) = outline.headings
    assert heading.text == "Bar done"
    assert outline.source[heading.start : heading.end] == "## Bar done"
    assert heading.anchor == "bar-link"


def test_a_heading_of_only_debris_is_no_heading() -> None:
    outline = parse_html(_page('<h2><a class="headerlink" href="#x">¶</a></h2>'))
    assert outline.headings == ()


def test_deeply_nested_hidden_labels_stay_fast() -> None:
    depth = 5000
    html = _page(
        "<h2>Title " + '<span class="sr-only">' * depth + "x" + "</span>" * depth + "</h2>"
    )
    outline = parse_html(html)
    assert outline.headings[0].text == "Title x"


@pytest.mark.skipif(not SPHINX_PAGES, reason="no ../shared/realworld/html")
@pytest.mark.parametrize("page", SPHINX_PAGES, ids=lambda p: p.name)
def test_real_sphinx_pages_have_no_permalink_in_paths(page: Path) -> None:
    document = chunk_document(page.read_text(encoding="utf-8"), format="html")
    entries = {entry for chunk in document.chunks for entry in chunk.headings}
    assert entries
    assert not [e for e in entries if "¶" in e or "link to this heading" in e.lower()]


def test_the_sphinx_fixture_has_clean_headings() -> None:
    outline = parse_html(SPHINX_FIXTURE.read_text(encoding="utf-8"))
    assert len(outline.headings) == 15
    assert "¶" not in outline.source
    assert outline.headings[0].text == "Plotting"
    assert outline.headings[0].anchor == "plotting"


@pytest.mark.parametrize(
    "heading",
    [
        '<h2>Components[<a href="/w/index.php?title=X&amp;action=edit">edit</a>]</h2>',
        "<h2>Components [edit]</h2>",
        '<h2>Components<span>[<a href="/e">edit</a> | <a href="/s">edit source</a>]</span></h2>',
    ],
)
def test_a_stripped_mediawiki_edit_link_leaves_the_path(heading: str) -> None:
    """Copies of wiki pages (and Readability's output) keep `[edit]` as bare text."""
    outline = parse_html(f"<html><body>{heading}<p>Text.</p></body></html>")
    assert [h.text for h in outline.headings] == ["Components"]


def test_a_heading_that_is_only_the_edit_link_puts_nothing_in_the_path() -> None:
    page = "<html><body><h1>T</h1><h2>A</h2><p>One.</p><h2>[edit]</h2><p>Two.</p></body></html>"
    document = chunk_document(page, format="html")
    assert all("edit" not in entry for chunk in document.chunks for entry in chunk.headings)
    assert "Two." in "".join(chunk.content for chunk in document.chunks)
