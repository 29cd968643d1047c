"""Issue 37, item 3: the content narrows to the article's body (`article_body`) when one
is named by markup and holds nearly all the content says, on real pages (bench/pages and
../shared/realworld; where they come from in their SOURCES.md); documentation pages,
listings and threads are not narrowed to one of their parts."""

from __future__ import annotations

import json

import pytest

from chunking.parse.html.main_content import article_body, content_root, furniture
from chunking.parse.html.render import parse_html
from chunking.parse.html.tree import parse_tree, sanitize
from tests.paths import ROOT, SHARED

PAGES = ROOT / "bench" / "pages"
SHARED_PAGES = SHARED / "realworld" / "html"
needs_shared = pytest.mark.skipif(
    not SHARED_PAGES.is_dir(), reason=f"no real pages at {SHARED_PAGES}"
)
DOCUMENTATION = json.loads((PAGES / "groups.json").read_text(encoding="utf-8"))["documentation"][
    "pages"
]


def page(path: str) -> str:
    folder = SHARED_PAGES if path.startswith("shared/") else PAGES
    return (folder / f"{path.removeprefix('shared/')}.html").read_text(encoding="utf-8")


def narrowed(html: str) -> tuple[str, ...]:
    """The tags of what the page's content narrows to ((), if it is not narrowed)."""
    document = parse_tree(sanitize(html, []))
    root = content_root(document)
    body = article_body(document, root, furniture(document if root is None else [root]))
    return () if body is None else tuple(element.tag for element in body.parts)


def test_a_blog_post_is_narrowed_to_its_entry_content() -> None:
    # Spreeblick's WordPress theme sets the site's social links, the post's comment
    # count and its category links around `<div class="entry-content">`, in no
    # landmark and named by no furniture word; the post's title is an `<h2>` (the
    # `<h1>` is the site's name) and stays as the headline.
    outline = parse_html(page("spreeblick-blog"))
    assert [(heading.depth, heading.text) for heading in outline.headings] == [
        (2, "Aus! Aus! Alles vorbei! Habeck macht die Stahnke")
    ]
    assert outline.source.startswith("## Aus! Aus! Alles vorbei! Habeck macht die Stahnke\n\n")
    assert "Hunderttausende von jungen Paaren trennen sich zur Zeit." in outline.source
    assert [
        text
        for text in ("Spreeblick bei Twitter", "Johnny bei Instagram", "Bundesliga", "# Spreeblick")
        if text in outline.source
    ] == []


def test_a_news_story_keeps_its_headline_and_drops_the_author_heading_and_kicker() -> None:
    # TMZ's `itemprop="articleBody"`; the `<h2>` of the person and the `<h4>` headline
    # are outside it: the headline (the heading sharing most words with `<title>`) stays.
    outline = parse_html(page("tmz-1"))
    assert [(heading.depth, heading.text) for heading in outline.headings] == [
        (4, "$150K Pearl Oscar Dress ... STOLEN!!!!")
    ]
    assert "Lupita Nyong'o's now-famous Oscar dress" in outline.source


@needs_shared
def test_a_standfirst_heading_is_no_headline() -> None:
    # Libération sets the standfirst as an `<h2>` between the `<h1>` and
    # `itemprop="articleBody"`, with a photo and its caption: the `<h1>` stays, they go.
    outline = parse_html(page("shared/liberation-1"))
    assert [heading.text for heading in outline.headings] == [
        "Un troisième Français mort dans le séisme au Népal"
    ]
    assert "Un Népalais prie à Katmandou" not in outline.source
    assert "Un troisième Français a été tué dans le tremblement de terre" in outline.source


@pytest.mark.parametrize("name", DOCUMENTATION)
def test_documentation_pages_are_not_narrowed(name: str) -> None:
    assert narrowed(page(name)) == ()


@needs_shared
def test_a_documentation_page_narrowed_to_its_article_body_keeps_every_section() -> None:
    # Sphinx's Read the Docs theme marks the page's text `itemprop="articleBody"`:
    # narrowing drops the breadcrumbs and the previous/next footer, and keeps every
    # heading the whole root shows.
    html = page("shared/sphinx-airflow-ko-cli")
    assert narrowed(html) == ("div",)
    document = parse_tree(sanitize(html, []))
    root = content_root(document)
    assert root is not None
    narrowed_to = article_body(document, root, furniture([root]))
    assert narrowed_to is not None
    (body,) = narrowed_to.parts
    headings = [h for h in root.iter() if h.tag in {"h1", "h2", "h3", "h4", "h5", "h6"}]
    assert headings
    assert [h for h in headings if body not in set(h.iterancestors())] == []


@pytest.mark.parametrize("name", ["github-issue", "hn-thread"])
def test_threads_are_not_narrowed(name: str) -> None:
    assert narrowed(page(name)) == ()


@needs_shared
def test_a_comment_body_is_no_article_body() -> None:
    # ACLU's comments are `field-comment-body`: a furniture word names no body.
    assert narrowed(page("shared/aclu")) == ()


def _with_second_post(html: str, anchor: str, post: str) -> str:
    assert html.count(anchor) == 1
    return html.replace(anchor, anchor + post)


def test_a_listing_of_posts_in_the_bodys_markup_is_not_narrowed() -> None:
    # A blog's home page shows its posts whole, each in the markup of the single post's
    # page: Spreeblick's post followed by a short one in the same `entry-content`.
    # The first holds nearly all the text, but the repeated markup says listing.
    second = (
        '<h2 class="entry-title"><a href="/blog/2006/07/28/">Sommerpause</a></h2>'
        '<div class="entry-content"><p>Wir machen eine Woche Pause.</p></div>'
    )
    html = _with_second_post(page("spreeblick-blog"), "<!-- Banner nach erstem Post -->", second)
    assert narrowed(html) == ()
    source = parse_html(html).source
    assert "Wir machen eine Woche Pause." in source
    assert "Hunderttausende von jungen Paaren" in source


def test_a_thread_whose_posts_are_marked_as_text_is_not_narrowed() -> None:
    # schema.org marks a question's and each answer's text `itemprop="text"` (Stack
    # Exchange, Discourse); after TMZ's `itemprop="articleBody"`, one short answer so
    # marked keeps the page whole.
    answer = '<div class="answer"><div itemprop="text"><p>Found it in the lobby.</p></div></div>'
    html = page("tmz-1")
    html = html.replace("</article>", answer + "</article>", 1)
    assert narrowed(html) == ()
    assert "Found it in the lobby." in parse_html(html).source
