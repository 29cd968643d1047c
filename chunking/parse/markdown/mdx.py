"""MDX: the JSX and ESM lines of an MDX page are markup, not text a reader sees.

react.dev, Docusaurus and Nextra pages wrap their markdown in components
(`<Sandpack>`, `<Note>`, `<Recipes titleText="...">`, `<InlineToc />`), start with
`import`/`export` statements and carry `{/* ... */}` comments.  Here those lines
are found (outside code) and reported as markup blocks and as spans the embedded
text leaves out; the markdown inside the components stays.  Before the block
parser runs, the markup lines are blanked (same length, line breaks kept): a
CommonMark parser would otherwise read `<Note>` and the lines up to the next blank
line as one HTML block, and a fence right after `<Sandpack>` would not be code.

The rule fires only on MDX-like text: a `.mdx` file, or a page with a component
opened and closed on lines of their own, a `{/*id*/}` heading id, or an ESM
statement.  Tags are components only when they start with an upper-case letter
(JSX's convention; `<details>` or `<br>` are HTML and stay as they are).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import TYPE_CHECKING

from chunking.model import Block, BlockKind

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from chunking.parse.markdown.blocks import ParsedMarkdown

VISIBLE_ATTRIBUTES = frozenset({"title", "titleText", "label", "alt"})
"""Attributes whose (quoted) value a reader sees, as a box's title, a tab's label or an
image's text: the first one of a tag stays in the embedded text."""
MAX_TAG_LINES = 12
"""A tag may spread its attributes over this many lines; longer is not read as a tag."""

_MAYBE_MDX = re.compile(
    r"^[ \t]*(?:</?[A-Z]|<>|\{/\*)|^(?:import|export)\b|\*/\}[ \t]*$", re.MULTILINE
)
"""A line that may be MDX markup; a page without one is not looked at further."""
_TAG_LINE = re.compile(r"\n[ \t]*(?:</?[A-Z]|<>)")
_FIRST_TAG = re.compile(r"[ \t]*(?:</?[A-Z]|<>)")
_LINE = re.compile(r"[^\r\n]*(?:\r\n?|\n|$)")
_FENCE = re.compile(r"[ \t>]*(`{3,}|~{3,})")
_COMPONENT_NAME = re.compile(r"(?:[A-Z][\w$]*|[A-Za-z_$][\w$]*(?:\.[\w$]+)+)?")
"""`Note`, `Tabs.Item`; empty for a fragment `<>`."""
_ATTRIBUTE_NAME = re.compile(r"[A-Za-z_$][\w$:.-]*")
_QUOTED = re.compile(r"\"[^\"\r\n]*\"|'[^'\r\n]*'")
_SPACE = re.compile(r"[ \t]*")
_SPACE_AND_BREAKS = re.compile(r"\s*")
_ESM = re.compile(
    r"(?:import(?=[ \t{*\"'])[ \t]*(?:[\w$]+[ \t]*,?[ \t]*)?(?:\{[^}]*\}|\*[ \t]*as[ \t]+[\w$]+)?"
    r"[ \t]*(?:from[ \t]*)?[\"'][^\"'\r\n]+[\"'];?[ \t]*$"
    r"|import[ \t]+(?:[\w$]+[ \t]*,[ \t]*)?\{[ \t]*$"
    r"|export[ \t]+(?:const|let|var|function|class|default|async[ \t]+function)\b"
    r"|export[ \t]*(?:\{|\*))"
)
"""The first line of an ESM statement: `import X from '...'`, `import {` (continued),
`export const ...`; prose that merely starts with "import" does not match."""
_HEADING_COMMENT = re.compile(r"[ \t]+\{/\*[^\r\n]*?\*/\}[ \t]*$")
"""A `{/*id*/}` heading id: the anchor it sets is the outline's, the text is markup."""
_ATX_HEADING = re.compile(r" {0,3}#{1,6}[ \t]")
_CODE_INDENT = 4
"""Columns of indentation that make a CommonMark line indented code (a tab counts as 4)."""


@dataclass(frozen=True, slots=True)
class _Markup:
    """Markup found on one or more whole lines."""

    first: int
    """Index of its first line."""
    stop: int
    """Index of the line after its last line."""
    start: int
    end: int
    """Its span, from its first non-blank character to its last."""
    closes: bool
    """Closing and self-closing tags belong with what precedes them, the rest with what
    follows (see `BlockKind.MARKUP_END`)."""
    shown: tuple[tuple[int, int], ...] = ()
    """Spans inside it a reader sees (a title attribute's value)."""
    name: str | None = None
    """The component's name, for an opening (`Note`) or closing tag (`/Note`)."""
    kind: str = "tag"
    """`tag`, `comment` or `esm`."""


@dataclass(frozen=True, slots=True)
class MdxMarkup:
    """The MDX markup of a page, in the offsets of the text given to `parse_mdx`."""

    blocks: tuple[Block, ...]
    """One block per markup line (or run of lines): MARKUP or MARKUP_END."""
    hidden: tuple[tuple[int, int], ...]
    """Sorted, disjoint spans the embedded text leaves out."""
    masked: str
    """The text with its markup lines blanked, for the block parser."""

    def blocks_after(self, body_start: int, shift: int) -> list[Block]:
        """The blocks moved by `shift` (a byte order mark), those before `body_start` left out."""
        moved = (Block(b.kind, b.start + shift, b.end + shift) for b in self.blocks)
        return [block for block in moved if block.start >= body_start]

    def hidden_after(self, body_start: int, shift: int) -> tuple[tuple[int, int], ...]:
        """The hidden spans moved by `shift`, clipped to start at `body_start`."""
        moved = ((max(low + shift, body_start), high + shift) for low, high in self.hidden)
        return tuple((low, high) for low, high in moved if high > low)


def parse_mdx(
    text: str,
    file_name: str | None,
    parse: Callable[[str], tuple[ParsedMarkdown, list[str]]],
) -> tuple[ParsedMarkdown, list[str], MdxMarkup | None]:
    """Parse `text` (no byte order mark) with `parse`, its MDX markup blanked if it is MDX.

    Should the parser find code where a markup line was taken out (a fence this
    module's simpler reading missed), that line is given back and the text parsed again.
    """
    is_mdx = _is_mdx_name(file_name)
    if not is_mdx and not _may_be_mdx(text):
        # Nearly every page: one regex pass, no line scan.
        parsed, warnings = parse(text)
        return parsed, warnings, None
    lines = _lines(text)
    starts = _starts(lines)
    found, heading_ids = _markup_lines(lines, starts, is_mdx)
    if not found and not heading_ids:
        parsed, warnings = parse(text)
        return parsed, warnings, None
    while True:
        masked = _masked(text, found, starts)
        parsed, warnings = parse(masked)
        in_code = _in_regions(parsed)
        kept = [m for m in found if not any(in_code(line) for line in range(m.first, m.stop))]
        if len(kept) == len(found):
            break
        found = kept
    heading_ids = [(line, low, high) for line, low, high in heading_ids if not in_code(line)]
    hidden = _hidden_spans(text, lines, starts, found, heading_ids)
    blocks = tuple(
        Block(BlockKind.MARKUP_END if markup.closes else BlockKind.MARKUP, markup.start, markup.end)
        for markup in found
        if markup.first < markup.stop
    )
    return parsed, warnings, MdxMarkup(blocks, hidden, masked)


def _may_be_mdx(text: str) -> bool:
    """`_MAYBE_MDX.search(text)`, after substring tests that every match needs: the
    regex runs at about 100 MB/s, the tests at C speed, and most pages fail them."""
    if not (
        "{/*" in text
        or "*/}" in text
        or "\nimport" in text
        or "\nexport" in text
        or text.startswith(("import", "export"))
        or _TAG_LINE.search(text) is not None
        or _FIRST_TAG.match(text) is not None
    ):
        return False
    return _MAYBE_MDX.search(text) is not None


def _in_regions(parsed: ParsedMarkdown) -> Callable[[int], bool]:
    """Whether a line lies in one of the parser's code blocks or tables."""
    regions = sorted(parsed.regions, key=lambda region: region.first)
    firsts = [region.first for region in regions]
    stops = [region.stop for region in regions]

    def contains(line: int) -> bool:
        index = bisect.bisect_right(firsts, line) - 1
        return index >= 0 and line < stops[index]

    return contains


def with_markup_blocks(spans: Sequence[Block], markup: Sequence[Block]) -> list[Block]:
    """`spans` with the markup blocks that lie between them (inside a list item, markup
    is part of the item's block and only its embedded text leaves it out)."""
    merged: list[Block] = []
    index = 0
    for block in markup:
        while index < len(spans) and spans[index].end <= block.start:
            merged.append(spans[index])
            index += 1
        if index < len(spans) and spans[index].start < block.end:
            continue
        merged.append(block)
    merged.extend(spans[index:])
    return merged


def _is_mdx_name(file_name: str | None) -> bool:
    # Nearly every name holds no `.mdx` at all: answered without building a path.
    if not file_name or ".mdx" not in file_name.lower():
        return False
    return PurePath(file_name.split("?", 1)[0]).suffix.lower() == ".mdx"


def _lines(text: str) -> list[str]:
    """The lines of `text`, each with its line break."""
    return [match.group(0) for match in _LINE.finditer(text)][:-1] or [""]


def _starts(lines: list[str]) -> list[int]:
    """Where each line starts, and the end of the text last."""
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return starts


def _markup_lines(
    lines: list[str], starts: list[int], is_mdx: bool
) -> tuple[list[_Markup], list[tuple[int, int, int]]]:
    """The markup of an MDX-like page outside code, and its `{/*id*/}` heading ids (line,
    span); both empty if the page is not MDX-like."""
    found: list[_Markup] = []
    heading_ids: list[tuple[int, int, int]] = []
    index = _after_front_matter(lines)
    fence: str | None = None
    previous_blank = True
    while index < len(lines):
        line = lines[index]
        offset = starts[index]
        stripped = line.strip()
        opened = _FENCE.match(line)
        if fence is not None:
            if (
                opened
                and opened.group(1)[0] == fence[0]
                and len(opened.group(1)) >= len(fence)
                and not line[opened.end() :].strip()
            ):
                fence = None
            index += 1
            previous_blank = False
            continue
        if opened:
            fence = opened.group(1)
            index += 1
            previous_blank = False
            continue
        markup: _Markup | None = None
        indent = len(line) - len(line.lstrip(" \t"))
        if len(line[:indent].expandtabs(_CODE_INDENT)) >= _CODE_INDENT and not is_mdx:
            # CommonMark reads a line indented this far as code (MDX has no indented code).
            markup = None
        elif stripped.startswith("<"):
            markup = _tag_line(lines, starts, index, indent)
        elif stripped.startswith("{/*"):
            markup = _comment_lines(lines, starts, index, indent)
        elif previous_blank and indent == 0 and _ESM.match(line):
            markup = _esm_lines(lines, starts, index)
        elif _ATX_HEADING.match(line):
            comment = _HEADING_COMMENT.search(line.rstrip("\r\n"))
            if comment is not None:
                heading_ids.append((index, offset + comment.start(), offset + comment.end()))
        if markup is None:
            previous_blank = not stripped
            index += 1
            continue
        found.append(markup)
        index = markup.stop
        previous_blank = False
    if not (is_mdx or heading_ids or _reads_as_mdx(found)):
        return [], []
    return [_before_heading(markup, lines) for markup in found], heading_ids


def _reads_as_mdx(found: list[_Markup]) -> bool:
    """Whether the markup lines of a page not named `.mdx` make it MDX: an import or
    export, or a component tag closed by its own name."""
    names = {markup.name for markup in found if markup.name and not markup.closes}
    return any(markup.kind == "esm" for markup in found) or any(
        markup.name and markup.name[1:] in names for markup in found if markup.closes
    )


def _before_heading(markup: _Markup, lines: list[str]) -> _Markup:
    """Markup right before a heading goes with what precedes it: the heading starts the
    chunk after it (`<DeepDive>` then `#### Title`).  A tag with a title a reader sees
    (`<Recipes titleText="...">`) goes with the heading: its title belongs there."""
    if markup.closes or markup.shown:
        return markup
    stop = markup.stop
    while stop < len(lines) and not lines[stop].strip():
        stop += 1
    if stop < len(lines) and _ATX_HEADING.match(lines[stop]):
        return replace(markup, closes=True)
    return markup


def _after_front_matter(lines: list[str]) -> int:
    """The first line after YAML front matter (`---` ... `---`), else 0."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    for index in range(1, len(lines)):
        if lines[index].rstrip() in {"---", "..."}:
            return index + 1
    return 0


def _tag_line(lines: list[str], starts: list[int], index: int, indent: int) -> _Markup | None:
    """Component tags alone on a line (their attributes may run over a few lines)."""
    text = "".join(lines[index : index + MAX_TAG_LINES])
    position = indent
    shown: list[tuple[int, int]] = []
    names: list[str] = []
    closes = False
    while True:
        tag = _tag(text, position)
        if tag is None:
            return None
        position, name, tag_closes, value = tag
        names.append(name)
        closes = tag_closes
        if value is not None:
            shown.append(value)
        position = _SPACE.match(text, position).end()  # type: ignore[union-attr]
        if position >= len(text) or text[position] in "\r\n":
            break
        if text[position] != "<":
            return None
    line_end = position
    stop = index + 1
    while stop < len(lines) and starts[stop] - starts[index] <= line_end:
        stop += 1
    base = starts[index]
    return _Markup(
        first=index,
        stop=stop,
        start=base + indent,
        end=base + line_end,
        closes=closes,
        shown=tuple((base + low, base + high) for low, high in shown[:1]),
        name=names[0] if len(names) == 1 else None,
    )


def _tag(text: str, position: int) -> tuple[int, str, bool, tuple[int, int] | None] | None:
    """One JSX component tag at `position`: where it ends, its name (`/Name` if it
    closes), whether it closes or closes itself, and its first visible attribute value."""
    if not text.startswith("<", position):
        return None
    position += 1
    closing = text.startswith("/", position)
    if closing:
        position += 1
    name_match = _COMPONENT_NAME.match(text, position)
    if name_match is None:
        return None
    name = name_match.group(0)
    position = name_match.end()
    if position < len(text) and (text[position].isalnum() or text[position] in "_$"):
        return None  # a lower-case HTML tag (`<details>`), which `_COMPONENT_NAME` does not take
    value: tuple[int, int] | None = None
    while True:
        position = _SPACE_AND_BREAKS.match(text, position).end()  # type: ignore[union-attr]
        if text.startswith(">", position):
            return position + 1, ("/" + name) if closing else name, closing, value
        if text.startswith("/>", position) and not closing:
            return position + 2, name, True, value
        if closing:
            return None
        if text.startswith("{", position):
            end = _braces_end(text, position)
            if end is None:
                return None
            position = end
            continue
        attribute = _ATTRIBUTE_NAME.match(text, position)
        if attribute is None:
            return None
        position = _SPACE.match(text, attribute.end()).end()  # type: ignore[union-attr]
        if not text.startswith("=", position):
            continue
        position = _SPACE.match(text, position + 1).end()  # type: ignore[union-attr]
        quoted = _QUOTED.match(text, position)
        if quoted is not None:
            visible = attribute.group(0) in VISIBLE_ATTRIBUTES
            if value is None and visible and quoted.end() - quoted.start() > len('""'):
                value = (quoted.start() + 1, quoted.end() - 1)
            position = quoted.end()
        elif text.startswith("{", position):
            end = _braces_end(text, position)
            if end is None:
                return None
            position = end
        else:
            return None


def _braces_end(text: str, position: int) -> int | None:
    """Just past the `}` that closes the `{` at `position` (strings skipped), or None."""
    depth = 0
    quote: str | None = None
    for index in range(position, len(text)):
        char = text[index]
        if quote is not None:
            if char == quote:
                quote = None
            elif char == "\\":
                continue
        elif char in "\"'`":
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def _comment_lines(lines: list[str], starts: list[int], index: int, indent: int) -> _Markup | None:
    """A `{/* ... */}` comment that fills its line(s)."""
    for stop in range(index, min(len(lines), index + MAX_TAG_LINES)):
        line = lines[stop].rstrip()
        if line.endswith("*/}"):
            base = starts[index]
            end = starts[stop] + len(line)
            return _Markup(index, stop + 1, base + indent, end, closes=False, kind="comment")
        if stop > index and not line:
            return None
    return None


def _esm_lines(lines: list[str], starts: list[int], index: int) -> _Markup:
    """An ESM block: as in MDX, from its `import`/`export` line to the next blank line."""
    stop = index + 1
    while stop < len(lines) and lines[stop].strip():
        stop += 1
    end = starts[stop - 1] + len(lines[stop - 1].rstrip())
    return _Markup(index, stop, starts[index], end, closes=False, kind="esm")


def _masked(text: str, found: Sequence[_Markup], starts: Sequence[int]) -> str:
    """`text` with the markup lines' characters (not their line breaks) as spaces."""
    pieces: list[str] = []
    position = 0
    for markup in found:
        start, end = starts[markup.first], starts[markup.stop]
        pieces.append(text[position:start])
        pieces.append(re.sub(r"[^\r\n]", " ", text[start:end]))
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def _hidden_spans(
    text: str,
    lines: list[str],
    starts: list[int],
    found: Sequence[_Markup],
    heading_ids: Sequence[tuple[int, int, int]],
) -> tuple[tuple[int, int], ...]:
    """What the embedded text leaves out: each markup line with the blank lines after it
    (its title attribute's value aside), and `{/*id*/}` heading ids."""
    hidden: list[tuple[int, int]] = []
    for markup in found:
        low = starts[markup.first]
        if markup.shown:
            for shown_start, shown_end in markup.shown:
                hidden.append((low, shown_start))
                low = shown_end
            hidden.append((low, markup.end))
            continue
        stop = markup.stop
        while stop < len(lines) and not lines[stop].strip():
            stop += 1
        hidden.append((low, starts[stop] if stop < len(lines) else len(text)))
    hidden.extend((low, high) for _, low, high in heading_ids)
    hidden.sort()
    merged: list[tuple[int, int]] = []
    for low, high in hidden:
        if high <= low:
            continue
        if merged and low <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return tuple(merged)
