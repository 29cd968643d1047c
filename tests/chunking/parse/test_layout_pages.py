"""Layout markdown (page markers, figures): page ranges on chunks, furniture never embedded."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking import ChunkOptions, Limits, Unit, chunk_document
from chunking.model import BlockKind
from chunking.pipeline import parse
from tests.helpers import SECTION_PER_CHUNK, chunk_and_audit
from tests.layout_markdown import (
    FURNITURE_WORDS,
    LAYOUT_PARAGRAPHS,
    LayoutDocument,
    LayoutParagraphs,
    build,
    index_layout,
)
from tests.paths import FIXTURES, ROOT

FIXTURES = FIXTURES / "markdown"
SAMPLES = ROOT / "samples"
SETTINGS = [
    Limits(unit=Unit.TOKENS, maximum_page_length=512, page_overlap_length=64),
    Limits(unit=Unit.TOKENS, maximum_page_length=256, page_overlap_length=0),
    Limits(unit=Unit.CHARACTERS, maximum_page_length=2000, page_overlap_length=500),
]

SAMPLE = """# Report

<!-- PageHeader="Contoso Ltd. — Confidential" -->

First paragraph runs along and then
<!-- PageFooter="Page 1 of 3" -->
<!-- PageNumber="1" -->
<!-- PageBreak -->
<!-- PageHeader="Contoso Ltd. — Confidential" -->
continues on the next page.

<figure>
<figcaption>Figure 2 This is a figure</figcaption>

Values
300
200

Jan Feb Mar

</figure>

This is the figure's footnote.

<table>
<tr><th>A</th><th>B</th></tr>
<tr><td>1</td><td>2</td></tr>
</table>

<!-- PageFooter="Page 2 of 3" -->
<!-- PageBreak -->

<table>
<tr><th>A</th><th>B</th></tr>
<tr><td>3</td><td>4</td></tr>
</table>
<!-- PageFooter="Page 3 of 3" -->
"""


def _page_of(document: LayoutDocument, offset: int) -> int:
    return sum(1 for start in document.page_starts if start <= offset)


@pytest.fixture(scope="module")
def layout() -> LayoutDocument:
    return build((FIXTURES / "gpu-profiling.md").read_text(encoding="utf-8"))


def test_the_built_document_is_long_enough_and_has_what_the_issue_asks(
    layout: LayoutDocument,
) -> None:
    assert layout.pages >= 30
    assert layout.text.count("<figure>") == 2
    assert layout.sentence_gaps  # breaks that interrupt a sentence
    outline = parse(layout.text, "markdown")
    assert outline.pages is not None
    assert outline.pages.starts == layout.page_starts


@pytest.mark.parametrize(
    "limits", SETTINGS, ids=lambda limits: f"{limits.unit.value}-{limits.maximum_page_length}"
)
def test_layout_document_pages_furniture_and_sentences(
    layout: LayoutDocument, limits: Limits
) -> None:
    document, audit = chunk_and_audit(layout.text, ChunkOptions(limits=limits))
    assert not audit.violations, audit.examples  # paths, sizes, coverage, cuts
    text = layout.text
    for chunk in document.chunks:
        assert chunk.page_from is not None
        assert chunk.page_to is not None
        pages = {
            _page_of(layout, offset)
            for offset in range(chunk.start, chunk.end)
            if not text[offset].isspace()
            and not any(low <= offset < high for low, high in layout.markers)
        }
        if pages:
            assert (chunk.page_from, chunk.page_to) == (min(pages), max(pages)), chunk.ordinal
        for words in FURNITURE_WORDS:
            assert words not in chunk.text, (chunk.ordinal, words)
        for low, high in layout.sentence_gaps:
            assert not low <= chunk.end <= high, (chunk.ordinal, text[low - 40 : high + 40])
        assert chunk.text.strip(), chunk.ordinal  # never a chunk of only markers


def test_page_ranges_and_furniture_on_a_small_sample() -> None:
    options = ChunkOptions(limits=Limits(unit=Unit.CHARACTERS, maximum_page_length=1000))
    document = chunk_document(SAMPLE, options=options, format="markdown")
    [chunk] = document.chunks
    assert (chunk.page_from, chunk.page_to) == (1, 3)
    assert "Contoso" not in chunk.text
    assert "Page 1 of" not in chunk.text
    # The interrupted sentence reads on, without the marker lines' blank lines.
    assert "runs along and then\ncontinues on the next page." in chunk.text
    assert "Figure 2 This is a figure" in chunk.text


def test_a_page_break_inside_a_sentence_is_not_a_block_boundary() -> None:
    outline = parse(SAMPLE, "markdown")
    paragraphs = [SAMPLE[b.start : b.end] for b in outline.blocks if b.kind is BlockKind.PARAGRAPH]
    assert paragraphs[0].startswith("First paragraph")
    assert paragraphs[0].endswith("continues on the next page.")


def test_a_table_continued_under_the_same_header_is_one_block() -> None:
    outline = parse(SAMPLE, "markdown")
    tables = [
        SAMPLE[b.start : b.end] for b in outline.blocks if SAMPLE.startswith("<table", b.start)
    ]
    assert len(tables) == 1
    assert tables[0].startswith("<table>\n<tr><th>A</th><th>B</th></tr>\n<tr><td>1</td>")
    assert "<tr><td>3</td><td>4</td></tr>\n</table>" in tables[0]


def test_a_figure_is_one_block_with_its_caption() -> None:
    outline = parse(SAMPLE, "markdown")
    [figure] = [
        SAMPLE[b.start : b.end] for b in outline.blocks if SAMPLE.startswith("<figure", b.start)
    ]
    assert "<figcaption>" in figure
    assert figure.endswith("</figure>")


def test_a_figure_is_not_cut_when_it_fits_a_chunk_of_its_own() -> None:
    intro = "An introduction sentence that sets the scene. " * 4
    figure = (
        "<figure>\n<figcaption>Figure 1 Load</figcaption>\n\n"
        + "\n".join(f"value {i} of the series" for i in range(12))
        + "\n\n</figure>\n"
    )
    text = f"{intro}\n\n{figure}"
    options = ChunkOptions(limits=Limits(unit=Unit.CHARACTERS, maximum_page_length=400))
    document = chunk_document(text, options=options, format="markdown")
    start = text.index("<figure>")
    end = text.index("</figure>") + len("</figure>")
    assert all(not start < chunk.end < end for chunk in document.chunks)
    assert any(chunk.start <= start and end <= chunk.end for chunk in document.chunks)


def test_a_figure_alone_over_the_limit_is_still_cut() -> None:
    figure = (
        "<figure>\n<figcaption>Figure 1 Load</figcaption>\n\n"
        + "\n".join(f"value {i} of the series" for i in range(80))
        + "\n\n</figure>\n"
    )
    options = ChunkOptions(limits=Limits(unit=Unit.CHARACTERS, maximum_page_length=400))
    document = chunk_document(figure, options=options, format="markdown")
    assert len(document.chunks) > 1
    assert all(chunk.size <= 400 for chunk in document.chunks)


def test_a_document_without_page_markers_has_no_pages() -> None:
    document = chunk_document("# Title\n\nSome text. <!-- a comment -->\n", format="markdown")
    assert [(c.page_from, c.page_to) for c in document.chunks] == [(None, None)]
    assert parse("# Title\n\n<!-- PageBreakish -->\n", "markdown").pages is None


def test_pages_count_page_breaks_not_printed_page_numbers() -> None:
    # Content Understanding's pageNumberFrom is the physical page: a cover page without
    # a number, then printed page "1", is page 2.
    text = 'Cover.\n\n<!-- PageBreak -->\n\nBody text.\n<!-- PageNumber="1" -->\n'
    options = ChunkOptions(limits=Limits(unit=Unit.CHARACTERS, maximum_page_length=300))
    [chunk] = chunk_document(text, options=options, format="markdown").chunks
    assert (chunk.page_from, chunk.page_to) == (1, 2)
    outline = parse(text, "markdown")
    assert outline.pages is not None
    assert outline.pages.range_of(text, text.index("Body"), len(text)) == (2, 2)


def test_crlf_layout_markdown_has_the_same_pages() -> None:
    crlf = SAMPLE.replace("\n", "\r\n")
    options = ChunkOptions(limits=Limits(unit=Unit.CHARACTERS, maximum_page_length=1000))
    [chunk] = chunk_document(crlf, options=options, format="markdown").chunks
    assert (chunk.page_from, chunk.page_to) == (1, 3)
    assert "Contoso" not in chunk.text
    assert "runs along and then\r\ncontinues on the next page." in chunk.text


def test_a_page_marker_shown_in_a_code_block_is_no_page_break() -> None:
    text = "Intro.\n\n```md\n<!-- PageBreak -->\n```\n\nMore.\n"
    assert parse(text, "markdown").pages is None


@settings(max_examples=60, deadline=None)
@given(
    paragraphs=LAYOUT_PARAGRAPHS,
    limit=st.sampled_from([300, 500, 800]),
    overlap=st.sampled_from([0, 60]),
)
def test_page_properties_hold_wherever_the_markers_fall(
    paragraphs: LayoutParagraphs, limit: int, overlap: int
) -> None:
    """Markers after any line (mid-paragraph or not): pages right, no furniture, no
    cut in a break that interrupts a sentence."""
    lines: list[str] = ['<!-- PageHeader="Contoso Ltd. — Report" -->', ""]
    page = 1
    for paragraph in paragraphs:
        for words, end, page_break in paragraph:
            lines.append(words + end)
            if page_break:
                lines += [
                    f'<!-- PageFooter="Contoso Ltd. — Page {page}" -->',
                    "<!-- PageBreak -->",
                    '<!-- PageHeader="Contoso Ltd. — Report" -->',
                ]
                page += 1
        lines.append("")
    text = "\n".join(lines)
    kinds = []
    for paragraph in paragraphs:
        for index, (_, end, page_break) in enumerate(paragraph):
            if page_break:
                mid = index + 1 < len(paragraph) and end != "."
                kinds.append("sentence" if mid else "")

    layout = index_layout(text + "\n", kinds)
    options = ChunkOptions(
        limits=Limits(unit=Unit.CHARACTERS, maximum_page_length=limit, page_overlap_length=overlap)
    )
    document = chunk_document(layout.text, options=options, format="markdown")
    blocks = parse(layout.text, "markdown").blocks
    for chunk in document.chunks:
        pages = {
            _page_of(layout, offset)
            for offset in range(chunk.start, chunk.end)
            if not layout.text[offset].isspace()
            and not any(low <= offset < high for low, high in layout.markers)
        }
        if pages:
            assert (chunk.page_from, chunk.page_to) == (min(pages), max(pages))
        assert "Contoso" not in chunk.text
        for low, high in layout.sentence_gaps:
            # The splitter plans on the source, markers included: a paragraph whose marker
            # lines alone take the room has no other place to cut (a known limit, see
            # test_markers_alone_over_the_limit_do_not_force_a_cut_between_broken_halves).
            # The paragraph is the block the gap is in: halves without a sentence end
            # are joined across the markers even where a blank line parts them.
            block = next((b for b in blocks if b.start <= low and high <= b.end), None)
            first = layout.text.rfind("\n\n", 0, low) + 2 if block is None else block.start
            last = layout.text.find("\n\n", high) if block is None else block.end
            if (last if last >= 0 else len(layout.text)) - first <= limit // 2:
                assert not low <= chunk.end <= high


def test_a_page_header_before_the_first_heading_is_no_part_of_the_path() -> None:
    # A Layout document opens with its first page's header: the first chunk began at that
    # comment, before the H1, so its path was the root's (no headings, empty sections).
    text = (SAMPLES / "layout-report.md").read_text(encoding="utf-8")
    assert text.startswith("<!-- PageHeader=")
    bare = text.split("\n", 1)[1]
    apart = ChunkOptions(section_fill=SECTION_PER_CHUNK)
    first, bare_first = (
        chunk_document(t, options=apart, format="markdown").chunks[0] for t in (text, bare)
    )
    assert first.headings == bare_first.headings == ("Summary",)
    assert first.outline_path == bare_first.outline_path
    assert first.text.startswith("Contoso Operations Review 2025 › Summary\n")


def test_markers_alone_over_the_limit_do_not_force_a_cut_between_broken_halves() -> None:
    header = '<!-- PageHeader="Contoso Ltd. — Report" -->'
    lines = [header, ""]
    for page in (1, 2, 3):
        lines.append("alpha")
        lines += [f'<!-- PageFooter="Contoso Ltd. — Page {page}" -->', "<!-- PageBreak -->", header]
        if page == 2:
            lines.append("")  # a paragraph ends here, without a sentence end
    lines += ["alpha", ""]
    text = "\n".join(lines) + "\n"
    options = ChunkOptions(limits=Limits(unit=Unit.CHARACTERS, maximum_page_length=300))
    chunks = chunk_document(text, options=options, format="markdown").chunks
    assert len(chunks) == 1  # 19 characters of embedded text fit one chunk


def test_layout_visual_lines_are_not_boundaries_sentences_are() -> None:
    # Layout keeps a PDF's line breaks inside a paragraph: at 600 characters the sample's
    # first chunk ended on one ("... and a change of"), in the middle of a sentence.
    text = (SAMPLES / "layout-report.md").read_text(encoding="utf-8")
    options = ChunkOptions(limits=Limits(unit=Unit.CHARACTERS, maximum_page_length=600))
    document = chunk_document(text, options=options, format="markdown")
    for chunk in document.chunks:
        last = chunk.content.rstrip()
        assert last.endswith((".", ">")), last[-40:]
