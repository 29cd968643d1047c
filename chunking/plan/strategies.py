"""Every strategy by the name `strategy` selects (the registry `chunking.pipeline` uses)."""

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
