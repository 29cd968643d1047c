"""Whitespace around source offsets: the one copy of each helper every stage uses."""

from __future__ import annotations

import re

_WHITESPACE_RUN = re.compile(r"\s+")


def skip_space(source: str, position: int, limit: int | None = None) -> int:
    """The first non-whitespace offset at or after `position`, at most `limit` (the end
    of the source when None)."""
    match = _WHITESPACE_RUN.match(source, position, len(source) if limit is None else limit)
    return match.end() if match else position


def skip_space_back(source: str, position: int, limit: int = 0) -> int:
    """Just past the last non-whitespace character before `position`, at least `limit`."""
    while position > limit and source[position - 1].isspace():
        position -= 1
    return position


def trim(source: str, start: int, end: int) -> tuple[int, int]:
    """[start, end) without its leading and trailing whitespace; a span of whitespace
    alone ends up empty at `end`, an empty or reversed span stays as it is."""
    while start < end and source[start].isspace():
        start += 1
    while end > start and source[end - 1].isspace():
        end -= 1
    return start, end
