"""The `words` strategy's parameters (`chunking.plan.words`), validated when built."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from chunking.options.errors import OptionError, shown_integer


class WordScope(Enum):
    """Where the `words` strategy's windows may reach."""

    SECTION = "section"
    """Windows stay inside a section: no window spans a heading (the default)."""
    DOCUMENT = "document"
    """Windows run over the whole document, headings included, as the lesson cuts."""


DEFAULT_WORDS_PER_CHUNK = 200
"""Words per window: about 260 cl100k tokens of English, so a window and its prefix
fit the default 512 tokens with room to spare."""
DEFAULT_WORD_OVERLAP = 40
"""Words each window repeats from the previous one: a fifth, the usual advice."""


def default_word_overlap(size: int, preferred: int = DEFAULT_WORD_OVERLAP) -> int:
    """`wordOverlap` when only `wordsPerChunk` is given: `preferred` (the app setting's
    or the default) if it is under half of `size`, else a fifth of `size`."""
    return preferred if 2 * preferred < size else size // 5


@dataclass(frozen=True, slots=True)
class WordWindows:
    """The `words` strategy's own parameters, in words (whitespace-separated tokens)."""

    size: int = DEFAULT_WORDS_PER_CHUNK
    """`wordsPerChunk`: words in each window."""
    overlap: int = DEFAULT_WORD_OVERLAP
    """`wordOverlap`: each window starts `size - overlap` words after the previous one;
    less than half of `size`."""
    scope: WordScope = WordScope.SECTION
    """`wordScope`: whether windows stay inside a section or run over the document."""

    def __post_init__(self) -> None:
        if self.size < 1:
            raise OptionError(f"wordsPerChunk must be at least 1 (got {shown_integer(self.size)})")
        # Below half, as the Split skill bounds pageOverlapLength: each window then moves
        # on by more than half its words, so the windows repeat each word twice at most.
        # Up to size - 1 there was a window per word, a request ~9,000 times its size.
        if self.overlap < 0 or 2 * self.overlap >= self.size:
            raise OptionError(
                "wordOverlap must be at least 0 and less than half of wordsPerChunk "
                f"(< {(self.size + 1) // 2}; got {shown_integer(self.overlap)})"
            )
