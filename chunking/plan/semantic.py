"""The `semantic` strategy: cut where the meaning shifts, packed up to the limit.

Each section's text is cut into units: its sentences (the multilingual segmentation
the structure strategy uses), and each table or code block whole. Every boundary
between two neighbouring units of a section gets a distance: 1 − cosine between the
embedding of the `window` units before it, joined, and that of the `window` units
after it. Of the literature's two variants this is the one with disjoint sides; the
other (LangChain's, after Kamradt) embeds each sentence with `window` neighbours on
both sides and compares neighbouring such groups, which share 2·window of their
2·window + 1 sentences, so a shift shows up blurred over several boundaries and
weaker at the one where it happens. Both cost one embedding per sentence.

A boundary whose distance is above the `percentile` of the document's distances is a
breakpoint. Chunks are then packed from whole groups (the units between breakpoints):
a chunk ends at the furthest breakpoint (or heading, or the document's end) that fits
the limit, prefix included, and holds at least `min_fill` of the room. Where there is none (a group
alone over the limit, or a breakpoint too early to leave a chunk that full), the
structure strategy's cut is taken: headings, blocks, lines (rows of a table, lines of
code, never cut inside), sentences, words, so the hard limit always holds. A heading
is crossed only as the structure strategy crosses one: when the section before it is
too small to stand alone (`section_fill`). A chunk that ends at a breakpoint is not
overlapped by the next one (the topic changed there); a chunk the fallback cut is.

Cost, per document: one embedding per distinct window text: a section of n units
(sentences, tables, code blocks) has at most n + window − 1 of them (the n − window + 1
full windows, and the shorter ones at its two edges), so about one per sentence; sent in
calls of at most `BOUNDARIES_PER_CALL` boundaries (one call for a document of up to that
many sentences), through a `CachedEmbedder`, so a text repeated in the document is
embedded once. On the shared corpus that is 5,903 texts and 70 calls per MB of markdown,
2,711 and 20 per MB of HTML (window 2); a section of one unit costs nothing. Everything
else is linear in the document: each boundary is embedded and compared once, and each
chunk looks at the breakpoints within its own reach by bisection.
"""

from __future__ import annotations

import bisect
import math
from typing import TYPE_CHECKING

from chunking.model import BlockKind, Level
from chunking.offsets import trim
from chunking.plan.core import Plan, own_parameters
from chunking.plan.declaration import Flag, Parameter, StrategyDeclaration
from chunking.plan.scoring import CachedEmbedder, ScoringError
from chunking.plan.semantic_params import (
    DEFAULT_SEMANTIC_MIN_FILL,
    DEFAULT_SEMANTIC_PERCENTILE,
    DEFAULT_SEMANTIC_WINDOW,
    SemanticBreaks,
)
from chunking.plan.walk import walk_seam

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from chunking.model import Span
    from chunking.plan.core import PlanInputs
    from chunking.plan.scoring import TextEmbedder
    from chunking.plan.walk import WalkSeam

EMBEDDED_CHARACTERS = 2_000
"""A window's text is clipped to this many characters nearest its boundary: the local
model reads 512 tokens (about this much English), and the words next to a boundary
are what tell a shift there."""
BOUNDARIES_PER_CALL = 512
"""Boundaries whose windows go to the embedder in one call: a typical page (under 512
sentences) costs one call, a long one a few, each of a bounded size."""
EXACT_TRIES = 4
"""Breakpoints tried per chunk when the estimate fits and the exact size does not (a
token merged at the join): rare, and bounding it keeps the walk linear."""
EMBEDDING_MATRIX_DIMENSIONS = 2
"""Vectors stacked: one row per text (a flat or deeper array is a provider's mistake)."""
_SKIPPED_BLOCKS = frozenset({BlockKind.HEADING, BlockKind.MARKUP, BlockKind.MARKUP_END})
"""Blocks that are no text of their section: headings begin it, markup is not prose."""
_NO_UNIT = frozenset({BlockKind.MARKER})
"""A container's end marker (docfx `---`, `::: zone-end`) ends a run of units too."""

UnitSpan = tuple[int, int]
"""A unit's (start, end) in the source, trimmed of whitespace."""


def semantic_spans(inputs: PlanInputs) -> Plan:
    """Whole groups of sentences between meaning shifts, packed up to the limit."""
    walk = walk_seam(inputs)
    spans = walk.spans(SemanticCuts(walk, inputs))
    return Plan(spans)


def percentile(values: Sequence[float], share: float) -> float:
    """The `share` (0..100) percentile of `values`, interpolated linearly between the
    two nearest ranks, as numpy's default does."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * share / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def window_texts(
    source: str, units: Sequence[UnitSpan], boundary: int, window: int
) -> tuple[str, str]:
    """The texts either side of the boundary after `units[boundary]`: the `window` units
    before it joined (clipped to its last characters) and the `window` after it (to its
    first), each stopping at the section's edge."""
    first = units[max(0, boundary - window + 1)][0]
    before_end = units[boundary][1]
    after_start = units[boundary + 1][0]
    last = units[min(len(units) - 1, boundary + window)][1]
    # The planned source is the embedded text's: the pipeline plans markdown on its
    # plain outline when markup is left out.
    before = source[max(first, before_end - 2 * EMBEDDED_CHARACTERS) : before_end]
    after = source[after_start : min(last, after_start + 2 * EMBEDDED_CHARACTERS)]
    return before[-EMBEDDED_CHARACTERS:], after[:EMBEDDED_CHARACTERS]


def boundary_distances(
    sections: Sequence[Sequence[UnitSpan]], source: str, window: int, embed: TextEmbedder
) -> list[tuple[int, float]]:
    """(position, distance) of every boundary between neighbouring units of a section,
    in document order; `position` is where the unit after the boundary starts."""
    cached = CachedEmbedder(embed, capacity=4 * BOUNDARIES_PER_CALL)
    pending: list[tuple[int, str, str]] = []
    found: list[tuple[int, float]] = []
    for units in sections:
        for boundary in range(len(units) - 1):
            before, after = window_texts(source, units, boundary, window)
            pending.append((units[boundary + 1][0], before, after))
            if len(pending) >= BOUNDARIES_PER_CALL:
                found += _distances(pending, cached)
                pending = []
    if pending:
        found += _distances(pending, cached)
    return found


def _distances(
    pending: Sequence[tuple[int, str, str]], embed: TextEmbedder
) -> list[tuple[int, float]]:
    """One embedder call for the windows of `pending` boundaries, and their distances."""
    import numpy as np  # noqa: PLC0415  (the scored strategy alone needs it; start-up does not)

    texts = [text for _, before, after in pending for text in (before, after)]
    try:
        matrix = np.asarray(embed(texts), dtype=np.float64)
    except ValueError:  # vectors of different lengths
        raise ScoringError(
            "the embedding provider returned vectors of different dimensions for one document"
        ) from None
    if matrix.ndim != EMBEDDING_MATRIX_DIMENSIONS or matrix.shape[0] != len(texts):
        raise ScoringError(
            f"the embedding provider returned {matrix.shape[0]} vectors for {len(texts)} texts"
        )
    before, after = matrix[0::2], matrix[1::2]
    # Cosine of each pair at once: the pure-Python one took a quarter of the strategy's time.
    norms = np.linalg.norm(before, axis=1) * np.linalg.norm(after, axis=1)
    dots = np.einsum("ij,ij->i", before, after)
    similarity = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    return [
        (position, 1.0 - float(value))
        for (position, _, _), value in zip(pending, similarity, strict=True)
    ]


class SemanticCuts:
    """The structure walk's cuts, ending chunks at breakpoints where it can: the
    `CutPolicy` of the semantic strategy."""

    def __init__(self, walk: WalkSeam, inputs: PlanInputs) -> None:
        self.walk = walk
        self.doc = walk.doc
        self.measures = measures = walk.measures
        self.source = walk.doc.outline.source
        self.end = walk.doc.outline.content_end
        self.tree = inputs.tree
        self.options = options = inputs.options
        self.maximum = measures.maximum
        self._last_room: tuple[int, int] | None = None
        """The start `_room` was last asked about, and its answer."""
        breaks = own_parameters(options, SemanticBreaks)
        self.min_fill = breaks.min_fill
        distances = boundary_distances(
            list(self._sections()),
            self.source,
            breaks.window,
            inputs.scoring.embed,
        )
        self.breakpoints: list[int] = []
        """Where a unit starts after a meaning shift, ascending."""
        if distances:
            threshold = percentile([d for _, d in distances], breaks.percentile)
            self.breakpoints = [p for p, d in distances if d > threshold]
        self.headings = [
            p
            for p, level in zip(self.doc.coarse_positions, self.doc.coarse_levels, strict=True)
            if Level.H1 <= level <= Level.H6
        ]
        """Section boundaries (where a heading, or the markup opening it, starts)."""
        self.ends = sorted({*self.breakpoints, *self.headings, self.end})
        """Where a chunk ends best: a breakpoint, a heading, or the end of the document."""
        self.break_set = set(self.breakpoints)
        self.end_totals = measures.totals(self.ends)
        self.heading_totals = measures.totals(self.headings)

    # -- units -------------------------------------------------------------------

    def _sections(self) -> Iterator[list[UnitSpan]]:
        """Each section's units in order: its sentences, and its tables and code whole.

        A section is a run of blocks under the same headings; a heading, or the end of a
        container, starts the next one. Boundaries where no chunk may end (inside a
        heading zone or a table's header) or that fall inside a row or line are no
        boundaries: their units are joined.
        """
        outline, doc = self.doc.outline, self.doc
        units: list[UnitSpan] = []
        chain: list[int] | None = None
        for block in outline.blocks:
            if block.start >= self.end:
                break
            if block.end <= outline.body_start or block.kind in _SKIPPED_BLOCKS:
                continue
            here = self.tree.chain_at(block.start)
            if block.kind in _NO_UNIT or here != chain:
                if units:
                    yield units
                units, chain = [], here
                if block.kind in _NO_UNIT:
                    continue
            if doc.region_at(block.start) >= 0:
                pieces = [(block.start, block.end)]
            else:
                starts = [block.start, *doc.sentence_positions(block.start, block.end)]
                pieces = list(zip(starts, [*starts[1:], block.end], strict=True))
            for low, high in pieces:
                start, end = trim(self.source, low, min(high, self.end))
                if start >= end:
                    continue
                if units and not self._boundary_allowed(start):
                    units[-1] = (units[-1][0], end)
                else:
                    units.append((start, end))
        if units:
            yield units

    def _boundary_allowed(self, position: int) -> bool:
        """Whether a chunk may end before `position`, a unit start."""
        if not self.doc.can_cut(position):
            return False
        # Inside a table or code block only at a line start (never inside a row or line).
        return self.doc.region_at(position) < 0 or self.source[position - 1] in "\r\n"

    # -- choosing ------------------------------------------------------------------

    def _room(self, start: int) -> int:
        """The walk's room, once per start: `_at_break` and the fallback both need it."""
        if self._last_room is None or self._last_room[0] != start:
            self._last_room = (start, self.measures.room(start))
        return self._last_room[1]

    def next_span(self, start: int, previous_end: int) -> Span | None:
        """The chunk to the furthest breakpoint that fits, else the walk's own cut."""
        span = self._at_break(start, previous_end)
        if span is not None:
            return span
        return self.walk.cut(start, previous_end, self._room(start))

    def _at_break(self, start: int, previous_end: int) -> Span | None:
        """The chunk from `start` to the furthest breakpoint or heading that fits and
        leaves it `min_fill` full, not past a heading the structure strategy ends at."""
        room = self._room(start)
        base = self.measures.total(start)
        limit = base + room
        last = bisect.bisect_right(self.end_totals, limit) - 1
        first = bisect.bisect_right(self.ends, max(start, previous_end))
        barrier = self._barrier(start, base, room, limit)
        if barrier is not None:
            last = min(last, bisect.bisect_right(self.ends, barrier) - 1)
        for index in range(last, max(first, last - EXACT_TRIES + 1) - 1, -1):
            if self.end_totals[index] - base < self.min_fill * room:
                return None
            end = self.ends[index]
            if not self.doc.can_cut(end):
                continue
            span = self.measures.span(start, end)
            if span is not None and span.size <= self.maximum and span.end > previous_end:
                return span
        return None

    def _barrier(self, start: int, base: int, room: int, limit: int) -> int | None:
        """The first heading after `start` a chunk must end at: with sections apart, the
        first one past `section_fill` of the room (the sections before it stand alone)."""
        fill = self.options.section_fill
        if fill is None:
            return None
        index = bisect.bisect_right(self.headings, start)
        while index < len(self.headings) and self.heading_totals[index] <= limit:
            if self.heading_totals[index] - base >= fill * room:
                return self.headings[index]
            index += 1
        return None

    def overlaps(self, next_start: int) -> bool:
        """No overlap after a breakpoint: the next chunk is about something else."""
        return next_start not in self.break_set and self.walk.overlaps(next_start)


SEMANTIC = StrategyDeclaration(
    name="semantic",
    plan=semantic_spans,
    summary="where the meaning shifts",
    flag_help="where the meaning shifts (embeds sentences with the app's embedding provider: "
    "EMBEDDING_PROVIDER, local by default)",
    parameters=SemanticBreaks,
    rows=(
        Parameter(
            "semanticPercentile",
            "number",
            "a break where the distance between neighbouring sentence groups is above this "
            "percentile of the document's (0 to 100)",
            f"`{DEFAULT_SEMANTIC_PERCENTILE:g}`",
            setting="CHUNK_SEMANTIC_PERCENTILE",
            attribute="semantic.percentile",
            option="semantic.percentile",
            flag=Flag(
                "--semantic-percentile",
                "strategy semantic: a break where the distance is above this percentile "
                f"(default: {DEFAULT_SEMANTIC_PERCENTILE:g})",
            ),
        ),
        Parameter(
            "semanticWindow",
            "integer",
            "sentences embedded either side of a boundary (1 to 5)",
            f"`{DEFAULT_SEMANTIC_WINDOW}`",
            setting="CHUNK_SEMANTIC_WINDOW",
            attribute="semantic.window",
            option="semantic.window",
            flag=Flag(
                "--semantic-window",
                "strategy semantic: sentences embedded either side of a boundary "
                f"(default: {DEFAULT_SEMANTIC_WINDOW})",
            ),
        ),
        Parameter(
            "semanticMinFill",
            "number",
            "share of the room (0 to 1) a chunk holds before a break may end it",
            f"`{DEFAULT_SEMANTIC_MIN_FILL:g}`",
            setting="CHUNK_SEMANTIC_MIN_FILL",
            attribute="semantic.min_fill",
            option="semantic.min_fill",
            flag=Flag(
                "--semantic-min-fill",
                "strategy semantic: share of the room a chunk holds before a break ends it "
                f"(default: {DEFAULT_SEMANTIC_MIN_FILL:g})",
            ),
        ),
    ),
    scored=True,
)
"""The `semantic` strategy, as every surface sees it."""
