"""NextMatch: the same answers as a fresh regex search, scanning each stretch about once."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from chunking.plan.next_match import NextMatch

LINE_BREAK = re.compile(r"\r\n?|\n")
WORD_END = re.compile(r"(?<=\S)\s")
SOURCE = st.text(alphabet=st.sampled_from("ab \t\r\n."), max_size=200)


def _fresh(
    pattern: re.Pattern[str], source: str, position: int, end: int
) -> tuple[int, int] | None:
    """What the splitter asked before: a search that stops at `end`."""
    found = pattern.search(source, position, end)
    return None if found is None else found.span()


@given(
    SOURCE,
    st.lists(st.tuples(st.integers(0, 210), st.integers(0, 210)), max_size=30),
    st.sampled_from([LINE_BREAK, WORD_END]),
)
def test_answers_are_those_of_a_fresh_search(
    source: str, queries: list[tuple[int, int]], pattern: re.Pattern[str]
) -> None:
    searcher = NextMatch(pattern, source)
    for wanted_position, wanted_end in queries:
        position, end = min(wanted_position, len(source)), min(wanted_end, len(source))
        found = searcher.search(position, end)
        expected = _fresh(pattern, source, position, end)
        if found is None or expected is None:
            # A `\r\n` cut by `end` is `\r` to a bounded search and no match here;
            # the splitter takes neither (it wants a break ending before `end`).
            assert found is None
            assert expected is None or expected[1] >= end
        else:
            assert found.span() == expected


def test_a_walk_through_a_line_without_breaks_scans_it_once() -> None:
    source = "x" * 1_000_000
    searcher = NextMatch(LINE_BREAK, source)
    for position in range(0, len(source), 1_000):
        assert searcher.search(max(position - 300, 0), len(source)) is None
    assert searcher.scanned <= 2 * len(source)
