"""Chunking strategies: each turns an outline into spans; parsing and the skill stay untouched.

Each strategy is a module here with a function of the `Strategy` signature,
registered in `STRATEGIES`: `structure` (the default), `words` (fixed word
windows), `semantic` (cuts where the meaning shifts, `Scoring.embed`) and
`binary` (the recursive least-similar split).  It gets the same outline, section
tree, sizer and contextualizer, and
must return spans of the source whose embedded text fits the limit, with tables
and code never cut inside a row or line. Strategies that score text get `Scoring`
(`chunking.scoring`): the caller's embedder and pair scorer, so they stay pure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from chunking.plan.binary import binary_spans
from chunking.plan.semantic import semantic_spans
from chunking.plan.structure import structure_spans
from chunking.plan.words import word_spans

if TYPE_CHECKING:
    from chunking.contextualize import Contextualizer
    from chunking.measure.sizing import Sizer
    from chunking.model import Outline
    from chunking.options import ChunkOptions
    from chunking.outline.sections import SectionTree
    from chunking.plan.walk import Span
    from chunking.scoring import Scoring


class Strategy(Protocol):
    """Plans the chunks of one document."""

    def __call__(
        self,
        outline: Outline,
        tree: SectionTree,
        sizer: Sizer,
        context: Contextualizer,
        options: ChunkOptions,
        scoring: Scoring,
    ) -> list[Span]:
        """Spans in document order, each within the limit. `scoring` is what the scored
        strategies call for embeddings or similarity (the others ignore it)."""
        ...


STRATEGIES: dict[str, Strategy] = {
    "structure": structure_spans,
    "words": word_spans,
    "semantic": semantic_spans,
    "binary": binary_spans,
}
"""Every strategy by the name `strategy` / `CHUNK_STRATEGY` / `--strategy` selects."""
