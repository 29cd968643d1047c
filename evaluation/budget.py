"""Answer-complete within a context budget: equal context, not only equal k.

Top-5 of small chunks is less text than top-5 of large ones, so @k rewards whatever
chunk size holds more text. The budget metric hands the reader the top chunks in rank
order while their embedded texts (cl100k tokens, what a prompt would hold) fit the
budget, and asks whether one of them holds the whole reference answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from evaluation.chunkers import EvalChunk
    from evaluation.questions import Question

BUDGETS = (1000, 2000)
"""Context budgets in cl100k tokens."""
BUDGET_METRICS = tuple(f"complete@{budget}tok" for budget in BUDGETS)
"""Per-question metric names, in BUDGETS order."""
RECOMMENDED_ON = BUDGET_METRICS[-1]
"""The metric a recommendation is made on: equal context, so chunk size alone cannot win."""


def fitting(sizes: Sequence[int], budget: int) -> int:
    """How many leading chunks fit `budget` together (the first that does not ends it)."""
    used = 0
    for count, size in enumerate(sizes):
        used += size
        if used > budget:
            return count
    return len(sizes)


def budget_scores(
    question: Question, ranked: Sequence[EvalChunk], sizes: Sequence[int]
) -> dict[str, float]:
    """1.0 per budget when a chunk within it holds the whole reference, else 0.0."""
    values: dict[str, float] = {}
    for budget, name in zip(BUDGETS, BUDGET_METRICS, strict=True):
        taken = ranked[: fitting(sizes, budget)]
        values[name] = float(any(holds(chunk, question) for chunk in taken))
    return values


def holds(chunk: EvalChunk, question: Question) -> bool:
    """Whether `chunk` (or a passage) holds the whole reference of `question`."""
    return (
        chunk.document == question.document
        and chunk.start <= question.start
        and chunk.end >= question.end
    )
