"""The HTML tree the renderer walks: parsing with lxml (and past libxml2's depth
limit), the element protocol, and the text normalization every reader of it shares."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

from lxml import etree  # type: ignore[import-untyped]

from chunking.parse.page_markers import PAGE_BREAK_BODY, PAGE_MARKER_BODY

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

__all__ = [
    "Element",
    "PageMarker",
    "attr",
    "attr_tokens",
    "collapse",
    "normalize",
    "page_marker",
    "parse_tree",
    "sanitize",
]


class Element(Protocol):
    """What the walk reads of an element: `lxml.etree.Element`, or `_Node` (see there)."""

    @property
    def tag(self) -> str:
        """The lower-case name (lxml gives comments and PIs a function; the walk skips them)."""

    @property
    def attrib(self) -> Mapping[str, str]: ...

    @property
    def text(self) -> str | None:
        """Text before the first child."""

    @property
    def tail(self) -> str | None:
        """Text after the element's end, up to the next sibling."""

    def get(self, key: str) -> str | None: ...

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[Element]: ...

    def __getitem__(self, index: int) -> Element: ...

    def iter(self, tag: str | None = None) -> Iterator[Element]:
        """This element and its descendants in document order (only `tag` ones if given)."""

    def iterdescendants(self, tag: str) -> Iterator[Element]: ...

    def iterancestors(self, tag: str | None = None) -> Iterator[Element]: ...

    def getprevious(self) -> Element | None:
        """The previous sibling element, if any."""


# --- text normalization --------------------------------------------------------

INVISIBLE: Final = "\u200b\u200c\u200d\u2060\ufeff\u00ad" + "".join(
    chr(c) for c in (*range(0x00, 0x09), 0x0E, 0x0F, *range(0x10, 0x20), 0x7F)
)
"""Zero-width characters, the soft hyphen and C0 controls other than whitespace."""
TRANSLATION: Final = str.maketrans({"\u00a0": " ", "\r": "\n", **dict.fromkeys(INVISIBLE)})
TRANSLATED: Final = re.compile(
    "[" + "".join(f"\\U{code:08x}" for code in sorted(TRANSLATION)) + "]"
)
"""A character `TRANSLATION` changes; most text nodes have none, and a regex search
costs less than `str.translate`'s lookup per character (60 ns for a non-ASCII text)."""
INVISIBLE_SPACE: Final = "".join(char for char in INVISIBLE if char.isspace())
"""The whitespace `TRANSLATION` deletes (C0 separators): the only way a whitespace-only
text node renders as nothing rather than as a space."""

_SURROGATE = re.compile("[\ud800-\udfff]")


def normalize(text: str) -> str:
    """`text` with `TRANSLATION` applied, which most text nodes need not be (`TRANSLATED`)."""
    return text.translate(TRANSLATION) if TRANSLATED.search(text) else text


def collapse(text: str) -> str:
    return " ".join(text.translate(TRANSLATION).split())


def attr_tokens(value: str | None) -> list[str]:
    return value.split() if value else []


def attr(element: Element, name: str) -> str:
    return element.get(name) or ""


# --- parsing --------------------------------------------------------------------

_TREE_DEPTH_LIMIT: Final = 2048
"""Nesting at which libxml2 (2.14) stops building its tree, even with `huge_tree`
(XML_PARSE_HUGE): the rest of the page is dropped without an error."""

_PARSER_OPTIONS: Final = {
    "remove_comments": True,
    "remove_pis": True,
    "no_network": True,
    "huge_tree": True,
    "collect_ids": False,
}
"""No network, and no entities to resolve: libxml2's HTML parser never reads a DTD
(an internal subset is text).  `huge_tree` lifts the 10 MB limit on a text node
and raises the nesting limit (see `_TREE_DEPTH_LIMIT`)."""


class _Node:
    """An element of the tree `_NodeBuilder` builds, read through `Element` like lxml's."""

    __slots__ = ("attrib", "children", "parent", "tag", "tail", "text")

    def __init__(self, tag: str, attrib: dict[str, str], parent: _Node | None) -> None:
        self.tag = tag
        self.attrib = attrib
        self.parent = parent
        self.children: list[_Node] = []
        self.text: str | None = None
        self.tail: str | None = None

    def get(self, key: str) -> str | None:
        return self.attrib.get(key)

    def __len__(self) -> int:
        return len(self.children)

    def __iter__(self) -> Iterator[_Node]:
        return iter(self.children)

    def __getitem__(self, index: int) -> _Node:
        return self.children[index]

    def iter(self, tag: str | None = None) -> Iterator[_Node]:
        stack = [self]
        while stack:
            node = stack.pop()
            if tag is None or node.tag == tag:
                yield node
            stack.extend(reversed(node.children))

    def iterdescendants(self, tag: str) -> Iterator[_Node]:
        return (node for node in self.iter(tag) if node is not self)

    def iterancestors(self, tag: str | None = None) -> Iterator[_Node]:
        node = self.parent
        while node is not None:
            if tag is None or node.tag == tag:
                yield node
            node = node.parent

    def getprevious(self) -> _Node | None:
        # Linear in the siblings; only MathJax scripts ask (see render.py).
        if self.parent is None:
            return None
        siblings = self.parent.children
        index = next(i for i, node in enumerate(siblings) if node is self)
        return siblings[index - 1] if index else None


class _NodeBuilder:
    """An lxml parser target that builds `_Node`s, for pages nested past `_TREE_DEPTH_LIMIT`.

    Slower than lxml's own tree (every event is a Python call), so only used there.
    """

    def __init__(self) -> None:
        self.document = _Node("", {}, None)
        self.current = self.document
        self.pending: list[str] = []

    def flush(self) -> None:
        """Give the text received since the last tag to its element, as `text` or `tail`."""
        if not self.pending:
            return
        text = "".join(self.pending)
        self.pending.clear()
        node = self.current
        if node.children:
            last = node.children[-1]
            last.tail = (last.tail or "") + text
        else:
            node.text = (node.text or "") + text

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        self.flush()
        node = _Node(tag, attrib, self.current)
        self.current.children.append(node)
        self.current = node

    def end(self, tag: str) -> None:
        self.flush()
        if self.current.parent is not None:
            self.current = self.current.parent

    def data(self, data: str) -> None:
        self.pending.append(data)

    def close(self) -> list[Element]:
        self.flush()
        # Text before the first element is whitespace (libxml2 opens an implied
        # <html> for anything else), which renders as nothing.
        return list(self.document.children)


def _rightmost_depth(element: Element) -> int:
    depth = 1
    while len(element):
        element = element[-1]
        depth += 1
    return depth


_PROLOG_SUBSET: Final = re.compile(
    r"""(?P<kept>
        (?:\s++|\ufeff|<\?(?:[^?]++|\?(?!>))*+\?>|<!--(?:[^-]++|-(?!->))*+-->
        |<!doctype[^\[>]*+>)*+
        <!doctype[^\[>]*+
    )
    \[
        (?:\s++|%[^;\s<>]*+;|<!--(?:[^-]++|-(?!->))*+-->|<\?(?:[^?]++|\?(?!>))*+\?>
        |<!(?!--)(?:[^<>"']++|"[^"]*+"|'[^']*+')*+>)*+
    \]\s*>""",
    re.IGNORECASE | re.VERBOSE,
)
"""A DOCTYPE's internal subset (`[ <!ENTITY ...> ]`) in the prolog, before any content.

libxml2's HTML parser (like an HTML5 one) ends the DOCTYPE at its first `>`, so the
rest of the subset (`]>`, or more when a declaration holds a `>`) would become the
first paragraph's text.  Its declarations are skipped, never read: entities stay
unresolved (`&name;` is text).  Every repetition is possessive, so a subset without
its end fails in linear time.  Only the prolog is looked at: a DOCTYPE after
content is an HTML parse error anyway (its subset still leaks), and searching every
page for one would cost about 2% of the parse (0.6 ms a MB for two `str.find`s)."""


def strip_doctype_subset(html: str) -> str:
    """`html` without the internal subset of a DOCTYPE in its prolog (see `_PROLOG_SUBSET`)."""
    # Most pages have no `[` before their first 4 KB, or no `<!` before it.
    head = html.find("[", 0, 4096)
    if head < 0 or html.find("<!", 0, head) < 0:
        return html
    match = _PROLOG_SUBSET.match(html)
    if match is None:
        return html
    return match.group("kept").rstrip() + ">" + html[match.end() :]


# --- page markers ---------------------------------------------------------------

PageMarker = Literal["break", "furniture"]
"""A page marker comment: a page break, or a page header, footer or number."""

_MARKER_COMMENT: Final = re.compile(rf"<!--{PAGE_MARKER_BODY}-->")
_MARKER_TEXT: Final = re.compile(PAGE_MARKER_BODY)
_BREAK_TEXT: Final = re.compile(PAGE_BREAK_BODY)


def page_marker(node: Element) -> PageMarker | None:
    """What a node of the tree is as a page marker: None for an element or any other comment."""
    if node.tag is not etree.Comment:
        return None
    text = node.text or ""
    if _BREAK_TEXT.fullmatch(text):
        return "break"
    return "furniture" if _MARKER_TEXT.fullmatch(text) else None


def _keep_page_markers_only(document: list[Any]) -> list[Element]:
    """The tree as `remove_comments` would leave it, but for the page marker comments.

    A removed comment's tail joins the text before it, as it does when libxml2 drops
    the comment, so the page renders the same with or without its markers. `document`
    is lxml's own tree (`_Node`s carry no comments)."""
    for top in document:
        for comment in list(top.iter(etree.Comment)):
            parent = comment.getparent()
            if parent is None or page_marker(comment) is not None:
                continue
            if comment.tail:
                previous = comment.getprevious()
                if previous is not None:
                    previous.tail = (previous.tail or "") + comment.tail
                else:
                    parent.text = (parent.text or "") + comment.tail
            parent.remove(comment)  # lxml removes the tail with it
    return [top for top in document if type(top.tag) is str or page_marker(top) is not None]


def parse_tree(html: str) -> list[Element]:
    """The document's top-level elements: `<html>`, and any opened after `</html>`.

    Comments are dropped, except Layout's page markers in a page that has them; the
    walk reads those, and skips them as it skips every comment."""
    html = strip_doctype_subset(html)
    # Most pages have no page markers: libxml2 drops their comments while parsing.
    markers = "-->" in html and _MARKER_COMMENT.search(html) is not None
    options = {**_PARSER_OPTIONS, "remove_comments": False} if markers else _PARSER_OPTIONS
    parser = etree.HTMLParser(**options)
    # feed() rather than fromstring(): it takes a str with an XML encoding declaration.
    parser.feed(html)
    root = parser.close()
    if root is None:
        # libxml2 opens an implied <html> for any text or tag: the page has neither.
        return []
    document = [root, *root.itersiblings()]
    # A parse stopped at the limit leaves the elements then open as the tree's
    # rightmost path; a shallower one means nothing was cut.
    last = next(top for top in reversed(document) if type(top.tag) is str)
    if _rightmost_depth(last) < _TREE_DEPTH_LIMIT:
        return _keep_page_markers_only(document) if markers else document
    # libxml2's event interface has no depth limit (BeautifulSoup builds on it too); the
    # builder takes no comments, so a page nested this deep gets no pages.
    parser = etree.HTMLParser(target=_NodeBuilder(), **_PARSER_OPTIONS)
    parser.feed(html)
    nodes: list[Element] = parser.close()
    return nodes


def sanitize(html: str, warnings: list[str]) -> str:
    """Make the input something lxml accepts, saying what was repaired."""
    if "\x00" in html:
        warnings.append(f"removed {html.count(chr(0))} NUL characters")
        html = html.replace("\x00", "")
    try:
        html.encode("utf-8")
    except UnicodeEncodeError:
        html, count = _SURROGATE.subn("\ufffd", html)
        warnings.append(f"replaced {count} lone surrogates with U+FFFD")
    return html
