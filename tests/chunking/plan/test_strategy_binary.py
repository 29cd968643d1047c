"""The `binary` strategy: the recursive least-similar split (issue 16, item 3)."""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.offline_scoring import hashed_embedding, offline_scoring
from chunking import ChunkOptions, Limits, OptionError, Unit
from chunking.measure.sizing import make_sizer
from chunking.pipeline import chunk_document, parse
from chunking.plan.binary import MIN_SIDE_SHARE, spread
from chunking.plan.binary_params import BinarySplit
from chunking.plan.scoring import CachedEmbedder, Scoring, ScoringError
from chunking.report.audit import audit_document
from tests.paths import ROOT
from tests.strategies import MARKDOWN, limits

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import FrameType

    from chunking.model import ChunkedDocument
    from chunking.pipeline import FormatName
    from chunking.plan.scoring import Vector

CHARACTERS = Limits(unit=Unit.CHARACTERS, maximum_page_length=600, page_overlap_length=0)
SENTENCE = "Sentence number {:02d} says a few plain words here."
"""Every sentence the same length (49 characters and a space), numbered."""


def options(
    limits: Limits = CHARACTERS, scorer: str = "crossEncoder", candidates: int = 64
) -> ChunkOptions:
    """Binary options; 64 candidates: every boundary of these documents is scored."""
    return ChunkOptions(
        limits=limits,
        title_prefix=False,
        strategy="binary",
        parameters=BinarySplit(scorer=scorer, candidates=candidates),
    )


def sentences(count: int) -> str:
    return " ".join(SENTENCE.format(n) for n in range(1, count + 1))


def first_numbers(document: ChunkedDocument) -> list[int]:
    """The number of each chunk's first sentence."""
    return [int(re.search(r"\d\d", c.content).group()) for c in document.chunks]  # type: ignore[union-attr]


class KnownMinima:
    """A pair scorer: low where the right side starts with one of `low` sentence
    numbers (the lower the earlier in `low`), high elsewhere; it keeps what it saw."""

    def __init__(self, *low: int) -> None:
        self.low = low
        self.seen: list[list[tuple[str, str]]] = []

    def __call__(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.seen.append(list(pairs))
        scores = []
        for _, right in pairs:
            number = int(right[16:18])
            scores.append(float(self.low.index(number)) if number in self.low else 10.0)
        return scores


def chunked(text: str, opts: ChunkOptions, scoring: Scoring) -> ChunkedDocument:
    document = chunk_document(text, options=opts, format="markdown", scoring=scoring)
    outline = parse(text, "markdown")
    sizer = make_sizer(opts.limits.unit, opts.encoder_model_name)
    audit = audit_document("doc", outline, document, opts, sizer)
    assert not audit.violations, audit.violations
    return document


def test_the_split_lands_at_the_known_minimum() -> None:
    """20 sentences of 50 characters (1000) over a limit of 600: one split, where the
    scorer is lowest (before sentence 9), not in the middle (before 11)."""
    scorer = KnownMinima(9)
    document = chunked(sentences(20), options(), Scoring(pairs=scorer, pair_source="test"))
    assert first_numbers(document) == [1, 9]
    assert len(scorer.seen) == 1


def test_the_recursion_splits_each_half_at_its_own_minimum() -> None:
    """40 sentences (2000 characters): the lowest boundary first (before 21), then each
    half at its own minimum (before 10 and before 32)."""
    scorer = KnownMinima(21, 10, 32)
    document = chunked(sentences(40), options(), Scoring(pairs=scorer, pair_source="test"))
    assert first_numbers(document) == [1, 10, 21, 32]
    assert len(scorer.seen) == 3
    # The first call saw the whole part; the others only their half.
    assert all(int(right[16:18]) >= 21 for _, right in scorer.seen[2])


def test_a_minimum_too_near_the_edge_is_not_a_candidate() -> None:
    """Before sentence 2 each side would not hold a quarter of the room: it is never
    scored, and the split goes to the next lowest the scorer knows."""
    scorer = KnownMinima(2, 12)
    document = chunked(sentences(20), options(), Scoring(pairs=scorer, pair_source="test"))
    assert first_numbers(document) == [1, 12]
    scored = {int(right[16:18]) for _, right in scorer.seen[0]}
    side = MIN_SIDE_SHARE * 600 / 50
    assert min(scored) - 1 >= side
    assert 20 - max(scored) + 1 >= side


def test_candidates_are_at_most_binary_candidates_evenly_spread() -> None:
    scorer = KnownMinima()
    chunked(sentences(40), options(candidates=3), Scoring(pairs=scorer, pair_source="test"))
    assert all(len(pairs) <= 3 for pairs in scorer.seen)
    assert spread(1, 10, 3) == [1, 5, 10]
    assert spread(1, 10, 1) == [5]
    assert spread(4, 6, 16) == [4, 5, 6]
    assert spread(0, 100, 5) == [0, 25, 50, 75, 100]


def test_each_side_sent_is_a_few_sentences_nearest_the_boundary() -> None:
    scorer = KnownMinima(21)
    chunked(sentences(40), options(), Scoring(pairs=scorer, pair_source="test"))
    for left, right in scorer.seen[0]:
        assert left.count("Sentence") <= 3
        assert right.count("Sentence") <= 3
        assert len(left) <= 1000
        assert len(right) <= 1000


def topic(words: str, count: int) -> list[str]:
    return [f"The {words} matter number {n} here." for n in range(count)]


def test_the_embeddings_scorer_splits_where_the_topic_changes() -> None:
    """Cosine of hashed bags of words: the halves share no topic word across the change."""
    cats = topic("cats purr softly and", 9)
    ships = topic("ships sail far and", 11)
    text = " ".join(cats + ships)
    scoring = Scoring(embed=CachedEmbedder(hashed_embedding))
    document = chunked(text, options(scorer="embeddings"), scoring)
    assert [c.content.split()[1] for c in document.chunks] == ["cats", "ships"]


def test_scores_count_at_most_candidates_per_extra_chunk() -> None:
    """The cost rule of the module docstring: one call per split, so per chunk more
    than the sections, K pairs or at most 2K texts each (fewer: each text once)."""
    text = "\n\n".join(f"# Part {n}\n\n{sentences(40)}" for n in range(3))
    pair_calls: list[int] = []
    embed_calls: list[int] = []

    def pairs(batch: Sequence[tuple[str, str]]) -> list[float]:
        pair_calls.append(len(batch))
        return [0.0] * len(batch)

    def embed(texts: Sequence[str]) -> Sequence[Vector]:
        embed_calls.append(len(texts))
        return hashed_embedding(texts)

    document = chunked(text, options(candidates=4), Scoring(pairs=pairs))
    assert len(pair_calls) == len(document.chunks) - 3
    assert all(size <= 4 for size in pair_calls)
    document = chunked(text, options(scorer="embeddings", candidates=4), Scoring(embed=embed))
    assert len(embed_calls) <= len(document.chunks) - 3
    assert all(size <= 2 * 4 for size in embed_calls)


def test_a_table_and_a_code_block_are_units_between_boundaries() -> None:
    table = "| a | b |\n| - | - |\n" + "".join(f"| row {n} | cell {n} |\n" for n in range(12))
    code = "```python\n" + "".join(f"value_{n} = {n}\n" for n in range(20)) + "```\n"
    text = f"{sentences(6)}\n\n{table}\n{sentences(4)}\n\n{code}\n{sentences(6)}\n"
    scoring, _ = offline_scoring()
    document = chunked(text, options(scorer="embeddings"), scoring)
    for block in (table.rstrip("\n"), code.rstrip("\n")):
        start = text.index(block)
        holding = [c for c in document.chunks if c.start < start + len(block) and start < c.end]
        assert len(holding) == 1, [c.content for c in holding]
        assert block in holding[0].content


def test_a_table_alone_over_the_limit_is_cut_at_rows() -> None:
    table = "| a | b |\n| - | - |\n" + "".join(f"| row {n:03d} | cell |\n" for n in range(60))
    text = f"{sentences(3)}\n\n{table}"
    scoring, _ = offline_scoring()
    document = chunked(text, options(scorer="embeddings"), scoring)
    pieces = [c for c in document.chunks if "| row" in c.content]
    assert len(pieces) > 1
    assert all(c.content.endswith("cell |") for c in pieces)
    # The first piece opens with the header (or the sentences before it), the
    # others with their own row: the header is not repeated.
    assert pieces[0].text.lstrip().startswith(("| a | b |", "Sentence"))
    assert all(c.text.lstrip().startswith("| row") for c in pieces[1:])
    assert any("cut at rows, lines or words" in w for w in document.warnings)


def test_no_chunk_spans_a_heading_and_small_sections_share_one() -> None:
    text = (
        "# Big\n\n" + sentences(30) + "\n\n## Small one\n\nShort text.\n\n"
        "## Small two\n\nOther short text.\n\n## Big again\n\n" + sentences(30) + "\n"
    )
    scoring, _ = offline_scoring()
    document = chunked(text, options(scorer="embeddings"), scoring)
    for chunk in document.chunks:
        inner = [m.start() for m in re.finditer(r"^#+ ", chunk.content, re.MULTILINE)]
        # A heading inside a chunk only where small sections were joined.
        assert all("Small" in chunk.content[i:] for i in inner[1:]), chunk.content
    joined = [c for c in document.chunks if "Small one" in c.content]
    assert len(joined) == 1
    assert "Small two" in joined[0].content


def test_a_scorer_that_fails_fails_the_document_with_its_message() -> None:
    def broken(pairs: Sequence[tuple[str, str]]) -> list[float]:
        raise ScoringError("the rerank scorer answered HTTP 500")

    with pytest.raises(ScoringError, match="HTTP 500"):
        chunk_document(sentences(20), options=options(), scoring=Scoring(pairs=broken))
    with pytest.raises(ScoringError, match="returned 1 scores for"):
        chunk_document(sentences(20), options=options(), scoring=Scoring(pairs=lambda pairs: [0.0]))
    with pytest.raises(ScoringError, match="not a number"):
        chunk_document(
            sentences(20),
            options=options(),
            scoring=Scoring(pairs=lambda pairs: [float("nan")] * len(pairs)),
        )
    with pytest.raises(ScoringError, match="none is configured"):
        chunk_document(sentences(20), options=options(scorer="embeddings"))


def test_a_document_that_fits_costs_no_score() -> None:
    document = chunk_document("# Hi\n\nOne short paragraph.", options=options())
    assert len(document.chunks) == 1


def test_bad_parameters_name_themselves() -> None:
    with pytest.raises(OptionError, match="binaryScorer must be one of embeddings, crossEncoder"):
        BinarySplit(scorer="foo")
    with pytest.raises(OptionError, match="binaryCandidates must be from 1 to 256"):
        BinarySplit(candidates=0)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=MARKDOWN, limits=limits(), scorer=st.sampled_from(["embeddings", "crossEncoder"]))
def test_every_invariant_holds_and_the_output_is_deterministic(
    text: str, limits: Limits, scorer: str
) -> None:
    opts = ChunkOptions(limits=limits, strategy="binary", parameters=BinarySplit(scorer, 4))
    scoring, _ = offline_scoring()
    document = chunked(text, opts, scoring)
    again = chunk_document(text, options=opts, format="markdown", scoring=offline_scoring()[0])
    assert again == document


def test_a_pair_scorer_of_the_other_kind_is_an_error_that_names_both() -> None:
    scoring = Scoring(pairs=lambda pairs: [0.0] * len(pairs), pair_source="rerank")
    with pytest.raises(ScoringError, match="binaryScorer crossEncoder is not configured here"):
        chunk_document(sentences(20), options=options(scorer="crossEncoder"), scoring=scoring)


def _first_lowest(pairs: Sequence[tuple[str, str]]) -> list[float]:
    """The adversary: the first candidate, nearest the part's start, always least similar."""
    return [0.0] + [1.0] * (len(pairs) - 1)


LINEAR = 2.3
"""As in test_linear_work: doubling a linear input at most about doubles each count."""
LINEAR_SHAPES: dict[str, tuple[Callable[[int], str], FormatName]] = {
    "English prose in one block": (
        lambda n: "The quick brown fox jumps over the lazy dog again. " * (n // 51),
        "text",
    ),
    "a heading per line": (lambda n: "# h\n" * (n // 4), "markdown"),
    "one table": (
        lambda n: "| a | b |\n| - | - |\n" + "| cell | value here |\n" * (n // 21),
        "markdown",
    ),
    "one line without spaces": (lambda n: "x" * n, "text"),
}


def _work(text: str, format: FormatName) -> tuple[int, int]:
    """Python lines run in chunking/ and scorer calls to chunk `text` at 500 characters,
    with the scorer that always picks the edge."""
    chunking = str(ROOT / "chunking")
    lines = 0
    calls: list[int] = []

    def local(frame: FrameType, event: str, argument: Any) -> Callable[..., Any]:
        nonlocal lines
        lines += event == "line"
        return local

    def trace(frame: FrameType, event: str, argument: Any) -> Callable[..., Any] | None:
        return local if frame.f_code.co_filename.startswith(chunking) else None

    def pairs(batch: Sequence[tuple[str, str]]) -> list[float]:
        calls.append(len(batch))
        return _first_lowest(batch)

    opts = ChunkOptions(
        limits=Limits(Unit.CHARACTERS, 500, 0),
        strategy="binary",
        parameters=BinarySplit("crossEncoder"),
    )
    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        document = chunk_document(
            text, options=opts, format=format, scoring=Scoring(pairs=pairs, pair_source="t")
        )
    finally:
        sys.settrace(previous)
    assert len(calls) < len(document.chunks)
    return lines, len(calls)


@pytest.mark.parametrize("shape", LINEAR_SHAPES)
def test_the_work_is_linear_whatever_the_scorer_picks(shape: str) -> None:
    """At n and 2n characters each count at most about doubles."""
    make, format = LINEAR_SHAPES[shape]
    small_lines, small_calls = _work(make(20_000), format)
    big_lines, big_calls = _work(make(40_000), format)
    assert big_lines <= LINEAR * small_lines
    assert big_calls <= LINEAR * max(small_calls, 1)
