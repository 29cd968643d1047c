"""Issue 37, item 3, sixth round: classes of furniture found where trafilatura and the
skill disagree on the tune pages (blocks the skill kept and both trafilatura and
Readability's reference leave out), each shown on a real page (bench/pages and
../shared/realworld; where they come from in their SOURCES.md)."""

from __future__ import annotations

import pytest

from chunking.parse.html.main_content import _is_running_text, content_root, furniture
from chunking.parse.html.render import parse_html
from chunking.parse.html.tree import parse_tree, sanitize
from tests.chunking.parse.test_main_content_page_furniture import (
    assert_keeps,
    needs_shared,
    rendered,
)
from tests.paths import SHARED


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


def test_a_run_of_one_link_paragraphs_outside_the_article_is_a_link_list() -> None:
    # Spreeblick's header box: `<p><a href="https://www.pinterest.com/spreeblick/">
    # Spreeblick bei Pinterest.</a></p>` and its like, one link a paragraph, which
    # counted as running text with a link in it; the post's text stays.
    assert_keeps(
        rendered("spreeblick-blog"),
        ["Hunderttausende von jungen Paaren trennen sich zur Zeit.", "Giuliana Marino"],
        ["Spreeblick bei Pinterest.", "Johnny bei Instagram.", "Spreeblick bei Twitter."],
    )


def test_a_one_link_paragraph_inside_the_article_stays() -> None:
    # The same paragraphs between the article's own paragraphs are the article's: a link
    # list inside the core is kept, whatever its paragraphs.
    sentence = "A paragraph of running text that says what the article is about, at length. "
    html = (
        "<html><body><nav><a href='/'>Home</a> <a href='/a'>About</a></nav><article>"
        f"<h1>Title</h1><p>{sentence * 3}</p>"
        "<p><a href='https://example.org/spec'>The specification.</a></p>"
        "<p><a href='https://example.org/draft'>The draft.</a></p>"
        "<p><a href='https://example.org/notes'>The notes.</a></p>"
        f"<p>{sentence * 3}</p></article></body></html>"
    )
    assert_keeps(
        parse_html(html).source,
        ["The specification.", "The draft.", "The notes.", sentence.strip()],
        ["Home"],
    )


def test_list_items_written_as_one_link_paragraphs_stay() -> None:
    # Asciidoctor writes each list item's text as a paragraph: git's index of its API
    # documents is a short paragraph and a list of `<li><p><a>..</a></p></li>`.
    items = "".join(
        f"<li><p><a href='api-{name}.html'>{name} API</a></p></li>"
        for name in ("merge", "parse-options", "path-walk", "simple-ipc", "trace2")
    )
    html = (
        "<html><body><div id='header'><h1>Git API Documents</h1></div><div id='content'>"
        "<div class='paragraph'><p>Git has grown a set of internal APIs over time. This "
        "collection documents them.</p></div>"
        f"<div class='ulist'><ul>{items}</ul></div></div></body></html>"
    )
    assert_keeps(parse_html(html).source, ["- merge API", "- trace2 API"], [])


def test_a_label_over_furniture_goes_with_it() -> None:
    # stephango.com: `<div class="muted ppb font-ui">Linked mentions</div>` styled as a
    # heading over the backlink cards (dropped by name); Herald Sun's "more stories"
    # over its teaser list. The essay's last line stays.
    assert_keeps(
        rendered("stephango-essay"),
        ["Buy wisely"],
        ["Linked mentions"],
    )
    assert "more stories" not in rendered("herald-sun-1")


@pytest.mark.parametrize(
    ("box", "label", "kept"),
    [
        # a sentence, a prompt ending in a colon and a link are no labels
        ("<p>Read the rest in the archive.</p>", "Read the rest", True),
        ("<p>Example:</p>", "Example:", True),
        ("<div><a href='/more'>More</a></div>", "More", True),
        ("<div>Related stories</div>", "Related stories", False),
    ],
)
def test_only_a_short_plain_line_is_a_label(box: str, label: str, kept: bool) -> None:
    prose = "<p>" + "A paragraph of the article's running text, long enough. " * 4 + "</p>"
    html = (
        f"<html><body><article><h1>Title</h1>{prose}<div>{box}"
        "<div class='related-posts'><a href='/a'>A</a> <a href='/b'>B</a></div></div>"
        f"{prose}</article></body></html>"
    )
    assert (label in parse_html(html).source) is kept


@needs_shared
def test_a_meta_list_just_before_the_headline_is_a_dateline() -> None:
    # hakibenita.com: `<ul class="article__info">` holding the date and a tag link, the
    # element before the `<h1>` in the article's header; the subtitle after it stays.
    # Asked of the furniture walk itself: rendering narrows this page to its article
    # body, which leaves the whole header out anyway.
    document = parse_tree(sanitize((SHARED / "realworld/html/toc-missing.html").read_text(), []))
    root = content_root(document)
    assert root is not None
    gone = furniture(list(root))
    meta_lists = [ul for ul in root.iter("ul") if ul.get("class") == "article__info"]
    assert meta_lists, "the page's meta lists"
    headline_meta = meta_lists[0]
    assert any(
        (element.text or "").strip() == "21 September 2020" for element in headline_meta.iter()
    )
    assert any(above in gone for above in (headline_meta, *headline_meta.iterancestors()))
    subtitle = next(
        element
        for element in root.iter()
        if type(element.tag) is str
        and (element.text or "").strip() == "Identify Problems Before They Become Disasters"
    )
    assert not any(above in gone for above in (subtitle, *subtitle.iterancestors()))


@needs_shared
def test_a_headline_without_a_heading_tag_is_found_by_the_pages_title() -> None:
    # youth.cn titles its article with `<div class="l_tit">`, the start of its `<title>`,
    # and no `h1` or `h2`: the dateline under it ("发稿时间：2017-03-10 08:42:00 来源：")
    # had no headline to stand next to.
    assert_keeps(
        rendered("shared/youth"),
        ["海外留学生看两会：出国前后关注点大不同", "在采访中，我们了解到不少学子"],
        ["发稿时间", "2017-03-10 08:42:00"],
    )


@pytest.mark.parametrize(
    ("title", "kept"),
    [("Council meeting moved_City news_Example", False), ("Example city portal", True)],
)
def test_only_the_titles_own_text_is_a_headline(title: str, kept: bool) -> None:
    sentence = "The council's meeting of next week moves to the town hall's large room. "
    html = (
        f"<html><head><title>{title}</title></head><body>"
        "<div class='t'>Council meeting moved</div><div>Posted 2020-01-13 by the clerk</div>"
        f"<p>{sentence * 3}</p></body></html>"
    )
    assert ("Posted 2020-01-13" in parse_html(html).source) is kept
