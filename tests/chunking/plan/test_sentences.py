"""Sentence boundaries: multilingual, not fooled by abbreviations, decimals, versions, URLs."""

from __future__ import annotations

import itertools

import pytest

from chunking import ChunkOptions, chunk_document
from chunking.plan.sentences import sentence_starts


def _split(text: str, language: str = "en") -> list[str]:
    cuts = [0, *sentence_starts(text, language), len(text)]
    return [text[a:b].strip() for a, b in itertools.pairwise(cuts)]


@pytest.mark.parametrize(
    ("language", "text", "sentences"),
    [
        (
            "en",
            "Dr. Smith paid 3.50 dollars. He left.",
            ["Dr. Smith paid 3.50 dollars.", "He left."],
        ),
        (
            "en",
            "Upgrade to v1.2.3 today. It is faster.",
            ["Upgrade to v1.2.3 today.", "It is faster."],
        ),
        ("en", "Use e.g. the CLI. Or the portal!", ["Use e.g. the CLI.", "Or the portal!"]),
        (
            "en",
            "See https://learn.microsoft.com/a.b for details. Done?",
            ["See https://learn.microsoft.com/a.b for details.", "Done?"],
        ),
        ("de", "Das ist z. B. gut. Und dann?", ["Das ist z. B. gut.", "Und dann?"]),
        ("es", "El Sr. García llegó. Fue bien.", ["El Sr. García llegó.", "Fue bien."]),
        ("fr", "M. Dupont est là. Il part.", ["M. Dupont est là.", "Il part."]),
        ("pt-BR", "O Sr. Silva chegou. Foi bom.", ["O Sr. Silva chegou.", "Foi bom."]),
        ("ru", "Привет, мир. Как дела?", ["Привет, мир.", "Как дела?"]),
        ("zh-Hans", "这是第一句。这是第二句！", ["这是第一句。", "这是第二句！"]),
        ("ja", "これは文です。次の文？", ["これは文です。", "次の文？"]),
    ],
)
def test_sentences(language: str, text: str, sentences: list[str]) -> None:
    assert _split(text, language) == sentences


def test_lone_surrogates_keep_offsets() -> None:
    text = "\ud800 bad. Good one. Third."
    assert _split(text) == ["\ud800 bad.", "Good one.", "Third."]


@pytest.mark.parametrize("space", ["\x85", "\xa0", "\u2028", "\u2029", "\u3000"], ids=ascii)
def test_regression_a_wide_space_after_an_initial_does_not_crash_the_segmenter(
    space: str,
) -> None:
    """sentencex panics (a Rust panic, raised as a BaseException that no `except
    Exception` catches) on a space of more than one UTF-8 byte between an initial and its
    period: "x J\\x85. Smith". Found by the suite's fuzz test on markdown; the record
    failed with an internal error. Now such a text is segmented with that space read as
    an ASCII one (same length: every offset stays)."""
    text = "Some words here and there. " * 3 + f"x J{space}. Smith said it. Then more."
    starts = sentence_starts(text, "en")
    assert text.index("Then") in starts
    document = chunk_document((text + " ") * 40, options=ChunkOptions(), format="markdown")
    # Every copy is in a chunk (overlap repeats some).
    assert "".join(chunk.content for chunk in document.chunks).count("Smith said") >= 40
