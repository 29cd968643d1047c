"""The first match of a pattern at or after a position, remembered across a forward walk."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import re

MATCH_REACH = 2
"""The longest match the patterns used here have (`\\r\\n`): a search that must stop
before a position reads this far past it, so a match across it is seen whole."""


class NextMatch:
    """Finds the first match of `pattern` in `source` at or after a position.

    The splitter asks, chunk after chunk, for the next line break or word end past
    each chunk's horizon.  In a megabyte line without one, every search would scan
    to the end of the line again: quadratic.  The last answer is remembered
    instead: it holds for every position between where its search started and
    where it matched (there is no match in between), so the walk, which moves
    forward, scans each stretch of the source about once.

    Only for patterns whose matches are at most `MATCH_REACH` characters long and
    depend on nothing past them (a lookbehind is fine).
    """

    def __init__(self, pattern: re.Pattern[str], source: str) -> None:
        self._pattern = pattern
        self._source = source
        self._searched_from = len(source) + 1
        """Where the remembered search started (past the end: nothing remembered)."""
        self._found: re.Match[str] | None = None
        """Its first match, or None: no match from there to the end of the source."""
        self.scanned = 0
        """Characters searched so far, at most: what the tests hold to the source's length."""

    def search(self, position: int, end: int) -> re.Match[str] | None:
        """The first match starting at or after `position` that ends by `end`."""
        found = self._first_from(position)
        return found if found is not None and found.end() <= end else None

    def _first_from(self, position: int) -> re.Match[str] | None:
        found = self._found
        if self._searched_from <= position and (found is None or position <= found.start()):
            return found
        source = self._source
        if position < self._searched_from <= len(source):
            # Before the remembered search: only the stretch up to it is new.
            stop = min(self._searched_from + MATCH_REACH, len(source))
            earlier = self._pattern.search(source, position, stop)
            self.scanned += stop - position
            if earlier is not None and earlier.start() < self._searched_from:
                found = earlier
        else:
            found = self._pattern.search(source, position)
            self.scanned += (found.end() if found is not None else len(source)) - position
        self._searched_from, self._found = position, found
        return found
