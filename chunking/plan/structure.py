"""The default strategy: cut by sections, then blocks, lines, sentences, words."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chunking.plan.core import Plan
from chunking.plan.declaration import StrategyDeclaration
from chunking.plan.walk import walk_seam

if TYPE_CHECKING:
    from chunking.plan.core import PlanInputs


def structure_spans(inputs: PlanInputs) -> Plan:
    """Cut by sections, then blocks, lines, sentences, words (the default)."""
    spans = walk_seam(inputs).spans()
    return Plan(spans)


STRUCTURE = StrategyDeclaration(
    name="structure", plan=structure_spans, summary="by sections, blocks, sentences"
)
"""The default strategy, as every surface sees it."""
