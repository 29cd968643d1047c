"""Passages in the evaluation: each ranked list of chunks handed over as a reader gets it.

- `chunks`: the chunks themselves (what the evaluation always scored).
- `merged`: the retrieved chunks of one document that overlap or touch joined into one
  passage, in the order of their best chunk: `skills.search.retrieval.merge_neighbours`,
  the query-time helper's own rule (one copy of it).
- `neighbours`: small-to-big: each retrieved chunk handed over with the chunk before and
  the chunk after it in its document (NEIGHBOURS each side), then merged as above.

The @k metrics score the passages of the top k chunks (what `search_and_merge(k=5)`
returns; MRR@10 those of the top 10). The budget metrics take the longest run of top
chunks whose passages' texts fit the budget together (cl100k tokens, as for chunks), so
equal context stays equal whatever is merged. A passage's text is its span of the source
(the chunks' `content`, which the index stores and the helper joins), not the embedded
texts: a title prefix repeated in every chunk is not a reader's context.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from evaluation.budget import BUDGET_METRICS, BUDGETS, holds
from evaluation.chunkers import EvalChunk
from evaluation.metrics import MRR_DEPTH, K, QuestionScores, score_question
from evaluation.sweeps import chosen_once
from skills.search.retrieval import RetrievedChunk, merge_neighbours

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from evaluation.questions import Question

PassageMode = Literal["chunks", "merged", "neighbours"]
PASSAGE_MODES: tuple[PassageMode, ...] = ("chunks", "merged", "neighbours")
NEIGHBOURS = 1
"""Chunks fetched each side of a retrieved one in `neighbours` mode."""


def parse_passages(text: str) -> tuple[PassageMode, ...]:
    """`--passages chunks,merged,neighbours`; OptionError names a bad item."""
    return chosen_once(
        text, PASSAGE_MODES, "--passages", empty="at least one of " + ", ".join(PASSAGE_MODES)
    )


def neighbourhood(indices: Sequence[int], chunks: Sequence[EvalChunk]) -> list[int]:
    """Each index of `indices` (best first) followed by its NEIGHBOURS each side within
    its document (`chunks` in document order), nearest first; repeats are left in (the
    merge cites a chunk once)."""
    found: list[int] = []
    for index in indices:
        found.append(index)
        document = chunks[index].document
        for step in range(1, NEIGHBOURS + 1):
            for other in (index - step, index + step):
                if 0 <= other < len(chunks) and chunks[other].document == document:
                    found.append(other)
    return found


def passages_of(
    indices: Sequence[int],
    chunks: Sequence[EvalChunk],
    sources: Mapping[str, str],
    mode: PassageMode,
) -> list[EvalChunk]:
    """The passages a reader gets for the ranked chunk `indices`, best first, each a span
    of its document's source with that span's text."""
    if mode == "chunks":
        return [chunks[index] for index in indices]
    taken = neighbourhood(indices, chunks) if mode == "neighbours" else list(indices)
    merged = merge_neighbours([_retrieved(index, chunks[index], sources) for index in taken])
    passages: list[EvalChunk] = []
    for passage in merged:
        first = chunks[int(passage.chunks[0].chunk_id)]
        start, end = passage.start, passage.end
        if start is None or end is None:  # every chunk here has offsets
            raise ValueError(f"a passage of {passage.document} lost its span")
        passages.append(
            EvalChunk(passage.document, start, end, passage.text, first.title, first.headings)
        )
    return passages


def _retrieved(index: int, chunk: EvalChunk, sources: Mapping[str, str]) -> RetrievedChunk:
    return RetrievedChunk(
        document=chunk.document,
        start=chunk.start,
        end=chunk.end,
        content=sources[chunk.document][chunk.start : chunk.end],
        score=0.0,
        url=None,
        anchor=None,
        headings=chunk.headings,
        ordinal=index,
        chunk_id=str(index),
    )


def passage_scores(
    question: Question,
    ranked: Sequence[int],
    chunks: Sequence[EvalChunk],
    sources: Mapping[str, str],
    mode: PassageMode,
    size: Callable[[str], int],
) -> tuple[QuestionScores, dict[str, float], tuple[EvalChunk, ...]]:
    """A question's @k metrics over the passages of its top K chunks (MRR@10: top
    MRR_DEPTH), its budget metrics, and the passages of the top K (best first)."""
    top = passages_of(ranked[:K], chunks, sources, mode)
    at_k = score_question(question, top)
    deeper = score_question(question, passages_of(ranked[:MRR_DEPTH], chunks, sources, mode))
    values = at_k.values | {"mrr@10": deeper.values["mrr@10"]}
    scores = QuestionScores(values, at_k.first_hit, at_k.complete_rank)
    budgets: dict[str, float] = {}
    for budget, name in zip(BUDGETS, BUDGET_METRICS, strict=True):
        taken = _within(ranked, chunks, sources, mode, size, budget)
        budgets[name] = float(any(holds(passage, question) for passage in taken))
    return scores, budgets, tuple(top)


def _within(
    ranked: Sequence[int],
    chunks: Sequence[EvalChunk],
    sources: Mapping[str, str],
    mode: PassageMode,
    size: Callable[[str], int],
    budget: int,
) -> list[EvalChunk]:
    """The passages of the longest run of top chunks whose texts fit `budget` together
    (the first chunk that makes them overflow ends it, as for chunks)."""
    fitting: list[EvalChunk] = []
    for count in range(1, len(ranked) + 1):
        passages = passages_of(ranked[:count], chunks, sources, mode)
        if sum(size(passage.text) for passage in passages) > budget:
            break
        fitting = passages
    return fitting
