"""Sizes: UTF-16 code units like .NET String.Length, and cl100k tokens from the shipped file."""

from __future__ import annotations

import hashlib
from importlib import resources

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunking import OptionError, Unit
from chunking.measure.encodings import CL100K_SHA256, cl100k_from_bytes, load_encoding
from chunking.measure.sizing import make_sizer, utf16_length


def test_shipped_cl100k_matches_the_published_hash() -> None:
    data = resources.files("chunking.measure").joinpath("data/cl100k_base.tiktoken").read_bytes()
    assert hashlib.sha256(data).hexdigest() == CL100K_SHA256


def test_a_corrupted_file_is_refused() -> None:
    data = resources.files("chunking.measure").joinpath("data/cl100k_base.tiktoken").read_bytes()
    with pytest.raises(OptionError, match="corrupt"):
        cl100k_from_bytes(data[:-10])


def test_cl100k_tokenizes_like_openai() -> None:
    # Reference ids from OpenAI's cookbook for "tiktoken is great!" in cl100k_base.
    assert load_encoding("cl100k_base").encode("tiktoken is great!") == [
        83,
        1609,
        5963,
        374,
        2294,
        0,
    ]


def test_unknown_encoder_is_an_option_error() -> None:
    with pytest.raises(OptionError, match="encoderModelName"):
        load_encoding("gpt2")


@pytest.mark.parametrize(
    ("text", "units"),
    [("abc", 3), ("é", 1), ("😀", 2), ("a😀b", 4), ("中文", 2), ("\ud800", 1)],
)
def test_utf16_length_counts_like_dotnet(text: str, units: int) -> None:
    assert utf16_length(text) == units


@given(st.text())
def test_utf16_length_agrees_with_encoding(text: str) -> None:
    assert utf16_length(text) == len(text.encode("utf-16-le", "surrogatepass")) // 2


def test_token_sizer_counts_special_tokens_as_text_and_survives_surrogates() -> None:
    sizer = make_sizer(Unit.TOKENS, "cl100k_base")
    assert sizer.size("<|endoftext|>") > 1
    assert sizer.size("bad \ud800 text") >= 3
    assert sizer.size("") == 0
