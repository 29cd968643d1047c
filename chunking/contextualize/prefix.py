"""Joining title, heading path and content into the text to embed (a chunk's prefix,
shortened to its share of the limit when it must be)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from chunking.measure.sizing import TextSizer

if TYPE_CHECKING:
    from chunking.options import ChunkOptions

PREFIX_SHARE = 0.25
"""At most this share of `maximumPageLength` goes to the title and heading path,
so every chunk keeps at least three quarters of its room for content."""
ELLIPSIS = "…"


@dataclass(slots=True)
class Contextualizer:
    """Builds prefixes (cached per heading path) and embedded texts."""

    sizer: TextSizer
    title: str
    maximum: int
    enabled: bool
    heading_separator: str
    prefix_separator: str
    path: str = "path"
    """`ChunkOptions.prefix_path`: the whole heading path, the innermost heading, or none."""
    shortened: set[tuple[str, ...]] = field(default_factory=set)
    """Heading paths whose prefix had to be shortened (reported as warnings)."""
    _cache: dict[tuple[str, ...], tuple[str, int]] = field(default_factory=dict)

    @classmethod
    def for_options(cls, sizer: TextSizer, title: str, options: ChunkOptions) -> Contextualizer:
        """The contextualizer `options` ask for, for a document titled `title`."""
        return cls(
            sizer=sizer,
            title=title,
            maximum=options.limits.maximum_page_length,
            enabled=options.title_prefix,
            heading_separator=options.heading_separator,
            prefix_separator=options.prefix_separator,
            path=options.prefix_path,
        )

    def prefix(self, headings: tuple[str, ...]) -> tuple[str, int]:
        """The prefix text for a heading path (separator included) and its size."""
        cached = self._cache.get(headings)
        if cached is None:
            cached = self._build_prefix(headings)
            self._cache[headings] = cached
        return cached

    @property
    def prefix_limit(self) -> int:
        """The most a prefix may measure: PREFIX_SHARE of `maximum`."""
        return int(self.maximum * PREFIX_SHARE)

    def title_too_long(self) -> bool:
        """Whether the title alone is over the prefix limit, so every prefix shortens it."""
        self.prefix(())
        return () in self.shortened

    def text(self, headings: tuple[str, ...], content: str) -> str:
        """The embedded text: prefix, content."""
        return self.prefix(headings)[0] + content

    def _join(self, parts: list[str]) -> str:
        return self.heading_separator.join(parts) + self.prefix_separator

    def _build_prefix(self, headings: tuple[str, ...]) -> tuple[str, int]:
        if not self.enabled:
            return "", 0
        named = {"leaf": headings[-1:], "title": ()}.get(self.path, headings)
        parts = [p for p in (self.title, *named) if p]
        if not parts:
            return "", 0
        allowed = self.prefix_limit
        text = self._join(parts)
        size = self.sizer.size(text)
        if size <= allowed:
            return text, size
        self.shortened.add(headings)
        # Keep the title and the innermost heading; the middle of the path goes first.
        while len(parts) > 2:
            parts = (
                [parts[0], ELLIPSIS, parts[-1]] if parts[1] != ELLIPSIS else [parts[0], *parts[2:]]
            )
            text = self._join(parts)
            size = self.sizer.size(text)
            if size <= allowed:
                return text, size
        # Still too long: shorten each remaining part to its leading words.
        parts = [self._truncate(part, allowed // len(parts)) for part in parts]
        text = self._join(parts)
        return text, self.sizer.size(text)

    def _truncate(self, part: str, allowed: int) -> str:
        """The longest word-boundary prefix of `part` that fits `allowed`, plus an ellipsis."""
        words = part.split()
        low, high = 0, len(words)
        while low < high:
            middle = (low + high + 1) // 2
            if self.sizer.size(" ".join(words[:middle]) + ELLIPSIS) <= allowed:
                low = middle
            else:
                high = middle - 1
        if low:
            return " ".join(words[:low]) + ELLIPSIS
        # One giant word: cut characters.
        low, high = 0, len(part)
        while low < high:
            middle = (low + high + 1) // 2
            if self.sizer.size(part[:middle] + ELLIPSIS) <= allowed:
                low = middle
            else:
                high = middle - 1
        return part[:low] + ELLIPSIS
