"""Issue 37, item 3, sixth round: classes of furniture found where trafilatura and the
skill disagree on the tune pages (blocks the skill kept and both trafilatura and
Readability's reference leave out), each shown on a real page (bench/pages and
../shared/realworld; where they come from in their SOURCES.md)."""

from __future__ import annotations

import pytest

from chunking.parse.html.main_content import _is_running_text
from chunking.parse.html.tree import parse_tree, sanitize
from tests.chunking.parse.test_main_content_page_furniture import (
    assert_keeps,
    needs_shared,
    rendered,
)


@needs_shared
def test_a_byline_paragraph_broken_over_source_lines_is_no_running_text() -> None:
    # Mozilla Hacks' `<footer class="entry-meta"><p>Posted by <a>..</a> on <time>..</time>
    # at <time>..</time></p>`: 50 characters on the page, over 100 in the source with the
    # indentation between its elements, so the article footer looked like it held a
    # paragraph of running text and stayed.
    assert_keeps(
        rendered("shared/002"),
        ["For more than a decade the Web has used XMLHttpRequest", "For a better web!"],
        ["Posted by Nikhil Marathe", "2015at 08:05"],
    )


@pytest.mark.parametrize(
    ("paragraph", "running"),
    [
        (
            "<p>Posted by <a href='/a'>A. Author</a> on"
            + " " * 80
            + "<time>March 10, 2015</time></p>",
            False,
        ),
        ("<p>" + "word " * 25 + "</p>", True),
        ("<p>" + "x" * 99 + "</p>", False),
    ],
)
def test_running_text_is_measured_as_the_page_shows_it(paragraph: str, running: bool) -> None:
    document = parse_tree(sanitize(f"<html><body>{paragraph}</body></html>", []))
    element = next(node for top in document for node in top.iter("p"))
    assert _is_running_text(element) is running
