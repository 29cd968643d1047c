"""Cutting an outline into spans that fit the limit, preferring structural boundaries.

Every position where a chunk may end has a `Level`: a heading start is a section
boundary (its depth), then block, line, sentence, word and character boundaries.
From a chunk's start we walk forward over whole units of the coarsest level,
descending into a unit only when it does not fit; that gives the furthest end
that fits and the boundaries on the way.  The cut is at the strongest level that
still fills the chunk reasonably (`MIN_FILL`), so chunks stay near the target size
while sections, blocks and sentences stay whole; of that level's boundaries near the
furthest one, the text around each picks (`StructureWalk._local_cut`), so a cut does
not move with the chunk's start.
"""

from __future__ import annotations

import bisect
import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from chunking.model import Block, BlockKind, Level, Outline, Span
from chunking.offsets import skip_space, skip_space_back, trim
from chunking.options import SplitMode, TooManyChunks, Unit
from chunking.plan.next_match import NextMatch
from chunking.plan.sentences import (
    WHOLE_TEXT_CHARACTERS,
    LazySentenceStarts,
    Segmenter,
    iter_sentence_starts,
    sentencex_ends,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from chunking.measure.sizing import SpanSizer
    from chunking.plan.core import CutPolicy, PlanInputs

MIN_FILL: dict[Level, float] = {
    **dict.fromkeys((Level.H1, Level.H2, Level.H3, Level.H4, Level.H5, Level.H6), 0.35),
    Level.BLOCK: 0.5,
    Level.LINE: 0.6,
    Level.SENTENCE: 0.6,
    Level.WORD: 0.85,
    Level.CHARACTER: 0.0,
}
"""The least share of the available room a cut at each level must fill.

A section boundary wins from about a third of the room on (whole sections beat
full chunks), a block boundary must fill half of it, a word boundary almost all
of it: otherwise many small chunks result, which hurts retrieval.  On a third
of the markdown corpus at 512 tokens, a section threshold of 0.2 / 0.35 / 0.5
gave 2105 / 2041 / 1963 chunks with 17.8% / 12.5% / 5.0% under half full."""

LOCAL_SHARE = 0.75
"""Where a cut inside a section may fall, as a share of the furthest cut of its level:
from there on the text picks it (`StructureWalk._anchor`), so cuts stay put when an
edit before them moves the chunk's start."""
ANCHOR_REACH = 32
"""Characters on each side of a cut that pick it."""

OVERLAP_CHARACTERS_PER_TOKEN = 6
"""How far back (characters per token of overlap) to look for an overlap start:
half again English's ~4, so the tail can reach its full length in prose."""

_LEVELS = tuple(Level)
"""Levels by value: indexing is ten times faster than calling `Level`."""
_WHITESPACE_RUN = re.compile(r"\s+")
_WORD_END = re.compile(r"(?<=\S)\s")
_LINE_FEED, _CARRIAGE_RETURN = 10, 13


@dataclass(slots=True)
class PlanningDocument:
    """Per-document indexes the walk needs, built once."""

    outline: Outline
    coarse_positions: list[int]
    coarse_levels: list[Level]
    forbidden_low: list[int]
    forbidden_high: list[int]
    region_starts: list[int]
    block_starts: list[int]
    block_ends: list[int]
    language: str
    coarse_totals: list[int]
    """The span sizer's running total at each coarse position."""
    segment: Segmenter = sentencex_ends
    sentence_cache: dict[int, LazySentenceStarts] = field(default_factory=dict)
    """Sentence starts of each block touched so far, by block start."""
    _line_ends: list[int] | None = None

    @classmethod
    def build(
        cls,
        outline: Outline,
        language: str,
        measure: SpanSizer,
        segment: Segmenter = sentencex_ends,
    ) -> PlanningDocument:
        """Index boundaries, no-cut zones and regions of an outline."""
        positions, levels, forbidden = _block_boundaries(outline)
        source = outline.source
        content_end = outline.content_end
        if positions and positions[0] <= outline.body_start:
            del positions[0], levels[0]
        positions.append(content_end)
        levels.append(Level.DOCUMENT)
        for region in outline.regions:
            # Ending a chunk right after a fence line or a table header leaves it meaningless.
            forbidden.append((region.start, skip_space(source, region.lead_end)))
        # A paragraph or table a page break interrupts is not cut between its halves, nor
        # a figure inside (unless nothing else fits: the chooser falls back to any cut).
        forbidden.extend(outline.unbroken)
        forbidden.sort()
        if outline.hidden or outline.unbroken:
            forbidden = _merged(forbidden)
        return cls(
            outline=outline,
            coarse_positions=positions,
            coarse_levels=levels,
            coarse_totals=measure.totals(positions),
            forbidden_low=[low for low, _ in forbidden],
            forbidden_high=[high for _, high in forbidden],
            region_starts=[r.start for r in outline.regions],
            block_starts=[b.start for b in outline.blocks],
            block_ends=[b.end for b in outline.blocks],
            language=language,
            segment=segment,
        )

    @property
    def line_ends(self) -> list[int]:
        """Where each line break (`\\r\\n`, `\\r` or `\\n`) of the source ends, ascending;
        found on first need."""
        if self._line_ends is None:
            self._line_ends = _line_ends(self.outline.source)
        return self._line_ends

    def lines_between(self, low: int, high: int) -> list[int]:
        """Line ends strictly inside (low, high), ascending."""
        ends = self.line_ends
        first = bisect.bisect_right(ends, low)
        return ends[first : bisect.bisect_left(ends, high, first)]

    def next_coarse(self, position: int) -> tuple[int, Level]:
        """The first section or block boundary after `position`."""
        index = bisect.bisect_right(self.coarse_positions, position)
        return self.coarse_positions[index], self.coarse_levels[index]

    def can_cut(self, position: int) -> bool:
        """Whether a chunk may end at `position` (not inside a heading, a fence line or a
        table's header rows)."""
        # Zones are disjoint: only the last one starting before `position` can hold it.
        index = bisect.bisect_left(self.forbidden_low, position) - 1
        return index < 0 or position > self.forbidden_high[index]

    def region_at(self, position: int) -> int:
        """Index of the code/table region containing `position`, or -1."""
        index = bisect.bisect_right(self.region_starts, position) - 1
        if index >= 0 and position < self.outline.regions[index].end:
            return index
        return -1

    def sentence_positions(self, low: int, high: int) -> Iterator[int]:
        """Sentence starts strictly inside (low, high), ascending.

        Blocks are segmented as far as the caller reads, and remembered: a walk
        stops at the first start past its horizon, so a megabyte paragraph is
        segmented a chunk at a time, and only up to the last chunk taken.
        """
        index = max(bisect.bisect_right(self.block_starts, low) - 1, 0)
        while index < len(self.block_starts) and self.block_starts[index] < high:
            block_start = self.block_starts[index]
            if self.block_ends[index] > low:
                cached = self.sentence_cache.get(block_start)
                if cached is None:
                    cached = self._block_sentences(block_start, self.block_ends[index])
                    self.sentence_cache[block_start] = cached
                yield from cached.between(low, high)
            index += 1

    def _block_sentences(self, start: int, end: int) -> LazySentenceStarts:
        """Sentence starts inside the block [start, end): all at once when one
        sentencex call finds them anyway (nearly every block), else on demand."""
        region = self.region_at(start)
        if region >= 0 and self.outline.regions[region].end >= end:
            # Code and tables split only between lines, which callers find
            # themselves: segmenting them (two fifths of the text segmented
            # on the markdown corpus) would find nothing they can use.
            return LazySentenceStarts.complete([])
        text = self.outline.source[start:end]
        starts = iter_sentence_starts(text, self.language, segment=self.segment)
        if len(text) > WHOLE_TEXT_CHARACTERS:
            return LazySentenceStarts(starts, start)
        # Reading them one by one through a generator cost as much as sentencex.
        return LazySentenceStarts.complete([start + offset for offset in starts])


def _block_boundaries(
    outline: Outline,
) -> tuple[list[int], list[Level], list[tuple[int, int]]]:
    """Where a chunk may end between blocks (a heading's start at its depth, else a block
    boundary), and the zones around headings and markup where none may."""
    source = outline.source
    positions: list[int] = []
    levels: list[Level] = []
    forbidden: list[tuple[int, int]] = []
    # Container headings nest past h6; a boundary is at most as weak as an h6.
    h6 = Level.H6
    heading_starts = {h.start: h.depth if h.depth <= h6 else h6 for h in outline.headings}
    previous_kind: BlockKind | None = None
    content_end = outline.content_end
    heading, markup, markup_end = BlockKind.HEADING, BlockKind.MARKUP, BlockKind.MARKUP_END
    marker = BlockKind.MARKER
    block_level = Level.BLOCK
    last = -1
    blocks = outline.blocks
    for index, block in enumerate(blocks):
        start = block.start
        if start >= content_end:
            break
        kind = block.kind
        if kind is markup_end:
            # Markup that closes what precedes never starts a chunk (and a chunk
            # never ends right before it).
            forbidden.append((skip_space_back(source, start) - 1, block.end - 1))
            continue
        # A heading (or opening markup) never ends a chunk: no boundary between it
        # and what follows. A container's end marker (docfx `---`, `::: zone-end`)
        # does not begin one either: it stays with the container it ends.
        if (
            previous_kind is not heading
            and previous_kind is not markup
            and last != start
            and kind is not marker
        ):
            depth = heading_starts.get(
                _heading_after_markup(blocks, index) if kind is markup else start
            )
            positions.append(start)
            levels.append(_LEVELS[depth] if depth else block_level)
            last = start
        previous_kind = kind
        if kind is heading or kind is markup:
            forbidden.append((start, skip_space(source, block.end)))

    return positions, levels, forbidden


NUMPY_LINE_ENDS_CHARACTERS = 4_096
"""Texts this long and longer find their line ends with numpy (as the parse stage's line
tables do, from the same length: below it Python is faster and numpy stays unloaded)."""
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""A line break as `_line_ends` counts one: CR LF, a lone CR or LF."""


def _line_ends(source: str) -> list[int]:
    """The end of every line break of `source`, ascending, from one pass of numpy over
    its code points: a regex match per line, over and over for the walk's windows,
    cost a tenth of the split stage on the markdown corpus. A short text's are found by
    one regex pass instead, so a one-line file never loads numpy (issue 40: the import
    is ~0.1 s of a command's start-up)."""
    if len(source) < NUMPY_LINE_ENDS_CHARACTERS:
        return [match.end() for match in _LINE_BREAK.finditer(source)]
    import numpy as np  # noqa: PLC0415  (only for texts long enough to repay its import)

    ascii_only = source.isascii()
    codes = np.frombuffer(
        source.encode("ascii") if ascii_only else source.encode("utf-32-le", "surrogatepass"),
        dtype=np.uint8 if ascii_only else np.uint32,
    )
    breaks = codes == _LINE_FEED
    if "\r" in source:
        # A carriage return ends a line unless a line feed follows: then that one does.
        returns = codes == _CARRIAGE_RETURN
        returns[:-1] &= codes[1:] != _LINE_FEED
        breaks |= returns
    # The array's own nonzero: np.flatnonzero's Python wrappers cost as much per document.
    ends: list[int] = (breaks.nonzero()[0] + 1).tolist()
    return ends


def _furthest_of_each_level(levels: list[Level], first: int) -> list[int]:
    """For each level, the last index from `first` on of a boundary at that
    level or a stronger one (-1 if none): one pass from the end, where a scan
    per level went over the whole walk up to seven times."""
    furthest = [-1] * len(_LEVELS)
    unmet = len(_LEVELS)
    """Levels from here on have their furthest index."""
    for index in range(len(levels) - 1, first - 1, -1):
        level = levels[index]
        if level < unmet:
            furthest[level:unmet] = [index] * (unmet - level)
            unmet = level
            if unmet <= Level.H1:
                break
    return furthest


def _heading_after_markup(blocks: tuple[Block, ...], index: int) -> int:
    """The start of the block after the opening markup at `index` (and any right after
    it): a cut before markup that opens a section counts as a cut before its heading."""
    while index + 1 < len(blocks) and blocks[index].kind is BlockKind.MARKUP:
        index += 1
    return blocks[index].start


def _merged(zones: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted zones with the overlapping ones joined (markup zones meet heading zones)."""
    merged: list[tuple[int, int]] = []
    for low, high in zones:
        if merged and low < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


@dataclass(slots=True)
class _Walk:
    """The result of walking forward from a start: boundaries where the chunk still fits."""

    positions: list[int] = field(default_factory=list)
    levels: list[Level] = field(default_factory=list)
    stopped: bool = False
    """The walk stopped at the first sentence end it may cut at (see `_walk`)."""


@dataclass(slots=True)
class _Frontier:
    """Boundaries of one level inside a unit that did not fit, and how far the walk got."""

    positions: list[int]
    levels: list[Level]
    cursor: int

    def accept(self, position: int, limit: int, measure: SpanSizer, walk: _Walk) -> int:
        """Accept the boundaries from the cursor on whose running total fits `limit`."""
        # Running totals ascend with the positions: bisect's own loop, in C.
        low = bisect.bisect_right(self.positions, limit, self.cursor, key=measure.total)
        if low == self.cursor:
            return position
        walk.positions += self.positions[self.cursor : low]
        walk.levels += self.levels[self.cursor : low]
        self.cursor = low
        return self.positions[low - 1]


@dataclass(frozen=True, slots=True)
class Measures:
    """The measuring facade of the seam: the limit, the room a chunk has, and sizes of
    spans of the planned source, measured as the walk measures its own chunks."""

    maximum: int
    """The limit on a chunk's embedded text, prefix included."""
    room: Callable[[int], int]
    """Room for content in a chunk starting at a position: the limit less its prefix."""
    span: Callable[[int, int], Span | None]
    """The chunk [start, end) trimmed of whitespace, measured exactly (None: only
    whitespace)."""
    total: Callable[[int], int]
    """The running size total up to a position (`SpanSizer.total`)."""
    totals: Callable[[Sequence[int]], list[int]]
    """`total` of each of ascending positions, at once."""
    estimate: Callable[[int, int], int]
    """About the size of [start, end), cheaper; estimates of adjacent spans add up."""


class WalkSeam(Protocol):
    """What a strategy built on the structure walk sees of it: the planning document,
    the measures, the walk's own cut and overlap rule, and its loop over a `CutPolicy`.
    Nothing else of the walk is a strategy's to read."""

    @property
    def doc(self) -> PlanningDocument:
        """The document's boundaries, no-cut zones, regions and sentences."""
        ...

    @property
    def measures(self) -> Measures:
        """The limit, the room and sizes."""
        ...

    def cut(self, start: int, previous_end: int, room: int) -> Span | None:
        """The chunk from `start` the walk cuts within `room`."""
        ...

    def overlaps(self, next_start: int) -> bool:
        """Whether the walk overlaps the chunk starting at `next_start`."""
        ...

    def spans(self, policy: CutPolicy | None = None) -> list[Span]:
        """All chunks of the document, cut where `policy` says."""
        ...


def walk_seam(inputs: PlanInputs) -> WalkSeam:
    """The structure walk of one document, as a strategy built on it sees it."""
    return StructureWalk(inputs)


class StructureWalk:
    """The structure walk: sections, then blocks, lines, sentences, words, on the
    document's `PlanningDocument`. The structure strategy runs it as it is; the others
    see it through `WalkSeam` (a `CutPolicy` given to its loop, its measures)."""

    def __init__(self, inputs: PlanInputs, *, segment: Segmenter = sentencex_ends) -> None:
        outline, tree, sizer = inputs.outline, inputs.tree, inputs.sizer
        context, options = inputs.context, inputs.options
        self.source = outline.source
        self.end = outline.content_end
        """Chunks cover the source up to here."""
        # Chunks never reach front matter or trailing link definitions: they
        # are not tokenized.
        self.spans_of_source = sizer.spans(self.source, outline.body_start, self.end)
        self.doc = PlanningDocument.build(outline, options.language, self.spans_of_source, segment)
        self.tree = tree
        self.sizer = sizer
        self.context = context
        self.options = options
        self.maximum = options.limits.maximum_page_length
        self._prefixes: dict[tuple[int, ...], tuple[tuple[str, ...], str, int]] = {}
        """Heading names, prefix and prefix size of each heading chain met: every
        chunk asks twice (room, span), and a key of indices hashes faster than names."""
        self._additive = options.limits.unit is Unit.CHARACTERS
        """UTF-16 lengths always add up over a concatenation; tokens only at clean joins."""
        self._heading_content = tree.content_starts(self.source, self.end)
        """Where the content after each heading (and the headings right after it) begins."""
        self.next_word_end = NextMatch(_WORD_END, self.source)
        """The first word end past a horizon, for every chunk of a long line."""

    @property
    def measures(self) -> Measures:
        """What the strategies built on the walk measure with (`WalkSeam`).

        Made when asked, not kept: its bound methods would tie the walk into a cycle
        that keeps each document's outline alive until the collector finds it (the
        structure strategy, which never asks, then freed nothing by reference counting).
        """
        measure = self.spans_of_source
        return Measures(
            self.maximum, self.room, self.make_span, measure.total, measure.totals, measure.estimate
        )

    # -- what other strategies reuse ---------------------------------------------

    def room(self, start: int) -> int:
        """Room for content in a chunk starting at `start`: the limit less the prefix."""
        _, _, prefix_size = self._prefix_of(tuple(self.tree.chain_at(self._content_start(start))))
        return self.maximum - prefix_size

    # -- measuring -------------------------------------------------------------

    def _estimate(self, start: int, end: int) -> int:
        # The walk only plans; every chunk is measured exactly before it is kept.
        return self.spans_of_source.estimate(start, end)

    # -- finer boundaries --------------------------------------------------------

    def _finer(self, low: int, high: int, level: Level, horizon: int) -> list[int]:
        """Boundaries of exactly `level` strictly inside (low, high), up to `horizon`
        and the first one past it.

        Nothing past `horizon` can fit, so a giant unit is scanned only as far as
        one chunk could reach: that keeps a 1 MB paragraph linear, not quadratic.
        The first boundary past it still counts: it ends the unit that overflows,
        which must be one line (a code line or row that fits alone is never cut).
        """
        source = self.source
        cap = min(high, horizon + 1)
        if level is Level.LINE:
            if self.doc.outline.pages is not None and self._in_paragraph(low):
                # Layout markdown keeps a PDF's visual lines: in a paragraph they are
                # not boundaries, sentences are.
                return []
            ends = self.doc.line_ends
            first = bisect.bisect_right(ends, low)
            stop = bisect.bisect_left(ends, cap, first)
            found = ends[first:stop]
            if stop < len(ends) and ends[stop] < high:
                found.append(ends[stop])
            return found
        # Sentence and word boundaries sit before the whitespace that separates
        # them: cl100k attaches a space to the word after it, so " word" pieces
        # add up to the count of the whole text while "word " pieces overcount.
        if level is Level.SENTENCE:
            if self.doc.region_at(low) >= 0:
                return []  # code and tables split by lines only
            starts: list[int] = []
            # Sentence starts of a long block reach far past the horizon: move
            # them before their space only up to the first one past it.
            for sentence_start in self.doc.sentence_positions(low, high):
                # Back to the start of the whitespace before it.
                start = skip_space_back(source, sentence_start)
                if low < start < high:
                    starts.append(start)
                    if start >= cap:
                        break
            return starts
        if level is Level.WORD:
            found = [m.start() for m in _WHITESPACE_RUN.finditer(source, low, cap)]
            # Every match starts in [low, cap): only the first can sit at `low`.
            if found and found[0] == low:
                del found[0]
            word_end = self.next_word_end.search(max(cap, found[-1] + 1 if found else low), high)
            if word_end is not None and low < word_end.start():
                found.append(word_end.start())
            return found
        raise ValueError(level)

    def _in_paragraph(self, position: int) -> bool:
        """Whether `position` lies in a paragraph block."""
        index = bisect.bisect_right(self.doc.block_starts, position) - 1
        return (
            index >= 0
            and position < self.doc.block_ends[index]
            and self.doc.outline.blocks[index].kind is BlockKind.PARAGRAPH
        )

    # -- walking -----------------------------------------------------------------

    def _walk(self, start: int, room: int, stop_after: int | None = None) -> _Walk:
        """Accept whole units from `start` while they fit `room`, descending on overflow.

        Estimates telescope, so a run of units fits exactly when the running
        total at its last end is at most `total(start) + room`: in pages mode
        the walk finds the furthest such end among the boundaries of a level by
        bisection, instead of measuring the units one by one.

        With `stop_after` (sentences mode) the walk stops early (`_stops_at`).
        """
        walk = _Walk()
        doc_end = self.end
        measure = self.spans_of_source
        total, doc = measure.total, self.doc
        limit = total(start) + room
        gallop = self.options.mode is SplitMode.PAGES
        position = start
        level = Level.BLOCK
        # Finer boundaries inside each unit that did not fit, innermost last.  In
        # sentences mode a unit is descended into without being measured, so all
        # its pieces may fit: the level runs out and the walk resumes one level up.
        frontiers: list[_Frontier] = []
        while position < doc_end:
            while frontiers and frontiers[-1].cursor >= len(frontiers[-1].positions):
                frontiers.pop()
                level = _LEVELS[level - 1]
            if not frontiers:
                level = Level.BLOCK
                if gallop:
                    position = self._accept_coarse(position, limit, walk)
                    if position >= doc_end:
                        break
                unit_end, unit_level = doc.next_coarse(position)
            else:
                frontier = frontiers[-1]
                if gallop:
                    position = frontier.accept(position, limit, measure, walk)
                    if frontier.cursor >= len(frontier.positions):
                        continue
                unit_end = frontier.positions[frontier.cursor]
                unit_level = frontier.levels[frontier.cursor]
                frontier.cursor += 1
            left = limit - total(position)
            if left <= 0:
                break
            if not gallop and not self._must_descend(position, level) and total(unit_end) <= limit:
                position = unit_end
                walk.positions.append(unit_end)
                walk.levels.append(unit_level)
                if stop_after is not None and self._stops_at(unit_end, unit_level, stop_after):
                    walk.stopped = True
                    break
                continue
            finer = self._descend(position, unit_end, unit_level, level, left, room, limit, walk)
            if finer is None:
                break
            level = _LEVELS[level + 1]
            frontiers.append(finer)
        return walk

    def _stops_at(self, unit_end: int, unit_level: Level, stop_after: int) -> bool:
        """Whether a sentences-mode walk stops at `unit_end`: the first sentence end from
        `stop_after` on where a chunk may end.  That is the cut `_choose` makes of the
        whole walk, which went on through the whole room (twenty-odd sentences) for every
        chunk of one sentence."""
        return (
            unit_end >= stop_after and unit_level <= Level.SENTENCE and self.doc.can_cut(unit_end)
        )

    def _descend(
        self,
        position: int,
        unit_end: int,
        unit_level: Level,
        level: Level,
        left: int,
        room: int,
        limit: int,
        walk: _Walk,
    ) -> _Frontier | None:
        """The next level's boundaries inside the unit [position, unit_end) that did not
        fit, then its end; None where the walk ends in it instead (a row that fits a chunk
        alone, or the furthest character that fits, added to `walk`)."""
        if (
            level is Level.LINE
            and self.doc.region_at(position) >= 0
            and self._row_fits_alone(position, unit_end, room)
        ):
            return None  # a table row or code line that fits a chunk of its own is never cut
        if level is Level.WORD:
            self._walk_characters(position, unit_end, unit_level, left, walk)
            return None
        finer_level = _LEVELS[level + 1]
        # `_finer` returns a fresh list: it takes the end itself.
        finer = self._finer(position, unit_end, finer_level, self.spans_of_source.horizon(limit))
        finer_levels = [finer_level] * len(finer)
        finer.append(unit_end)
        finer_levels.append(unit_level)
        return _Frontier(finer, finer_levels, 0)

    def _accept_coarse(self, position: int, limit: int, walk: _Walk) -> int:
        """Accept every whole section or block after `position` that fits `limit`."""
        doc = self.doc
        first = bisect.bisect_right(doc.coarse_positions, position)
        stop = bisect.bisect_right(doc.coarse_totals, limit, lo=first)
        if stop <= first:
            return position
        walk.positions += doc.coarse_positions[first:stop]
        walk.levels += doc.coarse_levels[first:stop]
        return doc.coarse_positions[stop - 1]

    def _must_descend(self, position: int, level: Level) -> bool:
        """In sentences mode every sentence (or row, or code line) ends a chunk."""
        if self.options.mode is SplitMode.PAGES:
            return False
        finest = Level.LINE if self.doc.region_at(position) >= 0 else Level.SENTENCE
        return level < finest

    def _row_fits_alone(self, start: int, end: int, room: int) -> bool:
        """Whether a line of a code block or table, [start, end), fits `room` alone."""
        return self._estimate(start, end) <= room

    def _walk_characters(
        self, start: int, end: int, end_level: Level, left: int, walk: _Walk
    ) -> None:
        """The furthest character position in (start, end) that still fits, by bisection."""
        measure = self.spans_of_source
        high = min(end, measure.horizon(measure.total(start) + max(left, 0)))
        # Estimates grow with the end: those that fit are a prefix of the candidates.
        low = start + bisect.bisect_right(
            range(start + 1, high + 1), left, key=lambda middle: measure.estimate(start, middle)
        )
        if low > start:
            walk.positions.append(low)
            walk.levels.append(end_level if low == end else Level.CHARACTER)

    # -- choosing ----------------------------------------------------------------

    def _choose(self, start: int, walk: _Walk, minimum_end: int) -> Iterator[int]:
        """Candidate cut positions, best first (the caller falls back down the list)."""
        positions, levels = walk.positions, walk.levels
        first = bisect.bisect_left(positions, minimum_end)
        can_cut = self.doc.can_cut
        if not any(map(can_cut, positions[first:])):
            yield from reversed(positions[first:])
            return
        reach = max(positions[-1] - start, 1)
        chosen: int | None = None
        if self.options.mode is SplitMode.SENTENCES:
            chosen = next(
                (
                    p
                    for p, lv in zip(positions[first:], levels[first:], strict=True)
                    if lv <= Level.SENTENCE and can_cut(p)
                ),
                None,
            )
        fill = self.options.section_fill
        pages = self.options.mode is SplitMode.PAGES
        if (
            chosen is None
            and pages
            and fill != 0
            and levels[-1] is Level.DOCUMENT
            and can_cut(positions[-1])
        ):
            # The rest of the document fits: it is one chunk, whatever headings it
            # holds (unless every heading must begin a chunk: fill 0).
            chosen = positions[-1]
        # The strongest boundary on the walk: most walks hold no heading, and this
        # one C-level pass says so before any loop over them looks for one.
        strongest = min(levels[first:])
        if chosen is None and fill is not None and pages and strongest <= Level.H6:
            chosen = self._heading_cut(start, positions, levels, first, start + fill * reach)
        if chosen is None:
            furthest = _furthest_of_each_level(levels, first)
            # Levels stronger than any on the walk have no boundary to look at.
            for level in _LEVELS[max(Level.H1, strongest) :]:
                index = furthest[level]
                # Rarely the furthest sits where no chunk may end: look further back.
                while index >= first and not (levels[index] <= level and can_cut(positions[index])):
                    index -= 1
                if index >= first and (positions[index] - start) >= MIN_FILL[level] * reach:
                    chosen = self._local_cut(start, positions, levels, first, index, level)
                    break
        if chosen is not None:
            yield chosen
        # Fallbacks, for a cut whose exact size is over after all.
        yield from (p for p in reversed(positions[first:]) if p != chosen and can_cut(p))

    def _heading_cut(
        self, start: int, positions: list[int], levels: list[Level], first: int, least: float
    ) -> int | None:
        """Sections kept apart: a heading ends the chunk once it leaves the chunk at
        least `least` full, so a chunk holds one section, not several packed. With
        `least` at the start (fill 0) that is the first heading: every heading begins a
        chunk. Past it, of the headings in reach the strongest, and among equals the one
        the text around it picks (`_anchor`), not how far the chunk got: where the first
        one was taken, an edit that grew a section moved every cut after it."""
        can_cut = self.doc.can_cut
        h6 = Level.H6
        found = [
            index
            for index in range(first, len(levels))
            if levels[index] <= h6 and positions[index] >= least and can_cut(positions[index])
        ]
        if not found:
            return None
        if least <= start:
            return positions[found[0]]
        return positions[min(found, key=lambda i: (levels[i], self._anchor(positions[i])))]

    def _local_cut(
        self,
        start: int,
        positions: list[int],
        levels: list[Level],
        first: int,
        furthest: int,
        level: Level,
    ) -> int:
        """Of the cuts at `level` or stronger from `LOCAL_SHARE` of the furthest one on,
        the one the text around it picks (`_anchor`): where the furthest one is taken, a
        cut moves with everything before it, so one edit moved every cut after it."""
        low = start + LOCAL_SHARE * (positions[furthest] - start)
        can_cut = self.doc.can_cut
        best = positions[furthest]
        best_key = (levels[furthest], self._anchor(best))
        index = furthest - 1
        while index >= first and positions[index] >= low:
            if levels[index] <= level and can_cut(positions[index]):
                key = (levels[index], self._anchor(positions[index]))
                if key < best_key:
                    best, best_key = positions[index], key
            index -= 1
        return best

    def _anchor(self, position: int) -> int:
        """A number the text around `position` alone decides: where two cuts are equally
        good, the smaller wins, so the same text is cut at the same place wherever the
        chunk started. A carriage return reads as a line feed, so a document cut the
        same way whichever line ends it has."""
        around = self.source[max(position - ANCHOR_REACH, 0) : position + ANCHOR_REACH]
        return zlib.crc32(around.replace("\r", "\n").encode("utf-8", "surrogatepass"))

    # -- overlap -------------------------------------------------------------------

    def _overlap_start(self, chunk_start: int, cut: int) -> int | None:
        """Where the next chunk starts to repeat the tail of this one, if anywhere."""
        overlap = self.options.limits.page_overlap_length
        if overlap <= 0 or self.options.mode is SplitMode.SENTENCES:
            return None
        section_start = self.tree.section_start_before(cut - 1)
        low = max(chunk_start + 1, section_start + 1 if section_start >= 0 else 0)
        per_unit = (
            1 if self.options.limits.unit is Unit.CHARACTERS else OVERLAP_CHARACTERS_PER_TOKEN
        )
        window_low = max(low, cut - overlap * per_unit)
        if window_low >= cut:
            return None
        measure = self.spans_of_source
        for level in (Level.SENTENCE, Level.WORD):
            candidates = self._boundaries_back(window_low, cut, level)
            fitting = [p for p in candidates if self.doc.can_cut(p)]
            if self._touches_region(window_low, cut):
                fitting = [p for p in fitting if self._overlap_may_start(p)]
            # Sizes shrink as the start moves right: bisect the estimates for the
            # longest tail that fits, then confirm exactly, moving right if needed.
            lo, hi = 0, len(fitting)
            while lo < hi:
                middle = (lo + hi) // 2
                begin, end = trim(self.source, fitting[middle], cut)
                if measure.estimate(begin, end) <= overlap:
                    hi = middle
                else:
                    lo = middle + 1
            for candidate in fitting[lo:]:
                begin, end = trim(self.source, candidate, cut)
                if begin >= cut:
                    break
                if measure.span(begin, end) <= overlap:
                    return candidate
        return None

    def _touches_region(self, low: int, high: int) -> bool:
        """Whether a code or table region holds a position in [low, high)."""
        starts = self.doc.region_starts
        return self.doc.region_at(low) >= 0 or bisect.bisect_right(
            starts, low
        ) < bisect.bisect_left(starts, high)

    def _overlap_may_start(self, position: int) -> bool:
        """Inside code or a table an overlap starts at a line start, never mid-line."""
        if self.doc.region_at(position) < 0:
            return True
        return position == 0 or self.source[position - 1] in "\r\n"

    def _boundaries_back(self, low: int, high: int, level: Level) -> list[int]:
        """Positions in (low, high) at `level` or stronger, ascending."""
        source = self.source
        found: set[int] = set()
        if level is Level.SENTENCE:
            found.update(self.doc.lines_between(low, high))
            found.update(self.doc.sentence_positions(low, high))
            coarse = self.doc.coarse_positions
            first = bisect.bisect_right(coarse, low)
            found.update(coarse[first : bisect.bisect_left(coarse, high, first)])
        else:
            found.update(m.end() for m in _WHITESPACE_RUN.finditer(source, low, high))
        return sorted(p for p in found if low < p < high)

    # -- the loop ------------------------------------------------------------------

    def spans(self, policy: CutPolicy | None = None) -> list[Span]:
        """All chunks of the document, in order: cut where `policy` says (the walk's own
        cuts when None)."""
        next_span = self.next_span if policy is None else policy.next_span
        overlaps = self.overlaps if policy is None else policy.overlaps
        source = self.source
        limits = self.options.limits
        position = skip_space(source, self.doc.outline.body_start)
        previous_end = position
        cap = self.options.max_chunks
        result: list[Span] = []
        while position < self.end:
            span = next_span(position, previous_end)
            if span is None and position < previous_end:
                # The overlap left no room to move on: start after the previous chunk instead.
                position = skip_space(source, previous_end)
                span = next_span(position, position)
            if span is None:
                break
            result.append(span)
            if limits.maximum_pages_to_take and len(result) >= limits.maximum_pages_to_take:
                break
            if cap and len(result) > cap:
                # Stop here: the rest would only be planned and contextualized to be refused
                # (a 60-million-character record at 300/149 built 588,234 chunks first).
                raise TooManyChunks(cap)
            next_start = skip_space(source, span.end)
            overlap = None
            if next_start < self.end and overlaps(next_start):
                overlap = self._overlap_start(span.start, span.end)
            previous_end = span.end
            position = overlap if overlap is not None else next_start
        return result

    def overlaps(self, next_start: int) -> bool:
        """True unless the next chunk begins a new section (no overlap across headings)."""
        index = bisect.bisect_left(self.doc.coarse_positions, next_start)
        if (
            index < len(self.doc.coarse_positions)
            and self.doc.coarse_positions[index] == next_start
        ):
            return self.doc.coarse_levels[index] > Level.H6
        return True

    def _content_start(self, start: int) -> int:
        """`tree.content_start(source, start, end)` up to the end of the document."""
        index = bisect.bisect_left(self.tree.starts, start)
        if index < len(self.tree.starts) and self.tree.starts[index] == start:
            return self._heading_content[index]
        return start

    def next_span(self, start: int, previous_end: int) -> Span | None:
        """The walk's chunk starting at `start` (past `previous_end`), if one fits."""
        return self.cut(start, previous_end, self.room(start))

    def cut(self, start: int, previous_end: int, room: int) -> Span | None:
        """The chunk from `start` the walk cuts within `room`."""
        minimum_end = max(previous_end, start) + 1
        sentences = self.options.mode is SplitMode.SENTENCES
        walk = self._walk(start, room, stop_after=minimum_end if sentences else None)
        cuts = self._choose(start, walk, minimum_end)
        if walk.stopped:
            first = next(cuts)
            span = self.make_span(start, first)
            if span is not None and span.size <= self.maximum:
                return span
            # Over once measured exactly: the fallbacks come from the whole walk.
            walk = self._walk(start, room)
            cuts = (cut for cut in self._choose(start, walk, minimum_end) if cut != first)
        for cut in cuts:
            span = self.make_span(start, cut)
            if span is not None and span.size <= self.maximum:
                return span
        # Nothing on the walk fits once measured exactly: take as many characters as fit.
        low, high = max(start, minimum_end - 1), min(self.end, start + self.maximum * 8)
        best: Span | None = None
        while low < high:
            middle = (low + high + 1) // 2
            span = self.make_span(start, middle)
            if span is not None and span.size <= self.maximum:
                best, low = span, middle
            else:
                high = middle - 1
        return best

    def _prefix_of(self, chain: tuple[int, ...]) -> tuple[tuple[str, ...], str, int]:
        """The heading names of `chain`, their prefix and its size."""
        found = self._prefixes.get(chain)
        if found is None:
            names = self.tree.names(list(chain))
            found = (names, *self.context.prefix(names))
            self._prefixes[chain] = found
        return found

    def make_span(self, start: int, end: int) -> Span | None:
        """The chunk [start, end) trimmed of whitespace, measured exactly (None: only
        whitespace)."""
        # Trimmed by str.strip (the same whitespace as str.isspace), which also
        # gives the content: a loop over the ends cost more than the copies.
        piece = self.source[start:end]
        content = piece.strip()
        if not content:
            return None
        begin = start + len(piece) - len(piece.lstrip())
        finish = begin + len(content)
        chain = tuple(self.tree.chain_of_chunk(self.source, begin, finish))
        names, prefix, prefix_size = self._prefix_of(chain)
        text = self.context.text(names, content)
        if self._additive or self.spans_of_source.adds_up(prefix, content):
            # The prefix is measured once per heading path, content from the
            # document's index; at this join the counts add up exactly.
            size = prefix_size + self.spans_of_source.span(begin, finish)
        else:
            size = self.sizer.size(text)
        return Span(begin, finish, chain, names, text, size)
