"""The default strategy: cut by sections, then blocks, lines, sentences, words."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chunking.plan.walk import StructureSplitter

if TYPE_CHECKING:
    from chunking.contextualize import Contextualizer
    from chunking.measure.sizing import Sizer
    from chunking.model import Outline
    from chunking.options import ChunkOptions
    from chunking.outline.sections import SectionTree
    from chunking.plan.walk import Span
    from chunking.scoring import Scoring


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
