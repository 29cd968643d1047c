"""Sentence boundaries, multilingual, via Wikimedia's sentencex (rule-based, with offsets)."""

from __future__ import annotations

import functools
import re

from sentencex import get_sentence_boundaries

MIN_SENTENCE_CHARACTERS = 4
"""A "sentence" shorter than this (`M. `, `3. `, `e. `) is an initial or a list
number that sentencex cut off; it is glued to the next sentence instead."""


@functools.cache
def sentencex_language(code: str) -> str:
    """The sentencex language for a Split-skill code: `pt-BR` -> `pt`, `zh-Hans` -> `zh`."""
    primary = code.strip().replace("_", "-").split("-", 1)[0].lower()
    return primary or "en"


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def sentence_starts(text: str, language: str) -> list[int]:
    """Offsets in `text` (excluding 0) where a sentence begins, ascending."""
    if "\r" in text:
        # sentencex knows only LF; same-length stand-ins keep every offset in place.
        text = text.replace("\r\n", " \n").replace("\r", "\n")
    try:
        found = get_sentence_boundaries(sentencex_language(language), text)
    except UnicodeEncodeError:
        # Lone surrogates cannot cross into Rust; U+FFFD keeps every offset in place.
        found = get_sentence_boundaries(
            sentencex_language(language), _LONE_SURROGATE.sub("\ufffd", text)
        )
    starts: list[int] = []
    previous = 0
    for sentence in found:
        end = sentence["end_index"]
        if end >= len(text):
            break
        if len(text[previous:end].strip()) < MIN_SENTENCE_CHARACTERS:
            continue
        starts.append(end)
        previous = end
    return starts
