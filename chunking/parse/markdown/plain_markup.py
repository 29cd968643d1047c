"""Markup noise in prose found in one pass, however many of its openers never close.

A regex alternative such as `\\[[^\\]]+\\]\\(` reads from its opener to the closer: where
the closer never comes (`[` in "the value lies in [0, 1)", a log's `[INFO`), each
opener reads the rest of the text, and chunking turns quadratic (issue 26: 33.5 s for
40,000 `[`).  Here the regex stops at the opener of every such markup (a link, an
image, a reference, a docfx include or image, an HTML comment), and `MarkupScan`
finds its closer with a search that remembers where it found the last one: every
opener before that closer is answered from memory, every opener after a search that
found nothing is answered at once.  What it finds is what the one regex of all the
alternatives found (`tests/chunking/parse/test_markup_scan.py` holds it to that regex).
"""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chunking.quick_init import quick_init

if TYPE_CHECKING:
    from collections.abc import Iterator

_SCAN = re.compile(
    r"""
    `(?P<tick>)                                         # opener: inline code
    | \\(?P<escape>[#>|`~+\-*_=.)<])                     # an escape: the character
    | <(?P<comment>)(?=!--)                             # opener: MarkupScan closes it
    | \[!(?P<alert>NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]  # docfx alert: > [!NOTE] -> > NOTE:
    | \[(?P<bracket>)                                   # opener: include, link, reference
    | :(?P<colon>)(?=::image\b)                         # opener: docfx image
    | !(?P<bang>)(?=\[)                                 # opener: image
    | <(?P<tag>/?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>\n]*)?/?>)
    | \*(?P<bold>\*) | _(?P<underscores>_)
    """,
    re.VERBOSE | re.DOTALL,
)
"""Every markup whose end is near its start, and the opener of every other.

Each alternative begins with a literal character outside any group, so the regex
engine scans for the first characters instead of trying the pattern at each position.
An opener takes one character, so a scan goes on at the next one when its markup
does not close, as the one regex did when one alternative failed and the others were
tried.  A docfx alert comes before the `[` opener: the include it stands for (`[!INCLUDE`)
and an alert never begin at the same place, and the links and references do not come
before an alert."""
_OPENERS = frozenset({"tick", "comment", "bracket", "colon", "bang"})
_BACKTICKS = re.compile("`+")
_INCLUDE_HEAD = re.compile(r"\[!INCLUDE\s*\[")
"""A docfx include up to its file's link text: `[!INCLUDE [title](path)]`."""
_DESTINATION = re.compile(r"""\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)""")
"""A link's or image's `(destination "title")`; it ends at the first space or parenthesis
that it cannot take, or in its title's closing quote, so it reads only what it takes."""
_ALT_TEXT = 'alt-text="'
_COMMENT_OPEN = len("<!--")
_IMAGE_HEAD = len(":::image")


@quick_init
@dataclass(frozen=True, slots=True)
class Found:
    """Markup that `MarkupScan` closed: the span it covers and the span of its text."""

    low: int
    high: int
    lastgroup: str
    """The kind, as the group of the one regex it stands for names it."""
    inner_low: int
    inner_high: int
    """The span of the group `lastgroup` (link text, alt text)."""

    def span(self, group: int | str = 0) -> tuple[int, int]:
        """The whole span (group 0), else the span of the text inside."""
        return (self.low, self.high) if group == 0 else (self.inner_low, self.inner_high)

    def start(self) -> int:
        """Where the markup begins."""
        return self.low

    def end(self) -> int:
        """Where the markup ends."""
        return self.high


Markup = re.Match[str] | Found
"""Markup in prose: a match of the regex, or markup that `MarkupScan` closed."""


class MarkupScan:
    """The markup of `source[start:end]` in order, each found once, in linear time.

    `scanned` counts the characters each search read (the regex between matches, each
    closer search, each destination): the work of the scan, which tests compare between
    a text and a text twice as long.
    """

    __slots__ = ("_alt", "_found", "_runs", "_tail", "end", "scanned", "source", "start")

    def __init__(self, source: str, start: int, end: int) -> None:
        self.source = source
        self.start = start
        self.end = end
        self.scanned = 0
        self._found: dict[tuple[str, int], tuple[int, int]] = {}
        """Per needle and search limit: where the last search began, and what it found."""
        self._tail: tuple[int, int, int] = (-1, -1, -1)
        """The last `]` whose followers were read: where a link (or image) and a
        reference ending there end (-1: none)."""
        self._runs: tuple[list[int], list[int], list[int]] | None = None
        """The runs of backticks (`_backtick_runs`), once inline code needs them."""
        self._alt: tuple[int, int, int, int, int] = (-1, -1, -1, -1, -1)
        """The last docfx image's search: where it began, its line's end, and the
        `alt-text="`, closing quote and `:::` it found (-1: none on the line)."""

    def matches(self) -> Iterator[Markup]:
        """Every markup, in order; the regex starts over after each that an opener began."""
        source, end = self.source, self.end
        position = self.start
        while True:
            read_to = position
            for match in _SCAN.finditer(source, position, end):
                self.scanned += match.end() - read_to
                read_to = match.end()
                if match.lastgroup not in _OPENERS:
                    yield match
                    continue
                found = self._close(match)
                if found is not None:
                    yield found
                    position = found.high
                    break
            else:
                self.scanned += end - read_to
                return

    def _close(self, opener: re.Match[str]) -> Found | None:
        """The markup `opener` begins, if its closers come."""
        kind, low = opener.lastgroup, opener.start()
        if kind == "tick":
            return self._code(low)
        if kind == "bracket":
            return self._include(low) or self._link(low)
        if kind == "bang":
            close = self._next("]", low + 2)
            link_end = self._followers(close)[0] if close >= 0 else -1
            return Found(low, link_end, "image", low + 2, close) if link_end >= 0 else None
        if kind == "comment":
            close = self._next("-->", low + _COMMENT_OPEN)
            return Found(low, close + 3, "comment", low + 1, close + 3) if close >= 0 else None
        return self._image_directive(low)

    def _code(self, low: int) -> Found | None:
        """Inline code from the backtick at `low`, as `(?P<code>(`*)(?:(?!`\\2).)+?`\\2)`
        after it reads it, without its backtracking (cubic in a run of backticks).

        With `j` more backticks taken after the first (`\\2`, the most first), the code
        ends at the first `j + 1` backticks in a row past them, and its text may not
        begin there.  Within the opening run that rules out every `j` under half of the
        backticks after `low`; past it, `j + 1` backticks in a row begin a later run at
        least that long.  So `j` is as many as the run has after `low`, or one under the
        longest later run, whichever is fewer, and the code ends in the first later run
        that long.
        """
        if self._runs is None:
            # Before any code failed to close: the code ends at the first later run at
            # least as long as the backticks from `low` (then `j` is all of them), which a
            # search finds reading no further than that run.
            opening = _BACKTICKS.match(self.source, low, self.end)
            run_end = opening.end() if opening is not None else low + 1
            closer = "`" * (run_end - low)
            found = self.source.find(closer, run_end, self.end)
            if found >= 0:
                high = found + len(closer)
                self.scanned += high - low
                return Found(low, high, "code", low + 1, high)
            # No such run: from here on every opener reads the runs once read.
        starts, lengths, longest = self._backtick_runs()
        run = bisect.bisect_right(starts, low) - 1
        after = starts[run] + lengths[run] - low - 1
        taken = min(after, longest[run + 1] - 1)
        if taken < (after + 1) // 2:
            return None
        closing = run + 1
        while lengths[closing] <= taken:
            closing += 1
        self.scanned += closing - run
        high = starts[closing] + taken + 1
        return Found(low, high, "code", low + 1, high)

    def _backtick_runs(self) -> tuple[list[int], list[int], list[int]]:
        """Where each run of backticks begins, its length, and the longest run from it
        on (with a last entry of 0: none), read once per scan."""
        if self._runs is None:
            runs = [
                match.span() for match in _BACKTICKS.finditer(self.source, self.start, self.end)
            ]
            self.scanned += self.end - self.start
            starts = [low for low, _ in runs]
            lengths = [high - low for low, high in runs]
            longest = [*itertools.accumulate(reversed(lengths), max, initial=0)][::-1]
            self._runs = (starts, lengths, longest)
        return self._runs

    def _include(self, low: int) -> Found | None:
        """`[!INCLUDE [title](path)]` at `low`."""
        source, end = self.source, self.end
        head = _INCLUDE_HEAD.match(source, low, end)
        if head is None:
            return None
        self.scanned += head.end() - low
        close = self._next("]", head.end())
        if close < 0 or not source.startswith("(", close + 1, end):
            return None
        paren = self._next(")", close + 2)
        if paren < 0 or not source.startswith("]", paren + 1, end):
            return None
        return Found(low, paren + 2, "include", low + 1, paren + 2)

    def _link(self, low: int) -> Found | None:
        """`[text](destination)` or `[text][label]` at `low`: its text runs to the next `]`."""
        close = self._next("]", low + 1)
        if close <= low + 1:  # no `]`, or no text
            return None
        link_end, reference_end = self._followers(close)
        if link_end >= 0:
            return Found(low, link_end, "link", low + 1, close)
        if reference_end >= 0:
            return Found(low, reference_end, "reference", low + 1, close)
        return None

    def _followers(self, close: int) -> tuple[int, int]:
        """Where `](destination)` and `][label]` at `close` end (-1: not there).

        Every opener before a `]` shares its followers: they are read once per `]`.
        """
        if self._tail[0] == close:
            return self._tail[1], self._tail[2]
        source, end = self.source, self.end
        link_end = reference_end = -1
        destination = _DESTINATION.match(source, close + 1, end)
        if destination is not None:
            self.scanned += destination.end() - close
            link_end = destination.end()
        elif source.startswith("[", close + 1, end):
            # Up to the next `]`: past the label, nothing else is read again.
            label_end = source.find("]", close + 2, end)
            self.scanned += (label_end if label_end >= 0 else end) - close
            reference_end = label_end + 1 if label_end >= 0 else -1
        self._tail = (close, link_end, reference_end)
        return link_end, reference_end

    def _image_directive(self, low: int) -> Found | None:
        """`:::image ... alt-text="text" ... :::` on one line from `low` (its alt text may
        run on), the first `alt-text="` on the line that is followed by its closers."""
        end = self.end
        line_end = self._next("\n", low + _IMAGE_HEAD)
        line_end = end if line_end < 0 else line_end
        at = low + _IMAGE_HEAD
        # Images on one line share the alt texts after them: each is tried once.
        began, line, candidate, quote, colons = self._alt
        if line == line_end and began <= at and (candidate < 0 or at <= candidate):
            at = candidate if candidate >= 0 else line_end
        while True:
            candidate = self._next(_ALT_TEXT, at, line_end)
            if candidate < 0:
                break
            quote = self._next('"', candidate + len(_ALT_TEXT))
            if quote >= 0:
                stop = self._next("\n", quote + 1)
                colons = self._next(":::", quote + 1, end if stop < 0 else stop)
                if colons >= 0:
                    break
            at = candidate + 1
        self._alt = (low + _IMAGE_HEAD, line_end, candidate, quote, colons)
        if candidate < 0:
            return None
        return Found(low, colons + 3, "alt", candidate + len(_ALT_TEXT), quote)

    def _next(self, needle: str, position: int, limit: int | None = None) -> int:
        """`source.find(needle, position, limit)`, remembered: a search from anywhere
        between where the last one began and what it found finds the same."""
        limit = self.end if limit is None else limit
        key = (needle, limit)
        remembered = self._found.get(key)
        if remembered is not None:
            began, found = remembered
            if began <= position and (found < 0 or position <= found):
                return found
        found = self.source.find(needle, position, limit)
        self.scanned += (found + len(needle) if found >= 0 else limit) - position
        self._found[key] = (position, found)
        return found
