"""MultiMarkdown metadata and Pandoc title blocks are metadata, like YAML front matter
(issue 14, item 4): not body text, and their title is the document's title."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunking import chunk_document
from chunking.parse.front_matter import metadata_block
from tests.paths import SHARED

REALWORLD = SHARED / "realworld" / "markdown"


def test_multimarkdown_metadata_gives_the_title_and_is_not_body() -> None:
    text = "Title:\tQuick Start\nAuthor:\tF. Penney\nBase Header Level:\t3\n\n# Intro\n\nText.\n"
    document = chunk_document(text, format="markdown")
    assert document.chunks[0].title == "Quick Start"
    assert all("Penney" not in chunk.content for chunk in document.chunks)
    assert document.chunks[0].content.startswith("# Intro")
    assert all(c.content == document.source[c.start : c.end] for c in document.chunks)


def test_a_pandoc_title_block_gives_the_title() -> None:
    text = "% The Title\n% Ann Author\n% 2024-01-01\n\nSome text here.\n"
    document = chunk_document(text, format="markdown")
    assert document.chunks[0].title == "The Title"
    assert document.chunks[0].content == "Some text here."


def test_continuation_lines_belong_to_the_metadata() -> None:
    assert metadata_block("Title: A\nAuthors: B\n    and C\n\nBody", 0) == (31, "A")


@pytest.mark.parametrize(
    "text",
    [
        "Note: this document is a draft.\n\nBody.",  # no title: body text
        "Status: draft\nOwner: me\n\nBody.",
        "Title: x\n# Heading right after\n\nBody.",  # not all entries
        "Some prose: with a colon.\n\nBody.",
        "%not a pandoc line\n\nBody.",
    ],
)
def test_text_that_only_looks_like_metadata_stays_body(text: str) -> None:
    assert metadata_block(text, 0) is None
    document = chunk_document(text, format="markdown")
    assert document.chunks[0].start == 0


@given(st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=200))
def test_metadata_never_ends_past_the_text_and_any_title_is_stripped(text: str) -> None:
    found = metadata_block(text, 0)
    if found is not None:
        end, title = found
        assert 0 < end <= len(text)
        assert title is None or title == title.strip()


@pytest.mark.skipif(not REALWORLD.is_dir(), reason=f"no real pages at {REALWORLD}")
@pytest.mark.parametrize(
    ("name", "title"),
    [
        ("mmd6-QuickStart.md", "MultiMarkdown v6 Quick Start Guide"),
        ("rawhtml-apache-security-committers.md", "ASF Project Security for Committers"),
    ],
)
def test_real_metadata_blocks(name: str, title: str) -> None:
    text = (REALWORLD / name).read_text(encoding="utf-8")
    document = chunk_document(text, file_name=name)
    assert {chunk.title for chunk in document.chunks} == {title}
    assert all(not chunk.content.startswith("Title:") for chunk in document.chunks)
