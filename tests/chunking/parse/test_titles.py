"""Which H1 names the document, and when a metadata title leaves the H1 in the path."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking import ChunkOptions, Limits, Unit, chunk_document
from chunking.parse.titles import (
    BODY_BEFORE_TITLE_MAX,
    TITLE_MAX_CHARACTERS,
    same_title,
)
from tests.helpers import SECTION_PER_CHUNK

LONG_BODY = "Body text about this part. " * 45
"""A last section longer than `CHARACTERS`' 1,000: a document that fits in one chunk is
one chunk (issue 37), so these tests give their last section more than a chunk of text,
and its chunks carry its heading path whatever the sections before it hold."""

CHARACTERS = ChunkOptions(
    limits=Limits(unit=Unit.CHARACTERS, maximum_page_length=1000, page_overlap_length=0),
    section_fill=SECTION_PER_CHUNK,
)


# -- item 11: an H1 that differs from the metadata title is a path level --------------------


def test_issue_14_item_11_html_h1_that_differs_from_the_title_is_a_level() -> None:
    """The issue's example: `<title>T</title>`, `<h1>Foo</h1>`, `<h2>Bar</h2>`."""
    html = (
        "<html><head><title>T</title></head><body>"
        f"<h1>Foo</h1><p>Intro.</p><h2>Bar</h2><p>About bar. {LONG_BODY}</p></body></html>"
    )
    document = chunk_document(html, options=CHARACTERS)
    assert document.title == "T"
    assert list(dict.fromkeys(c.headings for c in document.chunks)) == [("Foo",), ("Foo", "Bar")]
    assert document.chunks[1].text.startswith("T › Foo › Bar\n\n")


def test_front_matter_title_and_a_different_h1() -> None:
    text = f"---\ntitle: Meta\n---\n# Heading One\n\nIntro.\n\n## Sub\n\n{LONG_BODY}"
    document = chunk_document(text, options=CHARACTERS, format="markdown")
    assert document.title == "Meta"
    assert document.chunks[-1].headings == ("Heading One", "Sub")


@pytest.mark.parametrize(
    ("heading", "title"),
    [
        ("Foo", "Foo"),
        ("Getting  started", "getting started"),
        ("Simple Anomaly Detection", "Simple Anomaly Detection | Haki Benita"),
        ("These Weeks in Firefox: Issue 85", "These Weeks in Firefox: Issue 85 – Nightly News"),
        ("New Zealand", "New Zealand - Wikipedia"),
        ("Release notes", "Acme Docs: Release notes"),
        ("git-add(1) Manual Page", "git-add(1)"),
        ("Trusted Launch for Azure Kubernetes (AKS)", "Trusted Launch with Azure Kubernetes (AKS)"),
        ("Ünïcode Title", "ÜNÏCODE TITLE"),
        ("{{title}}", "ASF Project Security for Committers"),
        ("{{ page.title }}", "Anything"),
        # A headline under its SEO title, one word apart:
        ("Apple’s Vision Pro is the Retina display moment for headsets",
         "Apple’s Vision Pro hands-on: the Retina display moment for headsets - The Verge"),
    ],
)  # fmt: skip
def test_the_same_title_in_other_words_is_not_a_level(heading: str, title: str) -> None:
    assert same_title(heading, title)
    html = f"<title>{title}</title><h1>{heading}</h1><p>Intro.</p><h2>Bar</h2><p>{LONG_BODY}</p>"
    assert chunk_document(html, options=CHARACTERS, format="html").chunks[-1].headings == ("Bar",)


@pytest.mark.parametrize(
    ("heading", "title"),
    [
        ("Custom actions and keybindings in Windows Terminal", "Windows Terminal Actions"),
        ("About This Site", "Daring Fireball: Colophon"),
        ("Deploy and manage cluster extensions for AKS", "Cluster extensions for AKS"),
        ("Foo", "T"),
        ("Foo", "Foobar"),
        ("!!!", "!!!"),
    ],
)  # fmt: skip
def test_a_different_h1_is_a_level(heading: str, title: str) -> None:
    assert not same_title(heading, title)


def test_an_h1_that_repeats_the_metadata_title_stays_out_of_paths_wherever_it_is() -> None:
    furniture = "\n\n".join(f"[Menu entry {i}](/m{i})" for i in range(120))
    body = f"{furniture}\n\n# The Guide\n\nIntro.\n\n## Part\n\n{LONG_BODY}"
    # Without the metadata title, so much before it makes the H1 a section.
    assert chunk_document(body, options=CHARACTERS, format="markdown").title == ""
    text = f"---\ntitle: The Guide - Site\n---\n{body}"
    document = chunk_document(text, options=CHARACTERS, format="markdown")
    assert document.title == "The Guide - Site"
    assert document.chunks[-1].headings == ("Part",)


def test_the_only_h1_stays_hidden_when_no_metadata_title() -> None:
    document = chunk_document("# The Doc\n\nIntro.\n\n## Part\n\nBody.", options=CHARACTERS)
    assert document.title == "The Doc"
    assert {c.headings for c in document.chunks} <= {(), ("Part",)}


# -- item 12: a title comes from the start of a document ------------------------------------


def _caption_document(before: int) -> str:
    """Plain text read as markdown: `before` characters of prose, a long caption, a lone `=`."""
    sentence = "Plain prose of a long text document goes on here. "
    prose = (sentence * (before // len(sentence) + 1))[:before].rstrip()
    caption = "Figure 3: " + "a long caption that describes the figure at length " * 8
    return f"{prose}\n\n{caption.strip()}\n=\n\nMore prose after the caption."


def test_issue_14_item_12_a_setext_caption_far_into_the_text_is_not_the_title() -> None:
    """The issue's example: a lone `=` under a long caption deep in a plain text file."""
    text = _caption_document(5000)
    document = chunk_document(text, options=CHARACTERS, format="markdown", file_name="notes.txt")
    assert document.title == ""
    # The caption is a section (its path is shortened where it shows), never the title.
    assert not any(warning.startswith("the title") for warning in document.warnings)
    caption_start = text.index("Figure 3")
    for chunk in document.chunks:
        if chunk.end <= caption_start:
            assert chunk.headings == ()
    assert document.chunks[-1].headings[0].startswith("Figure 3: a long caption")


def test_a_long_h1_at_the_start_is_a_section_not_the_title() -> None:
    heading = "word " * (TITLE_MAX_CHARACTERS // 5 + 1)
    document = chunk_document(f"# {heading}\n\nBody.", options=CHARACTERS, title="Caller")
    assert document.title == "Caller"
    assert document.chunks[0].headings == (heading.strip(),)


def test_an_h1_of_the_longest_length_is_still_the_title() -> None:
    heading = ("word " * TITLE_MAX_CHARACTERS)[:TITLE_MAX_CHARACTERS].strip()
    document = chunk_document(f"# {heading}\n\nBody.", options=CHARACTERS, title="Caller")
    assert document.title == heading


def test_an_h1_after_a_little_page_furniture_is_still_the_title() -> None:
    text = "[Home](/) · [Docs](/docs)\n\n# The Guide\n\nIntro.\n\n## Part\n\nBody."
    assert chunk_document(text, options=CHARACTERS).title == "The Guide"


def test_comments_before_the_h1_are_not_body_text() -> None:
    comment = "<!-- " + "generated, do not edit " * 100 + "-->"
    text = f"{comment}\n\n# The Guide\n\nIntro."
    assert chunk_document(text, options=CHARACTERS, format="markdown").title == "The Guide"


def test_an_h1_after_substantial_body_is_a_section() -> None:
    text = "Intro words. " * 100 + f"\n\n# Later\n\nMore.\n\n## Part\n\n{LONG_BODY}"
    document = chunk_document(text, options=CHARACTERS, title="Caller")
    assert document.title == "Caller"
    assert document.chunks[-1].headings == ("Later", "Part")
    assert document.chunks[0].headings == ()


PROSE_WORDS = st.lists(
    st.sampled_from(["alpha", "beta", "gamma", "delta.", "epsilon,", "zeta"]), min_size=1
)


@settings(max_examples=100, deadline=None)
@given(
    st.integers(BODY_BEFORE_TITLE_MAX + 1, 6 * BODY_BEFORE_TITLE_MAX),
    st.sampled_from(["# {}\n", "{}\n=\n", "{}\n===\n"]),
    st.sampled_from(["Short Heading", "A heading of a few more words"]),
    st.booleans(),
)
def test_a_heading_after_substantial_body_is_never_the_title(
    before: int, form: str, heading: str, metadata: bool
) -> None:
    words = "alpha beta gamma delta. " * (before // 20 + 1)
    prose = ""
    while len("".join(prose.split())) <= before:
        prose += words
    front = "---\ntitle: Meta\n---\n" if metadata else ""
    text = f"{front}{prose.strip()}\n\n{form.format(heading)}\nAfter the heading. {LONG_BODY}"
    document = chunk_document(text, options=CHARACTERS, format="markdown", title="Caller")
    assert document.title == ("Meta" if metadata else "Caller")
    heading_start = text.index(heading)
    assert document.chunks[-1].headings == (heading,)
    for chunk in document.chunks:
        if chunk.end <= heading_start:
            assert chunk.headings == ()


@settings(max_examples=50, deadline=None)
@given(st.integers(0, BODY_BEFORE_TITLE_MAX // 2))
def test_a_heading_after_a_little_body_is_the_title(before: int) -> None:
    prose = ("ab " * before)[: before * 3 // 2]
    text = f"{prose}\n\n# Short Heading\n\nAfter the heading."
    document = chunk_document(text, options=CHARACTERS, format="markdown", title="Caller")
    assert document.title == "Short Heading"
