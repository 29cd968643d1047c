"""Exact token counts of any span of a document from one encoding of the whole document.

Counting every candidate chunk with its own tokenizer call encodes the same text
two or three times over (the walk, the overlap, the final count).  Instead the
document is encoded once, and every position gets a running total: how many of
the document's tokens end at or before it.  tiktoken splits text into
pre-tokenizer pieces by regex and encodes each piece on its own, and some
positions are piece boundaries in every text that contains them (pinned, see
`PinRules`).  Between two pinned positions a span's exact count is the difference
of their totals; a span with an unpinned end adds direct counts of its short
ends.  The result is exactly `len(encoding.encode_ordinary(source[start:end]))`,
which the property tests check.  Differences of totals at any two positions are
the splitter's cheap estimates: off by about a token at an unpinned end, and
estimates of adjacent spans add up to the estimate of their union.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import string
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chunking.measure.encodings import shipped_ranks

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import numpy as np
    import numpy.typing as npt
    import tiktoken

    _Ends = npt.NDArray[np.integer[Any]] | list[int]
    """Token ends: numpy's array for a long text, a list for a short one."""


@dataclass(frozen=True, slots=True)
class PinRules:
    """Which neighbouring characters have a piece boundary between them in every text
    that holds them, for one family of pre-tokenizer patterns."""

    pattern: re.Pattern[str]
    """Two characters with such a boundary between them (some matches are not pinned:
    `pinned_at` decides)."""
    joins_line_break: str
    """Non-space characters a piece can hold right after a line break."""
    joins_word: str
    """ASCII punctuation a piece can hold right after a letter or digit."""
    break_after_space_joins: bool = False
    """Whether whitespace ending in a line break splits into other pieces before a
    non-space than at the end of a text (then only a line break after a non-space pins)."""


_PINNED = PinRules(re.compile(r"\S[ \t]|[\r\n]\S|[A-Za-z0-9][!-/:-@\[-`{-~]"), "", "")
"""The rules of cl100k_base.

Its pieces are: letters with at most one
leading non-letter (never a line break), digits, punctuation with one optional
leading space and trailing line breaks, contractions, or whitespace only.  None
of them holds a non-space followed by a space or tab, or a line break followed
by a non-space; and a run of letters or digits ends at the first character that
is neither, while punctuation pieces hold no letter or digit, so no piece holds
a letter or digit followed by punctuation either.  The boundary between such
characters does not depend on anything around it.  Python's `\\S` is narrower
than the tokenizer's (Python calls a few control characters space that Unicode
does not), which only makes this pattern miss some boundaries, never invent one.
"""

_PINNED_R50K = PinRules(
    re.compile(r"\S[ \t]|(?<=\S)[\r\n]\S|[A-Za-z0-9][!-/:-@\[-`{-~]"), "", "", True
)
"""The rules of r50k_base, p50k_base and p50k_edit: cl100k's, but their pattern has no
`\\s*[\\r\\n]` alternative, so `\\n\\n` is one piece at the end of a text and two
(`\\n`, `\\n`) before a word; only a line break after a non-space is pinned."""

_PINNED_O200K = PinRules(
    re.compile(r"\S[ \t]|[\r\n][^\s/]|[A-Za-z0-9][!-&(-/:-@\[-`{-~]"), "/", "'"
)
"""The rules of o200k_base, whose pieces differ from cl100k's in two ways that matter
here: a run of punctuation takes trailing line breaks and slashes (`.\\n/` is one
piece), and a word takes its contraction (`it's` is one piece).  So neither a line
break before `/` nor a word before `'` is pinned; the rest holds as for cl100k."""

PIN_RULES: Mapping[str, PinRules] = {
    "cl100k_base": _PINNED,
    "p50k_base": _PINNED_R50K,
    "p50k_edit": _PINNED_R50K,
    "r50k_base": _PINNED_R50K,
}
"""The rules per encoding; any other encoding gets o200k's, the stricter."""


_ASCII_PUNCTUATION = frozenset(string.punctuation)

DIRECT_COUNT_CHARACTERS = 64
"""Spans up to this long are counted directly: one short tokenizer call costs
less than the two edge counts and bisections of the index."""

SHORT_TEXT_CHARACTERS = 8
"""Direct counts of texts up to this long are remembered."""

LONG_COUNT_CHARACTERS = 1_000_000
"""Longer texts counted directly are remembered up to this many characters in all,
then forgotten at once: a few megabytes of keys at most, and chunks of a run of `.`
measure the same dozen texts each."""

EDGE_REACH = 256
"""How far into a span to look for a pinned boundary; text without one that far
(long URLs, base64, scripts written without spaces) is counted directly."""

ENCODE_PART_CHARACTERS = 65_536
"""The index is encoded in parts about this long, each cut at a pinned position, where
the tokens of the parts are those of the whole: tiktoken merges a single piece in more
than linear time (4 million `.` are one piece: 2.3 s; in 250,000-character pieces,
0.24 s per million), and normal text has pinned positions every few characters."""
PIN_SEARCH_CHARACTERS = 4_096
"""How far past a part's nominal end to look for a pinned position.  Text without one
that far (a run of `.`, a line of letters) is cut where the part ends anyway, and a
span across such a cut is counted directly."""

NUMPY_INDEX_CHARACTERS = 4_096
"""Texts this long and longer are indexed with numpy (loaded then); a shorter one in
Python, so a short document never loads numpy (`parse.markdown.blocks` draws the
line tables' line at the same length)."""

# An escape, not the characters: mypyc refuses lone surrogates in string literals.
_SURROGATE = re.compile(r"[\ud800-\udfff]")

_CONTINUATION_MASK, _CONTINUATION = 0xC0, 0x80
"""UTF-8 continuation bytes are 10xxxxxx."""
_MAX_UTF8_WIDTH = 4


@functools.cache
def _token_byte_lengths(encoding: tiktoken.Encoding, wide: bool) -> npt.NDArray[np.integer[Any]]:
    """UTF-8 length of every token of `encoding` (0 for ids it does not use),
    as 64-bit integers if `wide`, else 32-bit."""
    import numpy as np  # noqa: PLC0415  # on first need: a one-line text never loads it

    lengths: npt.NDArray[np.integer[Any]] = np.zeros(
        encoding.n_vocab, dtype=np.int64 if wide else np.int32
    )
    ranks = shipped_ranks(encoding)
    if ranks is not None:
        # From the ranks in two passes at C speed: a decode per token (100,000 calls
        # for cl100k) was a fifth of a start-up in tokens mode.
        count = len(ranks)
        tokens = np.fromiter(ranks.values(), dtype=np.int64, count=count)
        lengths[tokens] = np.fromiter(map(len, ranks), dtype=lengths.dtype, count=count)
        for special in encoding.special_tokens_set:
            lengths[encoding.encode_single_token(special)] = len(special.encode("utf-8"))
        return lengths
    for token in range(encoding.n_vocab):
        try:
            lengths[token] = len(encoding.decode_single_token_bytes(token))
        except KeyError:
            continue
    return lengths


class _TokenLengths(dict[int, int]):
    """UTF-8 lengths of the tokens met so far, each decoded once: a lookup of a known one
    stays in C (`map` of `__getitem__`), where a decode per token was a Python call."""

    __slots__ = ("_encoding",)

    def __init__(self, encoding: tiktoken.Encoding) -> None:
        super().__init__()
        self._encoding = encoding

    def __missing__(self, token: int) -> int:
        length = len(self._encoding.decode_single_token_bytes(token))
        self[token] = length
        return length


@functools.cache
def _known_token_lengths(encoding: tiktoken.Encoding) -> _TokenLengths:
    """The token lengths a short text's index reads (`_build_short`), per encoding: the
    table of all of them (`_token_byte_lengths`) would load numpy."""
    return _TokenLengths(encoding)


class TokenSpans:
    """Counts tokens of spans of one source; the index is built on first need.

    Only `source[begin:end]` is encoded (front matter and trailing link
    definitions are never chunked); spans reaching outside it are counted directly.
    """

    def __init__(
        self,
        encoding: tiktoken.Encoding,
        source: str,
        begin: int = 0,
        end: int | None = None,
        *,
        part: int = ENCODE_PART_CHARACTERS,
    ) -> None:
        self._encoding = encoding
        self._rules = PIN_RULES.get(encoding.name, _PINNED_O200K)
        self._part = part
        self._source = source
        self._begin = begin
        self._end = len(source) if end is None else end
        self._surrogates: list[int] = []
        """Where lone surrogates are in the encoded range (found by `_build`):
        tiktoken pairs adjacent ones up, so a span holding one is always
        counted directly."""
        self._loose_cuts: list[int] = []
        """Where `_build` cut the encoded range between parts at an unpinned position
        (ascending): the index's tokens there are not those of a text across it, so a
        span holding one is counted directly."""
        self._token_ends: _Ends | None = None
        """Where each token of the encoded range ends, in code points from its
        start, ascending (a token ending inside a character ends after it)."""
        self._scalar_ends: Sequence[int] = ()
        """The same ends seen through a memoryview, for one-at-a-time bisection:
        numpy's searchsorted converts the whole array when the scalar's type
        differs, and a numpy scalar costs more to make than a Python int."""
        self._totals: dict[int, int] = {}
        """Memo of `total`: chunk walks meet the same positions again."""
        self._pinned: dict[int, bool] = {}
        self._edge_spans: dict[tuple[int, int], int] = {}
        """Memo of spans with an unpinned end, which cost tokenizer calls."""
        self._short_counts: dict[str, int] = {}
        self._long_counts: dict[str, int] = {}
        self._long_characters = 0
        """Characters in the keys of `_long_counts`, held under `LONG_COUNT_CHARACTERS`."""

    def count(self, text: str) -> int:
        """Tokens in `text`, counted directly."""
        if len(text) > SHORT_TEXT_CHARACTERS:
            return self._long_count(text)
        # Short edges (`.`, `),`, `**`) come back again and again.
        count = self._short_counts.get(text)
        if count is None:
            count = len(self._encoding.encode_ordinary(text))
            self._short_counts[text] = count
        return count

    def _long_count(self, text: str) -> int:
        """Tokens in a longer `text`, remembered while there is room: text without a
        pinned position is counted whole, and repetitive text (a run of `.` or `。`)
        has chunk after chunk measure the same texts, a dozen per chunk."""
        count = self._long_counts.get(text)
        if count is None:
            count = len(self._encoding.encode_ordinary(text))
            if self._long_characters + len(text) > LONG_COUNT_CHARACTERS:
                self._long_counts.clear()
                self._long_characters = 0
            self._long_counts[text] = count
            self._long_characters += len(text)
        return count

    def total(self, position: int) -> int:
        """How many tokens of the whole source end at or before `position`."""
        if self._token_ends is None:
            self._build()
        index = position - self._begin
        if index <= 0:
            return 0  # every token has at least one byte
        if position >= self._end:
            return len(self._scalar_ends)
        total = self._totals.get(position)
        if total is None:
            total = bisect.bisect_right(self._scalar_ends, index)
            self._totals[position] = total
        return total

    def totals(self, positions: Sequence[int]) -> list[int]:
        """`total` of each of `positions`, in one vectorized search."""
        ends = self._index()
        if isinstance(ends, list):
            # A short text's index: its few positions bisected one by one.
            high = self._end - self._begin
            return [
                bisect.bisect_right(ends, min(max(position - self._begin, 0), high))
                for position in positions
            ]
        import numpy as np  # noqa: PLC0415  # loaded with the index

        offsets: npt.NDArray[np.integer[Any]] = np.asarray(positions, dtype=np.int64) - self._begin
        # Two ufuncs in place: np.clip's dispatch cost more than the search.
        np.maximum(offsets, 0, out=offsets)
        np.minimum(offsets, self._end - self._begin, out=offsets)
        found: list[int] = ends.searchsorted(offsets, "right").tolist()
        return found

    def horizon(self, limit: int) -> int:
        """A position past which every running total exceeds `limit`."""
        self._index()
        ends = self._scalar_ends
        if limit >= len(ends):
            return len(self._source)
        # Any position at or past the end of token number `limit` + 1 has a total
        # over `limit`.
        return self._begin + ends[limit]

    def estimate(self, start: int, end: int) -> int:
        """The document's tokens that end inside (start, end]: `span` where both
        ends are pinned, else off by about a token at each unpinned end."""
        return self.total(end) - self.total(start) if end > start else 0

    def span(self, start: int, end: int) -> int:
        """Tokens in `source[start:end]`, exactly."""
        if end <= start:
            return 0
        self._index()  # finds the surrogates
        if (
            start < self._begin
            or end > self._end
            or _holds(self._surrogates, start, end)
            or _holds(self._loose_cuts, start, end)
        ):
            return self.count(self._source[start:end])
        start_pinned, end_pinned = self._is_pinned(start), self._is_pinned(end)
        if start_pinned and end_pinned:
            return self.total(end) - self.total(start)
        key = (start, end)
        total = self._edge_spans.get(key)
        if total is None:
            total = self._span_with_edges(start, end, start_pinned, end_pinned)
            self._edge_spans[key] = total
        return total

    def _span_with_edges(self, start: int, end: int, start_pinned: bool, end_pinned: bool) -> int:
        """Count a span with an unpinned end: its ends directly, the rest from the index."""
        source = self._source
        if end - start <= DIRECT_COUNT_CHARACTERS:
            return self.count(source[start:end])
        inner_start: int | None = start
        if not start_pinned:
            first = self._rules.pattern.search(source, start, min(end, start + EDGE_REACH))
            # The boundary sits between the two matched characters.
            inner_start = first.start() + 1 if first is not None else None
        inner_end: int | None = end if end_pinned else self._last_pinned(start, end)
        if inner_start is None or inner_end is None or inner_end <= inner_start:
            return self.count(source[start:end])
        total = self.total(inner_end) - self.total(inner_start)
        if inner_start > start:
            total += self.count(source[start:inner_start])
        if inner_end < end:
            total += self.count(source[inner_end:end])
        return total

    def _last_pinned(self, start: int, end: int) -> int | None:
        """The last pinned position in (start, end) within `EDGE_REACH` of `end`."""
        source = self._source
        low = max(start, end - EDGE_REACH)
        # Chunks mostly end on punctuation (`word.` before a line break): the
        # word before it ends a piece.
        before_punctuation = end
        while before_punctuation > low and source[before_punctuation - 1] in _ASCII_PUNCTUATION:
            before_punctuation -= 1
        if low < before_punctuation < end and self._is_pinned(before_punctuation):
            return before_punctuation
        high = end
        while high > low:
            # A pinned position is usually a space after a word, or the start of
            # a line: look at the nearest of each, right to left.
            candidate = max(source.rfind(" ", low, high), source.rfind("\n", low, high - 1) + 1)
            if candidate <= low:
                break
            if self._is_pinned(candidate):
                return candidate
            high = candidate
        last = None
        # Tabs and lone carriage returns: the exhaustive search.
        for match in self._rules.pattern.finditer(source, low, end):
            last = match.start() + 1
        return last

    def _is_pinned(self, position: int) -> bool:
        """Whether `position` is a piece boundary of the source that is also one at
        the start or the end of any text cut there."""
        pinned = self._pinned.get(position)
        if pinned is None:
            # The ends of the encoded range are where its text starts and stops.
            pinned = position in (self._begin, self._end) or _pinned_at(
                self._source, position, self._rules
            )
            self._pinned[position] = pinned
        return pinned

    def adds_up(self, left: str, right: str) -> bool:
        """Whether `left + right` has as many tokens as `left` and `right` apart
        (`tokens_add_up` with this encoding's rules)."""
        return tokens_add_up(left, right, self._rules)

    def _holds_surrogate(self, start: int, end: int) -> bool:
        return _holds(self._surrogates, start, end)

    def _index(self) -> _Ends:
        """The token end offsets, built on first need."""
        return self._token_ends if self._token_ends is not None else self._build()

    def _build(self) -> _Ends:
        source = self._source[self._begin : self._end]
        utf8: bytes | None = None
        if not source.isascii():
            try:
                utf8 = source.encode("utf-8")
            except UnicodeEncodeError:
                self._surrogates = [
                    self._begin + match.start() for match in _SURROGATE.finditer(source)
                ]
                # Encoded as tiktoken would encode each one alone; spans that
                # hold one are counted directly (see `span`).
                source = _SURROGATE.sub("\ufffd", source)
                utf8 = source.encode("utf-8")
        # 32-bit offsets when they cannot overflow (any request the skill
        # accepts): half the memory, and numpy sums them several times faster.
        wide = len(source) * _MAX_UTF8_WIDTH >= 2**31
        if len(source) < NUMPY_INDEX_CHARACTERS and len(source) <= self._part:
            return self._build_short(source, utf8)
        # numpy is loaded with the first long index: a short text never needs it.
        import numpy as np  # noqa: PLC0415

        tokens = self._encode_in_parts(source)
        # Sums run in place in the one buffer: casting sums and fresh buffers
        # cost numpy several times the arithmetic on a 16 M character document.
        ends: npt.NDArray[np.integer[Any]] = _token_byte_lengths(self._encoding, wide)[tokens]
        np.cumsum(ends, out=ends)
        if utf8 is not None:
            # Byte ends to code point ends: the characters that start before
            # each end (a code point starts at every byte that is not a
            # continuation byte), so a token ending inside a character counts
            # as ending after it.
            data = np.frombuffer(utf8, dtype=np.uint8)
            starts_before = np.cumsum(
                (data & _CONTINUATION_MASK) != _CONTINUATION, dtype=ends.dtype
            )
            np.subtract(ends, 1, out=ends)
            np.take(starts_before, ends, out=ends)
        self._token_ends = ends
        self._scalar_ends = ends.data
        return ends

    def _build_short(self, source: str, utf8: bytes | None) -> list[int]:
        """The index of a short text (one part), as `_build` makes it, in Python."""
        tokens = self._encoding.encode_ordinary(source)
        ends = list(
            itertools.accumulate(map(_known_token_lengths(self._encoding).__getitem__, tokens))
        )
        if utf8 is not None:
            # Byte ends to code point ends, as in `_build`.
            starts_before = list(
                itertools.accumulate(
                    int((byte & _CONTINUATION_MASK) != _CONTINUATION) for byte in utf8
                )
            )
            ends = [starts_before[end - 1] for end in ends]
        self._token_ends = ends
        self._scalar_ends = ends
        return ends

    def _encode_in_parts(self, source: str) -> npt.NDArray[np.integer[Any]]:
        """The tokens of `source` (the encoded range), encoded part by part."""
        import numpy as np  # noqa: PLC0415

        cuts = [0]
        while cuts[-1] + self._part < len(source):
            nominal = cuts[-1] + self._part
            limit = min(nominal + PIN_SEARCH_CHARACTERS, len(source))
            # The boundary sits between the two characters a match holds.
            pinned = (
                match.start() + 1
                for match in self._rules.pattern.finditer(source, nominal - 1, limit)
                if _pinned_at(source, match.start() + 1, self._rules)
            )
            cut = next(pinned, None)
            if cut is None:
                cut = nominal
                self._loose_cuts.append(self._begin + cut)
            cuts.append(cut)
        cuts.append(len(source))
        parts = [
            self._encoding.encode_to_numpy(
                source[start:stop], allowed_special=set(), disallowed_special=()
            )
            for start, stop in itertools.pairwise(cuts)
        ]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _holds(positions: list[int], start: int, end: int) -> bool:
    """Whether one of `positions` (ascending) lies in [start, end)."""
    if not positions:
        return False
    index = bisect.bisect_left(positions, start)
    return index < len(positions) and positions[index] < end


def _pinned_at(source: str, position: int, rules: PinRules) -> bool:
    if position <= 0 or position >= len(source):
        return True
    before, after = source[position - 1], source[position]
    if before in "\r\n":
        # Whitespace ending in a line break is one piece at the end of a text
        # and before a non-space alike.
        return (
            not after.isspace()
            and after not in rules.joins_line_break
            and not (
                rules.break_after_space_joins and position >= 2 and source[position - 2].isspace()
            )
        )
    if before.isspace():
        return False
    if after in " \t":
        return True
    # After a letter or digit a line break or punctuation starts a new piece;
    # after punctuation a line break joins it (`.\n` is one piece).
    return (
        before.isascii()
        and before.isalnum()
        and (after in "\r\n" or (after in _ASCII_PUNCTUATION and after not in rules.joins_word))
    )


def tokens_add_up(left: str, right: str, rules: PinRules = _PINNED) -> bool:
    """Whether `left + right` has as many tokens as `left` and `right` apart.

    True when `left` is empty or ends a line and `right` starts with a
    non-space: no pre-tokenizer piece holds a line break followed by a
    non-space, but for the exceptions `rules` name, and a piece of whitespace
    ending in a line break is the same piece at the end of a text as before more text.
    """
    if not left:
        return True
    if not right or left[-1] not in "\r\n":
        return False
    return _pinned_at(left + right[0], len(left), rules)
