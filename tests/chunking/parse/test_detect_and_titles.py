"""Format detection and the document title's order of precedence."""

from __future__ import annotations

import pytest

from chunking import chunk_document
from chunking.parse.detect import detect_format
from tests.helpers import options


@pytest.mark.parametrize(
    ("text", "content_type", "file_name", "expected"),
    [
        ("plain", "text/markdown; charset=utf-8", None, "markdown"),
        ("# x", "text/html", None, "html"),
        ("<p>x</p>", "application/octet-stream", "page.HTM", "html"),
        ("# x", None, "notes.txt", "text"),
        ("x", None, "https://host/docs/page.md?sv=2020&sig=abc", "markdown"),
        ("<!DOCTYPE html><html><body>x</body></html>", None, None, "html"),
        ("<!-- c -->\n<html lang=en>", None, None, "html"),
        ("<div><p>a</p><p>b</p><a href=x>c</a></div>", None, None, "html"),
        ("Intro\n\n## Setup\n\nRun it.", None, None, "markdown"),
        ("See [docs](https://x.y) for more.", None, None, "markdown"),
        ("Just some words. Nothing else here.", None, None, "text"),
        ("a < b and c > d", None, None, "text"),
    ],
)
def test_detect_format(
    text: str, content_type: str | None, file_name: str | None, expected: str
) -> None:
    assert detect_format(text, content_type=content_type, file_name=file_name) == expected


def test_title_from_front_matter_wins_and_the_same_h1_leaves_the_path() -> None:
    document = chunk_document("---\ntitle: Meta - Site\n---\n# Meta\n\n## Sub\n\nBody.")
    assert document.title == "Meta - Site"
    assert document.chunks[0].headings == ("Sub",)


def test_title_from_front_matter_wins_and_a_different_h1_stays_in_the_path() -> None:
    document = chunk_document("---\ntitle: Meta\n---\n# Heading One\n\n## Sub\n\nBody.")
    assert document.title == "Meta"
    assert document.chunks[0].headings == ("Heading One", "Sub")


def test_title_from_html_title_element() -> None:
    document = chunk_document("<html><head><title> Page  T </title></head><body><p>x</p></body>")
    assert document.title == "Page T"


def test_single_leading_h1_is_the_title() -> None:
    document = chunk_document("# The Doc\n\nIntro.\n\n## Part\n\nBody.", title="Caller")
    assert document.title == "The Doc"


def test_two_h1s_are_headings_and_the_caller_title_is_used() -> None:
    document = chunk_document("# One\n\nA.\n\n# Two\n\nB.", title="Caller", file_name="f.md")
    assert document.title == "Caller"
    assert {c.headings for c in document.chunks} <= {("One",), ("Two",), ()}


def test_a_document_without_a_title_has_none_and_its_prefix_is_the_heading_path() -> None:
    """The file name is no title (the rule audit: no effect on retrieval anywhere)."""
    assert chunk_document("Body only.", file_name="dir/notes.txt").title == ""
    assert chunk_document("Body only.").title == ""
    sentence = "The quick brown fox jumps over the lazy dog near the river bank. "
    text = f"Intro. {sentence * 2}\n\n## Setup\n\n{sentence * 3}\n\n## Use\n\n{sentence * 3}"
    document = chunk_document(text, options=options(300), file_name="guide.md")
    assert document.title == ""
    assert [c.headings for c in document.chunks] == [(), ("Setup",), ("Use",)]
    first, setup, use = document.chunks
    assert first.text == first.content
    assert setup.text == "Setup\n\n" + setup.content
    assert use.text == "Use\n\n" + use.content


def test_a_file_name_leaves_titles_of_the_document_or_the_caller_as_they_were() -> None:
    page = "<html><head><title>Page T</title></head><body><p>x</p></body>"
    assert chunk_document(page, file_name="page.html").title == "Page T"
    assert chunk_document("# The Doc\n\nIntro.", file_name="doc.md").title == "The Doc"
    assert chunk_document("Body only.", title="Caller", file_name="doc.md").title == "Caller"
