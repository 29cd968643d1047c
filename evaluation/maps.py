"""Per-question chunk maps: the reference document at the recommended setting, with the
reference marked, the top chunks labelled with their ranks, and whether the answer was cut."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evaluation.chunkers import chunk_options
from evaluation.metrics import K
from skills.commands.chunk_map import Annotations, map_document, render_chunk_map

if TYPE_CHECKING:
    from collections.abc import Sequence

    from chunking.plan.scoring import Scoring
    from evaluation.chunkers import EvalChunk
    from evaluation.documents import EvalDocument
    from evaluation.questions import Question
    from evaluation.run import QuestionTrace, SettingResult
    from skills.commands.chunk_map import ChunkMap

MAPS_FOLDER = "maps"
"""Where the maps go, next to report.html (links between them are relative)."""
EXCERPT = 160
"""Characters of the reference and of a foreign rank-1 chunk quoted in the banner."""


def map_path(question: Question) -> str:
    """The map of `question`, relative to report.html."""
    return f"{MAPS_FOLDER}/q{question.line}.html"


def cuts(chunk: EvalChunk, question: Question) -> bool:
    """Whether `chunk` holds part of the reference but not all of it."""
    return (
        chunk.document == question.document
        and chunk.start < question.end
        and chunk.end > question.start
        and not (chunk.start <= question.start and chunk.end >= question.end)
    )


def question_maps(
    result: SettingResult,
    questions: Sequence[Question],
    documents: dict[str, EvalDocument],
    scoring: Scoring | None = None,
) -> dict[str, str]:
    """Every question's map page at `result`'s setting (one of ours), by `map_path`;
    `scoring` for a strategy that embeds sentences."""
    options = chunk_options(result.setting)
    maps: dict[str, ChunkMap] = {}
    pages: dict[str, str] = {}
    for question, trace in zip(questions, result.traces, strict=True):
        document = documents[question.document]
        chunk_map = maps.get(document.name)
        if chunk_map is None:
            chunk_map = map_document(
                document.text,
                options=options,
                name=document.name,
                format=document.format,
                file_name=document.name,
                scoring=scoring,
            )
            maps[document.name] = chunk_map
        annotations = question_annotations(chunk_map, question, trace, result.label)
        pages[map_path(question)] = render_chunk_map(chunk_map, annotations)
    return pages


def question_annotations(
    chunk_map: ChunkMap, question: Question, trace: QuestionTrace, label: str
) -> Annotations:
    """The banner, mark and rank badges of one question's map."""
    chunks = chunk_map.document.chunks
    ordinals = {(c.start, c.end): c.ordinal for c in chunks}
    source = chunk_map.document.source
    start, end = question.start, question.end
    ranked = trace.ranked or (trace.top,)
    badges: list[tuple[int, str]] = []
    for rank, chunk in enumerate(ranked[:K], 1):
        ordinal = ordinals.get((chunk.start, chunk.end))
        if chunk.document == question.document and ordinal is not None:
            badges.append((ordinal, f"rank {rank}"))
    chunking = _chunking(chunk_map, start, end)
    notes = [
        f"Reference in {question.document} [{start}:{end}], marked with a red outline: "
        f"“{_excerpt(source[start:end])}”",
        chunking,
        _verdict(trace),
        _rank1(trace.top, question, ordinals),
    ]
    top = trace.top
    emphasis: tuple[int, ...] = ()
    if top.document == question.document and (top.start, top.end) in ordinals:
        emphasis = (ordinals[(top.start, top.end)],)
    return Annotations(
        heading=f"Question (line {question.line}): {question.question}",
        notes=(f"Setting: {label}.", *notes),
        mark=(start, end),
        badges=tuple(badges),
        emphasis=emphasis,
        back=(f"../report.html#q{question.line}", "← back to the evaluation report"),
    )


def _chunking(chunk_map: ChunkMap, start: int, end: int) -> str:
    """Whether the chunker itself kept the reference whole, whatever retrieval did."""
    chunks = chunk_map.document.chunks
    whole = [c.ordinal for c in chunks if c.start <= start and c.end >= end]
    if whole:
        plural = "s" if len(whole) > 1 else ""
        return f"The chunker kept the reference whole in chunk{plural} {_list(whole)}."
    reference = chunk_map.document.source[start:end]
    inner_start = start + len(reference) - len(reference.lstrip())
    inner_end = end - (len(reference) - len(reference.rstrip()))
    inner = [c.ordinal for c in chunks if c.start <= inner_start and c.end >= inner_end]
    if inner:
        return (
            f"Chunk {inner[0]} holds all of the reference but its leading or trailing "
            "whitespace, which no chunk holds (chunks are trimmed); the metrics count "
            "this as cut."
        )
    touching = [c.ordinal for c in chunks if c.start < end and c.end > start]
    if not touching:
        return "No chunk holds any of the reference: it lies in text left out of every chunk."
    if len(touching) == 1:
        return (
            f"The chunker cut the reference: only chunk {touching[0]} holds part of it; "
            "the rest lies in no chunk."
        )
    return (
        "The chunker cut the reference: no chunk holds it whole; it is spread over "
        f"chunks {_list(touching)}."
    )


def _verdict(trace: QuestionTrace) -> str:
    if trace.complete_rank is not None:
        return f"Complete: the chunk at rank {trace.complete_rank + 1} holds the whole reference."
    if trace.first_hit is not None and trace.first_hit < K:
        return (
            f"Hit, but cut: the chunk at rank {trace.first_hit + 1} holds part of the reference "
            f"and none of the top {K} holds all of it."
        )
    return f"Miss: none of the top {K} chunks touches the reference."


def _rank1(top: EvalChunk, question: Question, ordinals: dict[tuple[int, int], int]) -> str:
    if top.document != question.document:
        return (
            f"Rank 1 is from another document, {top.document} [{top.start}:{top.end}]: "
            f"“{_excerpt(top.text)}”"
        )
    ordinal = ordinals.get((top.start, top.end))
    name = f"chunk {ordinal}" if ordinal is not None else f"[{top.start}:{top.end}]"
    if top.start <= question.start and top.end >= question.end:
        return f"Rank 1 is {name} (bold, red card): it holds the whole reference."
    if cuts(top, question):
        return f"Rank 1 is {name} (bold, red card): it cuts the answer, holding only part of it."
    return f"Rank 1 is {name} (bold, red card) of this document; it does not touch the reference."


def _list(ordinals: Sequence[int]) -> str:
    return ", ".join(map(str, ordinals)) if ordinals else "none"


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT else flat[: EXCERPT - 1] + "…"
