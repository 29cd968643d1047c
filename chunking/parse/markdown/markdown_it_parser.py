"""markdown-it-py as a block parser: the reference for the outline, and the fallback.

Block rules only: the `inline` rule is off (we never render, and inline parsing
is most of markdown-it's time), so a heading's text comes from its raw inline
source through `_plain_text`.  No markdown-it object leaves this module.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache
from typing import TYPE_CHECKING

from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from chunking.model import BlockKind, RegionKind
from chunking.parse.gc_pause import paused_gc
from chunking.parse.markdown.blocks import LineBlock, LineRegion, ParsedMarkdown, heading_id

if TYPE_CHECKING:
    from markdown_it.token import Token

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

_REGION_LEADS: dict[str, tuple[RegionKind, int]] = {
    "fence": (RegionKind.CODE, 1),
    "code_block": (RegionKind.CODE, 0),
    "table_open": (RegionKind.TABLE, 2),
}
"""Tokens that open a verbatim region: its kind and how many lead lines it repeats."""


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    """The shared block-level parser, built on first use rather than at import."""
    md = MarkdownIt("commonmark").enable("table").use(front_matter_plugin)
    md.disable("inline")
    return md


def parse_blocks(text: str) -> ParsedMarkdown:
    """Blocks, regions and front matter of `text` as markdown-it-py sees them."""
    with paused_gc():
        tokens = _parser().parse(text)
    front_matter: tuple[int, str] | None = None
    if tokens and tokens[0].type == "front_matter" and tokens[0].map is not None:
        front_matter = (tokens[0].map[1], tokens[0].content)
    blocks: list[LineBlock] = []
    regions: list[LineRegion] = []
    for index, token in enumerate(tokens):
        if token.map is None or token.nesting < 0:
            continue
        first, stop = token.map
        region = _REGION_LEADS.get(token.type)
        if region is not None:
            regions.append(LineRegion(region[0], first, stop, region[1]))
        kind = _top_level_kind(token)
        if kind is None:
            continue
        if kind is BlockKind.HEADING:
            inline = tokens[index + 1] if index + 1 < len(tokens) else None
            content = inline.content if inline is not None and inline.type == "inline" else ""
            attributes = heading_id(content)
            anchor: str | None = None
            if attributes is not None:
                content = content[: attributes[0]]
                anchor = attributes[1]
            depth = int(token.tag[1:])
            blocks.append(LineBlock(kind, first, stop, depth, _plain_text(content), anchor))
        else:
            blocks.append(LineBlock(kind, first, stop))
    return ParsedMarkdown(blocks, regions, front_matter)


def _top_level_kind(token: Token) -> BlockKind | None:
    """The block kind when `token` opens a top-level block, else None."""
    if token.type == "list_item_open":
        return BlockKind.LIST_ITEM if token.level == _TOP_LIST_ITEM_LEVEL else None
    if token.level != 0 or token.type in _LIST_OPENERS or token.type == "front_matter":
        return None
    return _BLOCK_KINDS.get(token.type, BlockKind.OTHER)


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
