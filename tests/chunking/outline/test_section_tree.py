"""SectionTree.content_starts: every heading's content start in one pass, as asked one by one."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.outline.sections import SectionTree
from chunking.pipeline import parse
from tests.strategies import MARKDOWN

RUNS_OF_HEADINGS = st.lists(
    st.sampled_from(["# h\n", "## sub\n", "\n", "   \n", "text\n", "# \n", "\t# tab\n"]),
    max_size=60,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(st.one_of(MARKDOWN, RUNS_OF_HEADINGS), st.integers(0, 40))
def test_content_starts_are_content_start_of_each_heading(text: str, cut: int) -> None:
    outline = parse(text, "markdown")
    tree = SectionTree.build(outline)
    end = max(outline.content_end - cut, 0)
    table = tree.content_starts(outline.source, end)
    assert table == [tree.content_start(outline.source, h.start, end) for h in tree.headings]


def test_a_hundred_thousand_headings_in_one_pass() -> None:
    text = "# h\n" * 100_000
    outline = parse(text, "markdown")
    tree = SectionTree.build(outline)
    table = tree.content_starts(outline.source, outline.content_end)
    # Nothing follows any of them: the content of each run starts at the last heading.
    assert table == [len(text) - 4] * 100_000
