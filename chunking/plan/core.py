"""The planning core every strategy shares: what it plans from, what it returns.

A strategy is one function of `PlanInputs` to a `Plan`. The structure walk
(`chunking.plan.walk`) is the component the others compose: `semantic` gives it a
`CutPolicy` (end at a meaning shift where it can), `binary` asks it to measure and
size sections and cuts what is over the limit alone as `words` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, TypeVar

from chunking.contextualize.prefix import Contextualizer
from chunking.measure.sizing import Sizer
from chunking.model import Outline, Span
from chunking.options import ChunkOptions
from chunking.outline.sections import SectionTree
from chunking.plan.scoring import Scoring


@dataclass(frozen=True, slots=True)
class PlanInputs:
    """One document, ready to plan: the same for every strategy."""

    outline: Outline
    """The outline planned on (the plain outline when markup is left out)."""
    tree: SectionTree
    """Its section tree: heading chains, section starts."""
    sizer: Sizer
    """Measures embedded texts in the unit of the limit."""
    context: Contextualizer
    """Builds each chunk's prefix and embedded text."""
    options: ChunkOptions
    """The limits and the strategy's own parameters."""
    scoring: Scoring
    """The caller's embedder and pair scorer: what the scored strategies call (the
    others ignore it)."""


@dataclass(frozen=True, slots=True)
class Plan:
    """What a strategy planned: its spans and what a user should know about them."""

    spans: list[Span]
    """Spans of the outline's source in document order, each within the limit."""
    warnings: tuple[str, ...] = ()
    """What the strategy did that a user should know (a window cut to fit the limit)."""


Own = TypeVar("Own")


def own_parameters(options: ChunkOptions, kind: type[Own]) -> Own:
    """The strategy's own parameters the options hold, else `kind`'s defaults (the
    pipeline has refused parameters of another strategy)."""
    given = options.parameters
    return given if isinstance(given, kind) else kind()


class Strategy(Protocol):
    """Plans the chunks of one document."""

    def __call__(self, inputs: PlanInputs) -> Plan:
        """The document's spans, each within the limit, and the strategy's warnings."""
        ...


class CutPolicy(Protocol):
    """Where the structure walk ends a chunk and whether the next one repeats its tail:
    what a strategy built on the walk changes (`StructureWalk.spans(policy)`)."""

    def next_span(self, start: int, previous_end: int) -> Span | None:
        """The chunk starting at `start` (past `previous_end`), or None if none fits."""
        ...

    def overlaps(self, next_start: int) -> bool:
        """Whether the chunk starting at `next_start` repeats the previous one's tail."""
        ...
