"""The question file: every bad line is reported at once, by number; spans are exact."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from evaluation.documents import DocumentError, load_documents
from evaluation.questions import QuestionFileError, load_questions

if TYPE_CHECKING:
    from pathlib import Path

MARKDOWN = "# Guide\n\nInstall it first. Then run it.\n\nRun it again if it fails.\n"
HTML = "<html><body><h1>Page</h1><p>The <b>answer</b> is 42.</p><p>Then stop.</p></body></html>"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "guide.md").write_text(MARKDOWN, encoding="utf-8")
    (folder / "sub" / "page.html").write_text(HTML, encoding="utf-8")
    (folder / "notes.txt").write_text("Plain notes. Nothing more.", encoding="utf-8")
    (folder / "SOURCES.md").write_text("# not a document", encoding="utf-8")
    (folder / "image.png").write_bytes(b"\x89PNG")
    return folder


def write(tmp_path: Path, lines: list[object]) -> Path:
    path = tmp_path / "questions.jsonl"
    path.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n",
        encoding="utf-8",
    )
    return path


def test_documents_are_read_by_suffix_and_html_is_rendered(docs: Path) -> None:
    documents = load_documents(docs)
    assert sorted(documents) == ["guide.md", "notes.txt", "sub/page.html"]
    assert documents["guide.md"].source == MARKDOWN
    assert "The answer is 42." in documents["sub/page.html"].source
    assert "<b>" not in documents["sub/page.html"].source


def test_an_empty_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match="no documents"):
        load_documents(tmp_path)
    with pytest.raises(DocumentError, match="not a folder"):
        load_documents(tmp_path / "missing")


def test_answers_and_offsets_become_exact_spans(docs: Path, tmp_path: Path) -> None:
    documents = load_documents(docs)
    start = MARKDOWN.index("Run it again")
    path = write(
        tmp_path,
        [
            {"question": "first?", "document": "guide.md", "answer": "Install it first."},
            {"question": "again?", "document": "guide.md", "start": start, "end": start + 12},
            {"question": "html?", "document": "sub/page.html", "answer": "is 42", "kind": "fact"},
            "",
            {"question": "plain?", "document": "notes.txt", "answer": "Nothing more."},
        ],
    )
    questions = load_questions(path, documents)
    assert [q.line for q in questions] == [1, 2, 3, 5]
    spans = [documents[q.document].source[q.start : q.end] for q in questions]
    assert spans == ["Install it first.", "Run it again", "is 42", "Nothing more."]
    assert questions[2].kind == "fact"


def test_html_offsets_are_located_by_their_answer(docs: Path, tmp_path: Path) -> None:
    documents = load_documents(docs)
    source = documents["sub/page.html"].source
    actual = source.index("Then stop.")
    # Offsets a little off (a renderer change) still find the answer nearest to them.
    line = {"question": "q", "document": "sub/page.html", "start": actual + 3, "end": actual + 9,
            "answer": "Then stop."}  # fmt: skip
    (question,) = load_questions(write(tmp_path, [line]), documents)
    assert (question.start, question.end) == (actual, actual + len("Then stop."))


def test_every_bad_line_is_reported_at_once(docs: Path, tmp_path: Path) -> None:
    documents = load_documents(docs)
    path = write(
        tmp_path,
        [
            "{not json",
            ["a", "list"],
            {"document": "guide.md", "answer": "Install it first."},
            {"question": "q", "document": "missing.md", "answer": "x"},
            {"question": "q", "document": "guide.md", "answer": "it f"},
            {"question": "q", "document": "guide.md", "answer": "not in the text"},
            {"question": "q", "document": "guide.md"},
            {"question": "q", "document": "guide.md", "start": 5, "end": 2},
            {"question": "q", "document": "guide.md", "start": 0, "end": 7, "answer": "Install"},
            {"question": "q", "document": "sub/page.html", "start": 0, "end": 4},
            {"question": "q", "document": "guide.md", "start": "0", "end": 3},
            {"question": "fine", "document": "guide.md", "answer": "Then run it."},
        ],
    )
    with pytest.raises(QuestionFileError) as caught:
        load_questions(path, documents)
    problems = caught.value.problems
    assert len(problems) == 11
    expected = [
        "line 1: not JSON",
        "line 2: must be a JSON object",
        "line 3: 'question' must be",
        "line 4: 'document' must name a file",
        "line 5: 'answer' occurs 2 times in guide.md",
        "line 6: 'answer' does not occur in guide.md",
        "line 7: give the reference as 'answer'",
        "line 8: 'start'/'end' must satisfy",
        "line 9: 'answer' is not the text at start/end",
        "line 10: for HTML documents give 'answer' too",
        "line 11: 'start' and 'end' must both be integers",
    ]
    for problem, start in zip(problems, expected, strict=True):
        assert problem.startswith(start), problem
    assert "nothing was evaluated" in str(caught.value)


def test_a_file_without_questions_is_an_error(docs: Path, tmp_path: Path) -> None:
    with pytest.raises(QuestionFileError, match="no questions"):
        load_questions(write(tmp_path, ["", "   "]), load_documents(docs))
