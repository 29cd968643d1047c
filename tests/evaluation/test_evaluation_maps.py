"""The evaluation's per-question chunk maps: the reference marked, the top chunks badged
with their ranks, and whether the chunker or retrieval cut the answer."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from evaluation.__main__ import main
from evaluation.chunkers import EvalChunk
from evaluation.maps import question_annotations
from evaluation.questions import Question
from evaluation.run import QuestionTrace
from skills.commands.chunk_map import map_document, render_chunk_map
from testing.openai_stub import OpenAIStub
from tests.chunk_map_checks import check_page, parse_page
from tests.evaluation.test_evaluation_run import DIMENSIONS, KEY, small_set, use_stub
from tests.helpers import options

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["small_set"]  # the fixture, shared with the run tests

GUIDE = "# Guide\n\n" + "\n\n".join(
    f"Paragraph {i} tells the reader about backup step {i} in a few words." for i in range(30)
)
NAME = "guide.md"


def _question(start: int, end: int) -> Question:
    return Question(7, "what is step <5>?", NAME, start, end)


def test_a_reference_cut_by_the_chunker_and_by_rank_1() -> None:
    chunk_map = map_document(GUIDE, options=options(300), name=NAME)
    chunks = [EvalChunk(NAME, c.start, c.end, c.text) for c in chunk_map.document.chunks]
    first, second = chunk_map.document.chunks[1], chunk_map.document.chunks[2]
    question = _question(first.end - 20, second.start + 20)  # across a boundary
    trace = QuestionTrace(chunks[1], 0, None, (chunks[1], chunks[0], chunks[2]))
    annotations = question_annotations(chunk_map, question, trace, "ours 300/0 chars prefix")
    assert annotations.mark == (question.start, question.end)
    assert annotations.badges == ((1, "rank 1"), (0, "rank 2"), (2, "rank 3"))
    assert annotations.emphasis == (1,)
    text = "\n".join(annotations.notes)
    assert (
        "The chunker cut the reference: no chunk holds it whole; it is spread over chunks 1, 2"
        in text
    )
    assert "Hit, but cut: the chunk at rank 1 holds part of the reference" in text
    assert "Rank 1 is chunk 1 (bold, red card): it cuts the answer" in text
    assert annotations.back == ("../report.html#q7", "← back to the evaluation report")
    soup = check_page(render_chunk_map(chunk_map, annotations), chunk_map)
    marked = soup.select("main span.seg.mark")
    assert "".join(p.get_text() for p in marked) == GUIDE[question.start : question.end]
    badge = soup.select_one('aside.card[data-chunk="0"] .badge')
    assert badge is not None
    assert badge.get_text() == "rank 2"
    assert soup.select_one("section.banner h2").get_text() == (  # type: ignore[union-attr]
        "Question (line 7): what is step <5>?"
    )


def test_a_whole_reference_found_at_rank_3_with_rank_1_elsewhere() -> None:
    chunk_map = map_document(GUIDE, options=options(300), name=NAME)
    chunks = [EvalChunk(NAME, c.start, c.end, c.text) for c in chunk_map.document.chunks]
    target = chunk_map.document.chunks[3]
    question = _question(target.start + 5, target.end - 5)
    other = EvalChunk("other.md", 0, 40, "Another document's chunk about restores.")
    trace = QuestionTrace(other, 2, 2, (other, chunks[0], chunks[3]))
    annotations = question_annotations(chunk_map, question, trace, "ours")
    text = "\n".join(annotations.notes)
    assert "The chunker kept the reference whole in chunk 3." in text
    assert "Complete: the chunk at rank 3 holds the whole reference." in text
    assert "Rank 1 is from another document, other.md [0:40]" in text
    assert annotations.emphasis == ()
    assert annotations.badges == ((0, "rank 2"), (3, "rank 3"))


def test_whitespace_around_a_reference_is_not_called_a_cut_by_the_chunker() -> None:
    chunk_map = map_document(GUIDE, options=options(300), name=NAME)
    chunk = chunk_map.document.chunks[2]
    assert GUIDE[chunk.start - 2 : chunk.start] == "\n\n"
    question = _question(chunk.start - 2, chunk.start + 10)
    trace = QuestionTrace(EvalChunk(NAME, chunk.start, chunk.end, chunk.text), 0, None)
    text = "\n".join(question_annotations(chunk_map, question, trace, "ours").notes)
    assert "Chunk 2 holds all of the reference but its leading or trailing whitespace" in text


def test_a_miss() -> None:
    chunk_map = map_document(GUIDE, options=options(300), name=NAME)
    chunks = chunk_map.document.chunks
    question = _question(chunks[4].start, chunks[4].start + 10)
    top = EvalChunk(NAME, chunks[0].start, chunks[0].end, chunks[0].text)
    trace = QuestionTrace(top, None, None, (top,))
    text = "\n".join(question_annotations(chunk_map, question, trace, "ours").notes)
    assert "Miss: none of the top 5 chunks touches the reference." in text
    assert "Rank 1 is chunk 0 (bold, red card) of this document; it does not touch" in text


@pytest.mark.integration
def test_the_report_links_every_question_to_its_map(
    small_set: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs, questions = small_set
    out = tmp_path / "out"
    with OpenAIStub(dimensions=DIMENSIONS, api_key=KEY) as stub:
        use_stub(monkeypatch, stub)
        arguments = [
            str(docs), str(questions), "--max", "64", "--overlap", "0",
            "--embedding", "azure_openai", "--baselines", "split-skill",
            "--cache", str(tmp_path / "cache"), "--out", str(out), "--quiet",
        ]  # fmt: skip
        assert main(arguments) == 0
    report = parse_page((out / "report.html").read_text(encoding="utf-8"))
    links = [a["href"] for a in report.find_all("a") if "chunk map" in a.get_text()]
    lines = [json.loads(line) for line in questions.read_text(encoding="utf-8").splitlines()]
    assert links == [f"maps/q{n}.html#mark" for n in range(1, len(lines) + 1)]
    source = (docs / "guide.md").read_text(encoding="utf-8")
    for number, (link, line) in enumerate(zip(links, lines, strict=True), 1):
        assert report.select_one(f"tr#q{number}") is not None
        page = parse_page((out / str(link).removesuffix("#mark")).read_text(encoding="utf-8"))
        marked = "".join(p.get_text() for p in page.select("main span.seg.mark"))
        assert marked == line["answer"]
        assert "".join(p.get_text() for p in page.select("main span.seg")) == source
        banner = page.select_one("section.banner")
        assert banner is not None
        assert line["question"] in banner.get_text()
        assert "Setting: ours 64/0 tokens prefix." in banner.get_text()
        assert page.select(".card .badge")[0].get_text().startswith("rank ")
        back = banner.select_one("a")
        assert back is not None
        assert back["href"] == f"../report.html#q{number}"
