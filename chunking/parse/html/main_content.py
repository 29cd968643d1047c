"""Main-content selection: which parts of a page are the document, and which are
navigation, banners, sidebars, hidden text and other page furniture.

The renderer asks `content_root` where to start (and `article_body` whether to narrow
that to the article's body and headline), `has_boilerplate_attrs` /
`DROP_TAGS` / `BOILERPLATE_TAGS` what to skip, and `furniture` which other subtrees
of the content are page furniture (comment threads, related and "most read" lists,
share bars, ad slots, sign-up forms, link-dense menus); the rules are about kinds of
markup (ARIA roles, landmark elements, class and id vocabularies, link density), not
about sites."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

from lxml import etree  # type: ignore[import-untyped]

from chunking.parse.html.tree import attr_tokens, collapse

if TYPE_CHECKING:
    from collections.abc import Mapping

    from chunking.parse.html.tree import Element


# --- what is dropped ---------------------------------------------------------

DROP_TAGS: Final = frozenset(
    {
        "script", "style", "template", "noscript", "svg", "iframe", "object",
        "canvas", "audio", "video", "map", "button", "input", "select",
        "textarea", "datalist", "option", "optgroup", "link", "meta", "base", "title",
    }
)  # fmt: skip
"""Never content: code, styles, embedded media, form controls, metadata.

`embed` is not here although it is media: libxml2 parses HTML4, where `<embed>` is
not void, so everything after an (HTML5-valid) unclosed `<embed>` becomes its child;
it holds no text of its own, so walking into it loses nothing and keeps the page.

`head` itself is not here: libxml2 knows only HTML4, so in a page without `<body>`
it leaves HTML5 elements that follow a `<script>` or `<meta>` inside `head`.
"""

BOILERPLATE_TAGS: Final = frozenset({"nav", "aside"})
LANDMARK_TAGS: Final = frozenset({"header", "footer"})
"""Site banner/footer unless inside article/main/section (the ARIA mapping rule)."""
SECTIONING_TAGS: Final = frozenset({"article", "main", "section"})

_BOILERPLATE_ROLES: Final = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "search"}
)

_BOILERPLATE_TOKEN = re.compile(
    r"(?:nav|navbar|navigation|menu|sidebar|breadcrumbs?|cookie.*|consent.*|gdpr|banner"
    r"|site-(?:header|footer)|footer|toc|toc2|toctitle|table-of-contents|skip-link)",
    re.IGNORECASE,
)
"""An id or class token that marks navigation, banners, TOCs or the site footer.

Matched against whole tokens: `sidebarblock` (an Asciidoctor content sidebar) or
`footer-text` are not boilerplate by themselves.
"""


@lru_cache(maxsize=4096)
def _is_boilerplate_token(token: str) -> bool:
    # Pages repeat a few class names thousands of times; the cache makes the
    # check a dict lookup instead of a regex run per element.
    return _BOILERPLATE_TOKEN.fullmatch(token) is not None


_MARKING_ATTRIBUTES: Final = frozenset({"hidden", "aria-hidden", "role", "style", "id", "class"})
"""The attributes `has_boilerplate_attrs` reads."""


def has_boilerplate_attrs(attrs: Mapping[str, str]) -> bool:
    if len(attrs) == 1:
        # Most elements with attributes have one, most often a class (in 150 pages of
        # the HTML corpus, 22,556 of 23,427; 18,241 a class): its name decides.
        (name,) = attrs
        if name == "class":
            return _names_boilerplate(attrs["class"])
        if name not in _MARKING_ATTRIBUTES:
            return False
    if "hidden" in attrs:
        return True
    aria_hidden = attrs.get("aria-hidden")
    if aria_hidden is not None and aria_hidden.strip().lower() == "true":
        return True
    role = attrs.get("role")
    if role is not None and any(token.lower() in _BOILERPLATE_ROLES for token in attr_tokens(role)):
        return True
    style = attrs.get("style")
    if style is not None and "none" in style and _hides(style):
        return True
    element_id = attrs.get("id")
    if element_id and _is_boilerplate_token(element_id):
        return True
    classes = attrs.get("class")
    return classes is not None and _names_boilerplate(classes)


@lru_cache(maxsize=4096)
def _names_boilerplate(classes: str) -> bool:
    # Cached per class attribute as well as per token: a page repeats whole
    # attributes too, and splitting one costs more than looking it up.
    return any(_is_boilerplate_token(token) for token in classes.split())


def _hides(style: str) -> bool:
    compact = "".join(style.lower().split())
    return "display:none" in compact or "visibility:hidden" in compact


def _child_tag(parent: Element, name: str) -> Element | None:
    return next((child for child in parent if child.tag == name), None)


def page_title(document: list[Element]) -> str | None:
    root = next((top for top in document if top.tag == "html"), None)
    head = _child_tag(root, "head") if root is not None else None
    title = _child_tag(head, "title") if head is not None else None
    if title is None:
        return None
    # <title> holds text only (RCDATA): markup inside it is text too.
    return collapse(title.text or "") or None


def _inside_boilerplate(element: Element) -> bool:
    for ancestor in (element, *element.iterancestors()):
        name = ancestor.tag
        if name in DROP_TAGS or name in BOILERPLATE_TAGS:
            return True
        attrs = ancestor.attrib
        if attrs and has_boilerplate_attrs(attrs):
            return True
    return False


def content_root(document: list[Element]) -> Element | None:
    """`main`, else the only top-level `article`, else `[role=main]`, else None: the document.

    The fallback is the whole document rather than `body` because lxml may put
    content in `head` (see `DROP_TAGS`); `head`'s own elements are dropped anyway.
    """
    for top in document:
        for main in top.iter("main"):
            if not _inside_boilerplate(main):
                return main
    # Several articles side by side are a listing page: keep them all.
    articles = [
        article
        for top in document
        for article in top.iter("article")
        if next(article.iterancestors("article"), None) is None and not _inside_boilerplate(article)
    ]
    if len(articles) == 1:
        return articles[0]
    role_main = _first_role_main(document)
    if role_main is not None and not _inside_boilerplate(role_main):
        return role_main
    return None


_BODY_SITE_WORDS: Final = frozenset({"post", "article", "entry", "story", "news", "blog", "field"})
_BODY_WORDS: Final = frozenset({"content", "body", "text"})
_BODY_ITEMPROPS: Final = frozenset({"articleBody", "text"})
_BODY_SHARE: Final = 0.85
"""The share of the content's own text (not link text, not furniture) an article body
must hold for the content to narrow to it.  On the tune pages and the shared real-world
pages, the bodies that hold the article hold 0.88 to 1.00 of it, and every other
element so named at most 0.06 (a headline's `entry-headline-text`, a lead's
`article-header-leadText`)."""


@lru_cache(maxsize=4096)
def _body_token(token: str) -> bool:
    """A class or id token that names an article's body: a site word, then a body word
    last (`entry-content`, `post-body`, `article__body`, `story-body`, `news-text`,
    `field-body`, `td-post-content`), with no furniture word (`field-comment-body`)."""
    parts = [part.lower() for part in _PART_SPLIT.split(token) if part]
    return (
        len(parts) > 1
        and parts[-1] in _BODY_WORDS
        and not _BODY_SITE_WORDS.isdisjoint(parts[:-1])
        and _FURNITURE_WORDS.isdisjoint(parts)
    )


def _body_marker(element: Element) -> str | None:
    """What marks `element` as an article's body: its schema.org `itemprop`
    (`articleBody`, `text`), else its first class or id token that names a body."""
    itemprop = element.get("itemprop")
    if itemprop and not _BODY_ITEMPROPS.isdisjoint(itemprop.split()):
        return "itemprop"
    for name in ("class", "id"):
        value = element.get(name)
        if value:
            for token in value.split():
                if _body_token(token):
                    return token
    return None


_ATTRIBUTE_VALUES: Final = tuple(
    etree.XPath(f"descendant-or-self::*/@{name}") for name in ("itemprop", "class", "id")
)
"""The `itemprop`, class and id values, found by libxml2 (one attribute a query: a union
of the three takes longer than the three); each value knows its element."""


@lru_cache(maxsize=4096)
def _names_body(value: str) -> bool:
    return any(_body_token(token) for token in value.split())


def _maybe_bodies(top: Element) -> list[Element]:
    """The elements in `top` with an `itemprop` or a class or id token naming a body
    (`_body_marker` says which), in no particular order."""
    if not isinstance(top, etree._Element):
        # A `tree._Node` (a page nested past libxml2's limit) has no XPath.
        return [element for element in top.iter() if type(element.tag) is str and element.attrib]
    itemprops, classes, ids = (query(top) for query in _ATTRIBUTE_VALUES)
    found = {value.getparent() for value in itemprops}
    found.update(value.getparent() for value in (*classes, *ids) if _names_body(value))
    return list(found)


def _own_text(element: Element, gone: set[Element]) -> int:
    """The size of `element`'s text outside links, dropped tags and `gone` subtrees:
    what a reader reads of it as text rather than as a way elsewhere."""
    size = 0
    stack = [element]
    while stack:
        node = stack.pop()
        if type(node.tag) is not str or node in gone or node.tag in DROP_TAGS:
            continue
        if node.tag == "a":
            continue  # its tail is its parent's text
        size += len((node.text or "").strip())
        for child in node:
            size += len((child.tail or "").strip())
            stack.append(child)
    return size


@dataclass(frozen=True, slots=True)
class ArticleBody:
    """What `article_body` narrows the content to."""

    parts: tuple[Element, ...]
    """The headline, when it is outside the body, and the body: in document order."""


def article_body(
    document: list[Element], root: Element | None, gone: set[Element]
) -> ArticleBody | None:
    """The article's body and headline, when the content (`root`, else the document)
    holds a body named as one and that body is nearly all the content says; None when
    the content is to be rendered as it is.  `gone` is the content's furniture
    (`furniture` of `root`, else of the document), which the body keeps.

    A body is marked by markup (`_body_marker`: schema.org's `itemprop="articleBody"`,
    hAtom's `entry-content`, `post-body`, `story-body`...), lies outside boilerplate and
    page furniture, and holds `_BODY_SHARE` of the content's text outside links and
    furniture; the innermost such body is the one kept (an `article-content` box around
    an `article-body` holds its header and teasers too).  What the content holds around
    it (teaser sliders, bylines, share bars, related cards and sidebars a theme puts
    inside `main`) is left out at once, but for the headline (`_headline_before`), which
    stays before the body when the body holds no `<h1>`, so the document keeps its title.

    A listing or a thread repeats its body's markup: each post or comment has one.  If
    another element outside the body has the same marker and any text, the content is
    not narrowed, whatever share the body holds."""
    tops = [top for top in (document if root is None else [root]) if type(top.tag) is str]
    found = [
        (element, marker)
        for top in tops
        for element in _maybe_bodies(top)
        if element is not root and (marker := _body_marker(element)) is not None
    ]
    if not found:
        return None
    total = sum(_own_text(top, gone) for top in tops)
    live = [
        (element, marker, _own_text(element, gone))
        for element, marker in found
        if not _inside_boilerplate(element)
        and not any(above in gone for above in (element, *element.iterancestors()))
    ]
    bodies = [item for item in live if total and item[2] >= _BODY_SHARE * total]
    if not bodies:
        return None
    # Each body holding more than half holds the others: the deepest is the innermost.
    body, marker, _ = max(bodies, key=lambda item: sum(1 for _ in item[0].iterancestors()))
    related = {*body.iter(), *body.iterancestors()}
    if any(
        other_marker == marker and size and other not in related
        for other, other_marker, size in live
    ):
        return None
    headline = (
        None
        if any(True for _ in body.iter("h1"))
        else _headline_before(tops, body, gone, root, page_title(document))
    )
    return ArticleBody((body,) if headline is None else (headline, body))


def _headline_before(
    tops: list[Element], body: Element, gone: set[Element], root: Element | None, title: str | None
) -> Element | None:
    """The article's headline: of the headings before `body` in `tops` that the page
    shows and the content keeps, the one sharing most words with the page's `<title>`
    (the later one of equals), if it shares at least half of its own; else, and on a
    page without a title, the last `<h1>`.

    Not always the last `<h1>`: a blog theme makes the site's name the `<h1>` and the
    post's title an `<h2>` or `<h3>`, and a news page may set a standfirst as an `<h2>`
    between the headline and the body."""
    headings = []
    for top in tops:
        for element in top.iter():
            if element is body:
                break
            if element.tag in _HEADINGS and _kept_headline(element, gone, root):
                headings.append(element)
        else:
            continue
        break
    known = {word.casefold() for word in _WORD.findall(title or "")}
    best, best_shared = None, 0
    for heading in headings:
        words = {word.casefold() for word in _WORD.findall(_text_of(heading))}
        shared = len(words & known)
        if shared and 2 * shared >= len(words) and shared >= best_shared:
            best, best_shared = heading, shared
    if best is not None:
        return best
    return next((heading for heading in reversed(headings) if heading.tag == "h1"), None)


def _kept_headline(element: Element, gone: set[Element], root: Element | None) -> bool:
    """Whether the content as rendered keeps `element`: no ancestor up to `root` is
    boilerplate, furniture or a `header` / `footer` outside any sectioning element
    (the site's banner, which the renderer leaves out)."""
    if _inside_boilerplate(element):
        return False
    chain = [element]
    for above in element.iterancestors():
        chain.append(above)
        if above is root:
            break
    if any(node in gone for node in chain):
        return False
    return not any(
        node.tag in LANDMARK_TAGS
        and not any(outer.tag in SECTIONING_TAGS for outer in chain[index + 1 :])
        for index, node in enumerate(chain)
    )


def sectioning_depth(element: Element) -> int:
    """How many sectioning elements (`article`, `main`, `section`) hold `element`."""
    return sum(1 for above in element.iterancestors() if above.tag in SECTIONING_TAGS)


_ROLES: Final = etree.XPath("descendant-or-self::*/@role")
"""The role attributes, found by libxml2 rather than by a Python loop over all elements;
asking for the attributes rather than the elements with one takes a third less time."""


def _first_role_main(document: list[Element]) -> Element | None:
    for top in document:
        if isinstance(top, etree._Element):
            # Each value knows its element (lxml's "smart strings").
            for role in _ROLES(top):
                if role.strip().lower() == "main":
                    element: Element = role.getparent()
                    if element.tag != "article":
                        return element
            continue
        # A `tree._Node` (a page nested past libxml2's limit) has no XPath.
        for element in top.iter():
            # Most elements have no role: one lookup decides.
            value = element.get("role")
            if value and element.tag != "article" and value.strip().lower() == "main":
                return element
    return None


# --- page furniture inside the content -------------------------------------------

_FURNITURE_WORDS: frozenset[str] = frozenset(
    {
        # comment threads and their forms
        "comment", "comments", "commentlist", "commentform", "respond", "disqus", "replies",
        "reply",
        # Disqus's own class prefix (`dsq-brlink`: "blog comments powered by Disqus")
        "dsq",
        # related, popular and recommended lists
        "related", "relatedposts", "popular", "mostread", "mostpopular", "trending",
        # the pages that link to this one (a digital garden's "Linked mentions")
        "backlinks",
        "recommend", "recommended", "recommendation", "recommendations", "outbrain", "taboola",
        # share bars and social widgets
        "share", "shares", "sharing", "sharedaddy", "sharebar", "social", "socials",
        # ads, promotions, sponsors
        "ad", "ads", "advert", "adverts", "advertisement", "adsense", "adslot", "promo",
        "promos", "promotion", "promoted", "sponsor", "sponsored", "sponsors",
        # sign-up prompts
        "newsletter", "subscribe", "subscription", "signup", "login", "signin", "paywall",
        # wiki navigation boxes and page footers (MediaWiki's `navbox`, `vertical-navbox`,
        # `catlinks`, `printfooter`), which older pages give no navigation role; what a
        # wiki marks as not for print (`noprint`: "From Wikipedia, the free encyclopedia");
        # not its hatnotes ("Main article: Firefox"), the article's own cross-references
        "navbox", "navboxes", "catlinks", "printfooter", "noprint",
        # bylines and datelines: who wrote it and when, page metadata rather than text
        # (`byline`, `entry-byline`, `date-and-time`'s `datestamp`, `article-posted-date`)
        "byline", "bylines", "dateline", "timestamp", "datestamp", "pubdate",
        "posted",
        # links to the previous and next post (`nav-previous`, `loop-nav`, `prevlink`)
        "nav", "prevnext", "prevlink", "nextlink", "prevpost", "nextpost", "postnav",
        "pagenav",
    }
)  # fmt: skip
_LAYOUT_WORDS: Final = frozenset(
    {
        # site chrome: also found in layout names ("two-col-sidebar-mix", Blogger's
        # "widget Blog" around the posts), so never on the element with most of the text
        "masthead", "topbar", "toolbar", "widget", "widgets", "rail", "sidebar", "footer",
        "foot", "breadcrumb", "breadcrumbs", "pagination", "pager", "skip", "skiplink", "jump",
        "cookie", "cookies", "consent",
    }
)  # fmt: skip
_FURNITURE_WORDS |= _LAYOUT_WORDS
"""Parts of class and id tokens that name furniture: the vocabulary Readability and
trafilatura match too (comment, related, share, social, promo, sponsor, ad, ...).

A token is split into parts at `-`, `_`, `:` and camel-case humps (`jp-relatedposts`,
`comments-area`, `relatedPosts`); a part must be one of these words, so `sidebarblock`
(an Asciidoctor sidebar, content), `footnotes` or `shareholder` are not furniture.
For a BEM name only the element after the last `__` counts
(`story-body__share` is a share bar, `share__title` is not)."""

_CONTENT_WORDS: Final = frozenset(
    {
        "content", "article", "body", "main", "entry", "story", "text",
    }
)  # fmt: skip
_NOTES_WORDS: Final = frozenset(
    {
        "footnote", "footnotes", "note", "notes", "references", "reflist", "citation",
        "citations", "bibliography",
    }
)  # fmt: skip
"""Notes and references: content, and link-dense by nature (back links, cited pages)."""
"""A part that vetoes furniture: a token whose last such word is one (`comment-content`,
not `article-comments`) or an element with such a token beside a furniture one keeps the
element (Readability's "okMaybeItsACandidate"); the drop is decided higher up, at the
thread or bar itself."""

_FURNITURE_TAGS: Final = frozenset(
    {"div", "section", "aside", "ul", "ol", "li", "dl", "form", "header", "footer",
     "table", "p", "figure", "center", "a"}
)  # fmt: skip
"""Elements a class or id can mark as furniture; inline markup (a highlighted code
`span.hljs-comment`) never is."""

_LINK_LIST_TAGS: Final = frozenset({"div", "section", "ul", "ol", "header", "footer", "form"})
"""Containers that are dropped when most of their text is link text (menus, "most read"
and related lists, teaser cards, category and tag lists)."""

_PROSE_TAGS: Final = frozenset({"p", "dd", "blockquote", "td", "th", "pre", "figcaption"})
"""Links inside these are part of running text (a "See also" paragraph of links in the
git docs, an Asciidoctor list item's paragraph): they count as text, not as links."""

_ITEM_TAGS: Final = frozenset({"li", "dd", "dt", "td", "th"})
"""Items of lists and tables, whose paragraphs are the item's text."""
_LINK_LINE_TAGS: Final = frozenset({"p", "figcaption"})
"""Prose elements that, holding one link and nothing else, are a link on a line of its
own rather than text with a link in it."""

_NOT_LEAF_FAST: Final = frozenset({"h1", "h2", "h3", "h4", "h5", "h6", "form"})
"""Leaves whose own rule needs a frame: an h1 protects its ancestors, a heading inside a
link is a headline (see `_MIN_TEASERS`), a form is judged."""
_RUNNING_TAGS: Final = frozenset({"p", "dd", "blockquote", "pre"})
"""Running text, which the core is found by (not table cells: a table of links is no
more an article than a list of them)."""
_HEADINGS: Final = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_SUBHEADINGS: Final = _HEADINGS - {"h1"}
_MIN_TEASERS: Final = 3
"""A container of this many headlines (headings whose text is a link to another page:
a teaser card's title) is a teaser list: "read next", "more stories", "other columns".
A document's own headings link nowhere, or to themselves (`#fragment` permalinks)."""
_TEASER_TEXT: Final = 300
"""At most this much text per headline in a teaser list: a title, a kicker, a date and a
one-line standfirst.  Sections of a document say more under each heading."""
_HEADLINE_TEXT: Final = 24
"""Average link text of a list of other stories' headlines (a sentence; "git-add(1)",
"HashMap" or "Storms of 2020" in a "See also" list are shorter)."""
_AROUND_TEXT: Final = 100
"""Running text needed on both sides of a headline list for it to be set in the article."""
_PART_SPLIT = re.compile(r"[-_:.]+|(?<=[a-z])(?=[A-Z])")
_MIN_LINKS: Final = 3
_LINK_DENSITY: Final = 0.5
_TEXT_PER_LINK: Final = 10
"""A link list carries little text besides its links (separators, a date, a count):
a list of bug reports or references whose links are a word in a sentence is content."""
_FORM_TEXT: Final = 400
"""A form with less text than this (labels, a prompt) is a sign-up, login or comment form."""
_KEEP_SHARE: Final = 0.15
"""If furniture rules would leave less than this share of the text, the page is a
list of links (an index, a sitemap): it is its own document, and only vocabulary
matches are dropped."""
_THREAD_OWN_TEXT: Final = 500
"""At most this much running text outside named furniture on a thread (an issue, a forum
topic), whose posts are all named as comments: a question's few lines above its answers
(the tune pages' threads hold 0 and 109).  A blog post holds more of its own above a
thread of comments that says ten times as much (2,098 beside 17,467 on a WordPress post
with 35 comments), and those comments stay furniture."""


_ID_WORDS: Final = frozenset(
    {
        "area", "bar", "block", "bottom", "box", "container", "form", "holder", "inner",
        "left", "links", "list", "module", "outer", "panel", "posts", "region", "right",
        "section", "thread", "top", "wrap", "wrapper", "zone",
    }
)  # fmt: skip
"""Words that name a box of a page, beside a furniture word in an id (`comment-box`,
`disqus_thread`, `sidebar-right`). An id with any other word is a document's anchor
(`recommended-storage-settings` in the git FAQ), not a widget's name."""

_AUTHOR_WORDS: Final = frozenset({"author", "authors"})
_BOX_WORDS: Final = frozenset(
    {
        "area", "bio", "block", "box", "card", "container", "details", "holder", "info",
        "inner", "module", "outer", "panel", "profile", "section", "wrap", "wrapper", "zone",
    }
)  # fmt: skip
"""An author box: "author" then only box words (`author-info`, `author-box`, `authorBio`),
the "Published by" card with a bio and "View all posts" after an article. Not `author`
alone (a byline's name, an AsciiDoc header's author line), `author-name`, nor a list
(`authors-list`, `author-links`: a paper's front matter may list its authors)."""

_NONE: Final = 0
_LAYOUT: Final = 1
_FURNITURE: Final = 2
_CONTENT: Final = 3
_NOTES: Final = 4


@lru_cache(maxsize=8192)
def _id_class(element_id: str) -> int:
    """Like `_token_class`, for an id: furniture only if every part is a furniture word,
    a box word (`_ID_WORDS`) or a number."""
    kind = _token_class(element_id)
    if kind in (_FURNITURE, _LAYOUT):
        parts = [part.lower() for part in _PART_SPLIT.split(element_id) if part]
        if not all(
            part in _FURNITURE_WORDS or part in _ID_WORDS or part.isdigit() for part in parts
        ):
            return _NONE
    return kind


_TAXONOMY_WORDS: Final = frozenset({"tags", "tagged", "tagcloud", "categories", "category"})
_TAXONOMY_HEADS: Final = frozenset({"tag", "tags", "cat", "cats", "category", "categories"})
_TAXONOMY_TAILS: Final = frozenset({"links", "list", "cloud"})
"""A post's tag and category list: a name whose head (last part) is a taxonomy word
(`post-tags`, `post-info-category`, `entry-categories`, `tagcloud`), or a taxonomy word
then `links`, `list` or `cloud` (`tags-links`, `cat-links`, `widget_tag_cloud`). Not a
taxonomy word then anything else: WordPress names the post itself after each of its
categories and tags (`<article class="post hentry category-news tag-berlin">`), and a
documentation page may hold a section `the-categories-field`."""


def _names_taxonomy(parts: list[str]) -> bool:
    return bool(parts) and (
        parts[-1] in _TAXONOMY_WORDS
        or (len(parts) > 1 and parts[-2] in _TAXONOMY_HEADS and parts[-1] in _TAXONOMY_TAILS)
    )


@lru_cache(maxsize=8192)
def _token_class(token: str) -> int:
    """What a class or id token names: `_CONTENT`, `_FURNITURE`, `_LAYOUT` or `_NONE`."""
    name = token.rsplit("__", 1)[-1] if "__" in token else token
    parts = [part.lower() for part in _PART_SPLIT.split(name) if part]
    if any(part in _NOTES_WORDS for part in parts):
        return _NOTES
    if _names_taxonomy(parts):
        return _FURNITURE
    # The last content or furniture word is the head of the name: `comment-content` is a
    # comment's content, `article-comments` the comments after an article.
    for part in reversed(parts):
        if part in _CONTENT_WORDS:
            return _CONTENT
        if part in _FURNITURE_WORDS and part not in _LAYOUT_WORDS:
            return _FURNITURE
    if len(parts) > 1 and parts[0] in _AUTHOR_WORDS and set(parts[1:]) <= _BOX_WORDS:
        return _FURNITURE
    return _LAYOUT if any(part in _LAYOUT_WORDS for part in parts) else _NONE


@lru_cache(maxsize=8192)
def _class_kind(classes: str) -> int:
    """What a class attribute names: a content token wins over furniture ones."""
    kind = _NONE
    for token in classes.split():
        token_kind = _token_class(token)
        if token_kind >= _CONTENT:
            return token_kind
        kind = max(kind, token_kind)
    return kind


def _names_furniture(element: Element) -> int:
    """What the element's class or id names: `_FURNITURE`, `_LAYOUT`, `_CONTENT`,
    `_NOTES` or `_NONE`."""
    classes = element.get("class")
    kind = _class_kind(classes) if classes else _NONE
    if kind >= _CONTENT:
        return kind
    element_id = element.get("id")
    if element_id and kind != _FURNITURE:
        token_kind = _id_class(element_id.strip())
        if token_kind >= _CONTENT:
            return token_kind
        # An id made from a heading's text (`<section id="comments"><h2>Comments`,
        # Asciidoctor's `_sharing_changes`) names a section of the document.
        if (
            token_kind
            and not element_id.startswith("_")
            and not _opens_with_heading(element, element_id)
        ):
            kind = max(kind, token_kind)
    return kind


def _opens_with_heading(element: Element, element_id: str) -> bool:
    """The element opens with a heading that its id was made from (same letters and
    digits), or whose permalink points at it."""
    for index, child in enumerate(element):
        if index == 3:
            break
        heading = child if child.tag in _HEADINGS else None
        if heading is None and type(child.tag) is str and len(child) and child[0].tag in _HEADINGS:
            heading = child[0]
        if heading is not None:
            target = "#" + element_id
            if any(link.get("href") == target for link in heading.iter("a")):
                return True
            return _letters(_text_of(heading)) == _letters(element_id)
    return False


def _text_of(element: Element) -> str:
    parts = [element.text or ""]
    for descendant in element.iter():
        if descendant is not element:
            parts += (descendant.text or "", descendant.tail or "")
    return "".join(parts)


def _letters(text: str) -> str:
    return "".join(char for char in text.casefold() if char.isalnum())


def _points_away(link: Element) -> bool:
    """Whether a link goes to another page (not to a part of this one, `#fragment`)."""
    target = (link.get("href") or "").strip()
    return bool(target) and not target.startswith("#")


_FILE_NAME = re.compile(
    r"\S+\.(?:jpe?g|png|gif|webp|svg|bmp|tiff?|avif)|(?=\S*[^\W_])[^\s_-]*(?:[_-][^\s_-]*){2,}",
    re.IGNORECASE,
)
"""An image's alt text that is a file or slug name (`IMG_3886.jpg`, `0226-hotel-swipe-02`,
`update_graphic_red_bar`): one word with an image extension or two or more `-`/`_`
between letters or digits (`--` alone is no name: it stays, as any other alt text)."""


def image_description(image: Element) -> str:
    """What an `<img>`'s alt text says in words: "" when it is empty or a file or slug
    name, which CMSs fill in by default and which describes nothing."""
    return alt_description(image.get("alt") or "")


def alt_description(alt: str) -> str:
    """`alt` unless it is blank or a file or slug name (then "")."""
    if not alt.strip() or _FILE_NAME.fullmatch(alt.strip()):
        return ""
    return alt


def _only_child(link: Element, image: Element) -> bool:
    """`image` is all `link` holds: no text before or after it, no other element."""
    return len(link) == 1 and not (link.text or "").strip() and not (image.tail or "").strip()


def _icon_text(link: Element, image: Element) -> int:
    """The size of an icon link's alt text, 0 if `image` is not all of `link`.

    The renderer writes it ("Print", "Share on Facebook"), which makes a bar of icon
    links as link-dense to the reader as a bar of words.  Counted apart from the text,
    as it is no part of how much a page or a teaser says."""
    return len(image_description(image).strip()) if _only_child(link, image) else 0


def _skipped(element: Element) -> bool:
    name = element.tag
    if name in DROP_TAGS or name in BOILERPLATE_TAGS:
        return True
    attrs = element.attrib
    return bool(attrs) and has_boilerplate_attrs(attrs)


def furniture(top: list[Element]) -> set[Element]:
    """The subtrees in `top` (the content root's children, or the document's top
    elements) that the renderer leaves out: the boilerplate ones of
    `has_boilerplate_attrs` and `BOILERPLATE_TAGS` (so that the renderer need not ask
    again), and page furniture.

    One walk, bottom-up: each element's text length, link text length and link count
    are its children's sums, so the work is linear in the page whatever its nesting.
    An element is furniture if a class or id names it so (`_FURNITURE_WORDS`), if it
    is a short form, a container whose text is mostly links (`_LINK_LIST_TAGS`)
    outside the core: the smallest element holding most of the page's running text
    (a list of links inside the article, its "See also", is the article's, unless its
    links are other pages' headlines and the article's paragraphs go on after it:
    `_HEADLINE_TEXT`, `_AROUND_TEXT`), or a teaser list (`_MIN_TEASERS`) anywhere but
    around the core: cards of other stories are placed between an article's
    paragraphs too.  Named furniture inside a container still counts towards its link
    density (its links as links), and an icon link's alt text as link text.  A heading
    whose section is all such furniture goes with it, and so does the box around a
    short form that holds nothing but its prompt (`_form_boxes`).  Last, short datelines
    next to the headline or after the text (`_datelines`).  A page whose running text is
    nearly all inside named furniture (`_KEEP_SHARE`) is a thread, an issue or a forum
    topic whose posts are named as comments: those holding running text stay.
    """
    walk = _FurnitureWalk(set())
    walk.run(top)
    # A layout word on the element holding most of the page is a layout name, not a
    # sidebar: walk again keeping it.
    wrappers = {element for element, size in walk.layout if 2 * size > walk.total}
    # A page whose running text is nearly all inside named furniture has no article
    # beside it: the "comments" or "posts" are what it says (an issue, a forum thread).
    named_prose = sum(size for _, size in walk.named_prose)
    # Not a post with its own paragraphs and a long comment thread under it: its
    # comments are furniture however much they say (`_THREAD_OWN_TEXT`).
    if walk.prose_total < min(_THREAD_OWN_TEXT, _KEEP_SHARE * (walk.prose_total + named_prose)):
        # A thread's posts share their markup: a one-line post, with no paragraph of
        # its own, is kept as its neighbours with paragraphs are (same tag and class;
        # an element named by its id alone is no template).
        posts = {
            (element.tag, element.get("class"))
            for element, _ in walk.named_prose
            if element.get("class")
        }
        kept = [element for element, _ in walk.named_prose]
        kept += [named for named in walk.named if (named.tag, named.get("class")) in posts]
        for element in kept:
            wrappers.add(element)
            wrappers.update(named for named in element.iterancestors() if named in walk.named)
    if wrappers:
        walk = _FurnitureWalk(wrappers)
        walk.run(top)
    dropped = walk.named | walk.by_structure()
    dropped |= _form_boxes(top, dropped | walk.skipped)
    gone = dropped | walk.skipped | _orphan_headings(top, dropped, walk.skipped)
    gone |= _article_footers(walk.visited, gone)
    gone |= _excerpt_tiles(walk.visited, gone)
    return gone | _datelines(_kept(walk.visited, gone), gone)


_FOOTER_WORDS: Final = 60
"""At most this many words in an article's footer: who posted it, when, in which
category, a permalink ("Dieser Eintrag wurde veröffentlicht in ... von ... Permanentlink")."""


def _article_footers(visited: list[Element], gone: set[Element]) -> set[Element]:
    """The `<footer>`s of articles: a footer whose nearest sectioning element is an
    `<article>` says who wrote the article, when and where it is filed (HTML's footer of
    sectioning content), so it is page metadata rather than text, as the site's footer is
    furniture. Short ones only (`_FOOTER_WORDS`), with no heading or paragraph of running
    text and not named for notes: an article may end with its footnotes in a footer."""
    found: set[Element] = set()
    for element in visited:
        if element.tag != "footer" or element in gone:
            continue
        section = next(
            (ancestor for ancestor in element.iterancestors() if ancestor.tag in SECTIONING_TAGS),
            None,
        )
        if section is None or section.tag != "article":
            continue
        if any(ancestor in gone for ancestor in element.iterancestors()):
            continue
        if element.attrib and _names_furniture(element) == _NOTES:
            continue
        inner = [node for node in element.iter() if node is not element]
        if any(node.tag in _HEADINGS or _is_running_text(node) for node in inner):
            continue
        if len(_WORD.findall(_text_of(element))) <= _FOOTER_WORDS:
            found.add(element)
    return found


_MIN_TILES: Final = 3
_EXCERPT_END: Final = ("...", "\u2026")


def _excerpt_tiles(visited: list[Element], gone: set[Element]) -> set[Element]:
    """Teaser tiles of other posts: `_MIN_TILES` or more sibling boxes of one template
    (tag and class), each holding an excerpt cut short ("...") and a link to another
    page ("weiter lesen"), none holding an `<h1>`. A slider's tiles whose headlines are
    no headings and no links, so neither the link-list nor the teaser rule sees them."""
    found: set[Element] = set()
    for parent in visited:
        if parent in gone or len(parent) < _MIN_TILES:
            continue
        groups: dict[tuple[str, str], list[Element]] = {}
        for child in parent:
            if type(child.tag) is str and child.get("class") and child not in gone:
                groups.setdefault((child.tag, child.get("class") or ""), []).append(child)
        for tiles in groups.values():
            if len(tiles) >= _MIN_TILES and all(_is_excerpt_tile(tile) for tile in tiles):
                found.update(tiles)
    return found


def _is_excerpt_tile(tile: Element) -> bool:
    if any(True for _ in tile.iter("h1")):
        return False
    if not any(_points_away(link) for link in tile.iter("a")):
        return False
    return any(
        (node.text or "").strip().endswith(_EXCERPT_END)
        for node in tile.iter()
        if type(node.tag) is str and node.tag != "a"
    )


_PROMPT_TEXT: Final = 120
"""At most this much text (an image's description counted) beside a sign-up, search or
comment form in the box that holds it: "Get TMZ Breaking News alerts to your inbox",
a logo, "Kommentare schreiben"."""


_PAGE_TAGS: Final = frozenset({"html", "head", "body", "main", "article"})
"""The page and its content: never a form's box, however little else they say."""


def _form_boxes(top: list[Element], gone: set[Element]) -> set[Element]:
    """The boxes around short forms (dropped as `_FORM_TEXT` says) that hold nothing else
    but a prompt: the largest ancestor of each whose text, besides what is dropped
    already, stays within `_PROMPT_TEXT` and that holds no heading.  A form's prompt
    is as much furniture as its fields; a box with a heading or more to say is not
    all prompt, and neither is the page's `body`, its `main` or `article`, a top element
    of the content or one named for content (`entry-content`)."""
    roots = set(top)
    boxes: set[Element] = set()
    for form in [element for element in gone if element.tag == "form"]:
        box = None
        for ancestor in form.iterancestors():
            if (
                ancestor in roots
                or ancestor.tag in _PAGE_TAGS
                or ancestor in gone
                or (ancestor.attrib and _names_furniture(ancestor) >= _CONTENT)
                or _says_more(ancestor, gone)
            ):
                break
            box = ancestor
        if box is not None:
            boxes.add(box)
    return boxes


def _says_more(element: Element, gone: set[Element]) -> bool:
    """Whether `element`, without what is `gone`, holds a heading or more than
    `_PROMPT_TEXT` of text and image descriptions."""
    size = len((element.text or "").strip())
    stack = list(element)
    while stack:
        node = stack.pop()
        size += len((node.tail or "").strip())
        if type(node.tag) is not str or node in gone or node.tag in DROP_TAGS:
            continue
        if node.tag in _HEADINGS:
            return True
        if node.tag == "img":
            size += len(image_description(node).strip())
        size += len((node.text or "").strip())
        stack.extend(node)
        if size > _PROMPT_TEXT:
            return True
    return False


def _orphan_headings(
    top: list[Element], furniture: set[Element], skipped: set[Element]
) -> set[Element]:
    """Headings (or boxes holding only a heading) whose section is page furniture that
    says something: the "3 comments" over a comment thread, the "Related stories" over
    a related list, when the heading stands beside what it titles rather than inside it.

    Only furniture found by name or structure counts: a heading over a `<nav>` or a
    hidden element may title what the page still shows elsewhere."""
    orphans: set[Element] = set()
    for root in top:
        if type(root.tag) is not str or root in furniture or root in skipped:
            continue
        for parent in root.iter():
            if parent in furniture or parent in skipped or not len(parent):
                continue
            children = [child for child in parent if type(child.tag) is str]
            # An orphan needs furniture among its siblings: most parents have none, and
            # this is the whole walk's cost (it was a sixth of parse_html on the corpus).
            if furniture.isdisjoint(children):
                continue
            for index, child in enumerate(children):
                if (
                    child in furniture
                    or child in skipped
                    or not (_is_heading_box(child) or _is_label(child))
                ):
                    continue
                section = [
                    (sibling in furniture, bool(_text_of(sibling).strip()))
                    for sibling in _section_after(children, index)
                ]
                if any(gone and said for gone, said in section) and all(
                    gone or not said for gone, said in section
                ):
                    orphans.add(child)
    return orphans


def _is_heading_box(element: Element) -> bool:
    """A subheading, or an element whose only text is one subheading's."""
    if element.tag in _SUBHEADINGS:
        return True
    inner = [child for child in element if type(child.tag) is str]
    return (
        len(inner) == 1
        and inner[0].tag in _SUBHEADINGS
        and not (element.text or "").strip()
        and not (inner[0].tail or "").strip()
    )


_LABEL_TEXT: Final = 40
"""At most this much text in a label set over what it names, styled rather than marked
up as a heading ("Linked mentions", "Related", "Weitere Artikel")."""


def _is_label(element: Element) -> bool:
    """A short line of text with no link, no image and no sentence end, in an element of
    its own: a heading by its style. Not a list item, cell, code, quotation or figure
    (`_NOT_DATELINE`)."""
    if element.tag in _NOT_DATELINE or element.tag in _LISTS or element.tag in DROP_TAGS:
        return False
    if any(inner.tag in ("a", "img", "input", "button") for inner in element.iter()):
        return False
    text = " ".join(_text_of(element).split())
    return (
        0 < len(text) <= _LABEL_TEXT
        and any(char.isalpha() for char in text)
        and not text.endswith((*_SENTENCE_END, ":", ","))
    )


def _section_after(children: list[Element], index: int) -> list[Element]:
    """The siblings after `children[index]` up to the next heading (or heading box)."""
    section: list[Element] = []
    for sibling in children[index + 1 :]:
        if sibling.tag in _HEADINGS or _is_heading_box(sibling):
            break
        section.append(sibling)
    return section


class _FurnitureWalk:
    """One bottom-up walk for `furniture`."""

    def __init__(self, keep: set[Element]) -> None:
        self.keep = keep
        self.named: set[Element] = set()
        """Dropped for their class or id, or short forms."""
        self.skipped: set[Element] = set()
        """Navigation, hidden elements and the like (`has_boilerplate_attrs`), not walked."""
        self.layout: list[tuple[Element, int]] = []
        """Elements named for a layout word, with their whole text size."""
        self.linked: list[tuple[int, int, int, Element]] = []
        self.headline_lists: set[Element] = set()
        """The link-dense containers whose links are headlines of other pages."""
        self.paragraphs: list[tuple[int, int]] = []
        """(preorder number, running text size) of paragraphs, in preorder."""
        """(first, end, text size, element) of link-dense containers, by preorder."""
        self.teasers: list[tuple[int, int, int, Element]] = []
        """(first, end, text size, element) of teaser lists, by preorder."""
        self.prose: list[tuple[int, int, int]] = []
        """(running text size, first, end) of elements holding running text."""
        self.total = 0
        """Text size of the whole page."""
        self.kept = 0
        """Text size left after the named elements are dropped."""
        self.prose_total = 0
        self.named_prose: list[tuple[Element, int]] = []
        """Named furniture holding running text, with its size (what its named parts
        below do not hold)."""
        self.visited: list[Element] = []
        """The elements walked, in preorder: all but the skipped ones and what they hold."""

    # Frames: [element, children, text, link text, links, all text (nothing dropped),
    # holds an h1, running text, preorder number, headlines, holds a heading, text of
    # named furniture below, links in it, alt text of icon links, links to other pages,
    # link text of named furniture below].

    def run(self, top: list[Element]) -> None:
        order = 0
        for root in top:
            if type(root.tag) is not str or _skipped(root):
                if type(root.tag) is str:
                    self.skipped.add(root)
                continue
            size = len((root.text or "").strip())
            self.visited.append(root)
            frame = [
                root, iter(root), size, 0, 0, size, root.tag == "h1", 0, order, 0, False,
                0, 0, 0, 0, 0,
            ]  # fmt: skip
            order = self._walk(frame, order + 1)

    def _walk(self, root: list[Any], order: int) -> int:
        """Walks the subtree of the frame `root`, whose element has preorder number
        `order - 1`; returns the next preorder number."""
        stack = [root]
        skipped, visit = self.skipped, self.visited.append
        # Locals: this loop runs once per element of the page.
        never, boilerplate, marked = DROP_TAGS, BOILERPLATE_TAGS, has_boilerplate_attrs
        nameable, slow_leaves, running = _FURNITURE_TAGS, _NOT_LEAF_FAST, _RUNNING_TAGS
        while stack:
            frame = stack[-1]
            for child in frame[1]:
                tail = child.tail
                if tail and not tail.isspace():
                    size = len(tail.strip())
                    frame[2] += size
                    frame[5] += size
                name = child.tag
                if name in never or type(name) is not str:
                    continue
                attrs = child.attrib
                if name in boilerplate or (attrs and marked(attrs)):
                    skipped.add(child)
                    continue
                text = child.text
                size = len(text.strip()) if text and not text.isspace() else 0
                if name == "img" and frame[0].tag == "a":
                    frame[13] += _icon_text(frame[0], child)
                order += 1
                visit(child)
                if (
                    not len(child)
                    and (not attrs or name not in nameable)
                    and name not in slow_leaves
                ):
                    # A leaf that cannot be furniture: its sizes go straight up.
                    frame[2] += size
                    frame[5] += size
                    if name == "a":
                        frame[3] += size
                        frame[4] += 1
                        if _points_away(child):
                            frame[14] += 1
                    elif name in running:
                        frame[7] += size
                    continue
                stack.append(
                    [
                        child, iter(child), size, 0, 0, size, name == "h1", 0, order - 1,
                        0, False, 0, 0, 0, 0, 0,
                    ]
                )  # fmt: skip
                break
            else:
                stack.pop()
                self.leave(frame, order, stack[-1] if stack else None)
        return order

    def leave(self, frame: list[Any], end: int, parent: list[Any] | None) -> None:
        (
            element, _, text, link, links, everything, heading, prose, first, headlines, titled,
            gone, gone_links, icons, away, gone_link,
        ) = frame  # fmt: skip
        name = element.tag
        if name in _SUBHEADINGS or (name == "a" and titled):
            titled, headlines = True, headlines or _is_headline(element, text, link)
        if name == "a":
            link, links = text, links + 1
            away += _points_away(element)
        elif name in _PROSE_TAGS:
            if name in _RUNNING_TAGS:
                prose = max(prose, text - link)
                self.paragraphs.append((first, prose))
            # A paragraph that is one link and nothing else ("Spreeblick bei Twitter.",
            # "Lego Spielzeug" in a run of such paragraphs) is a link set on its own
            # line, not a sentence with a link in it. Not in a list item: Asciidoctor
            # writes every item's text as a paragraph (git's index of API documents).
            # So is a caption that is one link: a teaser card's title under its picture.
            if not (
                name in _LINK_LINE_TAGS
                and links == 1
                and link == text
                and (parent is None or parent[0].tag not in _ITEM_TAGS)
            ):
                link = links = away = 0
        elif name == "li":
            # Running text too (status posts, release notes), its links still links.
            prose = max(prose, text - link)
        kind = (
            _names_furniture(element)
            if parent is not None and name in _FURNITURE_TAGS and element.attrib
            else _NONE
        )
        if heading and kind < _CONTENT:
            kind = _NONE
        if (kind in (_FURNITURE, _LAYOUT) and element not in self.keep) or (
            name == "form" and text < _FORM_TEXT
        ):
            self._drop(element, kind, everything, prose)
            gone, gone_links, gone_link = everything + icons, links + gone_links, link + gone_link
            text = link = links = prose = headlines = icons = away = 0
        elif parent is not None and kind != _NOTES and links + gone_links >= _MIN_LINKS:
            self._link_list(
                frame, end, (text, link, links, gone, gone_links, icons, away, gone_link)
            )
        if headlines >= _MIN_TEASERS and parent is not None and not heading and kind != _NOTES:
            self._teasers(element, first, end, text, headlines)
        if prose and name not in _PROSE_TAGS:
            # The core is a container of paragraphs, not the longest paragraph.
            self.prose.append((prose, first, end))
        if parent is None:
            self.total, self.kept = self.total + everything, self.kept + text
            self.prose_total += prose
            return
        parent[2] += text
        parent[3] += link
        parent[4] += links
        parent[5] += everything
        parent[6] = parent[6] or heading
        parent[7] += prose
        parent[9] += headlines
        parent[10] = parent[10] or titled
        parent[11] += gone
        parent[12] += gone_links
        parent[15] += gone_link
        parent[13] += icons
        parent[14] += away

    def _drop(self, element: Element, kind: int, everything: int, prose: int) -> None:
        """Notes `element` as named furniture (or a short form) with its whole text size
        and its running text."""
        self.named.add(element)
        if kind == _LAYOUT:
            self.layout.append((element, everything))
        if prose:
            self.named_prose.append((element, prose))

    def _teasers(self, element: Element, first: int, end: int, text: int, headlines: int) -> None:
        """Notes `element` as a teaser list if it is a container with little text
        besides its headlines (`_TEASER_TEXT` a headline)."""
        if element.tag in _LINK_LIST_TAGS and text <= _TEASER_TEXT * headlines:
            self.teasers.append((first, end, text, element))

    def _link_list(self, frame: list[Any], end: int, sizes: tuple[int, ...]) -> None:
        """Notes the container of `frame` as a link list if its text is mostly links.

        Named furniture inside still counts, its links as links: a menu whose
        "previous" and "next" links are named for what they are is still a menu."""
        text, link, links, gone, gone_links, icons, away, gone_link = sizes
        element = frame[0]
        if (
            element.tag in _LINK_LIST_TAGS
            and link + gone_link + icons > _LINK_DENSITY * (text + gone + icons)
            and text - link < _TEXT_PER_LINK * (links + gone_links)
        ):
            self.linked.append((frame[8], end, text, element))
            if (
                away >= _MIN_LINKS
                and 2 * away >= links
                and _headline_size(link, links) >= _HEADLINE_TEXT
            ):
                self.headline_lists.add(element)

    def by_structure(self) -> set[Element]:
        """The link-dense containers that neither hold nor are inside the core, and the
        teaser lists that do not hold it.

        Each kind is kept if dropping it would leave too little of the page
        (`_KEEP_SHARE`): a page of links or of teasers is its own document.  Link
        lists are weighed first, as they were before teaser lists were known.
        """
        core_first, core_end = -1, -1
        half = self.prose_total / 2
        for prose, first, end in self.prose:
            if prose > half and (core_first < 0 or end - first < core_end - core_first):
                core_first, core_end = first, end
        linked = [
            item
            for item in self.linked
            if not (
                core_first <= item[0] < core_end or (item[0] <= core_first and core_end <= item[1])
            )
            or (core_first < item[0] and self._related(item, core_first, core_end))
        ]
        teasers = [
            item for item in self.teasers if not (item[0] <= core_first and core_end <= item[1])
        ]

        dropped: set[Element] = set()
        for chosen in (linked, linked + teasers):
            if self.kept - _outermost_size(chosen) < _KEEP_SHARE * self.total:
                break
            dropped = {element for _, _, _, element in chosen}
        return dropped

    def _related(self, item: tuple[int, int, int, Element], first: int, end: int) -> bool:
        """A list of other stories' headlines set between the core's paragraphs
        ("Related", "Read also"): running text before it and after it in the core.
        A list of links at the end of a document ("See also") is the document's."""
        if item[3] not in self.headline_lists:
            return False
        before = sum(size for at, size in self.paragraphs if first <= at < item[0])
        after = sum(size for at, size in self.paragraphs if item[1] <= at < end)
        return before >= _AROUND_TEXT and after >= _AROUND_TEXT


def _is_headline(element: Element, text: int, link: int) -> int:
    """1 if `element` (a subheading, or a link around one, with `text` of which `link`
    in links) is the headline of another page, else 0."""
    if element.tag == "a":
        return int(_points_away(element))  # <a href="/other-story"><h3>...</h3></a>
    # <h3><a href="/other-story">...</a></h3>
    return int(bool(text) and 2 * link > text and any(map(_points_away, element.iter("a"))))


def _headline_size(link: int, links: int) -> float:
    return link / links if links else 0.0


def _outermost_size(items: list[tuple[int, int, int, Element]]) -> int:
    """The text size of `(first, end, size, element)` subtrees, each counted once."""
    size = 0
    reach = -1
    for first, end, text, _ in sorted(items, key=lambda item: item[0]):
        if first >= reach:
            # Outermost: its text is not counted yet.
            size += text
            reach = end
        else:
            reach = max(reach, end)
    return size


_MONTHS: Final = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
    "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
    "|januar|februar|märz|mai|juni|juli|oktober|dezember"
    "|janvier|février|mars|avril|juin|juillet|août|septembre|octobre|novembre|décembre"
    "|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre"
    "|gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre"
    "|januari|februari|maart|mei|augustus"
)
_DATE: Final = re.compile(
    r"\b\d{1,2}[./]\d{1,2}[./](?:19|20)\d\d\b|\b(?:19|20)\d\d-\d{1,2}-\d{1,2}\b"
    rf"|\b(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b"
    rf"|\b\d{{1,2}}\.?\s+(?:{_MONTHS})\.?,?\s+\d{{4}}\b"
    r"|\d{4}年\d{1,2}月\d{1,2}日",
    re.IGNORECASE,
)
"""A calendar date as datelines write it: `11.09.2011`, `2/26/2015`, `2020-01-13`,
`January 13, 2020`, `13. Januar 2020`, `13 janvier 2020`, `2019年02月22日` (a year of
four digits, so that a version number such as `1.2.10` is no date)."""
_YEAR: Final = re.compile(r"\d{4}")
"""Four digits in a row, which every `_DATE` holds: a quick test before the slow one
(`_DATE` costs about 240 ns a character, most of the dateline rule's time)."""
_DATELINE_WORDS: Final = 20
"""At most this many words in a dateline: a date, a time, a name or two, a category,
"View Comments"."""
_SENTENCE_END: Final = (".", "!", "?", "。")
_NOT_DATELINE: Final = frozenset(
    {
        "td", "th", "tr", "tbody", "thead", "table", "caption", "li", "dt", "dd", "pre", "code",
        "h1", "h2", "h3", "figure", "figcaption", "blockquote", "q",
    }
)  # fmt: skip
"""Elements that are never a dateline and are not looked into for one: cells, list items,
code, the headings of a document, figures with their captions and quotations (a list or
table of dated items, "Kathmandu, 30 April 2015" under a photo, are content)."""
_LISTS: Final = frozenset({"ul", "ol", "dl"})
_WORD: Final = re.compile(r"[^\W_]+")


def _datelines(elements: list[Element], gone: set[Element]) -> set[Element]:
    """Datelines and bylines of an article: short elements holding a date ("11.09.2011,
    16:20 von jovelstefan", "January 13, 2020 at 08:45 AM | categories: Python",
    "Stand: 05/08/2019, 5:30") set between the headline and the first paragraph of
    running text, or after the last one.

    Page metadata rather than text, and named by no class a vocabulary could know
    (`<small>`, `<h5>`, `<p class="article-meta">`).  The headline is the first `h1`
    (else the first `h2`); running text is a paragraph of at least `_AROUND_TEXT`
    characters.  An element is a dateline if it holds a date (`_DATE`), at most
    `_DATELINE_WORDS` words, no heading, does not end as a sentence does, and is not a
    cell, list item or code (`_NOT_DATELINE`); after the text, lists are kept too, as a
    document may end with a list of dated releases."""
    headline = next((e for e in elements if e.tag == "h1"), None)
    if headline is None:
        headline = next((e for e in elements if e.tag == "h2"), None)
    if headline is None:
        headline = _title_box(elements)
    if headline is None:
        return set()
    start = elements.index(headline)
    leading = _leading_datelines(headline, set(elements), gone)
    first_text = next(
        (
            number
            for number in range(start + 1, len(elements))
            if _is_running_text(elements[number])
        ),
        None,
    )
    if first_text is None:
        return leading | _header_datelines(elements, start, gone)
    last_text = next(
        number
        for number in range(len(elements) - 1, first_text - 1, -1)
        if _is_running_text(elements[number])
    )
    found: set[Element] = set()
    # A parent comes before its children: a parent after the headline is among the
    # elements up to the first paragraph, one after the last paragraph among those after.
    between = set(elements[start + 1 : first_text])
    around = set(elements[first_text].iterancestors())
    # The headline's subtree, grown in preorder: a parent comes before its children.
    in_headline = {headline}
    for number in range(start + 1, first_text):
        element = elements[number]
        parent = next(element.iterancestors(), None)
        if parent in in_headline:
            in_headline.add(element)
            continue
        if element in around:
            continue
        if parent in between and parent not in around:
            continue  # inside an element the walk visits whole
        _visit_dateline(element, gone, found, lists=True)
    after = set(elements[last_text:])
    for element in elements[last_text + 1 :]:
        parent = next(element.iterancestors(), None)
        if parent in after:
            continue  # inside the last paragraph, or inside an element visited whole
        _visit_dateline(element, gone, found, lists=False)
    return found | leading


_TITLE_TEXT: Final = 8
"""At least this many characters in a headline found by the page's title: a site's
name or a section's ("News") is shorter, and appears in many titles."""


def _title_box(elements: list[Element]) -> Element | None:
    """The headline of a page with no `h1` or `h2`: the first element whose text, and
    only text, is the start of the page's `<title>`: youth.cn's `<div class="l_tit">`,
    its title then "_教育频道_中国青年网" in the `<title>`.
    Not a cell, list item, code, quotation or figure (`_NOT_DATELINE`)."""
    if not elements:
        return None
    ancestors = list(elements[0].iterancestors())
    title = page_title([ancestors[-1] if ancestors else elements[0]])
    if not title:
        return None
    for element in elements:
        own = (element.text or "").strip()
        # Its own text must open the title: one string test for most elements, rather
        # than the text of each subtree (quadratic on a deep page with no headline).
        if not own or not title.startswith(own) or element.tag in _NOT_DATELINE:
            continue
        text = " ".join(_text_of(element).split())
        if len(text) >= _TITLE_TEXT and title.startswith(text):
            return element
    return None


def _leading_datelines(headline: Element, kept: set[Element], gone: set[Element]) -> set[Element]:
    """A byline bar set just before the headline ("Cory Doctorow / 10:08 am Fri Jul 19,
    2013" above the `<h1>`): the element next before the headline, or before the box that
    holds nothing but the headline, if it is a dateline (`_visit_dateline`), a list too:
    the meta bar over a headline is often a `<ul>` of the date and a tag or two
    (`<ul class="article__info"><li><time>21 September 2020</time><li><a>SQL</a>`)."""
    found: set[Element] = set()
    parent = next(headline.iterancestors(), None)
    holders = [headline]
    if parent is not None and [child for child in parent if type(child.tag) is str] == [headline]:
        holders.append(parent)
    for holder in holders:
        before = holder.getprevious()
        while before is not None and (
            type(before.tag) is not str or before not in kept or not _shows_text(before, gone)
        ):
            before = before.getprevious()
        if before is not None:
            _visit_dateline(before, gone, found, lists=True)
    return found


def _shows_text(element: Element, gone: set[Element]) -> bool:
    """Whether `element` shows any text besides what is `gone` (an emptied ad slot does not)."""
    if element in gone or element.tag in DROP_TAGS:
        return False
    if (element.text or "").strip():
        return True
    return any(
        type(child.tag) is str and (_shows_text(child, gone) or bool((child.tail or "").strip()))
        for child in element
    )


def _header_datelines(elements: list[Element], start: int, gone: set[Element]) -> set[Element]:
    """The datelines of a post with no paragraph of running text (an agenda, a list, a
    table), where `_datelines` has no text to look between: those inside the `<header>`
    that holds the headline (`elements[start]`), which HTML gives an article's headline,
    byline and date ("Veröffentlicht am 11/04/2012 von bjoernlinder01")."""
    headline = elements[start]
    box = next((above for above in headline.iterancestors() if above.tag == "header"), None)
    found: set[Element] = set()
    if box is None:
        return found
    inside = set(box.iter())
    seen = {headline}
    for element in elements[start + 1 :]:
        if element not in inside:
            continue
        if next(element.iterancestors(), None) not in seen:
            _visit_dateline(element, gone, found, lists=True)
        seen.add(element)
    return found


def _kept(visited: list[Element], gone: set[Element]) -> list[Element]:
    """The elements of `visited` (the furniture walk's, in preorder) without those
    dropped and what they hold."""
    out: set[Element] = set()
    for element in gone:
        out.update(element.iter())
    return [element for element in visited if element not in out]


def _is_running_text(element: Element) -> bool:
    """A paragraph of at least `_AROUND_TEXT` characters as the reader sees them: the
    source's indentation inside it (a byline's `<p>` broken over lines around its `<time>`
    elements) is one space on the page."""
    if element.tag not in _RUNNING_TAGS:
        return False
    text = _text_of(element)
    return len(text) >= _AROUND_TEXT and len(" ".join(text.split())) >= _AROUND_TEXT


def _visit_dateline(
    element: Element, gone: set[Element], found: set[Element], *, lists: bool
) -> None:
    """Adds `element` to `found` if it is a dateline, else looks for one inside it (only
    where its text holds a date)."""
    text = _text_of(element).strip()
    if not _YEAR.search(text) or not _DATE.search(text):
        return
    if (
        element.tag not in _NOT_DATELINE
        and (lists or element.tag not in _LISTS)
        and len(_WORD.findall(text)) <= _DATELINE_WORDS
        and not text.endswith(_SENTENCE_END)
        and not any(inner.tag in _HEADINGS for inner in element.iter() if inner is not element)
    ):
        found.add(element)
        return
    if element.tag in _NOT_DATELINE or element.tag in _LISTS:
        return  # a date in a list, a table or code is the document's
    for child in element:
        if type(child.tag) is str and child not in gone and child.tag not in DROP_TAGS:
            _visit_dateline(child, gone, found, lists=lists)
