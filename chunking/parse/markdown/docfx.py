"""docfx containers in markdown: tab groups and zone pivots are scopes, not sections.

Microsoft Learn (docfx) writes alternatives as containers:

- a tab group, headings whose only content is a link `[Label](#tab/id)` (or
  `#tab/id/condition`), closed by a thematic break (`---`; here also by a
  heading above the tabs, or at their level when no tab and no `---` follows:
  the `---` was forgotten);
- a zone pivot, `::: zone pivot="programming-language-csharp"` ... `::: zone-end`.

Read as plain CommonMark, each tab label is a heading of whatever level the
author picked (often `#`), so it ends the section it is in and every later
section loses its path.  Here a container's label is one level below the section
it is in (below the document title, at depth 2, when none encloses it: a label
is never taken for the title), the headings inside nest below the label, and the
label's `section_end` ends them all where the container ends, so the enclosing
section goes on after it.  A zone is the exception where its own headings
reach above it: a zone only hides content from readers of other pivots, so a
`##` in a zone opened under `## Overview` closes Overview as it would outside
(Semantic Kernel pages put whole `##` sections in zones); the label then takes
the place of the first section the zone's headings close, and stays on the path
of all the zone holds.  A zone's label is its pivot in words (`C#`, `Azure
CLI`): the readable names live in the site's `zone-pivot-groups.yml`, not in the
page, and an id such as `programming-language-csharp` is a poorer match for a
question about C#.  Zones with a `target` only (`docs`, `pdf`) render for every
reader and get no label.  Row and column markers (`:::row:::`) only lay content
out; like the zone markers they are left out of the embedded text (see
`chunking.parse.markdown.plain_text`), and the content between them is ordinary content.

Only top-level blocks are containers (the parsers report no others): a tab group
inside a list item stays list-item content.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from chunking.model import Block, BlockKind, Heading
from chunking.offsets import skip_space_back

if TYPE_CHECKING:
    from collections.abc import Sequence

    from chunking.model import Region

_TAB_HEADING = re.compile(
    # docfx's own test (`TabGroupAggregator`): the heading is one link, and its
    # target is `#tab/` + ids joined by `+`, then an optional `/condition`.
    r"#{1,6}[ \t]+\[[^\]\r\n]*\]\(#tab/(?P<id>[A-Za-z0-9-]+(?:\+[A-Za-z0-9-]+)*)"
    r"(?:/(?P<condition>[A-Za-z0-9-]*))?(?:[ \t]+\"[^\"\r\n]*\")?\)[ \t]*(?:#+[ \t]*)?"
)
_ZONE_MARKER = re.compile(
    # At a line start (after \n, \r or nothing), indented less than code.
    r"(?<![^\r\n])[ \t]{0,3}(?P<marker>:::[ \t]*zone(?P<end>-end)?(?![\w-])[^\r\n]*?)"
    r"[ \t]*(?=[\r\n]|\Z)"
)
_ZONE_HINT = re.compile(r":::[ \t]*zone")
"""What every zone marker holds (`_ZONE_MARKER`), found at C speed."""
_NON_SPACE = re.compile(r"\S")
_PIVOT = re.compile(r"""\bpivot[ \t]*=[ \t]*(?:"([^"\r\n]*)"|'([^'\r\n]*)')""")
_LANGUAGE_PIVOT = "programming-language-"
"""The prefix docfx sites give language pivots; the language alone says it."""
_PIVOT_WORDS = {
    "csharp": "C#", "fsharp": "F#", "cpp": "C++", "dotnet": ".NET", "javascript": "JavaScript",
    "typescript": "TypeScript", "nodejs": "Node.js", "python": "Python", "java": "Java",
    "go": "Go", "rust": "Rust", "powershell": "PowerShell", "cli": "CLI", "azure": "Azure",
    "arm": "ARM", "bicep": "Bicep", "terraform": "Terraform", "rest": "REST", "api": "API",
    "sdk": "SDK", "vscode": "VS Code", "portal": "portal", "linux": "Linux",
    "windows": "Windows", "macos": "macOS", "github": "GitHub", "aks": "AKS",
}  # fmt: skip
"""Spellings of the words pivot ids are made of, as Microsoft Learn shows them."""
_TOP_DEPTH = 2
"""A container outside every section sits where an h2 does, below the title."""
_MAX_LEVEL = 6
"""The deepest markdown heading: a zone without headings has its base there."""


@dataclass(slots=True)
class _Container:
    """An open tab group or zone, and the headings it labels."""

    tab_level: int
    """The tab headings' own `#` level (a heading above it ends the group, one at
    it may: see `_ends_group`); 0 for a zone."""
    depth: int
    """The labels' depth in the section tree."""
    inner_base: int
    """A heading of this `#` level inside the container goes right below the label,
    deeper ones as much deeper: the tabs' level, or a zone's highest heading level."""
    stack_base: int
    """How many sections were open when the container began; it closes them."""
    labels: list[int] = field(default_factory=list)
    """Indices of its labels (the tab headings, or the zone's one) in the output."""
    goes_on_to: int = -1
    """Index of a block the group is known to reach (a tab heading or its `---`)."""


def docfx_containers(
    text: str, blocks: list[Block], headings: tuple[Heading, ...], regions: Sequence[Region]
) -> tuple[list[Block], tuple[Heading, ...]]:
    """`blocks` and `headings` with docfx tab groups and zone pivots as containers.

    Zone marker lines become blocks of their own (a marker line may sit inside a
    paragraph); a pivot zone's opening line is its label heading.  Offsets are not
    moved, only depths, anchors and section ends of headings set.
    """
    # Most pages have neither; `:::image` and other directives are common, zones are not.
    if "#tab/" not in text and _ZONE_HINT.search(text) is None:
        return blocks, headings
    blocks, zone_labels, zone_ends = _split_zone_markers(text, blocks, regions)
    if not zone_labels and not zone_ends and not any(_is_tab(text, h) for h in headings):
        return blocks, headings
    return blocks, _Scopes(text, blocks, headings, zone_labels, zone_ends).run()


def _is_tab(text: str, heading: Heading) -> re.Match[str] | None:
    """The tab link of a docfx tab heading, else None."""
    return _TAB_HEADING.fullmatch(text, heading.start, heading.end)


class _Scopes:
    """One pass over the blocks, keeping the open sections and containers."""

    def __init__(
        self,
        text: str,
        blocks: list[Block],
        headings: tuple[Heading, ...],
        zone_labels: dict[int, str],
        zone_ends: set[int],
    ) -> None:
        self.text = text
        self.blocks = blocks
        self.by_start = {heading.start: heading for heading in headings}
        self.zone_labels = zone_labels
        self.zone_ends = zone_ends
        self.out: list[Heading] = []
        self.open: list[int] = []
        """Depths of the open sections, outermost first."""
        self.containers: list[_Container] = []
        self.tab_labels: dict[str, str] = {}
        """Labels of the tab ids seen so far, for dependent tabs (`#tab/id/condition`)."""

    def run(self) -> tuple[Heading, ...]:
        for index, block in enumerate(self.blocks):
            if block.start in self.zone_labels:
                self._open_zone(index, block)
            elif block.start in self.zone_ends:
                self._close_zone(self._after(index))
            elif block.kind is BlockKind.HEADING:
                heading = self.by_start.get(block.start)
                if heading is not None:
                    self._heading(index, heading)
            elif block.kind is BlockKind.RULE and self._top_is_tab_group():
                # The group's end: docfx renders no rule there.
                self.blocks[index] = Block(BlockKind.MARKER, block.start, block.end)
                self._close(len(self.containers) - 1, self._after(index))
        return tuple(self.out)

    def _top_is_tab_group(self) -> bool:
        return bool(self.containers) and self.containers[-1].tab_level > 0

    def _label_depth(self) -> int:
        return self.open[-1] + 1 if self.open else _TOP_DEPTH

    def _push(self, heading: Heading) -> None:
        while self.open and self.open[-1] >= heading.depth:
            self.open.pop()
        self.open.append(heading.depth)
        self.out.append(heading)

    def _after(self, index: int) -> int | None:
        """Where a container closed by block `index` ends: at the next block with
        content, so the closing marker and the comments after it (`<!-- End tab
        selectors -->`) stay with the container; None if nothing follows."""
        for ahead in range(index + 1, len(self.blocks)):
            block = self.blocks[ahead]
            if block.kind is BlockKind.MARKER or (
                block.kind is BlockKind.HTML
                and self.text.startswith("<!--", block.start)
                and self.text.endswith("-->", block.start, block.end)
            ):
                continue
            return block.start
        return None

    def _close(self, position: int, end: int | None) -> None:
        """Close the container at `position` and those inside it at `end`."""
        for container in self.containers[position:]:
            for label in container.labels:
                self.out[label] = replace(self.out[label], section_end=end)
        del self.open[self.containers[position].stack_base :]
        del self.containers[position:]

    def _open_zone(self, index: int, block: Block) -> None:
        # Zones do not nest: a zone opened before this one's end is closed here.
        zones = [i for i, container in enumerate(self.containers) if container.tab_level == 0]
        if zones:
            self._close(zones[0], block.start)
        top = self._zone_top(index)
        # A zone only filters what a reader sees: its headings close the open sections
        # of their level or deeper, as they would outside it (a `##` in a zone opened
        # under `## Overview` is Overview's sibling).  The label takes the place of the
        # first section they close, so it stays on the path of all the zone holds.
        depth = self._label_depth()
        if top is not None:
            depth = min(depth, max(self._depth_of(top), self._floor()))
        while self.open and self.open[-1] >= depth:
            self.open.pop()
        container = _Container(0, depth, _MAX_LEVEL if top is None else top, len(self.open))
        container.labels.append(len(self.out))
        self.containers.append(container)
        self._push(Heading(block.start, block.end, depth, self.zone_labels[block.start]))

    def _depth_of(self, level: int) -> int:
        """The depth a heading of `#` level `level` gets here (see `_heading`)."""
        if not self.containers:
            return level
        container = self.containers[-1]
        return container.depth + 1 + max(level - container.inner_base, 0)

    def _floor(self) -> int:
        """The lowest depth a new label may take: below the container it is in, else
        below the document title."""
        return self.containers[-1].depth + 1 if self.containers else _TOP_DEPTH

    def _zone_top(self, index: int) -> int | None:
        """The highest `#` level among the zone's own headings, None if it has none.

        Headings inside a tab group of the zone are the tabs' (they close nothing
        outside the group): a group runs from a tab heading to its `---` or to a
        heading at or above the tabs' level.
        """
        levels: list[int] = []
        tab_level = 0
        for ahead in range(index + 1, len(self.blocks)):
            block = self.blocks[ahead]
            if block.start in self.zone_ends or block.start in self.zone_labels:
                break
            if block.kind is BlockKind.RULE:
                tab_level = 0
            heading = self.by_start.get(block.start) if block.kind is BlockKind.HEADING else None
            if heading is None:
                continue
            if _is_tab(self.text, heading):
                tab_level = heading.depth
            elif not tab_level or heading.depth <= tab_level:
                tab_level = 0
                levels.append(heading.depth)
        return min(levels, default=None)

    def _close_zone(self, end: int | None) -> None:
        zones = [i for i, container in enumerate(self.containers) if container.tab_level == 0]
        if zones:  # else a stray marker, nothing to close
            self._close(zones[-1], end)

    def _heading(self, index: int, heading: Heading) -> None:
        tab = _is_tab(self.text, heading)
        if tab is not None:
            self._tab(heading, tab)
            return
        while self._top_is_tab_group() and self._ends_group(index, heading):
            self._close(len(self.containers) - 1, heading.start)
        if self.containers:
            container = self.containers[-1]
            depth = container.depth + 1 + max(heading.depth - container.inner_base, 0)
            heading = replace(heading, depth=depth)
        self._push(heading)

    def _ends_group(self, index: int, heading: Heading) -> bool:
        """Whether a heading that is no tab ends the open tab group.

        In docfx only the `---` does: every heading before it is tab content.  A
        heading above the tabs' level still ends the group here, and one at their
        level does unless a tab or the `---` follows: either way the author forgot
        the `---`, and the rest of the page is not the last tab's.
        """
        group = self.containers[-1]
        if heading.depth < group.tab_level:
            return True
        if heading.depth > group.tab_level or index < group.goes_on_to:
            return False
        for ahead in range(index + 1, len(self.blocks)):
            block = self.blocks[ahead]
            if block.kind is BlockKind.RULE:
                group.goes_on_to = ahead
                return False
            if block.start in self.zone_labels or block.start in self.zone_ends:
                return True
            later = self.by_start.get(block.start) if block.kind is BlockKind.HEADING else None
            if later is None:
                continue
            if _is_tab(self.text, later):
                group.goes_on_to = ahead
                return False
            if later.depth < group.tab_level:
                return True
        return True

    def _tab(self, heading: Heading, tab: re.Match[str]) -> None:
        if self._top_is_tab_group():
            group = self.containers[-1]
            group.tab_level = heading.depth
            del self.open[group.stack_base :]
        else:
            group = _Container(heading.depth, self._label_depth(), 0, len(self.open))
            self.containers.append(group)
        # A heading at the tabs' own level may be tab content (see `_ends_group`).
        group.inner_base = heading.depth
        label = heading.text
        tab_id, condition = tab.group("id"), tab.group("condition")
        self.tab_labels.setdefault(tab_id, label)
        if condition:
            label = f"{label} ({self.tab_labels.get(condition, condition)})"
        group.labels.append(len(self.out))
        # The tab's slug names no element: docfx renders the label as a tab, not
        # a heading, so links go to the enclosing section's anchor.
        self._push(replace(heading, depth=group.depth, text=label, anchor=None))


def _split_zone_markers(
    text: str, blocks: list[Block], regions: Sequence[Region]
) -> tuple[list[Block], dict[int, str], set[int]]:
    """Blocks with each zone marker line a block of its own; labels and ends by start.

    A marker inside code, HTML or a heading is text, as docfx reads it.
    """
    code_starts = [region.start for region in regions]
    labels: dict[int, str] = {}
    ends: set[int] = set()
    result: list[Block] = []
    for block in blocks:
        if block.kind in _NOT_MARKERS or text.find("zone", block.start, block.end) < 0:
            result.append(block)
            continue
        position = block.start
        for found in _ZONE_MARKER.finditer(text, block.start, block.end):
            start, end = found.span("marker")
            index = bisect.bisect_right(code_starts, start) - 1
            if index >= 0 and start < regions[index].end:
                continue
            label = None
            if found.group("end") is None:
                label = _pivot_label(found.group("marker"))
                if label is None and "target" not in found.group("marker"):
                    continue  # not a zone docfx knows
            before_end = skip_space_back(text, start, position)
            if before_end > position:
                result.append(Block(block.kind, position, before_end))
            if found.group("end") is not None:
                ends.add(start)
            elif label:
                labels[start] = label
            result.append(Block(BlockKind.HEADING if label else BlockKind.MARKER, start, end))
            position = end
        rest = _NON_SPACE.search(text, position, block.end)
        if rest is not None:
            result.append(Block(block.kind, rest.start(), block.end))
    return result, labels, ends


_NOT_MARKERS = frozenset({BlockKind.HEADING, BlockKind.HTML, BlockKind.CODE, BlockKind.TABLE})


def _pivot_label(marker: str) -> str | None:
    """The pivot of a zone marker in words (`Azure CLI, Terraform`); None without one."""
    found = _PIVOT.search(marker)
    if found is None:
        return None
    pivots = [p.strip() for p in (found.group(1) or found.group(2) or "").split(",")]
    return ", ".join(_pivot_words(pivot) for pivot in pivots if pivot) or None


def _pivot_words(pivot: str) -> str:
    """One pivot id in words: `programming-language-csharp` is `C#`."""
    pivot = pivot.removeprefix(_LANGUAGE_PIVOT)
    words = [_PIVOT_WORDS.get(word.lower(), word) for word in pivot.split("-") if word]
    if words and words[0].islower():
        words[0] = words[0].capitalize()
    return " ".join(words)
