"""Heading ids written in markdown headings: `{#id}` attribute blocks and MDX `{/*id*/}`."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking import ChunkOptions, Limits, Unit, chunk_document
from chunking.parse.markdown import markdown_it_parser
from chunking.parse.markdown.blocks import heading_id
from chunking.parse.markdown.outline import parse_markdown
from tests.helpers import SECTION_PER_CHUNK, paths_and_anchors
from tests.paths import FIXTURES
from tests.strategies import ANCHOR_ID, headings_of

DIALECTS = FIXTURES / "markdown" / "dialects"
SMALL = ChunkOptions(limits=Limits(Unit.CHARACTERS, 300, 0), section_fill=SECTION_PER_CHUNK)


def outline_headings(text: str) -> list[tuple[int, str, str | None]]:
    """Depth, text and anchor of each heading; both parsers must agree on them."""
    outline = parse_markdown(text)
    reference = parse_markdown(text, parser=markdown_it_parser.parse_blocks)
    found = [(h.depth, h.text, h.anchor) for h in outline.headings]
    assert found == [(h.depth, h.text, h.anchor) for h in reference.headings]
    return found


def test_mdx_comment_id_is_the_anchor_and_leaves_the_path() -> None:
    text = "## Usage {/*usage*/}\n\nCall it.\n\n## Reference {/* api-reference */}\n\nx\n"
    assert paths_and_anchors(text) == [(("Usage",), "usage"), (("Reference",), "api-reference")]


def test_attribute_block_id_is_the_anchor_and_leaves_the_path() -> None:
    text = (
        "## Reference {#reference}\n\nOne.\n\n"
        "## Options {#opts .unnumbered}\n\nTwo.\n\n### Span IALs   {: #span-ials}\n\nThree.\n"
    )
    assert paths_and_anchors(text) == [
        (("Reference",), "reference"),
        (("Options",), "opts"),
        (("Options", "Span IALs"), "span-ials"),
    ]


def test_ids_with_inline_markup_closing_hashes_and_setext() -> None:
    text = (
        "## *Use* `useState` {#use-state} ##\n\nx\n\n"
        "Setext title {/*setext*/}\n------------\n\ny\n\n"
        "## Classes only {.unlisted}\n\nz\n"
    )
    assert outline_headings(text) == [
        (2, "Use useState", "use-state"),
        (2, "Setext title", "setext"),
        (2, "Classes only", "classes-only"),
    ]


def test_braces_that_are_not_an_id_stay_text() -> None:
    text = (
        "## Set {key=value}\n\n## Template {{ name }}\n\n## Escaped \\{#not-an-id}\n\n"
        "## Braces {inside} the text\n\n## Code `{#x}`\n\n## [Link {#y}](https://x.invalid/#z)\n"
    )
    assert [heading[1] for heading in outline_headings(text)] == [
        "Set {key=value}",
        "Template {{ name }}",
        "Escaped {#not-an-id}",
        "Braces {inside} the text",
        "Code {#x}",
        "Link {#y}",
    ]


def test_a_given_id_takes_its_slug_from_a_later_heading() -> None:
    text = "## First {#usage}\n\n## Usage\n\n## Usage\n"
    assert [heading[2] for heading in outline_headings(text)] == ["usage", "usage-1", "usage-2"]


def test_heading_id_finds_only_a_trailing_block() -> None:
    assert heading_id("Reference {#reference}") == (9, "reference")
    assert heading_id("Usage {/*usage*/}") == (5, "usage")
    assert heading_id("A {#a .b key='c d'}") == (1, "a")
    assert heading_id("A {#a} and more") is None
    assert heading_id("A {#a}{#b}") == (len("A {#a}"), "b")


def test_react_page_has_no_id_syntax_in_any_path() -> None:
    path = DIALECTS / "en-react-compiler-directives.md"
    text = path.read_text(encoding="utf-8")
    document = chunk_document(text, options=SMALL, format="auto", file_name=path.name)
    entries = {entry for chunk in document.chunks for entry in chunk.headings}
    assert "Usage" in entries
    assert not [entry for entry in entries if "{" in entry or "}" in entry or "/*" in entry]
    anchors = {chunk.anchor for chunk in document.chunks}
    assert {"overview", "usage", "function-level", "see-also"} <= anchors
    assert not [anchor for anchor in anchors if anchor and "{" in anchor]


@settings(max_examples=150, deadline=None)
@given(
    headings_of(
        st.tuples(
            ANCHOR_ID,
            st.sampled_from(["{#%s}", "{/*%s*/}", "{#%s .cls}", "{: #%s}", "{/* %s */}"]),
        )
    )
)
def test_generated_heading_ids(drawn: list[tuple[int, list[str], tuple[str, str]]]) -> None:
    headings = [(depth, words, id_, form) for depth, words, (id_, form) in drawn]
    text = "".join(
        f"{'#' * depth} {' '.join(words)} {form % id_}\n\nBody of {id_}.\n\n"
        for depth, words, id_, form in headings
    )
    found = outline_headings(text)
    assert [(text_, anchor) for _, text_, anchor in found] == [
        (" ".join(words), id_) for _, words, id_, _ in headings
    ]
    for chunk_path, anchor in paths_and_anchors(text):
        assert anchor in {id_ for _, _, id_, _ in headings}
        assert not [entry for entry in chunk_path if "{" in entry]


@pytest.mark.parametrize("form", ["{#%s}", "{/*%s*/}"])
def test_fallback_parser_cuts_the_id_too(form: str) -> None:
    text = f"## Title *emphasis* {form % 'the-id'}\n"
    outline = parse_markdown(text, parser=markdown_it_parser.parse_blocks)
    assert [(h.text, h.anchor) for h in outline.headings] == [("Title emphasis", "the-id")]
