"""The `words` strategy: fixed windows of `size` words, each `size - overlap` words on.

The simplest cut the chunking literature teaches. A window is a span of the source
from the start of its first word to the end of its last; its embedded text carries
the same title and heading prefix as any chunk. What a word is: a run of
non-whitespace characters, as `str.split` and the lesson count them, except that
each Chinese or Japanese character (Han, kana) counts as one word with the
punctuation right after it, since those scripts put no spaces between words
(Korean does, and is counted by its spaces).

Tables and code keep their rows and lines whole: a window that starts inside a row
or line starts at its beginning instead, and one that ends inside one ends at its
end (so such a window holds a few more words than `size`). A window whose embedded
text is over `maximumPageLength` is cut, at a row or line end when it can be, else
at a word boundary, into consecutive chunks that fit; a warning counts them.
"""

from __future__ import annotations

import bisect
import functools
import re
from typing import TYPE_CHECKING

from chunking.model import Span
from chunking.options import PAGE_OVERLAP_LENGTH, WORD_OVERLAP, TooManyChunks, Unit
from chunking.plan.core import Plan, own_parameters
from chunking.plan.declaration import Flag, Parameter, StrategyDeclaration
from chunking.plan.words_params import (
    DEFAULT_WORD_OVERLAP,
    DEFAULT_WORDS_PER_CHUNK,
    WordScope,
    WordWindows,
    default_word_overlap,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

    from chunking.model import Region
    from chunking.plan.core import PlanInputs

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
"""Hiragana, katakana, CJK ideographs (extension A, unified, compatibility)."""
_CJK_PUNCTUATION = "\u3001-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
"""CJK and fullwidth punctuation, which stays with the character before it."""


@functools.cache
def word_pattern() -> re.Pattern[str]:
    """One word: a CJK character (and its punctuation), or a run of other non-whitespace.

    Compiled on first use, not at import: its CJK ranges make it the costliest pattern a
    start-up compiled, and only the `words` strategy needs it."""
    return re.compile(f"[{_CJK}][{_CJK_PUNCTUATION}]*|[^\\s{_CJK}]+")


REACH_CHARACTERS_PER_TOKEN = 8
"""A window cut to fit is cut within this many characters per token of the limit, as
the structure walk's last resort is: twice English's ~4, and it keeps a giant word
(a megabyte of base64) from being measured whole for every piece cut from it."""


def word_spans(inputs: PlanInputs) -> Plan:
    """Word windows over the document (or each section), cut further only to fit the limit."""
    planner = WordWindowPlanner(inputs)
    spans = planner.spans()
    return Plan(spans, tuple(planner.warnings()))


def words_of(source: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """The (start, end) of every word of `source[start:end]`, in order."""
    stop = len(source) if end is None else end
    return [match.span() for match in word_pattern().finditer(source, start, stop)]


class WordWindowPlanner:
    """One document's windows: its words, grouped by section, and the limit to keep."""

    def __init__(self, inputs: PlanInputs) -> None:
        outline, options = inputs.outline, inputs.options
        tree, sizer, context = inputs.tree, inputs.sizer, inputs.context
        self.outline = outline
        self.source = outline.source
        self.tree = tree
        self.sizer = sizer
        self.context = context
        self.options = options
        self.windows = own_parameters(options, WordWindows)
        """The `words` strategy's windows (their defaults for a strategy cutting with it)."""
        self.maximum = options.limits.maximum_page_length
        self.words = words_of(self.source, outline.body_start, outline.content_end)
        self.starts = [start for start, _ in self.words]
        self.region_starts = [region.start for region in outline.regions]
        self._reach = self.maximum * (
            1 if options.limits.unit is Unit.CHARACTERS else REACH_CHARACTERS_PER_TOKEN
        )
        """How many characters from its start a chunk can reach at most, or nearly."""
        self.cut_windows = 0
        """Windows over the limit, cut into several chunks."""
        self.cut_rows = 0
        """Rows or code lines too big for a chunk of their own, cut at a word."""

    # -- the windows ----------------------------------------------------------

    def spans(self) -> list[Span]:
        """All chunks in order: every window of every group, each within the limit."""
        size, overlap = self.windows.size, self.windows.overlap
        taken = self.options.limits.maximum_pages_to_take
        cap = self.options.max_chunks
        result: list[Span] = []
        previous_start, previous_end = -1, -1
        for first, last in self._groups():
            index = first
            while True:
                stop = min(index + size, last)
                start, end = self._whole_rows(index, stop - 1, previous_start, previous_end)
                if start < end:
                    for span in self.fitting(start, end):
                        result.append(span)
                        if taken and len(result) >= taken:
                            return result
                        if cap and len(result) > cap:
                            # Stop here: a window per word or two, each with its prefix,
                            # would otherwise hold the worker's memory for a refusal.
                            raise TooManyChunks(cap)
                    # A window cut to fit ends in pieces: the next one starts past the last.
                    previous_start, previous_end = result[-1].start, max(end, result[-1].end)
                if stop >= last:
                    break
                index += size - overlap
        return result

    def _groups(self) -> Iterator[tuple[int, int]]:
        """Word index ranges [first, last) that windows stay inside.

        In a section scope a heading starts a group, and so does the end of a container
        (docfx tabs, zones); a group of headings alone goes with the next group, as a
        heading always goes with the content after it.
        """
        count = len(self.words)
        if self.windows.scope is WordScope.DOCUMENT or not self.outline.headings:
            if count:
                yield 0, count
            return
        cuts = {h.start for h in self.outline.headings}
        cuts.update(h.section_end for h in self.outline.headings if h.section_end is not None)
        firsts = sorted({bisect.bisect_left(self.starts, cut) for cut in cuts} | {0})
        bounds = [f for f in firsts if f < count] + [count]
        begin = 0
        for index in range(1, len(bounds)):
            low, high = bounds[index - 1], bounds[index]
            if high < count and self._headings_only(low, high):
                continue
            if begin < high:
                yield begin, high
            begin = high

    def _headings_only(self, low: int, high: int) -> bool:
        """Whether words [low, high) all lie inside headings."""
        heading_starts = self.tree.starts
        for start, _ in self.words[low:high]:
            index = bisect.bisect_right(heading_starts, start) - 1
            if index < 0 or start >= self.tree.headings[index].end:
                return False
        return True

    # -- rows and lines stay whole ----------------------------------------------

    def _region_at(self, position: int) -> Region | None:
        index = bisect.bisect_right(self.region_starts, position) - 1
        if index >= 0 and position < self.outline.regions[index].end:
            return self.outline.regions[index]
        return None

    def _line_start(self, position: int, low: int) -> int:
        """The start of the line holding `position`, looked for back to `low` at most
        (a region's start: an unbounded search is quadratic over a long document)."""
        source = self.source
        return (
            max(source.rfind("\n", low, position), source.rfind("\r", low, position), low - 1) + 1
        )

    def _line_end(self, position: int, high: int) -> int:
        """The end of the line holding `position`, or `high` if that comes first."""
        source = self.source
        ends = (source.find("\n", position, high), source.find("\r", position, high))
        return min((e for e in ends if e >= 0), default=high)

    def _row_start(self, word: int) -> int:
        """The start of the first word of the row or code line holding `word`."""
        start = self.words[word][0]
        region = self._region_at(start)
        if region is None:
            return start
        line_start = self._line_start(start, region.start)
        return self.words[bisect.bisect_left(self.starts, line_start)][0]

    def _row_end(self, word: int) -> int:
        """The end of the last word of the row or code line holding `word`."""
        end = self.words[word][1]
        region = self._region_at(self.words[word][0])
        if region is None:
            return end
        line_end = self._line_end(end, min(region.end, self.outline.content_end))
        return self.words[bisect.bisect_left(self.starts, line_end) - 1][1]

    def _whole_rows(
        self, first: int, last: int, previous_start: int, previous_end: int
    ) -> tuple[int, int]:
        """The span of words [first, last] widened to whole rows and lines.

        Widened back, a window can start where the previous one does (a row longer than
        the step): it starts at the next row instead, the previous window holding that
        row whole. An empty span: the previous window holds all of this one (it ends
        at the same row end), so it is left out.
        """
        start, end = self._row_start(first), self._row_end(last)
        if end <= previous_end:
            return 0, 0
        if start <= previous_start:
            # Past the row the previous chunk starts in, or, after a window cut in
            # pieces, past the last piece: what lies before is in the previous chunks.
            region = self._region_at(start)
            row_end = 0 if region is None else self._line_end(self.words[first][1], region.end)
            start = self._next_start(max(row_end, previous_end))
        return (start, end) if start < end else (0, 0)

    # -- fitting the limit --------------------------------------------------------

    def _span(self, start: int, end: int) -> Span:
        """The chunk [start, end): heading path, prefix, size."""
        chain = tuple(self.tree.chain_of_chunk(self.source, start, end))
        names = self.tree.names(list(chain))
        text = self.context.text(names, self.source[start:end])
        return Span(start, end, chain, names, text, self.sizer.size(text))

    def fitting(self, start: int, end: int) -> Iterator[Span]:
        """The window [start, end) as one chunk, or cut into consecutive chunks that fit."""
        span = self._span(start, end)
        if span.size <= self.maximum:
            yield span
            return
        self.cut_windows += 1
        while start < end:
            span = self._longest_fit(start, end)
            yield span
            start = self._next_start(span.end)
            if start >= end:
                return

    def _next_start(self, position: int) -> int:
        """Where the chunk after one ending at `position` starts: right there inside a
        word cut at a character, else at the next word (the end of the source if none)."""
        index = bisect.bisect_right(self.starts, position) - 1
        if index >= 0 and self.words[index][0] < position < self.words[index][1]:
            return position
        following = bisect.bisect_left(self.starts, position)
        return self.words[following][0] if following < len(self.words) else len(self.source)

    def _longest_fit(self, start: int, end: int) -> Span:
        """The longest chunk from `start` within the limit ending at a row end, else at
        a word end, else (one giant word) at a character."""
        first = max(bisect.bisect_right(self.starts, start) - 1, 0)
        horizon = start + self._reach
        # Words starting past the horizon end past it: looking only up to there keeps a
        # long span cut in many pieces (the binary strategy's giant table) linear.
        last = min(bisect.bisect_left(self.starts, end), bisect.bisect_right(self.starts, horizon))
        word_ends = [e for e in (self.words[i][1] for i in range(first, last)) if e <= horizon]
        row_ends = [e for e in word_ends if self._region_at(e - 1) is None or self._at_row_end(e)]
        for candidates, row_cut in ((row_ends, False), (word_ends, True)):
            span = self._bisect(start, candidates)
            if span is not None:
                if row_cut and self._region_at(span.end - 1) and not self._at_row_end(span.end):
                    self.cut_rows += 1
                return span
        characters = list(range(start + 1, min(end, horizon) + 1))
        span = self._bisect(start, characters)
        return span if span is not None else self._span(start, start + 1)

    def _at_row_end(self, position: int) -> bool:
        """Whether only whitespace follows `position` on its line (of its region)."""
        region = self._region_at(position - 1)
        high = self.outline.content_end if region is None else region.end
        return not self.source[position : self._line_end(position, high)].strip()

    def _bisect(self, start: int, ends: list[int]) -> Span | None:
        """The chunk from `start` to the furthest of `ends` (ascending) that fits, if any.

        Sizes grow with the end but for a token merged at the join: bisection finds the
        furthest end that fits, and the ends before it are tried if that one does not.
        """
        low, high = 0, len(ends)
        while low < high:
            middle = (low + high) // 2
            if self._span(start, ends[middle]).size <= self.maximum:
                low = middle + 1
            else:
                high = middle
        for index in range(low - 1, -1, -1):
            span = self._span(start, ends[index])
            if span.size <= self.maximum:
                return span
        return None

    def warnings(self) -> list[str]:
        """What a user should know about the windows planned so far."""
        found = []
        if self.cut_windows:
            found.append(
                f"{self.cut_windows} word window(s) of {self.windows.size} words were "
                f"over maximumPageLength ({self.maximum} {self.options.limits.unit.value}) with "
                "their prefix, and were cut at word boundaries into chunks that fit"
            )
        if self.cut_rows:
            found.append(
                f"{self.cut_rows} table row(s) or code line(s) too big for a chunk of their "
                "own were cut at a word"
            )
        return found


WORD_SCOPES: Mapping[str, WordScope] = {scope.value: scope for scope in WordScope}


def _overlap_in_words(spell: Callable[[str], str]) -> str:
    return f"its windows overlap by {spell(WORD_OVERLAP)}, in words"


def _overlap_default(values: Mapping[str, object], preferred: object) -> object:
    size = values["size"]
    # The table reads both as integers (kind "integer").
    assert isinstance(size, int)
    assert isinstance(preferred, int)
    return default_word_overlap(size, preferred)


WORDS = StrategyDeclaration(
    name="words",
    plan=word_spans,
    summary="fixed word windows",
    parameters=WordWindows,
    rows=(
        Parameter(
            "wordsPerChunk",
            "integer",
            "words in each window",
            f"`{DEFAULT_WORDS_PER_CHUNK}`",
            setting="CHUNK_WORDS_PER_CHUNK",
            attribute="words.size",
            option="words.size",
            flag=Flag(
                "--words-per-chunk",
                f"strategy words: words per window (default: {DEFAULT_WORDS_PER_CHUNK})",
            ),
        ),
        Parameter(
            WORD_OVERLAP,
            "integer",
            "words each window repeats from the previous one; less than half of `wordsPerChunk`",
            f"`{DEFAULT_WORD_OVERLAP}` (a fifth of `wordsPerChunk` when that is too many)",
            setting="CHUNK_WORD_OVERLAP",
            attribute="words.overlap",
            option="words.overlap",
            flag=Flag(
                "--word-overlap",
                "strategy words: words each window repeats from the previous one "
                f"(default: {DEFAULT_WORD_OVERLAP})",
            ),
        ),
        Parameter(
            "wordScope",
            "choice",
            "`section`: windows stay inside a section; `document`: they run over the document",
            f"`{WordScope.SECTION.value}`",
            setting="CHUNK_WORD_SCOPE",
            attribute="words.scope",
            choices=WORD_SCOPES,
            option="words.scope",
            flag=Flag(
                "--word-scope",
                "strategy words: windows stay in a section or run over the document "
                f"(default: {WordScope.SECTION.value})",
            ),
        ),
    ),
    refused={PAGE_OVERLAP_LENGTH: _overlap_in_words},
    derived_defaults={WORD_OVERLAP: _overlap_default},
)
"""The `words` strategy, as every surface sees it."""
