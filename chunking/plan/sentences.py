"""Sentence boundaries, multilingual, via Wikimedia's sentencex (rule-based, with offsets).

A text up to `WHOLE_TEXT_CHARACTERS` long goes to sentencex in one call.  A longer
one (a megabyte paragraph: CJK without line breaks, a minified line, a million
`.`) is segmented in windows, lazily, as far as a caller reads: sentencex looks
back from every sentence terminator to the previous space or `.`, so on text
without spaces one call costs the square of its length (200,000 CJK characters:
12 s), and a caller that needs the first sentences of a block (one chunk, or
`maximumPagesToTake`) should not pay for the rest of it.

Why a window's edges do not move a sentence end (see `_windowed_ends`).  What
sentencex decides at a terminator depends on:

- the terminator run and the next 30 bytes after it: a window's last `margin`
  characters are left to the next window, which sees them with `margin` more text;
- the last word before it (back to a space or `.`; an abbreviation or an
  exclamation word like "Yahoo" is no end): a window starts one sentence before
  the first end it may report, so a word that reaches back past that end
  contains the terminator that ends it, and no abbreviation or exclamation word
  holds `。`, `!`, `?` or a closing bracket;
- quotes, brackets and e-mail addresses it skips (regex matches over the
  paragraph): a window starts at a sentence end, where none is open, so it
  matches the same ones as the whole text up to the first one that closes past
  the window, more than `margin` characters on; a window never ends after a
  `'` or a backtick, whose closing match looks at the next character;
- paragraphs (`\\n\\n`), which sentencex segments each on its own.

What a window cannot see is what sentencex decides from a whole paragraph:
quote marks it pairs further apart than `margin` (a backtick with an apostrophe
sentences later; a `"` by the parity of all those in the paragraph), and the
list-marker family (`1)` or `a)`) it picks by count.  Over such a stretch the
whole text mostly reports no sentence end where windows do.  That needs a
paragraph longer than `WHOLE_TEXT_CHARACTERS`, and none of the corpora has one
(the longest block segmented is 8,766 characters), so nothing changes there.
With windows of 512 and 1,024 characters, on generated prose whose quotes close
within the margin, the ends are the same (tests/chunking/plan/test_sentence_windows.py); on the
338 corpus blocks longer than 2,048 characters, cut into 2,048-character windows
with 512 of margin, 1 of 5,937 whole-text ends is missed and 145 more are found.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from typing import TYPE_CHECKING, Protocol

from sentencex import get_sentence_boundaries

if TYPE_CHECKING:
    from collections.abc import Iterator

MIN_SENTENCE_CHARACTERS = 4
"""A "sentence" shorter than this (`M. `, `3. `, `e. `) is an initial or a list
number that sentencex cut off; it is glued to the next sentence instead."""

WHOLE_TEXT_CHARACTERS = 16_384
"""Texts up to this long are segmented in one call, as they always were: real
paragraphs are far shorter, and sentencex costs at most ~0.03 s on one of CJK."""
WINDOW_CHARACTERS = 2_048
"""Characters per sentencex call on a longer text: 0.25 s per million CJK
characters (4,096: 0.5 s; 16,384: 1.6 s), English about 0.01 s."""
MARGIN_CHARACTERS = 512
"""A window reports no sentence end in its last this many characters: the
longest quote or bracket it still sees closed, and 17 times the lookahead."""
_UNSAFE_WINDOW_LAST = "'`\r"
"""A window does not end on these: a guarded quote match looks at the character
after its closing `'` or backtick, and `\\r\\n` is one line break."""
_UNSAFE_END_STEPS = 16
"""How far a window end moves back to avoid those (a run of them longer than this
is cut anyway: nothing real has one)."""
_OPENER_REACH = 64
"""How far past a sentence end its first character is looked for."""
_WORD_REACH = 256
"""How far back a window passed over looks for a word start (text without spaces has none)."""


class Segmenter(Protocol):
    """Finds sentence ends in a text (the seam tests count the work through)."""

    def __call__(self, language: str, text: str) -> list[int]:
        """Offsets in `text` where sentences end, ascending; the last is `len(text)`."""
        ...


@functools.cache
def sentencex_language(code: str) -> str:
    """The sentencex language for a Split-skill code: `pt-BR` -> `pt`, `zh-Hans` -> `zh`."""
    primary = code.strip().replace("_", "-").split("-", 1)[0].lower()
    return primary or "en"


# An escape, not the characters: mypyc refuses lone surrogates in string literals.
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def sentencex_ends(language: str, text: str) -> list[int]:
    """Sentence ends in `text` as sentencex finds them (paragraph breaks included)."""
    if "\r" in text:
        # sentencex knows only LF; same-length stand-ins keep every offset in place.
        text = text.replace("\r\n", " \n").replace("\r", "\n")
    code = sentencex_language(language)
    try:
        found = get_sentence_boundaries(code, text)
    except UnicodeEncodeError:
        # Lone surrogates cannot cross into Rust; U+FFFD keeps every offset in place.
        found = get_sentence_boundaries(code, _LONE_SURROGATE.sub("\ufffd", text))
    except BaseException as error:
        # sentencex panics on a space of more than one UTF-8 byte between an initial and
        # its period ("J\x85. Smith"); pyo3 raises the panic as a BaseException. An
        # ASCII space in its place keeps every offset; only such texts are read so.
        if type(error).__name__ != "PanicException":
            raise
        found = get_sentence_boundaries(code, text.translate(_WIDE_SPACES))
    return [sentence["end_index"] for sentence in found]


_WIDE_SPACES = dict.fromkeys(
    map(
        ord,
        "\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
        "\u2009\u200a\u2028\u2029\u202f\u205f\u3000",
    ),
    " ",
)
"""Every space of more than one UTF-8 byte (str.isspace above U+007F: NEL, no-break, the
typographic spaces, line and paragraph separators, the ideographic space), read as an
ASCII space where sentencex panics on it."""


def sentence_starts(text: str, language: str) -> list[int]:
    """Offsets in `text` (excluding 0) where a sentence begins, ascending."""
    return list(iter_sentence_starts(text, language))


def iter_sentence_starts(
    text: str,
    language: str,
    *,
    segment: Segmenter = sentencex_ends,
    whole: int = WHOLE_TEXT_CHARACTERS,
    window: int = WINDOW_CHARACTERS,
    margin: int = MARGIN_CHARACTERS,
    largest: int = WHOLE_TEXT_CHARACTERS,
) -> Iterator[int]:
    """`sentence_starts`, lazily: a text longer than `whole` is segmented in windows
    (`window` characters, grown up to `largest` for a long sentence, the last
    `margin` left to the next one) only as far as it is read."""
    if len(text) <= whole:
        ends: Iterator[int] | list[int] = segment(language, text)
    else:
        ends = _windowed_ends(text, language, segment, window, margin, largest)
    # A sentence is glued to the next while it holds under `MIN_SENTENCE_CHARACTERS`
    # from its first to its last non-space character.  Each stretch between two
    # ends is looked at once: stripping the whole growing sentence again at every
    # end was quadratic in a run of ends among spaces (blank lines in an HTML block).
    first = last = -1
    """The first and last non-space of the sentence so far (-1: none yet)."""
    scanned = 0
    length = len(text)
    for end in ends:
        if end >= length:
            break
        piece = text[scanned:end]
        if first < 0 and len(piece.strip()) >= MIN_SENTENCE_CHARACTERS:
            # Nearly every sentence stands alone: one strip measures it.
            scanned = end
            yield end
            continue
        if not piece.isspace() and piece:
            if first < 0:
                first = scanned + len(piece) - len(piece.lstrip())
            last = scanned + len(piece.rstrip()) - 1
        scanned = end
        if first < 0 or last - first + 1 < MIN_SENTENCE_CHARACTERS:
            continue
        yield end
        first = last = -1


def _windowed_ends(
    text: str, language: str, segment: Segmenter, window: int, margin: int, largest: int
) -> Iterator[int]:
    """Sentence ends of a long text from windows of about `window` characters.

    Each window starts at a sentence end already reported, one sentence before
    the last one (`start` and `reported`), and reports the ends past `reported`
    that lie at least `margin` before its own end.  A window that reports none
    (one sentence longer than it) is doubled, up to `largest`; a stretch of
    `largest` characters without a sentence end is passed over (the whole text would hold
    one sentence there, unless an open quote or bracket made it so).
    """
    length = len(text)
    start = reported = 0
    size = window
    while True:
        stop = _window_end(text, start, min(length, start + size))
        ends = [start + end for end in segment(language, text[start:stop])]
        if stop >= length:
            yield from (end for end in ends if end > reported)
            return
        last_safe = stop - margin
        fresh = ends[bisect.bisect_right(ends, reported) : bisect.bisect_right(ends, last_safe)]
        if fresh:
            yield from fresh
            start = _window_start(text, fresh[:-1], reported)
            reported = fresh[-1]
            size = window
        elif size < largest:
            size *= 2
        else:
            # Carry on from a word start, the nearest to what sentencex would have
            # seen had the text gone on: a window starting mid-word (`g. e.g.`)
            # finds ends the whole text does not.
            start = reported = _word_start_before(text, start, last_safe)


_OPENERS = frozenset("([{\"'“‘«„‹「『")
"""Characters that open a quote or a bracket."""


def _window_start(text: str, earlier: list[int], reported: int) -> int:
    """Where the next window starts: the last of the `earlier` ends (all but the last
    one reported) whose sentence does not open with a quote or a bracket, else the last
    of them (or `reported`) as before. sentencex reads a window that opens with one as a
    single quoted sentence: from ` (x) e.g. the cluster. cluster.` it reports no end, where
    the whole text has two (the suite's hypothesis run found it)."""
    for end in reversed(earlier):
        if text[end : end + _OPENER_REACH].lstrip()[:1] not in _OPENERS:
            return end
    return earlier[-1] if earlier else reported


def _word_start_before(text: str, low: int, position: int) -> int:
    """Just past the last whitespace in [low, position), else `position`."""
    for index in range(position - 1, max(low, position - _WORD_REACH) - 1, -1):
        if text[index].isspace():
            return index + 1
    return position


def _window_end(text: str, start: int, stop: int) -> int:
    """`stop`, or a little before it so that the window does not end on a character
    whose match depends on the one after it."""
    if stop >= len(text):
        return len(text)
    floor = max(start + 1, stop - _UNSAFE_END_STEPS)
    end = stop
    while end > floor and text[end - 1] in _UNSAFE_WINDOW_LAST:
        end -= 1
    return end if text[end - 1] not in _UNSAFE_WINDOW_LAST else stop


READ_AHEAD_STARTS = 16
"""Starts a lazy block finds per step: one at a time, the bookkeeping cost more Python
than finding them, and sixteen sentences are a small part of a window."""


class LazySentenceStarts:
    """The sentence starts of one block, found as far as they are asked for."""

    def __init__(self, starts: Iterator[int], offset: int) -> None:
        self._pending: Iterator[int] | None = starts
        self._offset = offset
        self._found: list[int] = []
        """Starts found so far, as offsets of the source (the block's plus `offset`)."""

    @classmethod
    def complete(cls, starts: list[int]) -> LazySentenceStarts:
        """All the starts of a block, found already (offsets of the source)."""
        lazy = cls(iter(()), 0)
        lazy._pending, lazy._found = None, starts
        return lazy

    def after(self, position: int) -> Iterator[int]:
        """Starts past `position`, ascending, segmenting on as they are read."""
        found = self._found
        index = bisect.bisect_right(found, position)
        while True:
            if index == len(found) and not self._more():
                return
            value = found[index]
            index += 1
            if value > position:
                yield value

    def between(self, low: int, high: int) -> Iterator[int]:
        """Starts strictly inside (low, high), ascending, segmenting on only while
        those found so far stop short of `high` and more are read."""
        found = self._found
        index = bisect.bisect_right(found, low)
        while True:
            stop = bisect.bisect_left(found, high, index)
            yield from found[index:stop]
            if stop < len(found) or not self._more():
                return
            index = stop

    def _more(self) -> bool:
        """Find up to `READ_AHEAD_STARTS` more starts; False when the block has no more."""
        if self._pending is None:
            return False
        offset = self._offset
        batch = [offset + value for value in itertools.islice(self._pending, READ_AHEAD_STARTS)]
        if not batch:
            self._pending = None
            return False
        self._found += batch
        return True
