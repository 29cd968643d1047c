"""Our cl100k and o200k pre-tokenizer patterns against tiktoken's own: the same tokens, always."""

from __future__ import annotations

import itertools
import os

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.documents import DEFAULT_CORPUS, load_corpus
from chunking.measure.encodings import (
    CL100K_FAST_PATTERN,
    CL100K_PATTERN,
    O200K_FAST_PATTERN,
    O200K_PATTERN,
    load_encoding,
    stock_encoding,
)

FAST = {"cl100k_base": CL100K_FAST_PATTERN, "o200k_base": O200K_FAST_PATTERN}
STOCK_PATTERN = {"cl100k_base": CL100K_PATTERN, "o200k_base": O200K_PATTERN}
NAMES = sorted(FAST)

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
    *("/", "//", ".\n/", "HTTPServer", "iPhone", "DON'T", "it's", "ǅungla", "\u0301a", "A\u0301"),
]
EXAMPLES = int(os.environ.get("PROPERTY_EXAMPLES", "60")) * 5


# The same patterns in Python's backtracking `regex` module (tiktoken depends
# on it): the rewrite must give the same pieces there too, not only the same
# tokens (different pieces can happen to encode alike).
FAST_PIECES = {name: regex.compile(pattern) for name, pattern in FAST.items()}
STOCK_PIECES = {name: regex.compile(pattern) for name, pattern in STOCK_PATTERN.items()}


def _same_tokens(name: str, text: str) -> None:
    ours, stock = load_encoding(name), stock_encoding(name)
    assert ours.encode_ordinary(text) == stock.encode_ordinary(text), repr(text)
    assert FAST_PIECES[name].findall(text) == STOCK_PIECES[name].findall(text), repr(text)


@pytest.mark.parametrize("name", NAMES)
def test_the_fast_pattern_is_ours_and_differs_from_tiktokens(name: str) -> None:
    # The point of the test file: two different patterns, one tokenization.
    assert load_encoding(name)._pat_str == FAST[name]
    assert stock_encoding(name)._pat_str == STOCK_PATTERN[name]
    assert FAST[name] != STOCK_PATTERN[name]


@pytest.mark.parametrize("name", NAMES)
def test_same_tokens_on_every_pair_of_class_edges(name: str) -> None:
    # Random strings rarely put two given pieces side by side; every pair, on
    # its own and between text, does.
    for first, second in itertools.product(PIECES, repeat=2):
        _same_tokens(name, first + second)
        _same_tokens(name, f"x{first}{second}y")


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(st.sampled_from(PIECES), min_size=5, max_size=80).map("".join))
def test_same_tokens_on_class_edges(name: str, text: str) -> None:
    _same_tokens(name, text)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=EXAMPLES, deadline=None)
@given(text=st.text(max_size=300))
def test_same_tokens_on_arbitrary_text(name: str, text: str) -> None:
    _same_tokens(name, text)


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
@pytest.mark.parametrize("name", NAMES)
def test_same_tokens_on_known_edges(name: str, text: str) -> None:
    _same_tokens(name, text)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("kind", ["markdown", "html"])
def test_same_tokens_on_the_whole_corpus(name: str, kind: str) -> None:
    documents = load_corpus(DEFAULT_CORPUS, kind)  # type: ignore[arg-type]
    if not documents:
        pytest.skip(f"corpus not present at {DEFAULT_CORPUS}")
    ours, stock = load_encoding(name), stock_encoding(name)
    for document in documents:
        assert ours.encode_ordinary(document.text) == stock.encode_ordinary(document.text), (
            document.name
        )
