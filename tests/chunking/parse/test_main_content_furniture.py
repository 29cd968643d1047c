"""Main-content selection (issue 14, item 8): page furniture inside a page is left out,
by class, by kind, never by site; documentation loses nothing."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.parse.html.render import parse_html

ARTICLE = (
    "<h1>Storm hits the coast</h1>"
    "<p>A strong storm reached the coast on Monday, and schools stayed closed.</p>"
)


def rendered(body: str) -> str:
    return parse_html(f"<html><body>{body}</body></html>").source


def test_a_comment_thread_is_left_out() -> None:
    page = rendered(
        f"<div class='post'>{ARTICLE}</div>"
        "<div id='comments' class='comments-area'><h2>3 comments</h2><ol class='comment-list'>"
        "<li class='comment'><cite>Ann</cite> <time>May 1</time><p>Great piece, thanks.</p></li>"
        "</ol><form><label>Your name</label><textarea></textarea></form></div>"
    )
    assert "schools stayed closed" in page
    assert "Great piece" not in page
    assert "Your name" not in page


def test_a_related_list_and_a_share_bar_are_left_out() -> None:
    page = rendered(
        f"<article>{ARTICLE}<div class='sharedaddy sd-sharing-enabled'>Share this: "
        "<a href='#'>Email</a> <a href='#'>Facebook</a></div>"
        "<div id='jp-relatedposts' class='jp-relatedposts'><h3>Related</h3>"
        "<a href='/a'>Other story</a></div>"
        "<div class='story-body__mini-info-list-and-share'>Share this story</div></article>"
    )
    assert "schools stayed closed" in page
    for furniture in ("Facebook", "Other story", "Share this story"):
        assert furniture not in page


def test_a_newsletter_form_and_a_promo_are_left_out() -> None:
    page = rendered(
        f"<main>{ARTICLE}<form action='/subscribe'><p>Sign up for our newsletter</p>"
        "<input type='email'></form><div class='promo-box'>Subscribe today for $1</div></main>"
    )
    assert "schools stayed closed" in page
    assert "newsletter" not in page
    assert "$1" not in page


def test_link_lists_outside_the_article_are_left_out_but_not_inside_it() -> None:
    links = "".join(f"<li><a href='/s{i}'>Teaser headline number {i}</a></li>" for i in range(8))
    page = rendered(
        f"<div class='top'>{'|'.join(f'<a href=/{i}>Section {i}</a>' for i in range(9))}</div>"
        f"<div class='left'>{ARTICLE}<p>More running text about the storm and its damage.</p>"
        "<h2>See also</h2><ul><li><a href='/x'>Storms of 2020</a></li>"
        "<li><a href='/y'>Coastal flooding</a></li><li><a href='/z'>Tides</a></li></ul></div>"
        f"<div class='right'><h3>Most read</h3><ul>{links}</ul></div>"
    )
    assert "Storms of 2020" in page  # inside the article: the article's own links
    assert "Section 3" not in page
    assert "Teaser headline" not in page


def test_a_page_of_links_only_is_kept() -> None:
    links = "".join(f"<li><a href='/p{i}'>Page {i}</a></li>" for i in range(10))
    assert "Page 7" in rendered(f"<div class='index'><ul>{links}</ul></div>")


def test_skip_link_and_cookie_banner_are_left_out() -> None:
    page = rendered(
        "<p class='skiplink'><a href='#main'>Skip to content</a></p>"
        "<div class='cookie-notice'>We use cookies</div>"
        f"<div id='main'>{ARTICLE}</div>"
    )
    assert "schools stayed closed" in page
    assert "Skip to" not in page
    assert "cookies" not in page


def test_a_wrapper_named_like_a_sidebar_layout_is_kept() -> None:
    # Blogger's "widget Blog", Drupal's "panel-two-col-sidebar-right-mix": layout names.
    page = rendered(
        f"<div class='panel-two-col-sidebar-right-mix'>{ARTICLE * 5}</div>"
        "<div class='sidebar-right'>Donate now</div>"
    )
    assert "schools stayed closed" in page
    assert "Donate now" not in page


def test_documentation_loses_nothing() -> None:
    """Asciidoctor and Sphinx markup: tables, code, definition lists, sidebars,
    admonitions, a "See also" paragraph of links, footnotes, section ids from headings."""
    page = rendered(
        "<div id='content'>"
        "<div class='sect1'><h2 id='_comments'>Comments</h2><div class='sectionbody'>"
        "<div class='paragraph'><p>Lines starting with # are comments.</p></div></div></div>"
        "<section id='sharing'><h2>Sharing<a class='headerlink' href='#sharing'>¶</a></h2>"
        "<p>Push to share your work.</p></section>"
        "<div class='sidebarblock'><div class='content'><p>A sidebar of the manual.</p></div></div>"
        "<div class='admonitionblock note'><table><tr><td>Note</td><td>Mind the index.</td></tr>"
        "</table></div>"
        "<div class='listingblock'><pre><code><span class='hljs-comment'># a comment</span>\n"
        "git commit</code></pre></div>"
        "<div class='dlist' id='recommended-storage-settings'><dl><dt>core.safecrlf</dt>"
        "<dd><p>Recommended for shared repositories.</p></dd></dl></div>"
        "<div class='tableblock'><table><tr><th>option</th><th>meaning</th></tr>"
        "<tr><td><a href='a.html'>--all</a></td><td><a href='b.html'>all</a></td></tr>"
        "</table></div>"
        "<div class='paragraph'><p><a href='git-add.html'>git-add(1)</a>, "
        "<a href='git-rm.html'>git-rm(1)</a>, <a href='git-mv.html'>git-mv(1)</a></p></div>"
        "</div><div id='footnotes'><div class='footnote'><a href='#_ref_1'>1</a>. "
        "<a href='x.html'>c_long</a></div><div class='footnote'><a href='#_ref_2'>2</a>. "
        "<a href='y.html'>c_ulong</a></div><div class='footnote'><a href='#_ref_3'>3</a>.</div>"
        "</div>"
    )
    for text in (
        "are comments", "Push to share", "A sidebar of the manual", "Mind the index",
        "# a comment", "Recommended for shared", "--all", "git-rm(1)", "c_long",
    ):  # fmt: skip
        assert text in page, text


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
_CLASS = st.sampled_from(["", "post", "entry-content", "wrapper", "col-md-8", "section", "x1"])


@settings(max_examples=60, deadline=None)
@given(
    paragraphs=st.lists(st.lists(_WORD, min_size=1, max_size=12), min_size=1, max_size=8),
    classes=st.lists(_CLASS, min_size=1, max_size=4),
)
def test_plain_paragraphs_without_furniture_signals_lose_no_word(
    paragraphs: list[list[str]], classes: list[str]
) -> None:
    body = "".join(f"<p>{' '.join(words)}</p>" for words in paragraphs)
    for name in classes:
        body = f"<div class='{name}'>{body}</div>"
    page = rendered(body)
    assert page.split() == [word for words in paragraphs for word in words]


def test_furniture_rules_run_on_pages_nested_past_libxml2s_limit() -> None:
    # Such pages are built as `tree._Node`s: no XPath, no itertext.
    deep = "<div>" * 2100 + "deep text" + "</div>" * 2100
    page = rendered(
        f"{ARTICLE}<div id='comments'><h2>Comments</h2><p>Mind the tabs.</p></div>"
        f"<div id='comment-box'><h3>2 comments</h3><p>Nice post</p></div>{deep}"
    )
    assert "Mind the tabs" in page  # a section named after its heading
    assert "Nice post" not in page
    assert "deep text" in page


def test_a_status_post_made_of_link_lists_keeps_them() -> None:
    """Release notes and status posts are lists whose items are mostly links (bug titles);
    inside the article, between its headings and item prose, they are the article."""
    items = "".join(
        f'<li><a href="https://bugs.example/{n}">Bug {n} - Fix the thing number {n}</a></li>'
        for n in range(6)
    )
    prose = "".join(
        f"<li>We shipped part {n} of the new viewer and mentors are lined up.</li>"
        for n in range(4)
    )
    page = (
        "<html><body><div class='site'><div class='entry-content'>"
        f"<h3>Viewer</h3><ul>{prose}</ul><p>Fixed this week:</p><ul>{items}</ul>"
        f"<h3>Tabs</h3><ul>{prose}</ul><ul>{items}</ul>"
        "</div><div><ul>"
        + "".join(f'<li><a href="/p/{n}">Older post {n}</a></li>' for n in range(8))
        + "</ul></div></div></body></html>"
    )
    text = parse_html(page).source
    assert text.count("Fix the thing number 5") == 2
    assert "Older post" not in text


def assert_keeps(page: str, kept: list[str], left_out: list[str]) -> None:
    """Every `kept` text is in the rendered page, no `left_out` text is."""
    assert [text for text in kept if text not in page] == []
    assert [text for text in left_out if text in page] == []


PARAGRAPHS = "".join(
    f"<p>Paragraph {n} of the report says what the council decided and why it matters.</p>"
    for n in range(1, 9)
)


def _teasers(count: int, summary: str = "") -> str:
    return "".join(
        f"<div class='card'><h3><a href='/news/story-{n}'>Headline of story {n}</a></h3>"
        f"<span>2 hours ago</span>{summary}</div>"
        for n in range(count)
    )


def test_a_teaser_list_between_an_articles_paragraphs_is_left_out() -> None:
    # Issue 28, item 9: related-article cards with their own headings, placed inside the
    # article's body (so inside the core, where link lists are kept), named nothing.
    page = rendered(
        f"<div class='page'><h1>Council report</h1>{PARAGRAPHS[:300]}"
        f"<div class='block'><h2>Read next</h2>{_teasers(4)}</div>{PARAGRAPHS[300:]}</div>"
    )
    assert_keeps(
        page,
        ["Paragraph 8 of the report", "Paragraph 1 of the report"],
        ["Headline of story", "Read next"],
    )


def test_teaser_cards_with_a_summary_each_are_a_teaser_list_too() -> None:
    summary = "<p>A short standfirst that sums the other story up in a line.</p>"
    page = rendered(
        f"<div><h1>Council report</h1>{PARAGRAPHS}</div>"
        f"<div class='group'><h2>Other columns</h2>{_teasers(5, summary)}</div>"
    )
    assert_keeps(page, ["Paragraph 8 of the report"], ["Headline of story", "short standfirst"])


def test_sections_whose_headings_link_to_their_own_anchor_are_kept() -> None:
    # Permalinked headings (`#fragment`) are the document's sections, not teasers.
    sections = "".join(
        f"<h3><a href='#s{n}'>Option {n}</a></h3><p>Short text of option {n}.</p>" for n in range(6)
    )
    page = rendered(f"<main><h1>Options</h1>{sections}</main>")
    assert all(f"Option {n}" in page and f"text of option {n}" in page for n in range(6))


def test_a_page_that_is_a_list_of_teasers_is_kept() -> None:
    page = rendered(f"<div><h1>Latest news</h1>{_teasers(8)}</div>")
    assert "Headline of story 7" in page


def test_a_wiki_navigation_box_is_left_out() -> None:
    navbox = (
        "<table class='navbox'><tr><th class='navbox-title'>Countries of Oceania</th></tr>"
        "<tr><th class='navbox-group'>Sovereign states</th><td class='navbox-list'>"
        "<a href='/wiki/Fiji'>Fiji</a> · <a href='/wiki/Samoa'>Samoa</a> · "
        "<a href='/wiki/Tonga'>Tonga</a></td></tr></table>"
    )
    series = (
        "<table class='vertical-navbox nowraplinks'><tr><th>Part of a series on</th></tr>"
        "<tr><td><a href='/wiki/History'>History</a></td></tr></table>"
    )
    page = rendered(f"<div id='content'><h1>Fiji</h1>{series}{PARAGRAPHS}{navbox}</div>")
    assert_keeps(
        page,
        ["Paragraph 8 of the report"],
        ["Countries of Oceania", "Samoa", "Part of a series on"],
    )


def test_comments_named_after_the_article_they_follow_are_left_out() -> None:
    # `article-comments`, `post-comments`: the last word names the thing (comments of the
    # article); `comment-content` stays the content of a comment.
    page = rendered(
        f"<div class='article-body'>{ARTICLE}{PARAGRAPHS}"
        "<div class='article-comments'><h3>More comments</h3>"
        "<div class='comment-content'><p>I disagree with the council entirely.</p></div>"
        "</div></div>"
    )
    assert_keeps(
        page, ["Paragraph 8 of the report"], ["More comments", "disagree with the council"]
    )


def test_an_image_named_by_its_file_adds_no_words() -> None:
    # Alt text that is a file or slug name (CMS defaults) describes nothing; a real
    # description, or a short hyphenated word, still stands in for the picture.
    page = rendered(
        f"<article>{ARTICLE}<p><img alt='0226-SUB-london-hotel-swipe-tmz-02' src='a.jpg'>"
        "<img alt='12-IMG_3886.jpg' src='b.jpg'><img alt='update_graphic_red_bar' src='c.jpg'>"
        "<img alt='A flooded street in the old town' src='d.jpg'>"
        "<img alt='COVID-19' src='e.jpg'></p>"
        "<table><tr><td><img alt='IMG_0042.png'> Tide gauge</td></tr></table></article>"
    )
    assert_keeps(
        page,
        ["A flooded street in the old town", "COVID-19", "Tide gauge"],
        ["london-hotel", "IMG_3886", "update_graphic", "IMG_0042"],
    )
