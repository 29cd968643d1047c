"""The walk's line ends: the regex pass of a short text and numpy's of a long one agree."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from chunking.plan.walk import NUMPY_LINE_ENDS_CHARACTERS, _line_ends

PIECES = st.sampled_from(["a", "é", "😀", "\n", "\r", "\r\n", " ", "\ud800", "# h\n"])


@given(st.lists(PIECES, max_size=60))
def test_short_and_long_texts_find_the_same_line_ends(pieces: list[str]) -> None:
    text = "".join(pieces)
    padding = "x" * NUMPY_LINE_ENDS_CHARACTERS  # pushes the text onto numpy's path
    short = _line_ends(text)
    long = _line_ends(padding + text)
    assert len(padding + text) >= NUMPY_LINE_ENDS_CHARACTERS > len(text)
    assert [end + len(padding) for end in short] == long
