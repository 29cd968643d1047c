"""Format detection and the document title's order of precedence."""

from __future__ import annotations

import pytest

from chunking import chunk_document
from chunking.parse.detect import detect_format


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


def test_file_name_is_the_last_resort() -> None:
    assert chunk_document("Body only.", file_name="dir/notes.txt").title == "notes.txt"
    assert chunk_document("Body only.").title == ""
