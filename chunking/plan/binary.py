"""The `binary` strategy: the recursive least-similar split (smart_chunker's design).

Structure first: sections are the first cut, so no chunk spans a heading. Small
neighbouring sections share a chunk as the structure strategy's `sections` option says
(apart, the default: a section is joined by the next while under a quarter of the limit
and the two fit; packed: while they fit). On samples/eval at 512 tokens (180 questions,
multilingual-e5-small): apart 0.906 complete@5, MRR@10 0.779, 469 chunks; packed 0.900,
0.723, 344; every section alone 0.911, 0.762, 564: the same within noise (intervals
±0.04), apart has the best MRR and fewer chunks than sections alone.

A section that fits is one chunk; one that does not is cut into its units, sentences
(the multilingual segmentation the structure strategy uses) and whole blocks, where a
table or code block is one unit. A part that fits the limit (its embedded text, title
and heading prefix included, measured by the structure walk's own measure) is a
chunk; a part that does not is split at the boundary between two units where the text
before and the text after are least similar, and both halves are split again the same
way. A unit over the limit alone (a giant sentence, table or code block) is cut as the
`words` strategy cuts a window too big: at row or line ends, else words, and a warning
counts them. Chunks do not overlap: `pageOverlapLength` does not apply.

Candidates and cost. In a part of n units the split positions scored are its unit
boundaries that leave each side at least `MIN_SIDE_SHARE` of the room (all of them if
none does), at most `BinarySplit.candidates` (K) of them, evenly spread: the first,
the last and K - 2 between at equal steps of the boundary index. Each split costs one
scorer call: K pairs (`crossEncoder`, `rerank`) or up to 2K texts to embed
(`embeddings`, each distinct text embedded once per document by `CachedEmbedder`, so
a level costs little more than its new boundaries). A split makes one chunk more, so
a document costs at most (chunks - sections) calls and K times as many pairs (2K
texts): linear in the document, O(K) per chunk (a split leaves each side a quarter of
the room, so the recursion is at most size / (room / 4) levels deep, and a level of
it costs at most K per part). On the corpus, scoring stubbed: 95 calls and 1,096
texts per MB at 512 tokens (`python -m bench.strategy_binary`). Each text scored is the
`SIDE_SENTENCES` units nearest the boundary, clipped to `SIDE_CHARACTERS` characters
nearest it, so the text sent per call is bounded too. Measuring is by running totals
(`SpanSizer.total`), exactly only for parts whose estimate is near the limit, so the
recursion stays linear in the text whatever its depth.
"""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from chunking.model import Level
from chunking.offsets import skip_space, trim
from chunking.options import TooManyChunks
from chunking.plan.binary_params import BINARY_SCORERS, DEFAULT_BINARY_CANDIDATES, BinarySplit
from chunking.plan.core import Plan, own_parameters
from chunking.plan.declaration import Flag, Parameter, StrategyDeclaration
from chunking.plan.scoring import CachedEmbedder, ScoringError, cosine
from chunking.plan.walk import walk_seam
from chunking.plan.words import WordWindowPlanner

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from chunking.model import Span
    from chunking.plan.core import PlanInputs
    from chunking.plan.scoring import TextEmbedder
    from chunking.plan.walk import WalkSeam

MIN_SIDE_SHARE = 0.25
"""A split leaves each side at least this share of the room when it can: the least
similar boundary of a long part is often next to its edge (a closing sentence unlike
the rest), and splitting there makes one-sentence chunks, peers' known failure. On
samples/eval at 512 tokens: 0 (every boundary, smart_chunker as published) 0.872
complete@5, MRR@10 0.746, 595 chunks, 228 scorer calls; 0.25: 0.906, 0.779, 469, 93;
0.4: 0.900, 0.770, 464, 88."""
SIDE_SENTENCES = 3
"""Units (sentences, or whole blocks) either side of a boundary that are scored. On
samples/eval at 512 tokens: 1: 0.906 complete@5, MRR@10 0.776, 1,044 texts embedded;
3: 0.906, 0.779, 1,107; 6: 0.917, 0.776, 1,257 (two questions, within noise)."""
SIDE_CHARACTERS = 1_000
"""At most this many characters of a side, nearest the boundary: about 250 tokens of
English, within the 512 positions of multilingual-e5-small and a cross-encoder."""
OVER_ESTIMATE = 1.1
"""A part whose estimated size is over this times its room is over the limit without
being measured exactly (estimates differ from exact sizes by a token at each edge)."""
OVER_ESTIMATE_MARGIN = 16
"""...and by this many units more, for small limits."""
PAIR_SOURCES = ("crossEncoder", "rerank")
"""The pair scorers an app configures (`Scoring.pair_source`), one at a time."""


def binary_spans(inputs: PlanInputs) -> Plan:
    """Sections, each split recursively at its least similar unit boundary until it fits."""
    walk = walk_seam(inputs)
    splitter = _BinarySplitter(walk, partial(WordWindowPlanner, inputs), inputs)
    spans = splitter.spans()
    return Plan(spans, tuple(splitter.warnings()))


@dataclass(frozen=True, slots=True)
class Split:
    """A part too big, and the boundaries it may be split at (unit boundaries)."""

    positions: tuple[int, ...]
    """Offsets: the part's start, its unit boundaries, its end."""
    totals: tuple[int, ...]
    """The running size total (`SpanSizer.total`) at each of `positions`."""


def spread(low: int, high: int, count: int) -> list[int]:
    """At most `count` indices from `low` to `high` (inclusive), evenly spread, ends kept."""
    length = high - low + 1
    if length <= count:
        return list(range(low, high + 1))
    if count == 1:
        return [(low + high) // 2]
    step = (length - 1) / (count - 1)
    return sorted({low + round(index * step) for index in range(count)})


class _BinarySplitter:
    """One document's sections, units and splits, on the structure walk's indexes
    (boundaries, no-cut zones, sentences, measure) and the words strategy's cutter."""

    def __init__(
        self,
        structure: WalkSeam,
        planner: Callable[[], WordWindowPlanner],
        inputs: PlanInputs,
    ) -> None:
        self.doc = structure.doc
        self.outline = structure.doc.outline
        self.source = self.outline.source
        self.options = inputs.options
        self.own = own_parameters(inputs.options, BinarySplit)
        self.measure = structure.measures
        self.maximum = self.measure.maximum
        self.scoring = scoring = inputs.scoring
        self.embed: TextEmbedder = (
            scoring.embed
            if isinstance(scoring.embed, CachedEmbedder)
            else CachedEmbedder(scoring.embed)
        )
        self._make_planner = planner
        self.planner: WordWindowPlanner | None = None
        self.cut_alone = 0
        """Units over the limit alone, cut at rows, lines or words."""
        self.splits = 0
        """Parts split (one scorer call each)."""

    # -- sections -----------------------------------------------------------------

    def spans(self) -> list[Span]:
        """Every chunk in order."""
        taken = self.options.limits.maximum_pages_to_take
        cap = self.options.max_chunks
        result: list[Span] = []
        for start, end, span in self._groups():
            for piece in [span] if span is not None else self._split(start, end):
                result.append(piece)
                if taken and len(result) >= taken:
                    return result
            if cap and len(result) > cap:  # past the cap: the rest would only be refused
                raise TooManyChunks(cap)
        return result

    def _sections(self) -> list[tuple[int, int]]:
        """[start, end) of each section: between consecutive heading boundaries (a
        heading's zone keeps it with what follows, so no section is a heading alone)."""
        doc = self.doc
        start = skip_space(self.source, self.outline.body_start)
        end = self.outline.content_end
        cuts = [
            position
            for position, level in zip(doc.coarse_positions, doc.coarse_levels, strict=True)
            if Level.H1 <= level <= Level.H6 and start < position < end
        ]
        bounds = [start, *cuts, end]
        return [(low, high) for low, high in itertools.pairwise(bounds) if low < high]

    def _groups(self) -> list[tuple[int, int, Span | None]]:
        """Sections, small neighbours joined: (start, end, the chunk if it fits)."""
        fill = self.options.section_fill
        groups: list[tuple[int, int, Span | None]] = []
        for start, end in self._sections():
            span = self._fitting(start, end)
            if groups:
                low, _, previous = groups[-1]
                if (
                    previous is not None
                    and span is not None
                    and (fill is None or previous.size < fill * self.maximum)
                ):
                    merged = self._fitting(low, end)
                    if merged is not None:
                        groups[-1] = (low, end, merged)
                        continue
            if span is not None or self.measure.span(start, end) is not None:
                groups.append((start, end, span))
        return groups

    # -- measuring ----------------------------------------------------------------

    def _fitting(self, start: int, end: int) -> Span | None:
        """The chunk [start, end) if it fits the limit, else None (also for whitespace)."""
        estimate = self.measure.estimate(start, end)
        if estimate > self.measure.room(start) * OVER_ESTIMATE + OVER_ESTIMATE_MARGIN:
            return None
        span = self.measure.span(start, end)
        return span if span is not None and span.size <= self.maximum else None

    # -- splitting ------------------------------------------------------------------

    def _units(self, start: int, end: int) -> Split:
        """The section [start, end) with its unit boundaries: block starts and sentence
        starts where a chunk may end, none inside a table or code block."""
        doc = self.doc
        first = bisect.bisect_right(doc.coarse_positions, start)
        last = bisect.bisect_left(doc.coarse_positions, end)
        found = set(doc.coarse_positions[first:last])
        found.update(doc.sentence_positions(start, end))
        regions = self.outline.regions
        boundaries = []
        for position in sorted(found):
            region = doc.region_at(position)
            if region >= 0 and regions[region].start != position:
                continue  # inside a table or code block: they are units of their own
            if start < position < end and doc.can_cut(position):
                boundaries.append(position)
        positions = (start, *boundaries, end)
        return Split(positions, tuple(self.measure.totals(positions)))

    def _split(self, start: int, end: int) -> list[Span]:
        """The section [start, end), too big for a chunk, split until every part fits."""
        split = self._units(start, end)
        positions = split.positions
        result: list[Span] = []
        pending = [(0, len(positions) - 1)]
        """Parts still to do, by index into `positions`, the next one last."""
        while pending:
            first, last = pending.pop()
            low, high = positions[first], positions[last]
            span = self._fitting(low, high) if (first, last) != (0, len(positions) - 1) else None
            if span is not None:
                result.append(span)
                continue
            if last - first == 1:
                result.extend(self._cut_alone(low, high))
                continue
            middle = self._least_similar(split, first, last)
            pending += [(middle, last), (first, middle)]
        return result

    def _candidates(self, split: Split, first: int, last: int) -> list[int]:
        """Boundary indices of the part (first, last) to score (see the module docstring)."""
        totals = split.totals
        side = MIN_SIDE_SHARE * self.measure.room(split.positions[first])
        low = bisect.bisect_left(totals, totals[first] + side, first + 1, last)
        high = bisect.bisect_right(totals, totals[last] - side, first + 1, last) - 1
        if low > high:
            low, high = first + 1, last - 1
        return spread(low, high, self.own.candidates)

    def _sides(self, split: Split, first: int, last: int, index: int) -> tuple[str, str]:
        """The text either side of boundary `index`, bounded, nearest it."""
        positions, source = split.positions, self.source
        left = source[positions[max(first, index - SIDE_SENTENCES)] : positions[index]]
        right = source[positions[index] : positions[min(last, index + SIDE_SENTENCES)]]
        return left[-SIDE_CHARACTERS:].strip(), right[:SIDE_CHARACTERS].strip()

    def _least_similar(self, split: Split, first: int, last: int) -> int:
        """The boundary index of the part (first, last) where its halves are least similar;
        ties go to the one nearest the part's middle, then the first."""
        candidates = self._candidates(split, first, last)
        sides = [self._sides(split, first, last, index) for index in candidates]
        self.splits += 1
        scores = self._scores(sides)
        totals = split.totals
        middle = (totals[first] + totals[last]) / 2
        best = min(
            range(len(candidates)),
            key=lambda at: (scores[at], abs(totals[candidates[at]] - middle), at),
        )
        return candidates[best]

    def _scores(self, sides: Sequence[tuple[str, str]]) -> list[float]:
        """Similarity of each (left, right), by the scorer `binaryScorer` names."""
        if self.own.scorer == "embeddings":
            texts = [text for pair in sides for text in pair]
            vectors = dict(zip(texts, self.embed(texts), strict=True))
            return [cosine(vectors[left], vectors[right]) for left, right in sides]
        source, scorer = self.scoring.pair_source, self.own.scorer
        if source in PAIR_SOURCES and source != scorer:
            raise ScoringError(
                f"binaryScorer {scorer} is not configured here: pairs are scored by {source} "
                f"(binaryScorer {source} or embeddings)"
            )
        scores = list(self.scoring.pairs(list(sides)))
        if len(scores) != len(sides):
            raise ScoringError(
                f"the {source} scorer returned {len(scores)} scores for {len(sides)} pairs"
            )
        if not all(math.isfinite(score) for score in scores):
            raise ScoringError(f"the {source} scorer returned a score that is not a number")
        return [float(score) for score in scores]

    def _cut_alone(self, start: int, end: int) -> list[Span]:
        """A unit over the limit alone, cut as the `words` strategy cuts a window."""
        begin, finish = trim(self.source, start, end)
        if begin >= finish:
            return []
        if self.planner is None:
            self.planner = self._make_planner()
        self.cut_alone += 1
        return list(self.planner.fitting(begin, finish))

    def warnings(self) -> list[str]:
        """What a user should know about the spans planned so far."""
        if not self.cut_alone:
            return []
        return [
            f"{self.cut_alone} sentence(s), table(s) or code block(s) were over "
            f"maximumPageLength ({self.maximum} {self.options.limits.unit.value}) alone, "
            "and were cut at rows, lines or words into chunks that fit"
        ]


BINARY_SCORER_CHOICES: Mapping[str, str] = {name: name for name in BINARY_SCORERS}

BINARY = StrategyDeclaration(
    name="binary",
    plan=binary_spans,
    summary="recursive least-similar split",
    flag_help="recursive least-similar split (scored with the app's embedding provider, "
    "cross-encoder or rerank endpoint)",
    parameters=BinarySplit,
    rows=(
        Parameter(
            "binaryScorer",
            "choice",
            "what scores a split: `embeddings` (the embedding provider), `crossEncoder` "
            "(`CROSS_ENCODER_PATH`) or `rerank` (`RERANK_ENDPOINT`)",
            f"`{BinarySplit().scorer}`",
            setting="CHUNK_BINARY_SCORER",
            attribute="binary.scorer",
            choices=BINARY_SCORER_CHOICES,
            option="binary.scorer",
            flag=Flag(
                "--binary-scorer",
                "strategy binary: what scores a split (embeddings: the app's embedding provider; "
                "crossEncoder: CROSS_ENCODER_PATH; rerank: RERANK_ENDPOINT) "
                f"(default: {BinarySplit().scorer})",
            ),
        ),
        Parameter(
            "binaryCandidates",
            "integer",
            "split positions scored per part, at most (1 to 256)",
            f"`{DEFAULT_BINARY_CANDIDATES}`",
            setting="CHUNK_BINARY_CANDIDATES",
            attribute="binary.candidates",
            option="binary.candidates",
            flag=Flag(
                "--binary-candidates",
                "strategy binary: split positions scored per part, at most "
                f"(default: {DEFAULT_BINARY_CANDIDATES})",
            ),
        ),
    ),
    scored=True,
)
"""The `binary` strategy, as every surface sees it."""
