"""The `pages` strategy: the Text Split skill's own `pages` mode, emulated.

A strategy of the skill, so one index can hold both cuts (A/B through one skill), and the
structure-blind baseline the evaluation measures ours against (`evaluation.chunkers`).

What Microsoft documents (../shared/azure-contract.md §2.3): pages hold whole
sentences up to `maximumPageLength` ("does its best to break the text on sentence
boundaries"), and "each page starts with this number of characters or tokens from
the end of the previous page". Where the documentation is silent we take the
reading its published chunk counts support: the overlap counts toward the page's
length (1000/0 -> 172 pages, 1000/200 -> 216 on the same PDF), the overlap is the
exact tail (not snapped to a word), a sentence longer than a page is cut at the
last space that fits, else at the limit. Sentences come from the same segmenter
our chunker uses, so the baseline differs from ours only in ignoring structure.
"""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chunking.offsets import skip_space
from chunking.options import TooManyChunks
from chunking.plan.core import Plan
from chunking.plan.declaration import StrategyDeclaration
from chunking.plan.sentences import sentence_starts
from chunking.plan.words import WordWindowPlanner

if TYPE_CHECKING:
    from collections.abc import Callable

    from chunking.measure.sizing import Sizer, SpanSizer
    from chunking.model import Span
    from chunking.options import Limits
    from chunking.plan.core import PlanInputs

_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Page:
    """One page: `source[start:end]`, whitespace at both edges left out."""

    start: int
    end: int


def split_pages(
    source: str,
    sizer: Sizer,
    limits: Limits,
    language: str = "en",
    room: Callable[[int], int] | None = None,
) -> list[Page]:
    """The pages the Split skill's `pages` mode would cut `source` into; with `room`, a
    page starting at an offset holds at most `room(offset)` (the limit less a prefix)."""
    limit, overlap = limits.maximum_page_length, limits.page_overlap_length
    spans = sizer.spans(source)
    breaks = [*sentence_starts(source, language), len(source)]
    spaces = [match.end() for match in _SPACE.finditer(source)]
    pages: list[Page] = []
    start = _skip_space(source, 0)
    # Where the previous page ended: a page must reach past it, or it would hold
    # nothing but the overlap.
    covered = start
    while start < len(source):
        maximum = limit if room is None else room(start)
        end = _furthest(spans, start, covered, breaks, maximum)
        if end is None:
            end = _furthest(spans, start, covered, spaces, maximum) or _hard_end(
                spans, start, len(source), maximum
            )
        page = _trimmed(source, start, end)
        if page.end > page.start:
            pages.append(page)
        if end >= len(source) or 0 < limits.maximum_pages_to_take <= len(pages):
            break
        following = _tail_start(spans, start, end, overlap) if overlap else end
        start = _skip_space(source, following if following > start else end)
        covered = end
    return pages


def split_sentences(source: str, language: str = "en") -> list[Page]:
    """The Split skill's `sentences` mode: one page per sentence."""
    edges = [0, *sentence_starts(source, language), len(source)]
    pages = [_trimmed(source, a, b) for a, b in itertools.pairwise(edges)]
    return [page for page in pages if page.end > page.start]


def _furthest(
    spans: SpanSizer, start: int, after: int, candidates: list[int], maximum: int
) -> int | None:
    """The last candidate position after `after` whose page from `start` fits (bisection)."""
    low = bisect.bisect_right(candidates, max(start, after))
    high = len(candidates) - 1
    best = None
    while low <= high:
        middle = (low + high) // 2
        if spans.span(start, candidates[middle]) <= maximum:
            best = candidates[middle]
            low = middle + 1
        else:
            high = middle - 1
    return best


def _hard_end(spans: SpanSizer, start: int, length: int, maximum: int) -> int:
    """The furthest position whose page from `start` fits: a cut inside a word."""
    # Past horizon(total(start) + maximum) every page from `start` is too long; the
    # second bound is the one this search always had (tokens' estimates are loose).
    reach = max(spans.horizon(spans.total(start) + maximum), start + spans.horizon(maximum))
    low, high = start + 1, min(length, reach + 1)
    while low < high:
        middle = (low + high + 1) // 2
        if spans.span(start, middle) <= maximum:
            low = middle
        else:
            high = middle - 1
    return low


def _tail_start(spans: SpanSizer, start: int, end: int, overlap: int) -> int:
    """The earliest position whose tail up to `end` is at most `overlap` long."""
    low, high = start + 1, end
    while low < high:
        middle = (low + high) // 2
        if spans.span(middle, end) <= overlap:
            high = middle
        else:
            low = middle + 1
    return low


def _skip_space(source: str, position: int) -> int:
    while position < len(source) and source[position].isspace():
        position += 1
    return position


def _trimmed(source: str, start: int, end: int) -> Page:
    while start < end and source[start].isspace():
        start += 1
    while end > start and source[end - 1].isspace():
        end -= 1
    return Page(start, end)


def page_spans(inputs: PlanInputs) -> Plan:
    """The Split skill's pages of the document's body, each with the title and heading
    prefix every chunk has; a page the prefix takes past the limit is cut at word
    boundaries into chunks that fit, as an oversized word window is."""
    outline, options = inputs.outline, inputs.options
    body = outline.body_start
    taken, cap = options.limits.maximum_pages_to_take, options.max_chunks
    fitter = WordWindowPlanner(inputs)
    spans: list[Span] = []
    source = outline.source[body : outline.content_end]
    room = _room(inputs, body)
    for page in split_pages(source, inputs.sizer, options.limits, options.language, room):
        start, end = body + page.start, body + page.end
        if spans and start <= spans[-1].start:
            # The page before was cut to fit: this one starts past its last piece.
            start = skip_space(outline.source, spans[-1].end, end)
        if start < end:
            spans.extend(fitter.fitting(start, end))
        if cap and len(spans) > cap:
            raise TooManyChunks(cap)
    if taken:
        del spans[taken:]
    warnings = []
    if fitter.cut_windows:
        warnings.append(
            f"{fitter.cut_windows} page(s) were over maximumPageLength ({fitter.maximum} "
            f"{options.limits.unit.value}) with their prefix, and were cut at word "
            "boundaries into chunks that fit"
        )
    return Plan(spans, tuple(warnings))


def _room(inputs: PlanInputs, body: int) -> Callable[[int], int]:
    """Room for the content of a page starting at a body offset: the limit less the
    prefix of the sections holding that offset, the longest a page from there can have
    (a page across sections takes their common, shorter, path)."""
    tree, context = inputs.tree, inputs.context
    maximum = inputs.options.limits.maximum_page_length

    def room(start: int) -> int:
        _, prefix_size = context.prefix(tree.names(tree.chain_at(body + start)))
        return max(1, maximum - prefix_size)

    return room


PAGES = StrategyDeclaration(
    name="pages",
    plan=page_spans,
    summary="the Text Split skill's pages (sentences up to the limit, blind to structure)",
)
"""The `pages` strategy, as every surface sees it: no parameters of its own (the
limits and `pageOverlapLength` are the Split skill's)."""
