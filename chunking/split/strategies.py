"""Chunking strategies: each turns an outline into spans; parsing and the skill stay untouched.

A new strategy (fixed word windows, semantic breakpoints...) is a function with
the `Strategy` signature registered in `STRATEGIES`; it gets the same outline,
section tree, sizer and contextualizer, and must return spans whose embedded
text fits the limit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from chunking.split.splitter import Span, StructureSplitter

if TYPE_CHECKING:
    from chunking.contextualize import Contextualizer
    from chunking.options import ChunkOptions
    from chunking.outline import Outline
    from chunking.sections import SectionTree
    from chunking.sizing import Sizer


class Strategy(Protocol):
    """Plans the chunks of one document."""

    def __call__(
        self,
        outline: Outline,
        tree: SectionTree,
        sizer: Sizer,
        context: Contextualizer,
        options: ChunkOptions,
    ) -> list[Span]:
        """Spans in document order, each within the limit."""
        ...


def structure_spans(
    outline: Outline,
    tree: SectionTree,
    sizer: Sizer,
    context: Contextualizer,
    options: ChunkOptions,
) -> list[Span]:
    """Cut by sections, then blocks, lines, sentences, words (the default)."""
    return StructureSplitter(outline, tree, sizer, context, options).spans()


STRATEGIES: dict[str, Strategy] = {"structure": structure_spans}
