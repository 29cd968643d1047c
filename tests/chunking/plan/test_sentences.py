"""Sentence boundaries: multilingual, not fooled by abbreviations, decimals, versions, URLs."""

from __future__ import annotations

import itertools

import pytest

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
