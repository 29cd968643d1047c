"""Chunks are planned on the embedded text (markup left out), and mapped back to the source."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from chunking import ChunkOptions, Limits, Unit, chunk_document
from chunking.outline.plain_outline import plain_outline
from chunking.parse.markdown.plain_text import code_regions, left_out, plain_markdown, plain_text
from chunking.pipeline import parse
from tests.helpers import chunk_and_audit

LINKED = (
    "See [the reference](https://learn.microsoft.com/azure/search/reference/very/long/path"
    "/that/takes/room?view=latest) and [the tutorial](https://learn.microsoft.com/azure/"
    "search/tutorial/another/long/path/for/the/link) for more."
)


def _options(limit: int, *, strip: bool = True) -> ChunkOptions:
    return ChunkOptions(
        limits=Limits(Unit.CHARACTERS, limit, 0), title_prefix=False, strip_markup=strip
    )


def test_link_targets_take_no_room_in_the_plan() -> None:
    text = "\n\n".join([LINKED] * 4) + "\n"
    plain = plain_markdown(text, 0, len(text), ())
    assert len(plain) < 300 < len(text) // 2
    planned = chunk_document(text, options=_options(300), format="markdown").chunks
    raw = chunk_document(text, options=_options(300, strip=False), format="markdown").chunks
    # One chunk of the embedded text, where the raw plan needed one per paragraph.
    assert len(planned) == 1
    assert planned[0].content == text.rstrip("\n")
    assert len(raw) == 4


def test_content_takes_the_markup_of_its_first_and_last_word() -> None:
    first = "[Azure AI Search](https://x.example/a) is a service. " * 7
    second = "It is **fast**. " * 10
    text = f"{first.strip()}\n\n{second.strip()}\n"
    chunks = chunk_document(text, options=_options(300), format="markdown").chunks
    assert [chunk.content for chunk in chunks] == [first.strip(), second.strip()]
    assert [chunk.text for chunk in chunks] == [
        ("Azure AI Search is a service. " * 7).strip(),
        ("It is fast. " * 10).strip(),
    ]


def test_an_opening_tag_goes_with_the_chunk_after_and_a_closing_tag_with_the_one_before() -> None:
    filler = " and one more clause that fills the chunk" * 5
    text = (
        f"Intro paragraph that fills most of a chunk on its own{filler}.\n\n"
        f"<Note>\n\nInside the note, a paragraph that needs a chunk of its own{filler}.\n\n"
        f"</Note>\n\nAfter the note, the last paragraph of the page{filler}.\n"
    )
    document, audit = chunk_and_audit(text, _options(300), file_name="page.mdx")
    assert not audit.violations, audit.examples
    contents = [chunk.content for chunk in document.chunks]
    assert any(c.startswith("<Note>") and "Inside the note" in c for c in contents), contents
    assert not any(c.startswith("</Note>") for c in contents), contents
    assert all("<" not in chunk.text for chunk in document.chunks)


def test_page_markers_take_no_room_and_no_chunk_ends_inside_one() -> None:
    marker = (
        '<!-- PageFooter="Contoso Ltd. — a long footer on every page" -->\n<!-- PageBreak -->\n'
    )
    text = "".join(f"Page {page} text.\n\n{marker}\n" for page in range(1, 9))
    assert len(text) > 2 * 300
    document, audit = chunk_and_audit(text, _options(300), file_name="report.md")
    assert not audit.violations, audit.examples
    assert len(document.chunks) == 1  # 8 short paragraphs of embedded text
    for chunk in document.chunks:
        assert "PageFooter" not in chunk.text


PROSE = st.lists(
    st.sampled_from(
        [
            "word",
            "[link text](https://example.invalid/path)",
            "**bold**",
            "`code`",
            "<span>tag</span>",
            "<!-- comment -->",
            "\\#",
            "![alt](i.png)",
            "end.",
            "\n\n",
            "\n",
            "> [!NOTE]\n> noted",
            ':::image type="content" source="a.png" alt-text="Alt.":::\n',
            '::: zone pivot="x"\n',
        ]
    ),
    min_size=1,
    max_size=80,
).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(PROSE)
def test_the_plain_text_maps_back_piece_by_piece(text: str) -> None:
    outline = parse(text, "markdown")
    code, hidden = code_regions(outline), left_out(outline)
    plain = plain_text(text, outline.body_start, outline.content_end, code, hidden)
    body = plain_markdown(text, outline.body_start, outline.content_end, code, hidden)
    assert plain.text.startswith(text[: outline.body_start])
    assert body.rstrip() in plain.text
    # Every plain span comes from a source span whose own plain text holds it.
    for start in range(0, len(plain.text), 7):
        for end in range(start + 1, len(plain.text) + 1, 11):
            low, high = plain.source_span(start, end)
            assert 0 <= low <= high <= len(text)
            assert plain.plain_start(low) <= start
            assert plain.plain_end(high) >= end


@settings(max_examples=100, deadline=None)
@given(PROSE, st.integers(300, 600))
def test_planned_chunks_keep_every_invariant(text: str, limit: int) -> None:
    _, audit = chunk_and_audit(text, _options(limit), file_name="doc.md")
    assert not audit.violations, audit.examples


def test_the_plain_outline_keeps_headings_as_blocks() -> None:
    text = "<h2>Raw <a href='x'>heading</a></h2>\n\nText [link](u).\n\n## Next\n\nMore.\n"
    planned = plain_outline(parse(text, "markdown")).outline
    starts = {block.start for block in planned.blocks if block.kind.value == "heading"}
    assert [heading.start in starts for heading in planned.headings] == [True, True]
    assert planned.source[planned.headings[0].start :].startswith("Raw heading")
