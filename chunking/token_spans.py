"""Exact token counts of any span of a document from one encoding of the whole document.

Counting every candidate chunk with its own tokenizer call encodes the same text
two or three times over (the walk, the overlap, the final count).  Instead the
document is encoded once and each span is counted from that: tiktoken splits text
into pre-tokenizer pieces by regex and encodes each piece on its own, and some
positions are piece boundaries in every text that contains them (`_PINNED`).  A
span's count is then the direct count of its two short ends, up to the first and
from the last such position inside it, plus the document's tokens between those
two positions (two bisections in a table of token end offsets).  The result is
exactly `len(encoding.encode_ordinary(source[start:end]))`, which the property
tests check.
"""

from __future__ import annotations

import bisect
import functools
import re
from array import array
from itertools import accumulate
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tiktoken

_PINNED = re.compile(r"\S[ \t]|[\r\n]\S")
"""Two characters with a piece boundary between them in every encoding we ship.

cl100k_base, p50k_base and r50k_base pieces are: letters with at most one
leading non-letter (never a line break), digits, punctuation with one optional
leading space and trailing line breaks, contractions, or whitespace only.  None
of them holds a non-space followed by a space or tab, or a line break followed
by a non-space, so the boundary between such characters does not depend on
anything around it.  Python's `\\S` is narrower than the tokenizer's (Python
calls a few control characters space that Unicode does not), which only makes
this pattern miss some boundaries, never invent one.
"""

DIRECT_COUNT_CHARACTERS = 64
"""Spans up to this long are counted directly: one short tokenizer call costs
less than the two edge counts and bisections of the index."""

EDGE_REACH = 256
"""How far into a span to look for a pinned boundary; text without one that far
(long URLs, base64, scripts written without spaces) is counted directly."""

_BYTE_CHECKPOINT = 1024
"""Code points between stored UTF-8 offsets of a non-ASCII source."""


@functools.cache
def _token_byte_lengths(encoding: tiktoken.Encoding) -> array[int]:
    """UTF-8 length of every token of `encoding` (0 for ids it does not use)."""
    lengths = array("l", [0]) * encoding.n_vocab
    for token in range(encoding.n_vocab):
        try:
            lengths[token] = len(encoding.decode_single_token_bytes(token))
        except KeyError:
            continue
    return lengths


class TokenSpans:
    """Counts tokens of spans of one source; the index is built on first need."""

    def __init__(self, encoding: tiktoken.Encoding, source: str) -> None:
        self._encoding = encoding
        self._source = source
        self._ascii = source.isascii()
        self._token_ends: array[int] | None = None
        """UTF-8 offset just past each token of the whole source, ascending."""
        self._byte_checkpoints: list[int] = []
        """UTF-8 offset of every `_BYTE_CHECKPOINT`-th code point (non-ASCII sources)."""
        self._counts: dict[int, int] = {}
        """Memo of `_count_at`: chunk walks meet the same positions again."""
        self._ends_before: dict[int, int] = {}
        """Memo of `_tokens_ending_by`, pinned or not."""
        self._edge_spans: dict[tuple[int, int], int] = {}
        """Memo of spans with an unpinned end, which cost tokenizer calls."""

    def count(self, text: str) -> int:
        """Tokens in `text`, counted directly."""
        return len(self._encoding.encode_ordinary(text)) if text else 0

    def span(self, start: int, end: int) -> int:
        """Tokens in `source[start:end]`."""
        if end <= start:
            return 0
        counts = self._counts
        before_start = counts.get(start)
        if before_start is None:
            before_start = self._count_at(start)
        before_end = counts.get(end)
        if before_end is None:
            before_end = self._count_at(end)
        if before_start >= 0 and before_end >= 0:
            return before_end - before_start
        key = (start, end)
        total = self._edge_spans.get(key)
        if total is None:
            total = self._span_with_edges(start, end, before_start >= 0, before_end >= 0)
            self._edge_spans[key] = total
        return total

    def estimate(self, start: int, end: int) -> int:
        """The document's tokens that end inside (start, end]: `span` where both ends
        are pinned, otherwise off by about a token at each unpinned end (a token
        cut in two counts once, on the side where it ends)."""
        if end <= start:
            return 0
        ends = self._ends_before
        before_end = ends.get(end)
        if before_end is None:
            before_end = self._tokens_ending_by(end)
        before_start = ends.get(start)
        if before_start is None:
            before_start = self._tokens_ending_by(start)
        return before_end - before_start

    def _tokens_ending_by(self, position: int) -> int:
        token_ends = self._token_ends if self._token_ends is not None else self._build()
        count = bisect.bisect_right(token_ends, self._utf8_offset(position))
        self._ends_before[position] = count
        return count

    def _span_with_edges(self, start: int, end: int, start_pinned: bool, end_pinned: bool) -> int:
        """Count a span with an unpinned end: its ends directly, the rest from the index."""
        source = self._source
        if end - start <= DIRECT_COUNT_CHARACTERS:
            return self.count(source[start:end])
        inner_start: int | None = start
        if not start_pinned:
            first = _PINNED.search(source, start, min(end, start + EDGE_REACH))
            # The boundary sits between the two matched characters.
            inner_start = first.start() + 1 if first is not None else None
        inner_end: int | None = end
        if not end_pinned:
            inner_end = None
            for last in _PINNED.finditer(source, max(start, end - EDGE_REACH), end):
                inner_end = last.start() + 1
        if inner_start is None or inner_end is None or inner_end <= inner_start:
            return self.count(source[start:end])
        total = self._count_at(inner_end) - self._count_at(inner_start)
        if inner_start > start:
            total += self.count(source[start:inner_start])
        if inner_end < end:
            total += self.count(source[inner_end:end])
        return total

    def _count_at(self, position: int) -> int:
        """Tokens of the whole source before `position` if it is pinned, else -1.

        Pinned: a piece boundary of the source that is also one at the start
        or the end of any text cut there, so the tokens on either side are the
        tokens of the pieces on that side.
        """
        count = self._counts.get(position)
        if count is None:
            count = -1
            if self._is_pinned(position):
                count = self._ends_before.get(position)
                if count is None:
                    count = self._tokens_ending_by(position)
            self._counts[position] = count
        return count

    def _is_pinned(self, position: int) -> bool:
        source = self._source
        if position <= 0 or position >= len(source):
            return True
        before, after = source[position - 1], source[position]
        if before in "\r\n":
            # Whitespace ending in a line break is one piece at the end of a
            # text and before a non-space alike.
            return not after.isspace()
        if before.isspace():
            return False
        if after in " \t":
            return True
        # After a letter or digit a line break starts a new piece; after
        # punctuation it joins it (`.\n` is one piece).
        return after in "\r\n" and before.isascii() and before.isalnum()

    def _build(self) -> array[int]:
        lengths = _token_byte_lengths(self._encoding)
        tokens = self._encoding.encode_ordinary(self._source)
        self._token_ends = array("l", accumulate(map(lengths.__getitem__, tokens)))
        if not self._ascii:
            self._byte_checkpoints = list(
                accumulate(
                    (
                        _utf8_length(self._source[offset : offset + _BYTE_CHECKPOINT])
                        for offset in range(0, len(self._source), _BYTE_CHECKPOINT)
                    ),
                    initial=0,
                )
            )
        return self._token_ends

    def _utf8_offset(self, position: int) -> int:
        if self._ascii:
            return position
        block, rest = divmod(position, _BYTE_CHECKPOINT)
        base = block * _BYTE_CHECKPOINT
        return self._byte_checkpoints[block] + _utf8_length(self._source[base : base + rest])


def tokens_add_up(left: str, right: str) -> bool:
    """Whether `left + right` has as many tokens as `left` and `right` apart.

    True when `left` is empty or ends a line and `right` starts with a
    non-space: no pre-tokenizer piece holds a line break followed by a
    non-space (`_PINNED`), and a piece of whitespace ending in a line break is
    the same piece at the end of a text as before more text.
    """
    return not left or (left[-1] in "\r\n" and bool(right) and not right[0].isspace())


def _utf8_length(text: str) -> int:
    # tiktoken encodes a lone surrogate as U+FFFD, three bytes like surrogatepass.
    return len(text.encode("utf-8", "surrogatepass"))
