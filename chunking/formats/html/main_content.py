"""Main-content selection: which parts of a page are the document, and which are
navigation, banners, sidebars, hidden text and other page furniture.

The renderer asks `content_root` where to start and `has_boilerplate_attrs` /
`DROP_TAGS` / `BOILERPLATE_TAGS` what to skip; the rules are about kinds of markup
(ARIA roles, landmark elements, class and id tokens), not about sites."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Final

from chunking.formats.html.tree import attr_tokens, collapse

if TYPE_CHECKING:
    from collections.abc import Mapping

    from chunking.formats.html.tree import Element


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


def has_boilerplate_attrs(attrs: Mapping[str, str]) -> bool:
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
    return classes is not None and any(
        _is_boilerplate_token(token) for token in attr_tokens(classes)
    )


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


def _first_role_main(document: list[Element]) -> Element | None:
    for top in document:
        for element in top.iter():
            # Most elements have no role: one lookup decides.
            role = element.get("role")
            if role and element.tag != "article" and role.strip().lower() == "main":
                return element
    return None
