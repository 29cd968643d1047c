"""Span token counts from one encoding of the document equal counting the slice directly."""

from __future__ import annotations

import itertools
import os
import re
from typing import TYPE_CHECKING

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunking.measure import token_spans
from chunking.measure.encodings import load_encoding
from chunking.measure.sizing import CharacterSizer, utf16_length
from chunking.measure.token_spans import LONG_COUNT_CHARACTERS, TokenSpans, tokens_add_up
from tests.paths import FIXTURES
from tests.strategies import MARKDOWN

if TYPE_CHECKING:
    from pathlib import Path

ENCODING = load_encoding("cl100k_base")

# Characters that change how the pre-tokenizer splits: spaces of every kind,
# line breaks, punctuation that swallows line breaks, digits in threes,
# contractions, surrogates (encoded as U+FFFD), special-token text.
PIECES = st.sampled_from(
    [
        " ", "  ", "\t", "\n", "\r", "\r\n", "\n\n", " \n \n", "\u00a0", "\u3000", "\x1c",
        "\x85", "\u2028", ".", ",", "|", "#", "`", "-", "'s", "'LL", "a", "word", "Word",
        "1", "123456", "é", "日本語", "😀", "\ud800", "<|endoftext|>", ".\n", "a\n", ")\n\n",
    ]
)  # fmt: skip
TEXT = st.one_of(st.lists(PIECES, max_size=80).map("".join), MARKDOWN)

PROFILE = settings(
    max_examples=int(os.environ.get("PROPERTY_EXAMPLES", "60")) * 3,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _direct(text: str) -> int:
    return len(ENCODING.encode_ordinary(text))


def _boundaries(text: str) -> list[int]:
    """Where the splitter cuts: both sides of every whitespace run, and the ends."""
    found = {0, len(text)}
    for match in re.finditer(r"\s+", text):
        found.update((match.start(), match.end()))
    return sorted(found)


@PROFILE
@given(TEXT, st.data())
def test_any_span_counts_as_its_slice(text: str, data: st.DataObject) -> None:
    spans = TokenSpans(ENCODING, text)
    for _ in range(8):
        start = data.draw(st.integers(0, len(text)))
        end = data.draw(st.integers(start, len(text)))
        assert spans.span(start, end) == _direct(text[start:end]), (start, end)


@PROFILE
@given(TEXT, st.data())
def test_spans_between_whitespace_boundaries_count_as_their_slice(
    text: str, data: st.DataObject
) -> None:
    _check_spans_between(text, _boundaries(text), data)


def _check_spans_between(text: str, cuts: list[int], data: st.DataObject) -> None:
    """Spans from one cut to another, and from a cut to anywhere, count as their slice."""
    spans = TokenSpans(ENCODING, text)
    for _ in range(8):
        start, end = sorted(data.draw(st.sampled_from(cuts)) for _ in range(2))
        assert spans.span(start, end) == _direct(text[start:end]), (start, end)
        end = data.draw(st.integers(start, len(text)))
        assert spans.span(start, end) == _direct(text[start:end]), (start, end)


PUNCTUATED = st.lists(
    st.sampled_from(["word", "Ab9", "42", "1234", ".", ")", "**", "`", "'s", "'t", ":", " ", "\n"]),
    min_size=30,
    max_size=120,
).map("".join)


@PROFILE
@given(PUNCTUATED, st.data())
def test_spans_cut_between_a_word_and_punctuation_count_as_their_slice(
    text: str, data: st.DataObject
) -> None:
    # Where chunks end (`word.` before a line break): the word's end is pinned.
    words_ends = (m.start() + 1 for m in re.finditer(r"[A-Za-z0-9][^\sA-Za-z0-9]", text))
    _check_spans_between(text, [0, len(text), *words_ends], data)


@pytest.mark.parametrize("path", sorted(FIXTURES.rglob("*.*")), ids=lambda p: p.name)
def test_real_documents_every_line_and_paragraph(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    spans = TokenSpans(ENCODING, text)
    cuts = _boundaries(text)
    # Every run between consecutive boundaries, and long spans across many.
    for index in range(0, len(cuts) - 1, 7):
        start, end = cuts[index], cuts[min(index + 40, len(cuts) - 1)]
        assert spans.span(start, end) == _direct(text[start:end])
        assert spans.span(cuts[index], cuts[index + 1]) == _direct(text[start : cuts[index + 1]])


@given(PIECES.filter(str.strip), TEXT)
def test_a_prefix_ending_a_line_adds_up(prefix: str, content: str) -> None:
    left = prefix + "\n\n"
    if tokens_add_up(left, content):
        assert _direct(left + content) == _direct(left) + _direct(content)


def test_tokens_add_up_only_at_a_line_end_before_a_non_space() -> None:
    assert tokens_add_up("Title › H\n\n", "Body")
    assert tokens_add_up("", " anything")
    assert not tokens_add_up("Title › H ", "Body")
    assert not tokens_add_up("Title\n", " indented")
    # Where it says no, the counts really can differ.
    assert _direct("Title Body") < _direct("Title ") + _direct("Body")


def test_a_non_ascii_document_maps_offsets_to_bytes() -> None:
    text = ("Überschrift über 日本語 and 😀 emoji. " * 200).strip()
    spans = TokenSpans(ENCODING, text)
    for start, end in [(0, len(text)), (37, 5000), (1025, 3000), (4100, len(text) - 3)]:
        assert spans.span(start, end) == _direct(text[start:end])


@PROFILE
@given(TEXT, st.data())
def test_estimates_telescope_and_match_at_pinned_positions(text: str, data: st.DataObject) -> None:
    spans = TokenSpans(ENCODING, text)
    cuts = sorted({data.draw(st.integers(0, len(text))) for _ in range(6)} | {0, len(text)})
    estimates = [spans.estimate(a, b) for a, b in itertools.pairwise(cuts)]
    # The index encodes lone surrogates as U+FFFD, one by one.
    whole = _direct(re.sub("[\ud800-\udfff]", "\ufffd", text))
    assert sum(estimates) == spans.estimate(0, len(text)) == whole
    assert spans.totals(cuts) == [spans.total(cut) for cut in cuts]
    for a, b in itertools.pairwise(cuts):
        if spans._is_pinned(a) and spans._is_pinned(b) and not spans._holds_surrogate(a, b):
            assert spans.estimate(a, b) == _direct(text[a:b])


def test_adjacent_surrogates_are_counted_as_tiktoken_counts_them() -> None:
    # tiktoken turns an adjacent high/low surrogate pair into one code point.
    text = "Intro words here. " * 10 + "\ud83d\ude00 paired and \ud800 lone. " + "Tail words. " * 10
    spans = TokenSpans(ENCODING, text)
    for start, end in [(0, len(text)), (150, 220), (185, 200), (0, 190)]:
        assert spans.span(start, end) == _direct(text[start:end])


def test_character_spans_count_utf16_units() -> None:
    text = "a😀b\u00e9c\U0001f600\ud800d"
    spans = CharacterSizer().spans(text)
    for start in range(len(text) + 1):
        for end in range(start, len(text) + 1):
            assert spans.span(start, end) == utf16_length(text[start:end])
            assert spans.estimate(start, end) == spans.total(end) - spans.total(start)
    assert spans.totals([0, 2, len(text)]) == [0, 3, utf16_length(text)]


@PROFILE
@given(TEXT, st.data())
def test_a_partly_encoded_source_still_counts_every_span(text: str, data: st.DataObject) -> None:
    begin = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(begin, len(text)))
    spans = TokenSpans(ENCODING, text, begin, end)
    cuts = sorted({data.draw(st.integers(begin, end)) for _ in range(5)} | {begin, end})
    for a, b in itertools.pairwise(cuts):
        assert spans.span(a, b) == _direct(text[a:b]), (begin, end, a, b)
    # Spans reaching outside the encoded range are counted directly.
    assert spans.span(0, len(text)) == _direct(text)
    if not spans._surrogates:
        estimates = [spans.estimate(a, b) for a, b in itertools.pairwise(cuts)]
        assert sum(estimates) == spans.estimate(begin, end) == _direct(text[begin:end])
    assert spans.totals(cuts) == [spans.total(cut) for cut in cuts]


@PROFILE
@given(TEXT, st.integers(1, 40), st.data())
def test_any_span_counts_as_its_slice_with_small_parts(
    text: str, part: int, data: st.DataObject
) -> None:
    spans = TokenSpans(ENCODING, text, part=part)
    for _ in range(8):
        start = data.draw(st.integers(0, len(text)))
        end = data.draw(st.integers(start, len(text)))
        assert spans.span(start, end) == _direct(text[start:end]), (part, start, end)


def test_parts_cut_at_pinned_positions_hold_the_tokens_of_the_whole() -> None:
    text = "Some words, then more words. " * 10_000
    whole = TokenSpans(ENCODING, text, part=len(text))
    parts = TokenSpans(ENCODING, text, part=1_000)
    positions = list(range(0, len(text), 997))
    assert parts.totals(positions) == whole.totals(positions)
    assert not parts._loose_cuts


def test_a_megabyte_run_of_dots_is_cut_loose_and_still_counted_exactly() -> None:
    text = "." * 1_000_000 + " and words after it."
    spans = TokenSpans(ENCODING, text)
    assert spans.estimate(0, len(text)) > 0
    assert spans._loose_cuts
    cut = spans._loose_cuts[0]
    for start, end in [(cut - 5_000, cut + 5_000), (0, cut + 1), (cut, cut + 64), (10, 200_000)]:
        assert spans.span(start, end) == _direct(text[start:end]), (start, end)
    # Token ends still increase through the cuts.
    ends = np.asarray(spans._index())
    assert (np.diff(ends) > 0).all()


def test_long_direct_counts_are_remembered_within_a_bound() -> None:
    spans = TokenSpans(ENCODING, "text")
    texts = [f"{index} " + "x" * 10_000 for index in range(300)]
    for text in texts * 2:
        assert spans.count(text) == _direct(text)
    assert spans._long_characters <= LONG_COUNT_CHARACTERS


@pytest.mark.parametrize("name", ["guide.md", "accents"])
def test_a_short_texts_index_is_the_one_numpy_builds(name: str) -> None:
    # Issue 40: below NUMPY_INDEX_CHARACTERS the index is built in Python (no numpy loaded).
    text = (
        ("Größe: 5 µm — naïve café.\nLine two 😀 end\n" * 20)
        if name == "accents"
        else ("# Guide\n\nRun `tool --flag` now, then check [the log](x.md).\n\n" * 20)
    )
    assert len(text) < token_spans.NUMPY_INDEX_CHARACTERS
    encoding = load_encoding("cl100k_base")
    positions = list(range(-3, len(text) + 4))
    short = TokenSpans(encoding, text, 5, len(text) - 5)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(token_spans, "NUMPY_INDEX_CHARACTERS", 0)
        long = TokenSpans(encoding, text, 5, len(text) - 5)
        long_totals = long.totals(positions)
    short_totals = short.totals(positions)
    assert isinstance(short._token_ends, list)
    assert not isinstance(long._token_ends, list)
    assert short_totals == long_totals
    assert [short.total(p) for p in positions] == long_totals
    assert short.horizon(30) == long.horizon(30)
