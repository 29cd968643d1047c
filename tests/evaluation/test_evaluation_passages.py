"""Passages in the evaluation: ranked chunks merged, or with their neighbours, before scoring."""

from __future__ import annotations

import pytest

from chunking.options import OptionError
from evaluation.__main__ import main
from evaluation.budget import BUDGET_METRICS
from evaluation.chunkers import EvalChunk
from evaluation.passages import neighbourhood, parse_passages, passage_scores, passages_of
from evaluation.questions import Question
from tests.paths import ROOT

SOURCE = "aaaaaaaaaa" + "bbbbbbbbbb" + "cccccccccc" + "dddddddddd"
"""One document of four ten-character parts; the chunks below cover it."""
OTHER = "zzzzzzzzzz"
SOURCES = {"doc.md": SOURCE, "other.md": OTHER}
CHUNKS = (
    EvalChunk("doc.md", 0, 12, "# A\n" + SOURCE[0:12]),  # overlaps the next by 2
    EvalChunk("doc.md", 10, 20, "# A\n" + SOURCE[10:20]),  # touches the next
    EvalChunk("doc.md", 20, 30, "# B\n" + SOURCE[20:30]),
    EvalChunk("doc.md", 30, 40, "# B\n" + SOURCE[30:40]),
    EvalChunk("other.md", 0, 10, OTHER),
)


def characters(text: str) -> int:
    return len(text)


def test_passage_modes_are_read_from_the_command_line() -> None:
    assert parse_passages("chunks, merged,neighbours,merged") == ("chunks", "merged", "neighbours")
    with pytest.raises(OptionError, match=r"--passages must be among .* \(got 'sections'\)"):
        parse_passages("chunks,sections")
    with pytest.raises(OptionError, match="at least one"):
        parse_passages(" , ")


def test_a_bad_passages_value_exits_2_before_anything_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status = main(["--sets", str(ROOT / "samples" / "eval"), "--passages", "pages", "--quiet"])
    assert status == 2
    assert "--passages must be among chunks, merged, neighbours" in capsys.readouterr().err


def test_neighbours_stay_inside_the_document() -> None:
    assert neighbourhood([3], CHUNKS) == [3, 2]  # chunk 4 is another document's
    assert neighbourhood([0, 2], CHUNKS) == [0, 1, 2, 1, 3]
    assert neighbourhood([4], CHUNKS) == [4]


def test_merged_joins_chunks_that_overlap_or_touch_into_source_text() -> None:
    passages = passages_of([2, 4, 0, 1], CHUNKS, SOURCES, "merged")
    assert [(p.document, p.start, p.end) for p in passages] == [
        ("doc.md", 0, 30),  # ranked first through chunk 2
        ("other.md", 0, 10),
    ]
    assert passages[0].text == SOURCE[0:30]  # the source, not the embedded texts


def test_chunks_mode_hands_over_the_chunks_themselves() -> None:
    assert passages_of([2, 0], CHUNKS, SOURCES, "chunks") == [CHUNKS[2], CHUNKS[0]]


def test_an_answer_across_two_chunks_is_complete_only_once_they_are_joined() -> None:
    question = Question(1, "q", "doc.md", 15, 25)
    chunks_scores, _, _ = passage_scores(question, [1, 2], CHUNKS, SOURCES, "chunks", characters)
    merged_scores, _, shown = passage_scores(
        question, [1, 2], CHUNKS, SOURCES, "merged", characters
    )
    assert chunks_scores.values["complete@5"] == 0.0
    assert merged_scores.values["complete@5"] == 1.0
    assert [(p.start, p.end) for p in shown] == [(10, 30)]


def test_neighbours_hand_over_the_chunks_around_a_hit() -> None:
    question = Question(1, "q", "doc.md", 22, 38)
    scores, _, shown = passage_scores(question, [2], CHUNKS, SOURCES, "neighbours", characters)
    assert scores.values["complete@5"] == 1.0
    assert [(p.start, p.end) for p in shown] == [(10, 40)]


def test_the_budget_counts_the_passages_text_so_context_stays_equal() -> None:
    """With a 1,000-token budget measured here in characters: a passage over it is not
    handed over, however well it ranks."""
    source = "x" * 3000
    chunks = tuple(EvalChunk("long.md", i * 600, (i + 1) * 600, "t") for i in range(5))
    question = Question(1, "q", "long.md", 1300, 1400)  # inside chunk 2
    sources = {"long.md": source}
    _, alone, _ = passage_scores(question, [2, 0], chunks, sources, "merged", characters)
    _, around, _ = passage_scores(question, [2, 0], chunks, sources, "neighbours", characters)
    assert alone == {BUDGET_METRICS[0]: 1.0, BUDGET_METRICS[1]: 1.0}
    # Chunks 1 to 3 joined are 1,800 characters: over 1,000, within 2,000.
    assert around == {BUDGET_METRICS[0]: 0.0, BUDGET_METRICS[1]: 1.0}


def test_mrr_counts_passages_of_the_top_ten_chunks() -> None:
    question = Question(1, "q", "other.md", 0, 5)
    ranked = [0, 1, 2, 3, 4]  # four chunks of doc.md join into one passage before it
    chunks_scores, _, _ = passage_scores(question, ranked, CHUNKS, SOURCES, "chunks", characters)
    merged_scores, _, _ = passage_scores(question, ranked, CHUNKS, SOURCES, "merged", characters)
    assert chunks_scores.values["mrr@10"] == pytest.approx(1 / 5)
    assert merged_scores.values["mrr@10"] == pytest.approx(1 / 2)
