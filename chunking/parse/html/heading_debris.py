"""Permalink debris inside headings: Sphinx `¶` links, MediaWiki `[edit]`, `#` anchors,
"Link to this heading" labels; the path shows the heading's own text."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from chunking.parse.html.main_content import DROP_TAGS, has_boilerplate_attrs
from chunking.parse.html.tree import attr, attr_tokens, collapse

if TYPE_CHECKING:
    from chunking.parse.html.tree import Element


# --- permalink debris inside headings -------------------------------------------

_DEBRIS_CLASSES: Final = frozenset({"headerlink", "mw-editsection", "editsection"})
"""Classes whose element in a heading is never its text: Sphinx/MkDocs `¶` links and
MediaWiki `[edit]` sections."""

_VISUALLY_HIDDEN_CLASSES: Final = frozenset(
    {
        "sr-only", "visually-hidden", "visuallyhidden", "screen-reader-text",
        "screen-reader-only", "hidden-visually", "u-visually-hidden", "a11y-hidden",
    }
)  # fmt: skip
"""Text for screen readers only; in a heading it is debris only if it names the link."""

_PERMALINK_GLYPHS: Final = frozenset("¶§#＃♯🔗⚓⛓∞⁋※↗⧉📎🔖↵")
"""A lone one of these as a link's text is a permalink marker, not a title."""

_GLYPH_NOISE: Final = str.maketrans(dict.fromkeys(map(ord, "\ufe0e\ufe0f"), None))
"""Variation selectors (text or emoji presentation) that may follow a glyph."""

_LINK_PHRASE = re.compile(
    r"(?:perma(?:nent )?link|direct link|anchor(?: link)?|link|copy link"
    r"|jump to (?:heading|section))(?: to (?:this |the )?(?:heading|headline|section|paragraph))?"
    r"|(?:perma(?:nent )?link|direct link) to .+"
    r"|\[\s*edit(?: source)?\s*\]",
    re.IGNORECASE,
)
"""Text that only says "this is a link to here" (`Link to this heading`, `Permalink`,
`Direct link to Title`); `Link aggregation` is a title, so the match is whole."""

_DEBRIS_TEXT_LIMIT: Final = 80
"""Longest text a debris element can have; a longer element is heading text."""
_DEBRIS_NODE_LIMIT: Final = 32
"""Most elements read inside one candidate, so deep nesting cannot make this quadratic."""


def _short_visible_text(element: Element) -> str | None:
    """The element's collapsed rendered text, or None if it is too long to be debris."""
    parts: list[str] = []
    size = 0
    visited = 0
    # (node, whether to take its text) pairs, then tails, in document order.
    stack: list[tuple[Element, bool]] = [(element, True)]
    while stack:
        node, opening = stack.pop()
        if not opening:
            piece = node.tail
        else:
            visited += 1
            if visited > _DEBRIS_NODE_LIMIT:
                return None
            if node is not element:
                stack.append((node, False))
                if (
                    type(node.tag) is not str
                    or node.tag in DROP_TAGS
                    or (node.attrib and has_boilerplate_attrs(node.attrib))
                ):
                    continue
            piece = node.text
            if node.tag == "img":
                piece = f" {attr(node, 'alt')} {piece or ''}"
            stack.extend((child, True) for child in reversed(list(node)))
        if piece:
            parts.append(piece)
            size += len(piece)
            if size > _DEBRIS_TEXT_LIMIT * 4:
                return None
    text = collapse("".join(parts))
    return text if len(text) <= _DEBRIS_TEXT_LIMIT else None


def is_heading_debris(element: Element) -> bool:
    """A permalink, edit-section or hidden "link" label inside a heading, not its title.

    The rules are about kinds of markup, not sites: an element with a debris class;
    a link to a fragment (or to nothing) whose text is empty, one permalink glyph or
    a "link to here" phrase; screen-reader-only text that is such a phrase.  A link
    elsewhere, or one whose text is a real title, stays.
    """
    classes = attr_tokens(element.get("class"))
    if any(token in _DEBRIS_CLASSES for token in classes):
        return True
    tag = element.tag
    hidden = any(token.lower() in _VISUALLY_HIDDEN_CLASSES for token in classes)
    if tag == "a":
        href = element.get("href")
        if href is not None and "#" not in href:
            return False
    elif not hidden:
        return False
    text = _short_visible_text(element)
    if text is None:
        return False
    if hidden:
        return _LINK_PHRASE.fullmatch(text) is not None
    glyphs = "".join(text.translate(_GLYPH_NOISE).split())
    return not glyphs or glyphs in _PERMALINK_GLYPHS or _LINK_PHRASE.fullmatch(text) is not None
