"""`merge_neighbours`: the top-k chunks merged into passages, each character once.

Pinned cases for overlap, touch, gap, containment, documents kept apart, ranking and
citations, the ordinal fallback for indexes without offsets; property tests over real
chunkings (chunk_document with overlap) of generated documents.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunking import ChunkOptions, Limits, Unit, chunk_document
from skills.search.retrieval import (
    MIN_SHARED_TEXT,
    Passage,
    RetrievedChunk,
    chunk_from_index,
    chunk_from_record,
    merge_neighbours,
)
from skills.skill.library import chunk_records
from skills.skill.render import chunk_json
from skills.skill.settings import Settings

if TYPE_CHECKING:
    from chunking import Chunk

SOURCE = "".join(f"word{n:03d} " for n in range(200))
"""A document in which no stretch of 8 characters or more repeats."""


def _chunk(
    start: int | None,
    end: int,
    *,
    document: str = "a",
    score: float = 1.0,
    ordinal: int = 0,
    source: str = SOURCE,
    url: str | None = "https://docs.example/a",
    anchor: str | None = None,
    headings: tuple[str, ...] = ("A",),
    spans: bool = True,
    begin: int | None = None,
) -> RetrievedChunk:
    first = start if start is not None else (begin or 0)
    return RetrievedChunk(
        document=document,
        start=first if spans else None,
        end=end if spans else None,
        content=source[first:end],
        score=score,
        url=url,
        anchor=anchor,
        headings=headings,
        ordinal=ordinal,
        chunk_id=f"{document}-{ordinal}-{first}",
    )


def test_overlapping_neighbours_are_one_passage_each_character_once() -> None:
    passages = merge_neighbours([_chunk(100, 180, ordinal=1), _chunk(0, 120, ordinal=0)])
    assert [(p.start, p.end) for p in passages] == [(0, 180)]
    assert passages[0].text == SOURCE[0:180]
    assert [c.ordinal for c in passages[0].chunks] == [0, 1]  # document order


def test_touching_neighbours_are_one_passage() -> None:
    (passage,) = merge_neighbours([_chunk(40, 90), _chunk(0, 40)])
    assert passage.text == SOURCE[0:90]


def test_a_gap_keeps_two_passages() -> None:
    passages = merge_neighbours([_chunk(41, 90), _chunk(0, 40)])
    assert [p.text for p in passages] == [SOURCE[41:90], SOURCE[0:40]]


def test_a_chunk_inside_another_adds_no_text() -> None:
    (passage,) = merge_neighbours([_chunk(10, 20), _chunk(0, 50), _chunk(10, 20)])
    assert passage.text == SOURCE[0:50]
    assert len(passage.chunks) == 3
    assert passage.citation.chunk_ids == ("a-0-0", "a-0-10")  # the repeated one once


def test_documents_are_never_mixed_even_at_the_same_offsets() -> None:
    passages = merge_neighbours([_chunk(0, 50, document="a"), _chunk(30, 80, document="b")])
    assert [(p.document, p.text) for p in passages] == [("a", SOURCE[0:50]), ("b", SOURCE[30:80])]


def test_passages_come_in_the_order_of_their_best_chunk_with_the_best_score() -> None:
    results = [
        _chunk(500, 560, score=0.9, ordinal=9),
        _chunk(0, 60, score=0.8, ordinal=0),
        _chunk(50, 100, score=0.7, ordinal=1),
        _chunk(0, 60, document="b", score=0.6),
    ]
    passages = merge_neighbours(results)
    assert [(p.document, p.start, p.rank) for p in passages] == [
        ("a", 500, 0),
        ("a", 0, 1),
        ("b", 0, 3),
    ]
    assert passages[1].score == pytest.approx(0.8)


def test_the_citation_is_the_first_chunks_url_anchor_and_heading_path() -> None:
    results = [
        _chunk(60, 120, anchor="later part", headings=("A", "B"), ordinal=1),
        _chunk(0, 70, anchor="intro", headings=("A",), ordinal=0),
    ]
    (passage,) = merge_neighbours(results)
    citation = passage.citation
    assert citation.url == "https://docs.example/a#intro"
    assert citation.headings == ("A",)
    assert citation.chunk_ids == ("a-0-0", "a-1-60")
    # A URL that already carries its fragment (the skill's `url`) is kept as it is.
    kept = _chunk(0, 10, url="https://docs.example/a#intro", anchor="intro")
    assert merge_neighbours([kept])[0].citation.url == "https://docs.example/a#intro"
    spaced = _chunk(0, 10, anchor="a b")
    assert merge_neighbours([spaced])[0].citation.url == "https://docs.example/a#a%20b"


def test_two_versions_of_a_document_are_not_joined() -> None:
    """An index mid-update can return chunks of the old and the new text: text neither
    version has must not be made up from them."""
    new = "x" * 30 + SOURCE[30:]
    old, changed = _chunk(0, 50), _chunk(20, 80, source=new, ordinal=1)
    passages = merge_neighbours([old, changed])
    assert [p.text for p in passages] == [SOURCE[0:50], new[20:80]]


def test_a_span_that_does_not_hold_its_content_is_refused() -> None:
    with pytest.raises(ValueError, match="does not hold"):
        RetrievedChunk("a", 0, 5, "abc", 1.0, None, None, (), 0, "x")
    with pytest.raises(ValueError, match="both start and end"):
        RetrievedChunk("a", 0, None, "abc", 1.0, None, None, (), 0, "x")


def test_without_offsets_ordinal_neighbours_sharing_text_are_merged() -> None:
    shared = MIN_SHARED_TEXT + 4
    results = [
        _chunk(None, 120, begin=60 - shared, ordinal=1, spans=False),
        _chunk(None, 60, begin=0, ordinal=0, spans=False),
    ]
    (passage,) = merge_neighbours(results)
    assert passage.text == SOURCE[0:120]
    assert passage.start is None


def test_without_offsets_short_or_no_shared_text_keeps_them_apart() -> None:
    short = MIN_SHARED_TEXT - 1
    apart = [
        _chunk(None, 60, begin=0, ordinal=0, spans=False),
        _chunk(None, 120, begin=60 - short, ordinal=1, spans=False),  # shares too little
        _chunk(None, 180, begin=120, ordinal=2, spans=False),  # touches: a gap looks the same
    ]
    assert [p.text for p in merge_neighbours(apart)] == [
        SOURCE[0:60],
        SOURCE[45:120],
        SOURCE[120:180],
    ]


def test_without_offsets_ordinals_that_are_not_neighbours_stay_apart() -> None:
    results = [
        _chunk(None, 60, begin=0, ordinal=0, spans=False),
        _chunk(None, 120, begin=30, ordinal=2, spans=False),
    ]
    assert len(merge_neighbours(results)) == 2


def test_one_chunk_without_offsets_sends_its_document_to_the_fallback() -> None:
    results = [_chunk(0, 60, ordinal=0), _chunk(None, 100, begin=40, ordinal=1, spans=False)]
    (passage,) = merge_neighbours(results)
    assert passage.text == SOURCE[0:100]
    assert passage.start is None


def test_index_results_without_offsets_or_with_a_wrong_length_have_no_span() -> None:
    result = {
        "parent_id": "p",
        "chunk_id": "k",
        "content": "abc",
        "ordinal": 2,
        "@search.score": 2.5,
    }
    assert not chunk_from_index(result).has_span
    assert not chunk_from_index({**result, "offset": 7, "length": 4}).has_span
    chunk = chunk_from_index({**result, "offset": 7, "length": 3})
    assert (chunk.start, chunk.end, chunk.score, chunk.ordinal) == (7, 10, 2.5, 2)


def test_the_skills_records_merge_back_into_the_source_in_code_points() -> None:
    """Offsets are code points: text with characters outside the BMP still slices right."""
    text = "# Title\n\n" + "\n\n".join(
        f"## Part {n}\n\n" + " ".join(f"🙂word{n}{m:02d}" for m in range(40)) for n in range(4)
    )
    (answer,) = chunk_records(
        [{"text": text, "unit": "characters", "maximumPageLength": 300, "pageOverlapLength": 80}],
        Settings(chunk_workers=0),
    )
    retrieved = [chunk_from_record(chunk_json(chunk), document="t") for chunk in answer.chunks]
    passages = merge_neighbours(retrieved)
    assert len(answer.chunks) > 3
    for passage in passages:
        assert passage.start is not None
        assert passage.text == text[passage.start : passage.end]
    assert len(passages) < len(retrieved)  # the overlaps were joined


# -- properties over real chunkings --------------------------------------------------------

GLUE = st.sampled_from([*[""] * 40, "🙂", "é", ". ", ". ", ". ", "\n\n", "\n\n## Section\n\n"])
"""What follows a word: mostly a space; now and then a sentence, paragraph or section end."""
WORDS = st.lists(GLUE, min_size=80, max_size=240)


def _document(number: int, glue: list[str]) -> str:
    """A document whose words are all different (`d1w17`), with random structure and
    non-ASCII characters between them, so no 16 characters repeat by chance."""
    return f"# Document {number}\n\n" + "".join(
        f"d{number}w{n:03d}{piece} " for n, piece in enumerate(glue)
    )


def _retrieved(document: str, chunk: Chunk, score: float, *, spans: bool) -> RetrievedChunk:
    return RetrievedChunk(
        document=document,
        start=chunk.start if spans else None,
        end=chunk.end if spans else None,
        content=chunk.content,
        score=score,
        url=None,
        anchor=chunk.anchor,
        headings=chunk.headings,
        ordinal=chunk.ordinal,
        chunk_id=chunk.id,
    )


@st.composite
def searches(draw: st.DrawFn) -> tuple[dict[str, str], list[tuple[str, Chunk]]]:
    """Documents chunked with overlap, and a random top-k of their chunks in random order."""
    maximum = draw(st.integers(300, 420))
    overlap = draw(st.integers(0, maximum // 2 - 1))
    options = ChunkOptions(limits=Limits(Unit.CHARACTERS, maximum, overlap))
    sources = {f"doc{n}": _document(n, draw(WORDS)) for n in range(draw(st.integers(1, 3)))}
    pool = [
        (name, chunk)
        for name, source in sources.items()
        for chunk in chunk_document(source, options=options).chunks
    ]
    if not pool:
        return sources, []
    # A run of neighbours (what a good query retrieves) and chunks from anywhere.
    first = draw(st.integers(0, len(pool) - 1))
    run = pool[first : first + draw(st.integers(1, 6))]
    picked = [*run, *draw(st.lists(st.sampled_from(pool), max_size=6))]
    return sources, draw(st.permutations(picked))


def _check_covering(
    sources: dict[str, str], picked: list[tuple[str, Chunk]], passages: list[Passage]
) -> None:
    retrieved = {(name, at) for name, chunk in picked for at in range(chunk.start, chunk.end)}
    covered: list[tuple[str, int]] = []
    for passage in passages:
        assert passage.start is not None
        assert passage.end is not None
        assert {chunk.document for chunk in passage.chunks} == {passage.document}
        assert passage.text == sources[passage.document][passage.start : passage.end]
        covered += [(passage.document, at) for at in range(passage.start, passage.end)]
    assert len(covered) == len(set(covered))  # each character in one passage only
    assert set(covered) == retrieved  # and every retrieved one in some passage


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(searches())
def test_every_retrieved_character_is_in_exactly_one_passage(
    search: tuple[dict[str, str], list[tuple[str, Chunk]]],
) -> None:
    sources, picked = search
    results = [
        _retrieved(name, chunk, 1.0 / (1 + rank), spans=True)
        for rank, (name, chunk) in enumerate(picked)
    ]
    passages = merge_neighbours(results)
    _check_covering(sources, picked, passages)
    for passage in passages:
        starts = [chunk.start or 0 for chunk in passage.chunks]
        assert starts == sorted(starts)  # document order inside a passage
        assert passage.rank == min(results.index(chunk) for chunk in passage.chunks)
    assert [p.rank for p in passages] == sorted(p.rank for p in passages)
    assert sorted(c.chunk_id for p in passages for c in p.chunks) == sorted(
        c.chunk_id for c in results
    )
    # Passages of one document neither overlap nor touch: they would have been merged.
    by_document: dict[str, list[Passage]] = {}
    for passage in passages:
        by_document.setdefault(passage.document, []).append(passage)
    for group in by_document.values():
        spans = sorted((p.start or 0, p.end or 0) for p in group)
        assert all(end < start for (_, end), (start, _) in itertools.pairwise(spans))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(searches())
def test_without_offsets_passages_are_source_slices_within_the_offset_passages(
    search: tuple[dict[str, str], list[tuple[str, Chunk]]],
) -> None:
    sources, picked = search
    with_spans = merge_neighbours([_retrieved(n, c, 1.0, spans=True) for n, c in picked])
    without = merge_neighbours([_retrieved(n, c, 1.0, spans=False) for n, c in picked])
    spans = {(p.document, p.start or 0, p.end or 0) for p in with_spans}
    for passage in without:
        assert passage.start is None  # no span without offsets
        ids = {chunk.chunk_id for chunk in passage.chunks}
        spanned = [c for n, c in picked if n == passage.document and c.id in ids]
        start, end = min(c.start for c in spanned), max(c.end for c in spanned)
        assert passage.text == sources[passage.document][start:end]
        assert any(d == passage.document and s <= start and end <= e for d, s, e in spans)
