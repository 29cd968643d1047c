"""The plan stage: each strategy turns an outline into spans; parsing and the skill stay untouched.

Each strategy is a module here with a function of the `Strategy` signature
(`chunking.plan.core`: `PlanInputs` in, a `Plan` of spans and warnings out),
registered in `STRATEGIES`: `structure` (the default), `words` (fixed word
windows), `semantic` (cuts where the meaning shifts, `Scoring.embed`) and
`binary` (the recursive least-similar split).  Each gets the same outline, section
tree, sizer and contextualizer, and must return spans of the source whose embedded
text fits the limit, with tables and code never cut inside a row or line.
`structure`, `semantic` and `binary` share the structure walk (`walk`) by
composition. Strategies that score text get `Scoring` (`chunking.scoring`): the
caller's embedder and pair scorer, so they stay pure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chunking.plan.binary import binary_spans
from chunking.plan.semantic import semantic_spans
from chunking.plan.structure import structure_spans
from chunking.plan.words import word_spans

if TYPE_CHECKING:
    from chunking.plan.core import Strategy

STRATEGIES: dict[str, Strategy] = {
    "structure": structure_spans,
    "words": word_spans,
    "semantic": semantic_spans,
    "binary": binary_spans,
}
"""Every strategy by the name `strategy` / `CHUNK_STRATEGY` / `--strategy` selects."""
