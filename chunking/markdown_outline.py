"""Parse markdown into an `Outline`: headings, blocks and verbatim regions as offsets.

markdown-it-py does the parsing, at block level only (the inline rule is off:
we never render, and inline parsing is most of markdown-it's time).  Its
tokens carry line ranges; one line-start table built over the original text
turns them into code point offsets, so the outline's source is the input
unchanged, whatever its line endings.  No markdown-it object leaves this module.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import yaml
from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from chunking.gc_pause import paused_gc
from chunking.outline import Anchor, Block, BlockKind, Heading, Outline, Region, RegionKind

if TYPE_CHECKING:
    from collections.abc import Sequence

    from markdown_it.token import Token

# markdown-it splits lines after normalizing "\r\n" and a lone "\r" to "\n"
# (CommonMark line endings).  Matching the same three here keeps its line
# numbers valid for the original, unnormalized text.
_LINE_BREAK = re.compile(r"\r\n?|\n")

# A leading byte order mark hides front matter from markdown-it (the plugin
# wants `-` as the very first character), and real files carry one.
_BOM = "\ufeff"

# Token types that open or are a top-level block, and what kind of block.
_BLOCK_KINDS: dict[str, BlockKind] = {
    "heading_open": BlockKind.HEADING,
    "paragraph_open": BlockKind.PARAGRAPH,
    "list_item_open": BlockKind.LIST_ITEM,
    "blockquote_open": BlockKind.QUOTE,
    "fence": BlockKind.CODE,
    "code_block": BlockKind.CODE,
    "table_open": BlockKind.TABLE,
    "html_block": BlockKind.HTML,
    "hr": BlockKind.RULE,
}

# Top-level lists are not blocks themselves: each of their items is one.
_LIST_OPENERS = frozenset({"bullet_list_open", "ordered_list_open"})

# List items of a top-level list sit at token nesting level 1.
_TOP_LIST_ITEM_LEVEL = 1

# Images inside links (`[![alt](img)](url)`) need a second pass; more nesting
# than this is not worth a loop whose cost grows with it.
_LINK_PASSES = 3

_INLINE_LINK = re.compile(
    # `[^\[\]]` and `[^()]` stop at the next bracket, so a failed match scans
    # only to the next bracket and the whole pass stays linear.
    r"!?\[(?P<text>[^\[\]]*)\]"
    r"(?:\((?:[^()]|\([^()]*\))*\)|\[[^\[\]]*\])"
)

_INLINE_MARKUP = re.compile(
    r"\\(?P<escaped>[!-/:-@\[-`{-~])"
    r"|<(?P<autolink>[A-Za-z][A-Za-z0-9+.-]{1,31}:[^<>\s]*)>"
    r"|<[A-Za-z/!?][^<>]*>"
    # Emphasis: a run of `*` that touches a non-space could open or close
    # emphasis; a lone `*` between spaces cannot.  `_` additionally must not
    # be inside a word (`snake_case` keeps its underscore).
    r"|\*+(?=\S)|(?<=\S)\*+"
    r"|(?<![^\W_])_+(?=\S)|(?<=\S)_+(?![^\W_])"
)

_BACKTICKS = re.compile(r"`+")

# Unicode categories a GitHub-style slug keeps: letters, marks and numbers.
_SLUG_CATEGORIES = frozenset("LMN")
_SLUG_KEEP = frozenset(" -_")


@dataclass(frozen=True, slots=True)
class _Lines:
    """Where each line of the original text starts, as markdown-it counts lines."""

    text: str
    """The original text."""
    starts: tuple[int, ...]
    """Offset of the first character of each line; line 0 skips a BOM."""

    def start(self, line: int) -> int:
        """Offset where `line` starts; the end of the text for lines past the last."""
        return self.starts[line] if line < len(self.starts) else len(self.text)

    def has_break(self, line: int) -> bool:
        """Whether `line` ends with a line break (every line but the last does)."""
        return line + 1 < len(self.starts)

    def end(self, stop_line: int, floor: int) -> int:
        """Offset just past the last non-whitespace character before `stop_line`.

        Never goes below `floor`, the span's start.
        """
        end = self.start(stop_line)
        text = self.text
        while end > floor and text[end - 1].isspace():
            end -= 1
        return end

    def first_non_blank(self, line: int) -> int:
        """Offset of the first character of `line` that is not a space or tab."""
        offset = self.start(line)
        text = self.text
        while offset < len(text) and text[offset] in " \t":
            offset += 1
        return offset


_REGION_TOKENS = frozenset({"fence", "code_block", "table_open"})
"""Tokens that open a verbatim region (see `_region`)."""


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    """The shared block-level parser, built on first use rather than at import."""
    md = MarkdownIt("commonmark").enable("table").use(front_matter_plugin)
    # Only block structure is needed; heading text comes from the raw inline
    # source through `_plain_text`.
    md.disable("inline")
    return md


def parse_markdown(text: str) -> Outline:
    """Parse markdown `text` into an outline whose offsets index `text` itself."""
    has_bom = text.startswith(_BOM)
    lines = _line_table(text, skip=len(_BOM) if has_bom else 0)
    with paused_gc():
        tokens = _parser().parse(text[len(_BOM) :] if has_bom else text)

    title: str | None = None
    warnings: list[str] = []
    body_start = lines.start(0)
    if tokens and tokens[0].type == "front_matter" and tokens[0].map is not None:
        body_start = lines.start(tokens[0].map[1])
        title, warning = _front_matter_title(tokens[0].content)
        if warning is not None:
            warnings.append(warning)

    spans: list[Block] = []
    heading_texts: dict[int, tuple[int, str]] = {}
    regions: list[Region] = []
    for index, token in enumerate(tokens):
        if token.map is None or token.nesting < 0:
            continue
        first, stop = token.map
        if token.type in _REGION_TOKENS:
            region = _region(token, first, stop, lines)
            # An indented code block of only Unicode spaces (which markdown-it
            # does not count as blank) is empty once trimmed, and so is its block.
            if region is not None and region.end > region.start:
                regions.append(region)
        kind = _top_level_kind(token)
        if kind is None:
            continue
        if kind is BlockKind.HEADING:
            start = lines.first_non_blank(first)
            inline = tokens[index + 1] if index + 1 < len(tokens) else None
            content = inline.content if inline is not None and inline.type == "inline" else ""
            heading_texts[start] = (int(token.tag[1:]), _plain_text(content))
        else:
            start = lines.start(first)
        spans.append(Block(kind, start, lines.end(stop, floor=start)))

    blocks = _cover_gaps(text, body_start, _without_overlaps(spans))
    body_end = _trailing_references_start(text, blocks)
    headings = _headings(blocks, heading_texts)
    return Outline(
        source=text,
        format="markdown",
        title=title,
        body_start=body_start,
        body_end=body_end,
        headings=headings,
        blocks=tuple(blocks),
        regions=tuple(sorted(regions, key=lambda region: region.start)),
        anchors=tuple(Anchor(h.start, h.anchor) for h in headings if h.anchor is not None),
        warnings=tuple(warnings),
    )


def _line_table(text: str, skip: int) -> _Lines:
    """Build the line-start table in one scan; line 0 starts at `skip`."""
    starts = [skip]
    starts.extend(match.end() for match in _LINE_BREAK.finditer(text))
    return _Lines(text, tuple(starts))


def _top_level_kind(token: Token) -> BlockKind | None:
    """The block kind when `token` opens a top-level block, else None."""
    if token.type == "list_item_open":
        return BlockKind.LIST_ITEM if token.level == _TOP_LIST_ITEM_LEVEL else None
    if token.level != 0 or token.type in _LIST_OPENERS or token.type == "front_matter":
        return None
    return _BLOCK_KINDS.get(token.type, BlockKind.OTHER)


def _region(token: Token, first: int, stop: int, lines: _Lines) -> Region | None:
    """The verbatim region of a fence, indented code or table token on lines first..stop."""
    start = lines.start(first)
    end = lines.end(stop, floor=start)
    if token.type == "code_block":
        return Region(RegionKind.CODE, start, end, lead_end=start, lead="")
    if token.type == "fence":
        lead_lines = 1
        kind = RegionKind.CODE
    elif token.type == "table_open":
        # The header row and the delimiter row under it.
        lead_lines = 2
        kind = RegionKind.TABLE
    else:
        return None
    last_lead_line = first + lead_lines - 1
    lead_end = lines.start(last_lead_line + 1)
    lead = lines.text[start:lead_end]
    if not lines.has_break(last_lead_line):
        # The document ends on the lead line: the lead still ends a line when
        # it is repeated in front of a continuation.
        lead += "\n"
    # A region that is only its lead (an unclosed fence at the end, a table
    # without rows) ends before the lead's newline; keep lead_end inside it.
    return Region(kind, start, end, lead_end=min(lead_end, end), lead=lead)


def _without_overlaps(spans: Sequence[Block]) -> list[Block]:
    """Drop what overlaps an earlier block, so blocks tile the text in order."""
    kept: list[Block] = []
    previous_end = 0
    for span in spans:
        start = max(span.start, previous_end)
        if span.end <= start:
            continue
        kept.append(span if start == span.start else Block(span.kind, start, span.end))
        previous_end = span.end
    return kept


def _cover_gaps(text: str, body_start: int, blocks: Sequence[Block]) -> list[Block]:
    """Wrap non-blank text no token covers (e.g. link reference definitions) in OTHER blocks."""
    covered: list[Block] = []
    gap_start = body_start
    for block in [*blocks, Block(BlockKind.OTHER, len(text), len(text))]:
        gap = text[gap_start : block.start]
        stripped = gap.strip()
        if stripped:
            start = gap_start + (len(gap) - len(gap.lstrip()))
            covered.append(Block(BlockKind.OTHER, start, start + len(stripped)))
        if block.end > block.start:
            covered.append(block)
        gap_start = max(gap_start, block.end)
    return covered


_REFERENCE_DEFINITION = re.compile(r" {0,3}\[[^\]\n]+\]:")


def _trailing_references_start(text: str, blocks: Sequence[Block]) -> int | None:
    """Start of the link reference definitions (and comments) that end a document.

    Microsoft Learn pages end with dozens of `[id]: url` lines under comments like
    `<!-- LINKS - Internal -->`.  They are link targets, not content: chunked, they
    fill the last chunk with URLs.  None when the document does not end that way.
    """
    start: int | None = None
    has_reference = False
    for block in reversed(blocks):
        snippet = text[block.start : block.end]
        if block.kind is BlockKind.OTHER and _REFERENCE_DEFINITION.match(snippet):
            has_reference = True
        elif not (
            block.kind is BlockKind.HTML
            and snippet.lstrip().startswith("<!--")
            and snippet.rstrip().endswith("-->")
        ):
            break
        start = block.start
    if not has_reference or start is None or start <= blocks[0].start:
        return None
    return start


def _headings(blocks: Sequence[Block], texts: dict[int, tuple[int, str]]) -> tuple[Heading, ...]:
    """One heading per HEADING block, with its text and a unique GitHub-style anchor."""
    slugs = _Slugger()
    headings: list[Heading] = []
    for block in blocks:
        if block.kind is not BlockKind.HEADING or block.start not in texts:
            continue
        depth, text = texts[block.start]
        headings.append(Heading(block.start, block.end, depth, text, slugs.unique(_slug(text))))
    return tuple(headings)


_YAML_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _front_matter_title(content: str) -> tuple[str | None, str | None]:
    """The front matter's `title` and a warning when its YAML cannot be read."""
    try:
        # libyaml's loader when PyYAML has it: the pure-Python one was a sixth
        # of the whole parse on the corpus.
        data = yaml.load(content, Loader=_YAML_LOADER)
    # ValueError: PyYAML builds dates and numbers with Python constructors,
    # which reject values like `2024-02-30`; RecursionError: deeply nested flow
    # collections.
    except (yaml.YAMLError, ValueError, RecursionError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        return None, f"front matter is not valid YAML, so no title was read from it: {reason}"
    if not isinstance(data, dict):
        return None, None
    title = data.get("title")
    if isinstance(title, str) and title.strip():
        return title.strip(), None
    return None, None


def _plain_text(inline_source: str) -> str:
    """Strip inline markup from a heading's raw inline source; collapse whitespace."""
    text = inline_source
    for _ in range(_LINK_PASSES):
        text, count = _INLINE_LINK.subn(r"\g<text>", text)
        if not count:
            break
    parts: list[str] = []
    position = 0
    for code_start, code_end, content_start, content_end in _code_spans(text):
        parts.append(_strip_markup(text[position:code_start]))
        parts.append(text[content_start:content_end])
        position = code_end
    parts.append(_strip_markup(text[position:]))
    return " ".join("".join(parts).split())


def _code_spans(text: str) -> list[tuple[int, int, int, int]]:
    """Code spans as (start, end, content start, content end), in one linear pass.

    A backtick run opens a span closed by the next run of the same length
    (CommonMark); a run with no such partner is literal text.
    """
    runs = [(match.start(), match.end()) for match in _BACKTICKS.finditer(text)]
    next_same: list[int | None] = [None] * len(runs)
    last_seen: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        length = runs[index][1] - runs[index][0]
        next_same[index] = last_seen.get(length)
        last_seen[length] = index
    spans: list[tuple[int, int, int, int]] = []
    index = 0
    while index < len(runs):
        partner = next_same[index]
        if partner is None:
            index += 1
            continue
        spans.append((runs[index][0], runs[partner][1], runs[index][1], runs[partner][0]))
        index = partner + 1
    return spans


def _strip_markup(text: str) -> str:
    """Remove emphasis markers and HTML tags, resolve escapes and entities."""
    stripped = _INLINE_MARKUP.sub(
        lambda match: match.group("escaped") or match.group("autolink") or "", text
    )
    return html.unescape(stripped)


def _slug(text: str) -> str:
    """GitHub-style slug: lowercase, only letters, digits, `-`, `_`; spaces become `-`."""
    kept = (
        char
        for char in text.lower()
        if char in _SLUG_KEEP or unicodedata.category(char)[0] in _SLUG_CATEGORIES
    )
    return "".join(kept).replace(" ", "-")


class _Slugger:
    """Makes slugs unique within a document the way github-slugger does."""

    def __init__(self) -> None:
        self._occurrences: dict[str, int] = {}

    def unique(self, slug: str) -> str | None:
        """`slug`, or `slug-1`, `slug-2`... if taken; None for an empty slug."""
        if not slug:
            return None
        candidate = slug
        while candidate in self._occurrences:
            self._occurrences[slug] += 1
            candidate = f"{slug}-{self._occurrences[slug]}"
        self._occurrences[candidate] = 0
        return candidate
