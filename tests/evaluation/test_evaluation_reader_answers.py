"""Answers copied as a reader sees the page are found in the rendered text, not refused."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from evaluation.documents import load_documents
from evaluation.questions import QuestionFileError, load_questions

if TYPE_CHECKING:
    from pathlib import Path

HTML = (
    "<html><body><h1>Tags</h1><p>Some <b>bold</b> and <code>x_y</code> text with "
    '<a href="https://example.org">a link</a>.</p><ul><li>one thing</li><li>two things</li>'
    "</ul><table><tr><th>size</th><th>price</th></tr><tr><td>small</td><td>2 EUR</td></tr>"
    "</table><ol><li>first step</li><li>second step</li></ol></body></html>"
)
MARKDOWN = (
    "# Guide\n\nRun **`az aks upgrade`** with\nthe [latest version](https://learn.microsoft"
    ".com/x) of the CLI.\n\n- keep one node\n- drain the rest\n\nThen *keep one* node.\n"
)


def _load(tmp_path: Path, answers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "page.html").write_text(HTML, encoding="utf-8")
    (folder / "guide.md").write_text(MARKDOWN, encoding="utf-8")
    documents = load_documents(folder)
    path = tmp_path / "questions.jsonl"
    path.write_text(
        "".join(
            json.dumps({"question": "q?", "document": name, "answer": answer}) + "\n"
            for name, answer in answers
        ),
        encoding="utf-8",
    )
    questions = load_questions(path, documents)
    return [(q.document, documents[q.document].source[q.start : q.end]) for q in questions]


def test_html_answer_copied_from_the_browser_is_found_in_the_rendering(tmp_path: Path) -> None:
    found = _load(
        tmp_path,
        [
            ("page.html", "Some bold and x_y text with a link."),
            ("page.html", "one thing\ntwo things"),
            ("page.html", "small\t2 EUR"),
            ("page.html", "first step\n  second step"),
        ],
    )
    assert found[0][1] == "Some bold and x_y text with a link."
    assert found[1][1] == "one thing\n- two things"
    assert found[2][1] == "small | 2 EUR"
    assert found[3][1] == "first step\n2. second step"


def test_markdown_answer_copied_without_markers_is_found(tmp_path: Path) -> None:
    found = _load(
        tmp_path,
        [
            ("guide.md", "Run az aks upgrade with the latest version of the CLI."),
            ("guide.md", "keep one node drain the rest"),
        ],
    )
    assert found[0][1] == (
        "Run **`az aks upgrade`** with\nthe [latest version](https://learn.microsoft.com/x) "
        "of the CLI."
    )
    assert found[1][1] == "keep one node\n- drain the rest"


def test_an_answer_that_is_not_there_in_any_form_is_still_refused(tmp_path: Path) -> None:
    with pytest.raises(QuestionFileError, match="does not occur in the rendered text"):
        _load(tmp_path, [("page.html", "three things")])


def test_a_copied_answer_found_twice_is_ambiguous(tmp_path: Path) -> None:
    with pytest.raises(QuestionFileError, match="occurs 2 times"):
        _load(tmp_path, [("guide.md", "keep one\nnode")])
