"""docfx `:::` directive lines are found from each `:::` back over its indent, and are
exactly the lines the regex of before found (it tried its lookbehind at every position
of every prose range holding `:::`, nine times the time of the searches)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.parse.markdown.plain_text import _directive_lines
from tests.helpers import python_lines_in
from tests.paths import ROOT

DIRECTIVE = re.compile(r"(?<![^\r\n])[ \t>]*:::[^\r\n]*(?![^\r\n])")
"""The definition: a line whose text begins with `:::` after spaces, tabs and `>`, up to
its line break (CR, LF or CR LF)."""
PIECES = (":", ":::", "::::", " ", "\t", ">", "> ", "\n", "\r", "\r\n", "a", ":::image", "zone")
SOURCE = str(ROOT / "chunking" / "parse" / "markdown" / "plain_text.py")
LINEAR = 2.3
"""The most the Python lines run may grow when the input doubles."""
SIZE = 20_000


def _expected(source: str, start: int, end: int) -> list[tuple[int, int, int]]:
    return [
        (match.start(), source.index(":::", match.start()), match.end())
        for match in DIRECTIVE.finditer(source, start, end)
    ]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30), st.integers(0, 200), st.integers(0, 200))
def test_directive_lines_are_what_the_regex_found(pieces: list[str], low: int, high: int) -> None:
    source = "".join(pieces)
    start, end = sorted((min(low, len(source)), min(high, len(source))))
    assert list(_directive_lines(source, start, end)) == _expected(source, start, end)


def test_directive_lines_of_a_docfx_page() -> None:
    source = 'Intro ::: not a fence\n:::zone pivot="cli"\r\n> :::row:::\rtext\n  ::: zone-end'
    found = list(_directive_lines(source, 0, len(source)))
    assert [source[low:high] for low, _, high in found] == [
        ':::zone pivot="cli"',
        "> :::row:::",
        "  ::: zone-end",
    ]
    # A range that begins inside a line finds no directive on that line.
    assert list(_directive_lines(source, 2, 12)) == []


HOSTILE = {
    "a run of colons after text": lambda n: "a" + ":" * n,
    "directive lines ending in CR": lambda n: ":::\r" * (n // 4),
    "colons after text, line by line": lambda n: "a:::\n" * (n // 5),
    "a deep indent before one colon run": lambda n: " " * n + ":::",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_directive_work_grows_linearly(name: str) -> None:
    counts = []
    for size in (SIZE, 2 * SIZE):
        source = HOSTILE[name](size)
        with python_lines_in(SOURCE) as lines:
            found = list(_directive_lines(source, 0, len(source)))
        assert found == _expected(source, 0, len(source))
        counts.append(lines[0])
    assert counts[1] <= LINEAR * counts[0], counts
