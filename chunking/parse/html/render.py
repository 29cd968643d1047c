"""Render HTML into a markdown-like text and its outline in one walk over the DOM.

The outline's `source` is the rendering built here, not the HTML: headings become
`#` lines, lists `- ` items, `<pre>` a fenced block, tables GFM pipe tables.  Spans
are recorded while the text is appended, so no offset is ever searched for later.
Layout's page marker comments (`<!-- PageBreak -->`, ...) render as nothing; a break
starts the next page of the outline's page map where the walk meets it.
lxml trees stay inside this module.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Final

from chunking.model import (
    Anchor,
    Block,
    BlockKind,
    Heading,
    Outline,
    Pages,
    Region,
    RegionKind,
)
from chunking.parse.html.heading_debris import is_heading_debris
from chunking.parse.html.main_content import (
    BOILERPLATE_TAGS,
    DROP_TAGS,
    LANDMARK_TAGS,
    SECTIONING_TAGS,
    article_body,
    content_root,
    furniture,
    has_boilerplate_attrs,
    image_description,
    page_title,
    sectioning_depth,
)
from chunking.parse.html.tree import (
    INVISIBLE_SPACE,
    TRANSLATED,
    TRANSLATION,
    Element,
    attr,
    attr_tokens,
    normalize,
    page_marker,
    parse_tree,
    sanitize,
)

__all__ = ["parse_html"]


_LANGUAGE_CLASS = re.compile(r"(?:language|lang|highlight)-([\w+#.-]+)", re.IGNORECASE)
_MAX_COLSPAN: Final = 1000
"""The HTML spec's own clamp; keeps a hostile colspan from exploding the output."""
_MAX_PREFIX: Final = 64
"""Longest line prefix (indent, quote marks); deeper nesting is not indented further."""
_MAX_ORDINAL: Final = 999_999_999
_FENCE: Final = "```"
_REGION_KINDS: Final = {BlockKind.CODE: RegionKind.CODE, BlockKind.TABLE: RegionKind.TABLE}
_HEADING_DEPTH: Final = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}


# --- text that would read as markup ---------------------------------------------

_MARKER_START: Final = frozenset("#>|`~-+*_=0123456789")
"""First characters of a line's first word that may make it read as markdown structure."""
_ORDINAL: Final = re.compile(r"[0-9]{1,9}[.)]")


def _escape_marker(word: str, *, first_line: bool) -> str:
    """The first word of a line, escaped (CommonMark's `\\`) if it reads as structure.

    Structure in the rendering comes from elements; text that happens to begin like a
    heading (`# of users`), quote, list marker (`-`, `+`, `*`, `1.`, `1)`), rule or
    setext underline (`---`, `===`, `***`), fence (```` ``` ````, `~~~`) or table row
    (`|`) must not read as one.  `plain_text.plain_markdown` drops the backslash.
    A word the next element's text goes on (`-<em>n</em>`) is escaped all the same:
    the walk does not know yet, and an escape too many costs only a backslash.
    """
    first = word[0]
    if first in "#>|":
        return "\\" + word
    if first in "`~":
        return "\\" + word if word.startswith(first * 3) else word
    if first.isdigit():
        return f"{word[:-1]}\\{word[-1]}" if _ORDINAL.fullmatch(word) else word
    if word.strip(first):
        return word
    # A run of one of - + * _ =: a list marker, a rule (three or more), or a setext
    # underline (- or =, only below a line of the same paragraph).
    if len(word) == 1:
        marker = first in "-+*" or (first == "=" and not first_line)
    else:
        marker = (len(word) >= 3 and first in "-*_") or (first in "-=" and not first_line)
    return "\\" + word if marker else word


# --- math -------------------------------------------------------------------------

_TEX_ENCODINGS: Final = frozenset(
    {"application/x-tex", "application/x-latex", "text/x-tex", "text/latex", "tex", "latex"}
)
_MATH_SKIPPED: Final = frozenset({"annotation", "annotation-xml"})
_TEX_STYLE: Final = re.compile(r"\{\\(?:display|text|script)style\b\s*(.*)\}", re.DOTALL)
"""Wikipedia wraps every formula's TeX in `{\\displaystyle ...}`."""
_MATHJAX_OUTPUT: Final = frozenset(
    {"MathJax", "MathJax_Display", "MathJax_SVG", "MathJax_SVG_Display", "MathJax_CHTML",
     "MathJax_MathML", "MathJax_MathContainer"}
)  # fmt: skip
"""Classes of MathJax v2's typeset output, which comes just before its `math/tex` script."""


def _tex(text: str) -> str:
    text = " ".join(text.translate(TRANSLATION).split())
    match = _TEX_STYLE.fullmatch(text)
    return match.group(1).strip() if match else text


def _math_text(element: Element) -> str:
    """A `<math>` element as text: its `alttext`, else its TeX annotation, else its text."""
    alt = _tex(attr(element, "alttext"))
    if alt:
        return alt
    for annotation in element.iter("annotation"):
        if attr(annotation, "encoding").strip().lower() in _TEX_ENCODINGS:
            tex = _tex(annotation.text or "")
            if tex:
                return tex
    # The presentation markup's tokens (mi, mo, mn, mtext), annotations left out.
    words: list[str] = [element.text] if element.text else []
    stack: list[tuple[Iterator[Element], str | None]] = [(iter(element), None)]
    while stack:
        children, tail = stack[-1]
        for child in children:
            if type(child.tag) is str and child.tag not in _MATH_SKIPPED:
                if child.text:
                    words.append(child.text)
                if len(child):
                    stack.append((iter(child), child.tail))
                    break
            if child.tail:
                words.append(child.tail)
        else:
            stack.pop()
            if tail:
                words.append(tail)
    return " ".join(" ".join(words).translate(TRANSLATION).split())


def _math_script_text(script: Element) -> str | None:
    """A MathJax `<script type="math/tex">` (or `math/asciimath`, `math/mml`) as text,
    or None when it is not math or MathJax's output or preview already shows it."""
    kind = attr(script, "type").strip().lower()
    if not kind.startswith("math/"):
        return None
    previous = script.getprevious()
    if previous is not None and _is_mathjax_output(previous):
        if _has_text(previous):
            return None
        previous = previous.getprevious()
    if (
        previous is not None
        and "MathJax_Preview" in attr_tokens(previous.get("class"))
        and _has_text(previous)
    ):
        return None
    if kind.startswith("math/mml"):
        # MathML source as the script's text: its tags are not worth parsing here.
        return " ".join(re.sub(r"<[^>]*>", " ", script.text or "").split()) or None
    return _tex(script.text or "") or None


def _is_mathjax_output(element: Element) -> bool:
    if element.tag == "mjx-container":
        return True
    return any(token in _MATHJAX_OUTPUT for token in attr_tokens(element.get("class")))


def _has_text(element: Element) -> bool:
    """Whether `element` renders text or a formula (its `<math>`, an image's alt)."""
    for node in element.iter():
        tag = node.tag
        if tag == "math" or (tag == "img" and image_description(node)):
            return True
        if type(tag) is str and tag not in DROP_TAGS and (node.text or "").strip():
            return True
        if (node.tail or "").strip() and node is not element:
            return True
    return False


def _is_math_fallback_image(element: Element) -> bool:
    """Wikipedia's formula image: aria-hidden, for its MathML copy is in a hidden span;
    Readability keeps it too (`fallback-image` in its visibility test)."""
    classes = attr(element, "class")
    if "fallback-image" not in classes:
        return False
    attrs = {key: value for key, value in element.attrib.items() if key != "aria-hidden"}
    return not has_boilerplate_attrs(attrs)


def _bounded_int(text: str, low: int, high: int) -> int:
    """An attribute's decimal value clamped to `low..high` (`low` if not a number)."""
    if not (text.isascii() and text.isdigit()):
        return low
    # Compare lengths first: int() of a huge digit string is slow or refused.
    return high if len(text) > len(str(high)) else max(low, min(int(text), high))


# --- render state ------------------------------------------------------------


class _Mode(Enum):
    """How the walk treats elements; set by the element that owns it."""

    NORMAL = "normal"
    INLINE = "inline"
    """Inside a heading: everything is one line of text."""
    PRE = "pre"
    """Inside `<pre>`: text verbatim."""
    TABLE = "table"
    """Inside a data table: text goes to cells."""

    # Members are singletons compared by identity: hashing by identity (a C slot)
    # is consistent with that, where Enum's hash of the name is a Python call for
    # every element entered (`_HANDLERS[mode]`: 118,000 on the HTML corpus).
    __hash__ = object.__hash__


@dataclass(slots=True)
class _Item:
    """A container whose lines carry a prefix: list item, dl part, blockquote."""

    kind: BlockKind
    first: str
    """Prefix of the item's first line (`- `, `1. `, `> `)."""
    cont: str
    """Prefix of its later lines, on top of the enclosing items' prefixes."""
    prefix: str = ""
    """Cumulative continuation prefix including the enclosing items."""
    is_dl: bool = False
    after_dd: bool = False
    """For a `dl`: the last part seen was a `dd`, so a `dt` starts a new group."""


@dataclass(slots=True)
class _List:
    ordered: bool
    next_number: int = 1


@dataclass(slots=True)
class _HeadingState:
    depth: int
    anchor: str | None
    """The heading's own id, or that of the section/div it opens."""
    inner_anchor: str | None = None
    """The first `<a id|name>` inside it, the last resort."""
    text_index: int = -1
    """Index in the output parts where the heading text begins."""


@dataclass(slots=True)
class _Cell:
    parts: list[str] = field(default_factory=list)
    need_space: bool = False
    ids: list[str] = field(default_factory=list)
    span: int = 1

    def add(self, text: str) -> None:
        words = text.split()
        if not words:
            if text and self.parts:
                self.need_space = True
            return
        if self.parts and (self.need_space or text[0].isspace()):
            self.parts.append(" ")
        self.parts.append(" ".join(words))
        self.need_space = text[-1].isspace()

    def text(self) -> str:
        """The cell as pipe-table text: a `|` inside would end the cell."""
        return "".join(self.parts).replace("|", "\\|")


@dataclass(slots=True)
class _Row:
    in_head: bool
    cells: list[_Cell] = field(default_factory=list)


@dataclass(slots=True)
class _Table:
    rows: list[_Row] = field(default_factory=list)
    cell: _Cell | None = None
    caption: _Cell | None = None
    in_caption: bool = False
    in_head: bool = False
    pending_ids: list[str] = field(default_factory=list)
    """Ids waiting for the next cell text, like the renderer's own."""

    def add(self, text: str) -> None:
        """Add text to the open cell (or caption), opening a stray cell if none is."""
        if not text.strip():
            if self.cell is not None:
                self.cell.add(text)
            return
        if self.in_caption:
            if self.caption is None:
                self.caption = _Cell()
            target = self.caption
        else:
            if self.cell is None:
                if not self.rows:
                    self.rows.append(_Row(self.in_head))
                self.cell = _Cell()
                self.rows[-1].cells.append(self.cell)
            target = self.cell
        if self.pending_ids:
            target.ids.extend(self.pending_ids)
            self.pending_ids.clear()
        target.add(text)

    def space(self) -> None:
        target = self.caption if self.in_caption else self.cell
        if target is not None and target.parts:
            target.need_space = True


@dataclass(slots=True)
class _Pre:
    language: str
    parts: list[str] = field(default_factory=list)


_Exit = Callable[[], None]
_Handler = Callable[["_Renderer", Element], "_Exit | None"]


def _language(element: Element) -> str:
    for token in attr_tokens(element.get("class")):
        match = _LANGUAGE_CLASS.fullmatch(token)
        if match:
            return match.group(1)
    return ""


def _fence_for(text: str) -> str:
    """A backtick fence longer than any backtick run inside the code."""
    if _FENCE not in text:
        return _FENCE
    longest = max(len(run) for run in re.findall("`+", text))
    return "`" * (longest + 1)


def _trim_pre(text: str) -> str:
    # Leading blank lines (including the newline HTML ignores after <pre>) and
    # trailing whitespace carry nothing; indentation of the first line does.
    stripped = text.lstrip()
    if not stripped:
        return ""
    first = len(text) - len(stripped)
    return text[text.rfind("\n", 0, first) + 1 :].rstrip()


class _Renderer:
    """Appends the rendering part by part and records spans as it goes."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.pos = 0
        self.blocks: list[Block] = []
        self.headings: list[Heading] = []
        self.regions: list[Region] = []
        self.anchors: list[Anchor] = []
        self.pending_ids: list[str] = []
        """Ids whose element has produced no text yet; they anchor the next text."""
        self.block_kind: BlockKind | None = None
        self.block_start = 0
        self.line_open = False
        self.need_space = False
        self.breaks = 0
        """`<br>`s waiting for the next text."""
        self.tight = False
        """The next block is a sibling list item: one newline apart, not two."""
        self.items: list[_Item] = []
        self.first_pending = 0
        """Items from this index on have not written their first-line prefix yet."""
        self.lists: list[_List] = []
        self.sectioning = 0
        self.id_frames: list[tuple[str, int]] = []
        """(id, headings seen when entered) of open section/div elements with an id."""
        self.heading_count = 0
        self.mode = _Mode.NORMAL
        self.heading: _HeadingState | None = None
        self.pre: _Pre | None = None
        self.table: _Table | None = None
        self.dropped = 0
        self.furniture: set[Element] = set()
        """Subtrees `main_content.furniture` chose to leave out: hidden, navigation, furniture."""
        self.muted = 0
        """Open heading-debris elements: their text is not rendered (ids still count)."""
        self.paged = False
        """The page has Layout page markers: it gets a page map, one page without breaks."""
        self.page_starts: list[int] = []
        """Offset where each page after the first begins: where its break was met."""
        self.held_breaks = 0
        """Breaks met inside a table or `<pre>`, which are written when they close."""

    # --- output primitives -------------------------------------------------

    def write(self, text: str) -> None:
        self.out.append(text)
        self.pos += len(text)

    def resolve_ids(self) -> None:
        for anchor_id in self.pending_ids:
            self.anchors.append(Anchor(self.pos, anchor_id))
        self.pending_ids.clear()

    def line_prefix(self) -> str:
        if self.heading is not None:
            return "#" * self.heading.depth + " "
        items = self.items
        start = self.first_pending
        prefix = items[start - 1].prefix if start else ""
        if start < len(items):
            prefix += "".join(item.first for item in items[start:])
        self.first_pending = len(items)
        return prefix[:_MAX_PREFIX]

    def start_line(self) -> None:
        opening = self.block_kind is None
        out = self.out
        if opening:
            if self.pos:
                separator = "\n" if self.tight else "\n\n"
                out.append(separator)
                self.pos += len(separator)
            self.tight = False
            if self.heading is not None:
                self.block_kind = BlockKind.HEADING
            else:
                self.block_kind = self.items[0].kind if self.items else BlockKind.PARAGRAPH
        else:
            separator = "\n" * max(1, self.breaks)
            out.append(separator)
            self.pos += len(separator)
        self.breaks = 0
        if self.heading is None and not self.items:
            # A paragraph's line, the most common: no prefix at all.
            if opening:
                self.block_start = self.pos
            if self.pending_ids:
                self.resolve_ids()
            self.line_open = True
            self.need_space = False
            return
        prefix = self.line_prefix()
        # Indentation is layout: blocks and anchors begin after it.
        marks = prefix.lstrip(" ")
        if len(marks) < len(prefix):
            self.write(prefix[: len(prefix) - len(marks)])
        if opening:
            self.block_start = self.pos
        self.resolve_ids()
        if marks:
            self.write(marks)
        if self.heading is not None:
            self.heading.text_index = len(out)
        self.line_open = True
        self.need_space = False

    def text(self, raw: str, nodes: list[str] | None = None) -> None:
        """Append inline text, whitespace collapsed across text nodes.

        `raw` may be the concatenation of consecutive text `nodes` (`add_texts`):
        whitespace is collapsed across nodes either way, so it renders as they would
        one by one, but for the escape of the word that opens a line, which may be a
        node's alone (`-<em>n</em>` escapes the `-`): then they go one at a time.
        """
        if self.muted:
            return
        if raw.isspace():
            # Half the text nodes are indentation between tags: at most a space,
            # decided without translating or splitting them.
            if self.line_open and raw.strip(INVISIBLE_SPACE):
                self.need_space = True
            return
        text = raw.translate(TRANSLATION) if TRANSLATED.search(raw) else raw
        words = text.split()
        if not words:
            if text and self.line_open:
                self.need_space = True
            return
        out = self.out
        if not self.line_open:
            if words[0][0] in _MARKER_START and self.heading is None:
                if nodes is not None and len(nodes) > 1:
                    for node in nodes:
                        self.text(node)
                    return
                words[0] = _escape_marker(words[0], first_line=self.block_kind is None)
            self.start_line()
        elif self.need_space or text[0].isspace():
            out.append(" ")
            self.pos += 1
        if self.pending_ids:
            self.resolve_ids()
        # `write`, inline: this is the renderer's busiest path.
        joined = words[0] if len(words) == 1 else " ".join(words)
        out.append(joined)
        self.pos += len(joined)
        self.need_space = text[-1].isspace()

    def end_line(self) -> None:
        """A block boundary: ends the paragraph, or only the line inside an item."""
        if not self.items:
            self.close_block()  # which ends the line too
            return
        self.line_open = False
        self.need_space = False
        self.breaks = 0

    def close_block(self) -> None:
        if self.block_kind is not None:
            self.blocks.append(Block(self.block_kind, self.block_start, self.pos))
            self.block_kind = None
        self.line_open = False
        self.need_space = False
        self.breaks = 0

    def emit_block(self, kind: BlockKind, body: str, lead: str = "") -> int:
        """Write a standalone block (rule, caption, code, table); return its start."""
        self.close_block()
        if self.pos:
            self.write("\n\n")
        self.tight = False
        start = self.pos
        self.resolve_ids()
        self.write(body)
        self.blocks.append(Block(kind, start, self.pos))
        self.place_held_breaks()
        region_kind = _REGION_KINDS.get(kind)
        if region_kind is not None:
            # A header-only table ends on its delimiter row, before the lead's newline.
            lead_end = min(start + len(lead), self.pos)
            self.regions.append(Region(region_kind, start, self.pos, lead_end, lead))
        return start

    # --- page markers -----------------------------------------------------

    def page_marker(self, node: Element) -> None:
        """A comment the walk meets: a page break starts the next page here."""
        kind = page_marker(node)
        if kind is None:
            return
        self.paged = True
        if kind == "furniture":
            return  # a header, footer or page number: its text is no content
        if self.mode is _Mode.TABLE or self.mode is _Mode.PRE:
            # Their text is written at their end: the page begins after them.
            self.held_breaks += 1
        else:
            self.page_starts.append(self.pos)

    def place_held_breaks(self) -> None:
        if self.held_breaks:
            self.page_starts += [self.pos] * self.held_breaks
            self.held_breaks = 0

    # --- element bookkeeping ----------------------------------------------

    def is_dropped(self, element: Element) -> bool:
        """Whether the walk skips the element's content (its tail is still rendered).

        `<math>` and MathJax's `math/tex` scripts are skipped too, once rendered here
        as text of their own: their markup is not walked.
        """
        name = element.tag
        if name in _SKIPPED_TAGS:
            if name == "script":
                if element.attrib:
                    formula = _math_script_text(element)
                    if formula is not None:
                        block = "mode=display" in attr(element, "type").replace(" ", "")
                        self.math(formula, block=block)
            elif name == "math":
                if element.attrib and has_boilerplate_attrs(element.attrib):
                    self.dropped += 1
                    return True
                if element.attrib:
                    self.register_ids(element)
                block = attr(element, "display").strip().lower() == "block"
                self.math(_math_text(element), block=block)
            return True
        # `furniture` holds the elements marked boilerplate by their attributes too.
        boilerplate = (
            element in self.furniture
            or name in BOILERPLATE_TAGS
            or (name in LANDMARK_TAGS and self.sectioning == 0)
        )
        if boilerplate and name == "img" and element.attrib and _is_math_fallback_image(element):
            self.math(_tex(attr(element, "alt")), block=False)
            return True
        if boilerplate:
            self.dropped += 1
        return boilerplate

    def math(self, formula: str, *, block: bool) -> None:
        """A formula's text, in the flow; a display formula as a line of its own."""
        if not formula or self.muted:
            return
        mode = self.mode
        if mode is _Mode.PRE:
            if self.pre is not None:
                self.pre.parts.append(formula)
        elif mode is _Mode.TABLE:
            if self.table is not None:
                self.table.add(formula)
        elif block and mode is _Mode.NORMAL:
            _boundary(self)
            self.text(formula)
            self.end_line()
        else:
            self.text(formula)

    def register_ids(self, element: Element) -> None:
        element_id = element.get("id")
        table = self.table if self.mode is _Mode.TABLE else None
        target = self.pending_ids if table is None else table.pending_ids
        if element_id and element_id.strip():
            target.append(element_id.strip())
        if element.tag == "a":
            name = element.get("name")
            if name and name.strip() and name.strip() != element_id:
                target.append(name.strip())
            if self.heading is not None and self.heading.inner_anchor is None:
                inner = element_id or name
                if inner and inner.strip():
                    self.heading.inner_anchor = inner.strip()

    def add_text(self, raw: str) -> None:
        """Route a text node by mode: inline, verbatim, or into a table cell."""
        mode = self.mode
        if mode is _Mode.NORMAL or mode is _Mode.INLINE:
            self.text(raw)
        elif mode is _Mode.PRE:
            if self.pre is not None:
                self.pre.parts.append(normalize(raw))
        elif self.table is not None:
            self.table.add(normalize(raw))

    def add_texts(self, texts: list[str]) -> None:
        """`add_text` each of `texts`, consecutive text nodes with no state change
        between them, and clear it."""
        mode = self.mode
        if mode is _Mode.NORMAL or mode is _Mode.INLINE:
            self.text(texts[0] if len(texts) == 1 else "".join(texts), texts)
        else:
            for text in texts:
                self.add_text(text)
        texts.clear()

    def enter(self, element: Element) -> _Exit | None:
        """Open an element; return what to run once its children are done."""
        if element.attrib:
            self.register_ids(element)
        if self.heading is not None:
            if self.muted:
                return None
            if is_heading_debris(element):
                return self.mute()
        handler = _HANDLERS[self.mode].get(element.tag)
        if handler is None:
            return None
        return handler(self, element)

    def mute(self) -> _Exit:
        """Render nothing of the element being entered, up to its end (not its tail)."""
        self.muted += 1

        def leave() -> None:
            self.muted -= 1

        return leave

    def finish(self, title: str | None, warnings: list[str]) -> Outline:
        self.close_block()
        self.resolve_ids()
        self.place_held_breaks()
        if not self.pos and self.dropped:
            warnings.append(
                f"no text outside boilerplate: {self.dropped} navigation, banner, "
                "sidebar or hidden elements were dropped"
            )
        return Outline(
            source="".join(self.out),
            format="html",
            title=title,
            headings=tuple(self.headings),
            blocks=tuple(self.blocks),
            regions=tuple(self.regions),
            anchors=tuple(self.anchors),
            warnings=tuple(warnings),
            # Nothing is hidden: the comments are not in the rendering at all.
            pages=Pages((0, *self.page_starts), ()) if self.paged else None,
        )


# --- handlers: NORMAL mode -----------------------------------------------------


def _boundary(r: _Renderer) -> None:
    if r.items:
        r.end_line()
    else:
        r.close_block()  # `end_line` outside items
        # Something other than a list item sits between two list items.
        r.tight = False


def _block(r: _Renderer, element: Element) -> _Exit | None:
    _boundary(r)
    return r.end_line


def _sectioning(r: _Renderer, element: Element) -> _Exit | None:
    _boundary(r)
    r.sectioning += 1
    pushed = _push_id_frame(r, element)

    def leave() -> None:
        r.end_line()
        r.sectioning -= 1
        if pushed:
            r.id_frames.pop()

    return leave


def _div(r: _Renderer, element: Element) -> _Exit | None:
    _boundary(r)
    if not _push_id_frame(r, element):
        return r.end_line

    def leave() -> None:
        r.end_line()
        r.id_frames.pop()

    return leave


def _push_id_frame(r: _Renderer, element: Element) -> bool:
    element_id = element.get("id")
    if element_id and element_id.strip():
        r.id_frames.append((element_id.strip(), r.heading_count))
        return True
    return False


_EDIT_SUFFIX = re.compile(
    r"\s*\[\s*edit(?:\s+source)?(?:\s*\|\s*edit(?:\s+source)?)*\s*\]\s*$", re.IGNORECASE
)


def _heading(r: _Renderer, element: Element) -> _Exit | None:
    r.close_block()
    own = element.get("id")
    anchor = own.strip() if own and own.strip() else None
    if anchor is None and r.id_frames and r.id_frames[-1][1] == r.heading_count:
        # The heading opens the innermost section/div with an id.
        anchor = r.id_frames[-1][0]
    state = _HeadingState(_HEADING_DEPTH[element.tag], anchor)
    r.heading = state
    r.mode = _Mode.INLINE

    def leave() -> None:
        if r.block_kind is BlockKind.HEADING:
            # MediaWiki's edit link, when its markup was stripped on the way (a copy of a
            # page, Readability's output), is left as a bracketed word after the title.
            # A heading that was only the edit link (its title lost too) has no text.
            text = _EDIT_SUFFIX.sub("", "".join(r.out[state.text_index :]))
            r.headings.append(
                Heading(r.block_start, r.pos, state.depth, text, state.anchor or state.inner_anchor)
            )
            r.heading_count += 1
        r.heading = None
        r.close_block()
        r.mode = _Mode.NORMAL

    return leave


def _list(r: _Renderer, element: Element) -> _Exit | None:
    _boundary(r)
    state = _List(ordered=element.tag == "ol")
    start = attr(element, "start").strip()
    if state.ordered and start:
        state.next_number = _bounded_int(start, 0, _MAX_ORDINAL)
    r.lists.append(state)

    def leave() -> None:
        r.end_line()
        r.lists.pop()
        r.tight = False

    return leave


def _push_item(r: _Renderer, item: _Item) -> None:
    parent = r.items[-1].prefix if r.items else ""
    item.prefix = (parent + item.cont)[:_MAX_PREFIX]
    r.items.append(item)


def _pop_item(r: _Renderer) -> None:
    r.items.pop()
    r.first_pending = min(r.first_pending, len(r.items))


def _list_item(r: _Renderer, element: Element) -> _Exit | None:
    r.end_line()
    top = not r.items
    marker = "- "
    if r.lists and r.lists[-1].ordered:
        state = r.lists[-1]
        value = attr(element, "value").strip()
        if value:
            state.next_number = _bounded_int(value, 0, _MAX_ORDINAL)
        marker = f"{state.next_number}. "
        state.next_number += 1
    _push_item(r, _Item(BlockKind.LIST_ITEM, marker, "  "))

    def leave() -> None:
        r.end_line()
        _pop_item(r)
        if top:
            r.close_block()
            r.tight = True

    return leave


def _leave_item(r: _Renderer) -> _Exit:
    def leave() -> None:
        r.end_line()
        _pop_item(r)

    return leave


def _definition_list(r: _Renderer, element: Element) -> _Exit | None:
    _boundary(r)
    top = not r.items
    _push_item(r, _Item(BlockKind.LIST_ITEM, "", "", is_dl=True))

    def leave() -> None:
        r.end_line()
        _pop_item(r)
        if top:
            r.close_block()

    return leave


def _term(r: _Renderer, element: Element) -> _Exit | None:
    r.end_line()
    parent = r.items[-1] if r.items else None
    if parent is not None and parent.is_dl:
        # A dt after a dd opens the next dt+dd group: a new block at top level.
        if parent.after_dd and len(r.items) == 1:
            r.close_block()
        parent.after_dd = False
    _push_item(r, _Item(BlockKind.LIST_ITEM, "", ""))
    return _leave_item(r)


def _definition(r: _Renderer, element: Element) -> _Exit | None:
    r.end_line()
    if r.items and r.items[-1].is_dl:
        r.items[-1].after_dd = True
    _push_item(r, _Item(BlockKind.LIST_ITEM, "  ", "  "))
    return _leave_item(r)


def _blockquote(r: _Renderer, element: Element) -> _Exit | None:
    _boundary(r)
    top = not r.items
    _push_item(r, _Item(BlockKind.QUOTE, "> ", "> "))

    def leave() -> None:
        r.end_line()
        _pop_item(r)
        if top:
            r.close_block()

    return leave


def _rule(r: _Renderer, element: Element) -> _Exit | None:
    r.emit_block(BlockKind.RULE, "---")
    return None


def _line_break(r: _Renderer, element: Element) -> _Exit | None:
    if r.line_open:
        r.line_open = False
        r.need_space = False
        r.breaks = 1
    elif r.block_kind is not None:
        r.breaks += 1
    return None


def _image(r: _Renderer, element: Element) -> _Exit | None:
    alt = image_description(element)
    if alt:
        # Alt text stands in for the picture as a word of its own.
        r.text(f" {alt} ")
    return None


def _preformatted(r: _Renderer, element: Element) -> _Exit | None:
    r.close_block()
    state = _Pre(_language(element))
    r.pre = state
    r.mode = _Mode.PRE

    def leave() -> None:
        r.pre = None
        r.mode = _Mode.NORMAL
        code = _trim_pre("".join(state.parts))
        if code:
            fence = _fence_for(code)
            lead = f"{fence}{state.language}\n"
            r.emit_block(BlockKind.CODE, f"{lead}{code}\n{fence}", lead)

    return leave


def _table(r: _Renderer, element: Element) -> _Exit | None:
    role = attr(element, "role").lower()
    if role in ("presentation", "none") or next(element.iterdescendants("table"), None) is not None:
        # Layout tables (or tables of tables) are rendered as plain blocks.
        return _block(r, element)
    r.close_block()
    state = _Table()
    r.table = state
    r.mode = _Mode.TABLE

    def leave() -> None:
        r.table = None
        r.mode = _Mode.NORMAL
        _render_table(r, state)

    return leave


def _render_table(r: _Renderer, table: _Table) -> None:
    _emit_table(r, table)
    # Ids that never met cell text anchor whatever follows the table.
    r.pending_ids.extend(table.pending_ids)


def _emit_table(r: _Renderer, table: _Table) -> None:
    if table.caption is not None and table.caption.parts:
        r.pending_ids.extend(table.caption.ids)
        caption = "".join(table.caption.parts)
        if caption[0] in _MARKER_START:
            first, _, rest = caption.partition(" ")
            first = _escape_marker(first, first_line=True)
            caption = f"{first} {rest}" if rest else first
        r.emit_block(BlockKind.PARAGRAPH, caption)
    rows = [row for row in table.rows if row.cells]
    if not any(cell.parts for row in rows for cell in row.cells):
        for row in rows:
            for cell in row.cells:
                r.pending_ids.extend(cell.ids)
        return
    header = next((i for i, row in enumerate(rows) if row.in_head), 0)
    ordered = [rows[header], *rows[:header], *rows[header + 1 :]]
    grid: list[list[_Cell | None]] = []
    for row in ordered:
        line: list[_Cell | None] = []
        for cell in row.cells:
            line.append(cell)
            line.extend([None] * (min(cell.span, _MAX_COLSPAN) - 1))
        grid.append(line)
    columns = max(len(line) for line in grid)
    lines: list[str] = []
    cell_ids: list[tuple[int, str]] = []
    offset = 0
    for number, line in enumerate(grid):
        texts = []
        cursor = offset + len("| ")
        for slot in line:
            text = slot.text() if slot is not None else ""
            if slot is not None:
                cell_ids.extend((cursor, anchor_id) for anchor_id in slot.ids)
            texts.append(text)
            cursor += len(text) + len(" | ")
        texts.extend([""] * (columns - len(line)))
        rendered = "| " + " | ".join(texts) + " |"
        lines.append(rendered)
        offset += len(rendered) + 1
        if number == 0:
            delimiter = "|" + " --- |" * columns
            lines.append(delimiter)
            offset += len(delimiter) + 1
    lead = f"{lines[0]}\n{lines[1]}\n"
    start = r.emit_block(BlockKind.TABLE, "\n".join(lines), lead)
    # Ids inside cells point at their cell; the table's anchors stay sorted
    # because cells are numbered in output order.
    r.anchors.extend(Anchor(start + cursor, anchor_id) for cursor, anchor_id in cell_ids)


# --- handlers: INLINE mode (heading text) -------------------------------------


def _inline_space(r: _Renderer, element: Element) -> _Exit | None:
    if r.line_open:
        r.need_space = True
    return _inline_space_after(r)


def _inline_space_after(r: _Renderer) -> _Exit:
    def leave() -> None:
        if r.line_open:
            r.need_space = True

    return leave


def _inline_break(r: _Renderer, element: Element) -> _Exit | None:
    if r.line_open:
        r.need_space = True
    return None


# --- handlers: PRE mode ---------------------------------------------------------


def _pre_break(r: _Renderer, element: Element) -> _Exit | None:
    if r.pre is not None:
        r.pre.parts.append("\n")
    return None


def _pre_image(r: _Renderer, element: Element) -> _Exit | None:
    alt = attr(element, "alt")
    if r.pre is not None and alt.strip():
        r.pre.parts.append(alt.translate(TRANSLATION))
    return None


def _pre_code(r: _Renderer, element: Element) -> _Exit | None:
    if r.pre is not None and not r.pre.language:
        r.pre.language = _language(element)
    return None


# --- handlers: TABLE mode -------------------------------------------------------


def _row(r: _Renderer, element: Element) -> _Exit | None:
    table = r.table
    if table is None:
        return None
    table.rows.append(_Row(table.in_head))
    table.cell = None

    def leave() -> None:
        table.cell = None

    return leave


def _cell(r: _Renderer, element: Element) -> _Exit | None:
    table = r.table
    if table is None:
        return None
    if not table.rows:
        table.rows.append(_Row(table.in_head))
    span = attr(element, "colspan").strip()
    cell = _Cell(span=_bounded_int(span, 1, _MAX_COLSPAN) if span else 1)
    table.rows[-1].cells.append(cell)
    table.cell = cell

    def leave() -> None:
        table.cell = None

    return leave


def _row_group(r: _Renderer, element: Element) -> _Exit | None:
    table = r.table
    if table is None:
        return None
    table.in_head = element.tag == "thead"

    def leave() -> None:
        table.in_head = False

    return leave


def _caption(r: _Renderer, element: Element) -> _Exit | None:
    table = r.table
    if table is None:
        return None
    table.space()
    table.in_caption = True

    def leave() -> None:
        table.in_caption = False

    return leave


def _cell_space(r: _Renderer, element: Element) -> _Exit | None:
    if r.table is not None:
        r.table.space()
    return _cell_space_after(r)


def _cell_space_after(r: _Renderer) -> _Exit:
    def leave() -> None:
        if r.table is not None:
            r.table.space()

    return leave


def _cell_break(r: _Renderer, element: Element) -> _Exit | None:
    if r.table is not None:
        r.table.space()
    return None


def _cell_image(r: _Renderer, element: Element) -> _Exit | None:
    alt = image_description(element)
    if r.table is not None and alt:
        r.table.add(f" {alt.translate(TRANSLATION)} ")
    return None


# --- dispatch tables ------------------------------------------------------------

_BLOCK_TAGS: Final = frozenset(
    {
        "address", "body", "head", "center", "details", "dialog", "fieldset", "figcaption",
        "figure", "footer", "form", "frameset", "header", "hgroup", "html", "legend",
        "noframes", "p", "summary", "caption", "thead", "tbody", "tfoot", "tr", "td",
        "th", "search",
    }
)  # fmt: skip
"""Plain block containers: they end the paragraph before and after them."""

_SKIPPED_TAGS: Final = DROP_TAGS | {"math"}
"""What `_Renderer.is_dropped` skips by name (math after rendering it as text)."""
_MAYBE_DROPPED: Final = _SKIPPED_TAGS | BOILERPLATE_TAGS | LANDMARK_TAGS
"""Tags `_Renderer.is_dropped` may drop by name; other elements only if they are furniture."""

_PRE_TAGS: Final = ("pre", "listing", "xmp", "plaintext")
_LIST_TAGS: Final = ("ul", "ol", "menu", "dir")

_NORMAL: Final[dict[str, _Handler]] = {
    **dict.fromkeys(_BLOCK_TAGS, _block),
    "div": _div,
    **dict.fromkeys(SECTIONING_TAGS, _sectioning),
    **dict.fromkeys(_HEADING_DEPTH, _heading),
    **dict.fromkeys(_LIST_TAGS, _list),
    "li": _list_item,
    "dl": _definition_list,
    "dt": _term,
    "dd": _definition,
    "blockquote": _blockquote,
    "hr": _rule,
    "br": _line_break,
    "img": _image,
    **dict.fromkeys(_PRE_TAGS, _preformatted),
    "table": _table,
}
"""Elements not listed are inline: they contribute their text and nothing else."""

_BLOCK_LIKE: Final = frozenset(_NORMAL) - {"br", "img", "hr"}

_INLINE: Final[dict[str, _Handler]] = {
    **dict.fromkeys(_BLOCK_LIKE, _inline_space),
    "br": _inline_break,
    "hr": _inline_break,
    "img": _image,
}
"""Inside a heading, block structure collapses to spaces."""

_PRE: Final[dict[str, _Handler]] = {"br": _pre_break, "img": _pre_image, "code": _pre_code}

_TABLE: Final[dict[str, _Handler]] = {
    **dict.fromkeys(_BLOCK_LIKE, _cell_space),
    "tr": _row,
    "td": _cell,
    "th": _cell,
    "thead": _row_group,
    "tbody": _row_group,
    "tfoot": _row_group,
    "caption": _caption,
    "br": _cell_break,
    "hr": _cell_break,
    "img": _cell_image,
}
"""Inside a data table, text goes to cells and block structure collapses to spaces."""

_HANDLERS: Final[dict[_Mode, dict[str, _Handler]]] = {
    _Mode.NORMAL: _NORMAL,
    _Mode.INLINE: _INLINE,
    _Mode.PRE: _PRE,
    _Mode.TABLE: _TABLE,
}


# --- the walk -----------------------------------------------------------------


def _not_rendered() -> None:
    """What `_walk` marks a comment or dropped element with: neither entered nor left."""


def _walk(r: _Renderer, children: Iterator[Element], leave: _Exit | None = None) -> None:
    """Render `children` depth-first with an explicit stack (pages nest deeper than recursion).

    An element's leading text is its `text`; the text after it, its `tail`, is rendered
    once the element is left, and is not the element's: a dropped element (or a
    comment) still has its tail rendered.  Text nodes are collected and rendered
    together before the next element that does something (`_enter`)."""
    stack: list[tuple[Iterator[Element], _Exit | None, str | None]] = [(children, leave, None)]
    texts: list[str] = []
    # Locals: the loop runs once per element and text node of the page.
    collect, flush = texts.append, r.add_texts
    furniture, maybe_dropped, handlers = r.furniture, _MAYBE_DROPPED, _HANDLERS
    normal = _Mode.NORMAL
    while stack:
        children, leave, tail = stack[-1]
        for child in children:
            name = child.tag
            if (
                type(name) is not str
                or name in maybe_dropped
                or child in furniture
                or r.heading is not None
            ):
                child_leave = _enter_other(r, child, texts)
            else:
                # `enter` outside headings, inline: a call less per element.
                handler = handlers[r.mode].get(name)
                if handler is None and (
                    not child.attrib
                    or (child.get("id") is None and (name != "a" or child.get("name") is None))
                ):
                    child_leave = None  # Plain inline markup: only its text counts.
                else:
                    child_leave = _enter(r, child, handler, texts)
            if child_leave is not _not_rendered:
                text = child.text
                if text and (not text.isspace() or texts or r.line_open or r.mode is not normal):
                    collect(text)
                if len(child):
                    stack.append((iter(child), child_leave, child.tail))
                    break
                if child_leave is not None:
                    if texts:
                        flush(texts)
                    child_leave()
            text = child.tail
            # Indentation after a block renders as nothing (no line is open): most
            # tails are that, and are dropped here rather than flushed alone.
            if text and (not text.isspace() or texts or r.line_open or r.mode is not normal):
                collect(text)
        else:
            stack.pop()
            if leave is not None:
                if texts:
                    flush(texts)
                leave()
            if tail and (not tail.isspace() or texts or r.line_open or r.mode is not normal):
                collect(tail)
    if texts:
        flush(texts)


def _enter(
    r: _Renderer, child: Element, handler: _Handler | None, texts: list[str]
) -> _Exit | None:
    """`_Renderer.enter` for an element outside headings that has a handler or an id.

    Most elements are plain inline markup (`<a>`, `<em>`, `<code>`, `<span>`): no
    handler, no id, not dropped.  They change no state, so `_walk` only collects the
    text nodes around them, and renders them together (`_Renderer.add_texts`) here,
    before the next element that does something (on the HTML corpus, 215,000 text
    nodes are rendered in 38,000 calls).
    """
    if texts:
        r.add_texts(texts)
    # Only an id, or an `<a name>`, registers anything.
    if child.attrib and (child.tag == "a" or child.get("id") is not None):
        r.register_ids(child)
    return None if handler is None else handler(r, child)


def _enter_other(r: _Renderer, child: Element, texts: list[str]) -> _Exit | None:
    """`_Renderer.enter` for a comment, an element that may be dropped, furniture or an
    element inside a heading; `_not_rendered` for what is not rendered.  Comments and
    processing instructions have a function as their tag."""
    if texts:
        r.add_texts(texts)
    if type(child.tag) is not str:
        r.page_marker(child)
        return _not_rendered
    if (child.tag in _MAYBE_DROPPED or child in r.furniture) and r.is_dropped(child):
        return _not_rendered
    return r.enter(child)


def _render(r: _Renderer, root: Element) -> None:
    """Render `root` itself, its text and its descendants, but not its tail."""
    leave = r.enter(root)
    if root.text:
        r.add_text(root.text)
    _walk(r, iter(root), leave)


def parse_html(html: str) -> Outline:
    """Parse HTML into an outline whose source is its markdown-like text rendering."""
    warnings: list[str] = []
    document = parse_tree(sanitize(html, warnings))
    renderer = _Renderer()
    root = content_root(document)
    # The content's furniture is the body's too, seen from the page or from the body
    # (on the tune and shared pages every figure of `bench.main_content` is the same
    # either way), so it is sought once, before narrowing.
    renderer.furniture = furniture(document if root is None else [root])
    body = article_body(document, root, renderer.furniture)
    if body is not None:
        for part in body.parts:
            # A `header` or `footer` in the body is the article's, as it was in its root.
            renderer.sectioning = sectioning_depth(part)
            _render(renderer, part)
    elif root is None:
        _walk(renderer, iter(document))
    else:
        _render(renderer, root)
    return renderer.finish(page_title(document), warnings)
