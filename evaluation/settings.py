"""One setting of the grid: which chunker, at which limits, with which options."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Literal

from chunking.options import (
    SECTIONS_APART_FILL,
    ChunkOptions,
    Limits,
    OptionError,
    SplitMode,
    Unit,
)
from chunking.plan.semantic_params import (
    DEFAULT_SEMANTIC_PERCENTILE,
    DEFAULT_SEMANTIC_WINDOW,
    SemanticBreaks,
)
from chunking.plan.words_params import DEFAULT_WORD_OVERLAP, DEFAULT_WORDS_PER_CHUNK, WordWindows

ChunkerName = Literal["ours", "split-skill", "langchain"]
"""Our chunker, or a baseline row."""
CHUNKERS: tuple[ChunkerName, ...] = ("ours", "split-skill", "langchain")
BASELINES: tuple[ChunkerName, ...] = ("split-skill", "langchain")
PERCENT = 100

RULE_VARIANTS: dict[str, dict[str, object]] = {
    "default": {},
    "leaf-prefix": {"prefix_path": "leaf"},
    "title-prefix": {"prefix_path": "title"},
}
"""`--rules`: our chunker with one rule changed from the defaults, by name (the
`ChunkOptions` fields each sets)."""


@dataclass(frozen=True, slots=True)
class Setting:
    """Everything that decides one row of the results."""

    chunker: ChunkerName
    unit: Unit
    maximum: int
    """maximumPageLength in `unit`."""
    overlap: int
    """pageOverlapLength in `unit`, resolved from a percentage when given as one."""
    overlap_label: str
    """The overlap as asked for (`64` or `12%`), for tables and plots."""
    mode: SplitMode = SplitMode.PAGES
    title_prefix: bool = True
    """Ours only: title and heading path in front of each embedded text."""
    strategy: str = "structure"
    """Ours only: the splitting strategy."""
    strip_markup: bool = True
    """Ours only: markdown markup noise left out of the embedded text."""
    section_fill: float | None = SECTIONS_APART_FILL
    """Ours only: None packs small sections; a share ends chunks at the first heading past it."""
    words_per_chunk: int = DEFAULT_WORDS_PER_CHUNK
    """Ours with strategy `words` only: words in each window."""
    word_overlap: int = DEFAULT_WORD_OVERLAP
    """Ours with strategy `words` only: words each window repeats from the previous one."""
    semantic_percentile: float = DEFAULT_SEMANTIC_PERCENTILE
    """Ours with strategy `semantic` only: breaks above this percentile of the distances."""
    semantic_window: int = DEFAULT_SEMANTIC_WINDOW
    """Ours with strategy `semantic` only: sentences embedded either side of a boundary."""
    rules: str = "default"
    """Ours only: a `RULE_VARIANTS` name, one rule changed from the defaults."""

    @property
    def limits(self) -> Limits:
        """The limits, validated as the Split skill validates them."""
        return Limits(self.unit, self.maximum, self.overlap)

    @property
    def words(self) -> WordWindows:
        """The word windows, validated (the `words` strategy's parameters)."""
        return WordWindows(self.words_per_chunk, self.word_overlap)

    @property
    def semantic(self) -> SemanticBreaks:
        """The `semantic` strategy's parameters, validated."""
        return SemanticBreaks(self.semantic_percentile, self.semantic_window)

    @property
    def label(self) -> str:
        """A short unique name: `ours 512/12% tokens pages prefix`."""
        unit = "chars" if self.unit is Unit.CHARACTERS else "tokens"
        parts = [self.chunker, f"{self.maximum}/{self.overlap_label}", unit]
        if self.mode is not SplitMode.PAGES:
            parts.append(self.mode.value)
        if self.chunker == "ours":
            if self.strategy == "words":
                parts.append(f"words {self.words_per_chunk}/{self.word_overlap}")
            elif self.strategy == "semantic":
                parts.append(f"semantic {self.semantic_percentile:g}/{self.semantic_window}")
            elif self.strategy != "structure":
                parts.append(self.strategy)
            parts.append("prefix" if self.title_prefix else "no-prefix")
            # Defaults go unnamed, so a default row reads `ours 512/12% tokens prefix`.
            if not self.strip_markup:
                parts.append("markup")
            if self.section_fill is None:
                parts.append("packed")
            elif self.section_fill != SECTIONS_APART_FILL:
                parts.append(f"apart@{self.section_fill:g}")
            if self.rules != "default":
                parts.append(self.rules)
        return " ".join(parts)


_DEFAULT_BREAKS = ((DEFAULT_SEMANTIC_PERCENTILE, DEFAULT_SEMANTIC_WINDOW),)


@dataclass(frozen=True, slots=True)
class Grid:
    """The axes of a sweep; `settings()` expands them."""

    maximums: tuple[int, ...]
    overlaps: tuple[str, ...]
    """Integers or percentages of the maximum (`0`, `64`, `12%`)."""
    units: tuple[Unit, ...] = (Unit.TOKENS,)
    modes: tuple[SplitMode, ...] = (SplitMode.PAGES,)
    title_prefixes: tuple[bool, ...] = (True,)
    strategies: tuple[str, ...] = ("structure",)
    strip_markup: tuple[bool, ...] = (True,)
    section_fills: tuple[float | None, ...] = (SECTIONS_APART_FILL,)
    word_windows: tuple[tuple[int, int], ...] = ((DEFAULT_WORDS_PER_CHUNK, DEFAULT_WORD_OVERLAP),)
    """(wordsPerChunk, wordOverlap) pairs for the `words` strategy; other strategies
    ignore them, so they are not multiplied by them."""
    semantic_breaks: tuple[tuple[float, int], ...] = _DEFAULT_BREAKS
    """(semanticPercentile, semanticWindow) pairs for the `semantic` strategy only."""
    chunkers: tuple[ChunkerName, ...] = ("ours", "split-skill")
    rules: tuple[str, ...] = ("default",)
    """`RULE_VARIANTS` names (ours only)."""
    limits: tuple[tuple[Unit, int, str], ...] = ()
    """(unit, maximum, overlap) triples run instead of the product of `units`,
    `maximums` and `overlaps`: two settings users run side by side (512/51 tokens and
    2000/500 characters) without the two cross combinations nobody asked for."""

    def limit_triples(self) -> tuple[tuple[Unit, int, str], ...]:
        """The (unit, maximum, overlap) combinations to run."""
        if self.limits:
            return self.limits
        return tuple(itertools.product(self.units, self.maximums, self.overlaps))

    def settings(self) -> tuple[list[Setting], list[str]]:
        """Every valid setting, and why each rejected combination was skipped."""
        settings: list[Setting] = []
        skipped: list[str] = []
        seen: set[Setting] = set()
        for chunker, (unit, maximum, overlap), mode in itertools.product(
            self.chunkers, self.limit_triples(), self.modes
        ):
            ours = chunker == "ours"
            if chunker == "langchain" and mode is not SplitMode.PAGES:
                continue
            length = resolve_overlap(overlap, maximum)
            for prefix, strategy, plain, fill, rules in itertools.product(
                self.title_prefixes if ours else (True,),
                self.strategies if ours else ("structure",),
                self.strip_markup if ours else (True,),
                self.section_fills if ours else (SECTIONS_APART_FILL,),
                self.rules if ours else ("default",),
            ):
                windows = self.word_windows if strategy == "words" else self.word_windows[:1]
                breaks = self.semantic_breaks if strategy == "semantic" else _DEFAULT_BREAKS
                for (size, word_overlap), (percentile, window) in itertools.product(
                    windows, breaks
                ):
                    setting = Setting(
                        chunker, unit, maximum, length, overlap, mode, prefix, strategy, plain,
                        fill, size, word_overlap, percentile, window, rules,
                    )  # fmt: skip
                    try:
                        setting.limits  # noqa: B018 (validates)
                        setting.words  # noqa: B018 (validates)
                        setting.semantic  # noqa: B018 (validates)
                        ChunkOptions(mode=mode, strategy=strategy)  # the options' own rules
                    except OptionError as error:
                        skipped.append(f"{setting.label}: {error}")
                        continue
                    if setting not in seen:
                        seen.add(setting)
                        settings.append(setting)
        return settings, skipped


def resolve_overlap(overlap: str, maximum: int) -> int:
    """`12%` of `maximum` (rounded), or the integer itself."""
    text = overlap.strip()
    if text.endswith("%"):
        share = float(text[:-1])
        return round(maximum * share / PERCENT)
    return int(text)


def parse_overlap(text: str) -> str:
    """Check one `--overlap` item: a non-negative integer or percentage below 50%."""
    item = text.strip()
    try:
        number = float(item[:-1]) if item.endswith("%") else int(item)
    except ValueError:
        raise OptionError(
            f"--overlap items must be integers or percentages such as 12% (got {text!r})"
        ) from None
    if number < 0:
        raise OptionError(f"--overlap items must not be negative (got {text!r})")
    return item
