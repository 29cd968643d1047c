"""Line tables: a short text's, found in Python, are those numpy finds for a long one
(issue 40: a short document never loads numpy)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunking.parse.markdown import blocks
from chunking.parse.markdown.blocks import NUMPY_LINES_CHARACTERS, line_starts, utf8_line_starts
from chunking.parse.markdown.plain_text import plain_text
from chunking.parse.markdown.pulldown_parser import parse_blocks

LINE_TEXT = st.text(
    alphabet=st.sampled_from(["a", " ", "\n", "\r", "é", "漢", "😀", "\ud800", "#", "-", "`"]),
    max_size=200,
)


def _padded(text: str) -> str:
    """`text` made long enough for numpy's table, its last line longer (the same breaks)."""
    return text + "x" * NUMPY_LINES_CHARACTERS


@given(LINE_TEXT)
def test_short_and_long_tables_agree(text: str) -> None:
    short = line_starts(text)
    assert isinstance(short, list)
    long = line_starts(_padded(text))
    assert isinstance(long, memoryview)
    assert list(long) == short
    encodable = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    short_bytes = utf8_line_starts(encodable)
    assert list(utf8_line_starts(_padded(encodable))) == short_bytes


def test_every_kind_of_line_break_starts_a_line() -> None:
    # CommonMark: LF, CR LF (one break) and a lone CR.
    assert line_starts("a\nb\r\nc\rd") == [0, 2, 5, 7]
    assert utf8_line_starts("é\nb\r\nc\rd") == [0, 3, 6, 8]


def test_blocks_get_the_same_lines_from_either_table() -> None:
    text = "# Title\n\nSome *text*\r\nmore\r\n\n- one\n- two\n\n```\ncode\n```\n\n| a |\n| - |\n"
    short = parse_blocks(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(blocks, "NUMPY_LINES_CHARACTERS", 0)
        long = parse_blocks(text)
    assert short == long
    assert [block.first for block in short.blocks] == [0, 2, 5, 6, 8, 12]


def test_plain_offsets_are_the_same_searched_either_way() -> None:
    source = "Run [the tool](https://x.example/a) **now**, \\# then `code [x](y)`.\n<!-- c -->\nEnd"
    plain = plain_text(source, 0, len(source), ())
    offsets = list(range(len(source) + 1))
    short = plain.plain_offsets(offsets, offsets)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("chunking.parse.markdown.plain_text.NUMPY_LINES_CHARACTERS", 0)
        long = plain.plain_offsets(offsets, offsets)
    assert short == long
    assert plain.text[short[0][5] : short[1][13]] == "the tool"
