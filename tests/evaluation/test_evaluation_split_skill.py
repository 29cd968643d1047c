"""The Split-skill baseline against the Text Split skill's documented behaviour
(../shared/azure-contract.md §2.3): whole sentences up to maximumPageLength, each page
starting with the previous page's last pageOverlapLength characters or tokens."""

from __future__ import annotations

import itertools
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.measure.sizing import make_sizer, utf16_length
from chunking.options import Limits, Unit
from chunking.plan.pages import split_pages, split_sentences
from chunking.plan.sentences import sentence_starts
from tests.paths import FIXTURES

FIXTURES = FIXTURES / "markdown"
CHARACTERS = make_sizer(Unit.CHARACTERS, "cl100k_base")
TOKENS = make_sizer(Unit.TOKENS, "cl100k_base")
PROPERTY_EXAMPLES = int(os.environ.get("PROPERTY_EXAMPLES", "60"))


def sentence_text(count: int) -> str:
    return " ".join(
        f"Sentence number {n} says something {'rather ' * (n % 7)}useful." for n in range(count)
    )


def test_pages_hold_whole_sentences_up_to_the_limit() -> None:
    text = sentence_text(60)
    pages = split_pages(text, CHARACTERS, Limits(Unit.CHARACTERS, 300, 0))
    ends = {*sentence_starts(text, "en"), len(text)}
    assert len(pages) > 5
    for page in pages:
        assert utf16_length(text[page.start : page.end]) <= 300
        # A page ends at a sentence end: the next sentence starts after its whitespace.
        assert page.end == len(text) or page.end + 1 in ends
    # No overlap: the pages are the text, cut between sentences.
    assert " ".join(text[p.start : p.end] for p in pages) == text


def test_each_page_starts_with_the_previous_pages_tail() -> None:
    """The documented sample: '...Here is the overlap part' / 'Here is the overlap part...'."""
    text = sentence_text(60)
    pages = split_pages(text, CHARACTERS, Limits(Unit.CHARACTERS, 300, 60))
    for previous, page in itertools.pairwise(pages):
        tail = text[page.start : previous.end]
        assert text[previous.start : previous.end].endswith(tail)
        # Exactly the last 60 characters, less the space a page never starts with.
        assert len(tail) in {60, 59}
        assert utf16_length(text[page.start : page.end]) <= 300  # overlap included


def test_overlap_is_counted_in_tokens_in_token_mode() -> None:
    text = sentence_text(80)
    pages = split_pages(text, TOKENS, Limits(Unit.TOKENS, 100, 20))
    for previous, page in itertools.pairwise(pages):
        assert TOKENS.size(text[page.start : page.end]) <= 100
        assert 15 <= TOKENS.size(text[page.start : previous.end]) <= 20


def test_overlap_adds_pages_as_the_published_counts_do() -> None:
    """Earth at Night: 1000/0 -> 172 pages, 1000/200 -> 216 (1.26x); 2000/500 -> 1.33x."""
    text = (FIXTURES / "upgrade-options.md").read_text(encoding="utf-8")

    def count(maximum: int, overlap: int) -> int:
        return len(split_pages(text, CHARACTERS, Limits(Unit.CHARACTERS, maximum, overlap)))

    assert 1.15 <= count(1000, 200) / count(1000, 0) <= 1.4
    assert 1.2 <= count(2000, 500) / count(2000, 0) <= 1.5


def test_a_sentence_longer_than_a_page_is_cut_at_a_space_then_anywhere() -> None:
    words = "word " * 200
    pages = split_pages(words, CHARACTERS, Limits(Unit.CHARACTERS, 300, 0))
    assert all(words[p.start : p.end].endswith("word") for p in pages)
    solid = "x" * 1000
    pages = split_pages(solid, CHARACTERS, Limits(Unit.CHARACTERS, 300, 0))
    assert [p.end - p.start for p in pages] == [300, 300, 300, 100]


def test_maximum_pages_to_take_stops_early() -> None:
    text = sentence_text(60)
    pages = split_pages(text, CHARACTERS, Limits(Unit.CHARACTERS, 300, 0, 2))
    assert len(pages) == 2


def test_sentences_mode_gives_one_page_per_sentence() -> None:
    text = "One. Two is here. Three!"
    # "One." is a sentence of MIN_SENTENCE_CHARACTERS: kept on its own.
    assert [text[p.start : p.end] for p in split_sentences(text)] == [
        "One.",
        "Two is here.",
        "Three!",
    ]


@settings(max_examples=PROPERTY_EXAMPLES, deadline=None)
@given(
    st.lists(
        st.text(st.sampled_from("abc déf 日本 ."), min_size=1, max_size=120),
        min_size=1,
        max_size=30,
    ),
    st.integers(300, 800),
    st.floats(0, 0.49),
)
def test_pages_never_exceed_the_limit_and_cover_the_text(
    pieces: list[str], maximum: int, share: float
) -> None:
    text = "\n".join(pieces)
    overlap = min(int(maximum * share), (maximum - 1) // 2)
    pages = split_pages(text, CHARACTERS, Limits(Unit.CHARACTERS, maximum, overlap))
    covered = [False] * len(text)
    for previous, page in zip([None, *pages], pages, strict=False):
        assert utf16_length(text[page.start : page.end]) <= maximum
        assert previous is None or page.start > previous.start
        for position in range(page.start, page.end):
            covered[position] = True
    assert all(covered[i] or text[i].isspace() for i in range(len(text)))


@pytest.mark.parametrize("overlap", [0, 40])
def test_pages_are_deterministic(overlap: int) -> None:
    text = sentence_text(40)
    limits = Limits(Unit.CHARACTERS, 300, overlap)
    assert split_pages(text, CHARACTERS, limits) == split_pages(text, CHARACTERS, limits)
