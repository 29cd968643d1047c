"""The default strategy: cut by sections, then blocks, lines, sentences, words."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chunking.split.splitter import StructureSplitter

if TYPE_CHECKING:
    from chunking.contextualize import Contextualizer
    from chunking.options import ChunkOptions
    from chunking.outline import Outline
    from chunking.scoring import Scoring
    from chunking.sections import SectionTree
    from chunking.sizing import Sizer
    from chunking.split.splitter import Span


def structure_spans(
    outline: Outline,
    tree: SectionTree,
    sizer: Sizer,
    context: Contextualizer,
    options: ChunkOptions,
    scoring: Scoring | None = None,
) -> list[Span]:
    """Cut by sections, then blocks, lines, sentences, words (the default)."""
    return StructureSplitter(outline, tree, sizer, context, options).spans()
