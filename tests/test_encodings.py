"""Our cl100k pre-tokenizer pattern against tiktoken's own: the same tokens, always."""

from __future__ import annotations

import itertools
import os

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.documents import DEFAULT_CORPUS, load_corpus
from chunking.encodings import CL100K_FAST_PATTERN, CL100K_PATTERN, load_encoding, stock_cl100k

OURS = load_encoding("cl100k_base")
STOCK = stock_cl100k()

# Characters from each class the pattern tells apart, including the edges of
# those classes: titlecase and modifier letters, combining marks (not letters),
# digits that are not ASCII, numbers that are not digits, Unicode spaces that
# are and are not line breaks, format characters that are not spaces.
PIECES = [
    *"aZéßжЖ中ǅʰª",
    "\u0301",
    "\u0903",
    *"07٣Ⅷ½²",
    *'.,-_#`|()*[]:/\\"!?<>&=;😀',
    "\u200b",
    "\x00",
    "\x7f",
    *" \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u2028\u2029\u3000\u180e",
    "  ",
    "    ",
    "\r\n",
    "\n\n",
    *("'s", "'S", "'t", "'ll", "'LL", "'ve", "'Re", "'d", "'m", "'x", "’s"),
    *("the", " the", "Hello", " world", "123456", " 42", "```", "|---|", "->", "..."),
]
EXAMPLES = int(os.environ.get("PROPERTY_EXAMPLES", "60")) * 5


# The same patterns in Python's backtracking `regex` module (tiktoken depends
# on it): the rewrite must give the same pieces there too, not only the same
# tokens (different pieces can happen to encode alike).
FAST_PIECES = regex.compile(CL100K_FAST_PATTERN)
STOCK_PIECES = regex.compile(CL100K_PATTERN)


def _same_tokens(text: str) -> None:
    assert OURS.encode_ordinary(text) == STOCK.encode_ordinary(text), repr(text)
    assert FAST_PIECES.findall(text) == STOCK_PIECES.findall(text), repr(text)


def test_the_fast_pattern_is_ours_and_differs_from_tiktokens() -> None:
    # The point of the test file: two different patterns, one tokenization.
    assert OURS._pat_str == CL100K_FAST_PATTERN
    assert STOCK._pat_str == CL100K_PATTERN
    assert CL100K_FAST_PATTERN != CL100K_PATTERN


def test_same_tokens_on_every_pair_of_class_edges() -> None:
    # Random strings rarely put two given pieces side by side; every pair, on
    # its own and between text, does.
    for first, second in itertools.product(PIECES, repeat=2):
        _same_tokens(first + second)
        _same_tokens(f"x{first}{second}y")


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), min_size=5, max_size=80).map("".join))
def test_same_tokens_on_class_edges(text: str) -> None:
    _same_tokens(text)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.text(max_size=300))
def test_same_tokens_on_arbitrary_text(text: str) -> None:
    _same_tokens(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "a  b",
        "a   \tb",
        "x \n",
        "x  \n  y",
        "  \r\n\r\n  z",
        "trailing   ",
        "'s's'S'll",
        "don't I'LL we've",
        " 12345 ",
        "!!!\n\n\n",
        " ?!\r\n",
        "\u3000\u3000word",
        "\xa0\xa0 x",
        "e\u0301\u0301",
    ],
)
def test_same_tokens_on_known_edges(text: str) -> None:
    _same_tokens(text)


@pytest.mark.parametrize("kind", ["markdown", "html"])
def test_same_tokens_on_the_whole_corpus(kind: str) -> None:
    documents = load_corpus(DEFAULT_CORPUS, kind)  # type: ignore[arg-type]
    if not documents:
        pytest.skip(f"corpus not present at {DEFAULT_CORPUS}")
    for document in documents:
        assert OURS.encode_ordinary(document.text) == STOCK.encode_ordinary(document.text), (
            document.name
        )
