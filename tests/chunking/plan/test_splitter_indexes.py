"""The splitter's per-document indexes answer as the searches they replace would."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from chunking.plan.walk import _line_ends

_LINE_BREAK = re.compile(r"\r\n?|\n")

_TEXT = st.text(
    alphabet=st.sampled_from(["a", " ", "\r", "\n", "é", "\U0001f600", "\ud800", "。"]),
    max_size=60,
)
"""Line breaks of every kind next to ASCII, BMP, astral and lone-surrogate characters."""


@given(_TEXT)
def test_line_ends_are_where_the_line_break_pattern_matches_end(text: str) -> None:
    assert _line_ends(text) == [m.end() for m in _LINE_BREAK.finditer(text)]


@given(_TEXT, st.integers(0, 60), st.integers(0, 60))
def test_line_ends_inside_a_window_are_those_a_search_of_the_window_finds(
    text: str, low: int, high: int
) -> None:
    """A window may start inside `\\r\\n`: its search then matches the `\\n` alone,
    which ends where the whole break does."""
    ends = _line_ends(text)
    inside = [e for e in ends if low < e < high]
    searched = [m.end() for m in _LINE_BREAK.finditer(text, low, high) if low < m.end() < high]
    assert inside == searched
