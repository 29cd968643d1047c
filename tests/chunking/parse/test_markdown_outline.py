"""Tests for `parse_markdown`: outline invariants on real documents, focused cases, properties."""

from __future__ import annotations

import bisect
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.model import Block, BlockKind, Outline, Region, RegionKind
from chunking.parse.markdown import markdown_it_parser
from chunking.parse.markdown.outline import parse_markdown
from tests.paths import FIXTURES

if TYPE_CHECKING:
    from chunking.parse.markdown.blocks import ParsedMarkdown

FIXTURES = FIXTURES / "markdown"
CORPUS = Path("/work/shared/corpus/md")
CORPUS_FILE_COUNT = 786


def read_source(path: Path) -> str:
    """Read a document as stored: no newline translation, BOM kept."""
    with path.open(encoding="utf-8", newline="") as handle:
        return handle.read()


def is_setext(span: str) -> bool:
    """Whether a heading span ends with a setext underline (`===` or `---`)."""
    last_line = span.splitlines()[-1].strip()
    return len(span.splitlines()) >= 2 and bool(last_line) and set(last_line) <= {"=", "-"}


def containing_block(outline: Outline, start: int, end: int) -> Block | None:
    """The block whose span holds `start..end`, if any."""
    starts = [block.start for block in outline.blocks]
    index = bisect.bisect_right(starts, start) - 1
    if index < 0:
        return None
    block = outline.blocks[index]
    return block if block.start <= start and end <= block.end else None


def assert_region_ok(outline: Outline, region: Region) -> None:
    """A region's offsets, lead and enclosing block are consistent."""
    source = outline.source
    assert outline.body_start <= region.start <= region.lead_end <= region.end <= len(source)
    assert containing_block(outline, region.start, region.end) is not None, region
    if region.lead == "":
        assert region.kind is RegionKind.CODE
        assert region.lead_end == region.start
        return
    assert region.lead.endswith(("\n", "\r")), region
    raw_lead = source[region.start : region.start + len(region.lead)]
    # The lead is the source slice, or the slice plus "\n" when the text ends on it.
    assert raw_lead == region.lead or raw_lead + "\n" == region.lead, region
    lead_lines = region.lead.splitlines()
    if region.kind is RegionKind.CODE:
        assert len(lead_lines) == 1
        assert "```" in lead_lines[0] or "~~~" in lead_lines[0]
    else:
        assert len(lead_lines) == 2
        assert "-" in lead_lines[1]


def assert_invariants(outline: Outline) -> None:
    """Check every invariant the Outline type promises, plus this parser's own."""
    source = outline.source
    assert outline.format == "markdown"
    assert 0 <= outline.body_start <= len(source)

    previous_end = outline.body_start
    for block in outline.blocks:
        assert previous_end <= block.start < block.end <= len(source), block
        # Everything between blocks is blank.
        assert source[previous_end : block.start].strip() == "", (block, previous_end)
        assert not source[block.end - 1].isspace(), block
        previous_end = block.end
    assert source[previous_end:].strip() == ""

    heading_blocks = [(b.start, b.end) for b in outline.blocks if b.kind is BlockKind.HEADING]
    assert heading_blocks == [(h.start, h.end) for h in outline.headings]
    for heading in outline.headings:
        span = source[heading.start : heading.end]
        # A docfx zone's label is its opening marker line.
        assert span.startswith(("#", ":::")) or is_setext(span), span
        # docfx tabs and zones nest their headings below the label, past h6.
        assert heading.depth >= 1
        if heading.section_end is not None:
            assert heading.end <= heading.section_end <= len(source), heading
        assert heading.text == " ".join(heading.text.split())
    assert [(a.offset, a.id) for a in outline.anchors] == [
        (h.start, h.anchor) for h in outline.headings if h.anchor is not None
    ]
    anchor_ids = [a.id for a in outline.anchors]
    assert len(anchor_ids) == len(set(anchor_ids))

    assert [r.start for r in outline.regions] == sorted(r.start for r in outline.regions)
    for region in outline.regions:
        assert_region_ok(outline, region)
    for region in outline.regions:
        for heading in outline.headings:
            assert not region.start <= heading.start < region.end, (region, heading)


# ---------------------------------------------------------------- real documents

FIXTURE_EXPECTATIONS = {
    # file name: (title, number of headings, sample (depth, text, anchor))
    "aks-managed-gpu-nodes.md": (
        "Create an AKS-managed GPU node pool on Azure Kubernetes Service (AKS)",
        22,
        # A tab heading: one below its section, and no anchor (docfx renders a tab).
        (3, "Ubuntu Linux node pool (default SKU)", None),
    ),
    "upgrade-options.md": (
        "Upgrade Options and Recommendations for Azure Kubernetes Service (AKS) Clusters",
        44,
        (2, "Quick navigation", "quick-navigation"),
    ),
    "gpu-profiling.md": (
        "Optimize GPU workloads on AKS with GPU profiling (Preview)",
        23,
        (
            2,
            "Deploy GPU observability - GPU memory profiling on AKS",
            "deploy-gpu-observability---gpu-memory-profiling-on-aks",
        ),
    ),
    "access-fleet-hub-cluster-kubernetes-api.md": (
        "Access the Kubernetes API for an Azure Kubernetes Fleet Manager Hub Cluster",
        # Five headings and four zone pivot labels; a section in a zone nests below it.
        9,
        (3, "Before you begin", "before-you-begin-1"),
    ),
    "aks-automatic-limitations.md": (None, 1, (2, "Limitations", "limitations")),
    "use-azure-cli-successfully-quoting.md": (
        "Quoting differences in scripting languages | Microsoft Docs",
        20,
        (2, "JSON strings", "json-strings"),
    ),
}


def test_fixture_set_is_complete() -> None:
    assert sorted(p.name for p in FIXTURES.glob("*.md") if p.name != "SOURCES.md") == sorted(
        FIXTURE_EXPECTATIONS
    )


@pytest.mark.parametrize("name", sorted(FIXTURE_EXPECTATIONS))
def test_fixture_outline(name: str) -> None:
    source = read_source(FIXTURES / name)
    outline = parse_markdown(source)
    assert_invariants(outline)
    assert outline.source is source

    title, heading_count, sample = FIXTURE_EXPECTATIONS[name]
    assert outline.title == title
    assert outline.warnings == ()
    assert len(outline.headings) == heading_count
    assert sample in [(h.depth, h.text, h.anchor) for h in outline.headings]

    # Front matter is excluded: the body starts right after the closing `---` line.
    assert source[: outline.body_start].rstrip().endswith("\n---")
    assert source.lstrip("\ufeff").startswith("---")
    assert all(b.start >= outline.body_start for b in outline.blocks)
    assert "intent" not in " ".join(h.text.lower() for h in outline.headings)


def test_fixture_tab_headings_and_nested_fences() -> None:
    source = read_source(FIXTURES / "aks-managed-gpu-nodes.md")
    outline = parse_markdown(source)
    assert "\r\n" in source
    tab_headings = [h for h in outline.headings if "](#tab/" in source[h.start : h.end]]
    assert [h.text for h in tab_headings][:3] == [
        "Ubuntu Linux node pool (default SKU)",
        "Azure Linux node pool",
        "Node Auto Provisioning node pool",
    ]
    fences_in_items = [
        r
        for r in outline.regions
        if r.kind is RegionKind.CODE
        and (block := containing_block(outline, r.start, r.end)) is not None
        and block.kind is BlockKind.LIST_ITEM
    ]
    assert len(fences_in_items) >= 10
    assert all(r.lead.endswith("\r\n") for r in fences_in_items)
    assert sum(r.kind is RegionKind.TABLE for r in outline.regions) == 3


def test_fixture_with_bom_reads_front_matter() -> None:
    source = read_source(FIXTURES / "gpu-profiling.md")
    assert source.startswith("\ufeff---")
    outline = parse_markdown(source)
    assert outline.title is not None
    assert source[outline.body_start :].lstrip().startswith("# Optimize GPU workloads")
    notes = [
        b
        for b in outline.blocks
        if b.kind is BlockKind.QUOTE and "[!NOTE]" in source[b.start : b.end]
    ]
    assert len(notes) >= 5


def test_fixture_comments_inside_fences_are_not_headings() -> None:
    source = read_source(FIXTURES / "use-azure-cli-successfully-quoting.md")
    outline = parse_markdown(source)
    assert "\n# Correct" in source
    assert "Correct" not in [h.text for h in outline.headings]


def test_fixture_indented_code_blocks() -> None:
    source = read_source(FIXTURES / "access-fleet-hub-cluster-kubernetes-api.md")
    outline = parse_markdown(source)
    indented = [r for r in outline.regions if r.lead == ""]
    assert len(indented) == 2
    assert source[indented[0].start : indented[0].end].startswith("    ```bash\n")


def test_whole_corpus_keeps_invariants() -> None:
    paths = sorted(CORPUS.rglob("*.md"))
    if not paths:
        pytest.skip(f"corpus not present at {CORPUS}")
    assert len(paths) == CORPUS_FILE_COUNT
    titled = 0
    for path in paths:
        outline = parse_markdown(read_source(path))
        assert_invariants(outline)
        assert outline.warnings == (), path
        titled += outline.title is not None
    # Includes have front matter without a title; articles have one.
    assert titled > CORPUS_FILE_COUNT * 0.8


def _same_outline(source: str) -> None:
    fast = parse_markdown(source)
    reference = parse_markdown(source, parser=markdown_it_parser.parse_blocks)
    assert (fast.body_start, fast.body_end, fast.title) == (
        reference.body_start,
        reference.body_end,
        reference.title,
    )
    assert fast.headings == reference.headings
    assert fast.blocks == reference.blocks
    assert fast.regions == reference.regions


@pytest.mark.parametrize("name", sorted(FIXTURE_EXPECTATIONS))
def test_pulldown_and_markdown_it_agree_on_fixtures(name: str) -> None:
    _same_outline(read_source(FIXTURES / name))


def test_pulldown_and_markdown_it_agree_on_the_whole_corpus() -> None:
    # Two independent CommonMark parsers: the fast one must not change a single
    # heading, block or region of the real documents against the reference.
    paths = sorted(CORPUS.rglob("*.md"))
    if not paths:
        pytest.skip(f"corpus not present at {CORPUS}")
    for path in paths:
        _same_outline(read_source(path))


def test_a_failing_parser_falls_back_with_a_warning() -> None:
    def broken(text: str) -> ParsedMarkdown:
        raise ValueError("boom")

    outline = parse_markdown("# Title\n\nBody text.\n", parser=broken)
    assert [h.text for h in outline.headings] == ["Title"]
    assert len(outline.warnings) == 1
    assert "the markdown parser failed on this document" in outline.warnings[0]
    assert "boom" not in outline.warnings[0]  # the exception's text goes to the logs
    assert "fallback" in outline.warnings[0]


def test_a_rust_panic_falls_back_too() -> None:
    class PanicException(BaseException):  # pyo3's name for a Rust panic
        pass

    def panics(text: str) -> ParsedMarkdown:
        raise PanicException("index out of bounds")

    outline = parse_markdown("## Heading\n", parser=panics)
    assert [h.text for h in outline.headings] == ["Heading"]
    assert "the markdown parser failed on this document" in outline.warnings[0]
    assert "index out of bounds" not in outline.warnings[0]  # a panic may quote the text


def test_keyboard_interrupt_is_not_swallowed() -> None:
    def interrupted(text: str) -> ParsedMarkdown:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        parse_markdown("text\n", parser=interrupted)


def test_a_rule_before_text_is_not_front_matter() -> None:
    # pulldown-cmark reads `---` + text ... `---` anywhere as a metadata block;
    # only the document's first line may open front matter.
    text = "# A\n\nIntro.\n\n---\n## B\n\nMore.\n\n---\n\n## C\n"
    outline = parse_markdown(text)
    assert [h.text for h in outline.headings] == ["A", "B", "C"]
    assert outline.body_start == 0


def test_front_matter_closed_by_yaml_document_end() -> None:
    outline = parse_markdown("---\ntitle: Dots\n...\n# Body\n")
    assert outline.title == "Dots"
    assert [h.text for h in outline.headings] == ["Body"]


def test_unclosed_front_matter_is_body() -> None:
    outline = parse_markdown("---\ntitle: Nope\n\n# Body\n")
    assert outline.title is None
    assert outline.body_start == 0


# ---------------------------------------------------------------- focused cases


def spans(outline: Outline) -> list[tuple[BlockKind, str]]:
    """Each block as (kind, its source text)."""
    return [(b.kind, outline.source[b.start : b.end]) for b in outline.blocks]


def test_setext_headings() -> None:
    text = "Title line\none more\n===\n\nSub\n---  \n\ntext\n"
    outline = parse_markdown(text)
    assert_invariants(outline)
    assert [(h.depth, h.text) for h in outline.headings] == [(1, "Title line one more"), (2, "Sub")]
    assert text[outline.headings[0].start : outline.headings[0].end] == "Title line\none more\n==="
    assert text[outline.headings[1].start : outline.headings[1].end] == "Sub\n---"


def test_atx_heading_with_closing_hashes_and_indent() -> None:
    text = "## Foo bar ##\n   ### Indented ###   \n#Not a heading\n"
    outline = parse_markdown(text)
    assert_invariants(outline)
    assert [(h.depth, h.text, h.anchor) for h in outline.headings] == [
        (2, "Foo bar", "foo-bar"),
        (3, "Indented", "indented"),
    ]
    second = outline.headings[1]
    assert text[second.start : second.end] == "### Indented ###"
    assert (BlockKind.PARAGRAPH, "#Not a heading") in spans(outline)


def test_heading_text_strips_inline_markup() -> None:
    text = (
        "# [Azure CLI](#tab/azure-cli)\n"
        "## Use **bold**, *em*, _em_ and `__init__` in snake_case\n"
        "## [Ref link][ref] and ![image](a.png) and [![inner](i.png)](u)\n"
        "## <span id='x'>Tagged</span> &amp; \\*escaped\\* 2 * 3\n"
        "## ``code with ` tick``   and   spaces\n"
    )
    outline = parse_markdown(text)
    assert [h.text for h in outline.headings] == [
        "Azure CLI",
        "Use bold, em, em and __init__ in snake_case",
        "Ref link and image and inner",
        "Tagged & *escaped* 2 * 3",
        "code with ` tick and spaces",
    ]
    # A docfx tab heading: the slug names no element of the rendered page.
    assert outline.headings[0].anchor is None
    assert outline.headings[1].anchor == "use-bold-em-em-and-__init__-in-snake_case"


def test_anchors_are_deduplicated_like_github() -> None:
    text = "# Foo\n## Foo\n## Foo 1\n## foo!\n## 🎉\n## Ünïcödé 中文\n"
    outline = parse_markdown(text)
    assert [h.anchor for h in outline.headings] == [
        "foo",
        "foo-1",
        "foo-1-1",
        "foo-2",
        None,
        "ünïcödé-中文",
    ]
    assert [(a.offset, a.id) for a in outline.anchors] == [
        (h.start, h.anchor) for h in outline.headings if h.anchor is not None
    ]
    assert outline.anchor_at(outline.headings[2].start + 3) == "foo-1-1"


def test_fence_lead_keeps_info_string_and_tilde_fences() -> None:
    text = "```python title='x'\nprint(1)\n```\n\n~~~~ yaml\na: 1\n~~~~\n"
    outline = parse_markdown(text)
    assert_invariants(outline)
    first, second = outline.regions
    assert first.lead == "```python title='x'\n"
    assert text[first.start : first.end] == "```python title='x'\nprint(1)\n```"
    assert first.lead_end == len(first.lead)
    assert second.lead == "~~~~ yaml\n"
    assert text[second.start : second.end] == "~~~~ yaml\na: 1\n~~~~"
    assert [b.kind for b in outline.blocks] == [BlockKind.CODE, BlockKind.CODE]


def test_indented_code_block_region() -> None:
    text = "Para.\n\n    code line 1\n\n    code line 2\n\nAfter.\n"
    outline = parse_markdown(text)
    assert_invariants(outline)
    (region,) = outline.regions
    assert region.kind is RegionKind.CODE
    assert region.lead == ""
    assert region.lead_end == region.start
    assert text[region.start : region.end] == "    code line 1\n\n    code line 2"
    assert [b.kind for b in outline.blocks] == [
        BlockKind.PARAGRAPH,
        BlockKind.CODE,
        BlockKind.PARAGRAPH,
    ]


def test_table_region_lead_is_header_and_delimiter() -> None:
    text = "Intro\n\n| a | b |\n|---|:-:|\n| 1 | 2 |\n| 3 | 4 |\n\nAfter\n"
    outline = parse_markdown(text)
    assert_invariants(outline)
    (region,) = outline.regions
    assert region.kind is RegionKind.TABLE
    assert region.lead == "| a | b |\n|---|:-:|\n"
    assert text[region.start : region.lead_end] == region.lead
    assert text[region.start : region.end] == "| a | b |\n|---|:-:|\n| 1 | 2 |\n| 3 | 4 |"
    assert (BlockKind.TABLE, text[region.start : region.end]) in spans(outline)


def test_table_inside_list_item() -> None:
    text = "1. Step\n\n   | a |\n   |---|\n   | 1 |\n2. Next\n"
    outline = parse_markdown(text)
    assert_invariants(outline)
    (region,) = outline.regions
    assert region.lead == "   | a |\n   |---|\n"
    assert [k for k, _ in spans(outline)] == [BlockKind.LIST_ITEM, BlockKind.LIST_ITEM]


def test_table_without_rows_at_end_of_text() -> None:
    text = "| a |\n|---|"
    outline = parse_markdown(text)
    assert_invariants(outline)
    (region,) = outline.regions
    assert region.lead == "| a |\n|---|\n"
    assert region.lead_end == region.end == len(text)


def test_crlf_offsets_index_the_original_text() -> None:
    lf = "---\ntitle: T\n---\n\n# Head\n\nPara one\nline two\n\n```sh\necho hi\n```\n\n- item\n"
    crlf = lf.replace("\n", "\r\n")
    outline = parse_markdown(crlf)
    assert_invariants(outline)
    assert outline.title == "T"
    assert crlf[outline.body_start :].startswith("\r\n# Head")
    assert spans(outline) == [
        (BlockKind.HEADING, "# Head"),
        (BlockKind.PARAGRAPH, "Para one\r\nline two"),
        (BlockKind.CODE, "```sh\r\necho hi\r\n```"),
        (BlockKind.LIST_ITEM, "- item"),
    ]
    (region,) = outline.regions
    assert region.lead == "```sh\r\n"
    # Same structure as the LF text, only the offsets move.
    assert [(k, s.replace("\r\n", "\n")) for k, s in spans(outline)] == spans(parse_markdown(lf))


def test_lone_cr_line_endings() -> None:
    text = "# A\r\rpara\rmore\r\r## B\r"
    outline = parse_markdown(text)
    assert_invariants(outline)
    assert [h.text for h in outline.headings] == ["A", "B"]
    assert spans(outline)[1] == (BlockKind.PARAGRAPH, "para\rmore")


@pytest.mark.parametrize(
    "text",
    [
        "<!--\n# Not a heading\n-->\n",
        "```\n# Not a heading\n```\n",
        "~~~md\n# Not a heading\n~~~\n",
        "    # Not a heading\n",
        "<div>\n# Not a heading\n</div>\n",
        "---\ntitle: x\n# Not a heading\n---\n",
    ],
)
def test_no_headings_in_code_comments_html_or_front_matter(text: str) -> None:
    outline = parse_markdown(text)
    assert_invariants(outline)
    assert outline.headings == ()
    assert outline.anchors == ()


def test_customer_intent_in_front_matter_is_not_a_heading() -> None:
    text = (
        "---\ntitle:  Real title  \nms.topic: how-to\n"
        "# Customer intent: As a developer, I want things.\n---\n\n# Heading\n"
    )
    outline = parse_markdown(text)
    assert_invariants(outline)
    assert outline.title == "Real title"
    assert outline.body_start == text.index("---\n\n# Heading") + len("---\n")
    assert [h.text for h in outline.headings] == ["Heading"]


@pytest.mark.parametrize(
    ("front_matter", "title", "warns"),
    [
        ("title: [unclosed\n", None, True),
        ("date: 2024-02-30\ntitle: x\n", None, True),
        ("title: 42\n", None, False),
        ("title: '   '\n", None, False),
        ("- a list\n", None, False),
        ("", None, False),
    ],
)
def test_front_matter_title_and_warnings(front_matter: str, title: str | None, warns: bool) -> None:
    text = f"---\n{front_matter}---\nBody\n"
    outline = parse_markdown(text)
    assert_invariants(outline)
    assert outline.title == title
    assert bool(outline.warnings) is warns
    assert all("front matter" in w for w in outline.warnings)
    assert spans(outline) == [(BlockKind.PARAGRAPH, "Body")]


def test_bom_without_front_matter_is_not_body() -> None:
    outline = parse_markdown("\ufeff# Title\n")
    assert_invariants(outline)
    assert outline.body_start == 1
    assert [(h.start, h.text) for h in outline.headings] == [(1, "Title")]


def test_list_items_are_blocks() -> None:
    text = (
        "- first\n  lazy? no, continuation\n"
        "- second\n\n  ```bash\n  az login\n  ```\n\n  - nested\n"
        "- third\nlazy continuation\n\n"
        "1. ordered\n2. ordered two\n"
    )
    outline = parse_markdown(text)
    assert_invariants(outline)
    assert spans(outline) == [
        (BlockKind.LIST_ITEM, "- first\n  lazy? no, continuation"),
        (BlockKind.LIST_ITEM, "- second\n\n  ```bash\n  az login\n  ```\n\n  - nested"),
        (BlockKind.LIST_ITEM, "- third\nlazy continuation"),
        (BlockKind.LIST_ITEM, "1. ordered"),
        (BlockKind.LIST_ITEM, "2. ordered two"),
    ]
    (region,) = outline.regions
    assert region.lead == "  ```bash\n"


def test_quote_and_note_are_one_block_and_nested_headings_stay_inside() -> None:
    text = "> [!NOTE]\n> A note.\n>\n> # Not an outline heading\n\n- # Nor this\n\n---\n"
    outline = parse_markdown(text)
    assert_invariants(outline)
    assert spans(outline) == [
        (BlockKind.QUOTE, "> [!NOTE]\n> A note.\n>\n> # Not an outline heading"),
        (BlockKind.LIST_ITEM, "- # Nor this"),
        (BlockKind.RULE, "---"),
    ]
    assert outline.headings == ()


def test_link_reference_definitions_get_a_block() -> None:
    text = "Para\n\n[ref]: https://example.com\n[other]: /x\n\n# After\n"
    outline = parse_markdown(text)
    assert_invariants(outline)
    assert spans(outline)[1] == (BlockKind.OTHER, "[ref]: https://example.com\n[other]: /x")


@pytest.mark.parametrize("ending", ["", "\n", "\n\n  \n"])
def test_unclosed_fence_at_end_of_text(ending: str) -> None:
    text = "Intro\n\n```py" + ending
    outline = parse_markdown(text)
    assert_invariants(outline)
    (region,) = outline.regions
    assert region.lead == "```py\n"
    assert region.start == text.index("```")
    assert region.end == region.lead_end == len(text.rstrip())

    text = "```py\nline 1\nline 2\n"
    (region,) = parse_markdown(text).regions
    assert (region.lead_end, region.end) == (len("```py\n"), len(text) - 1)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\ufeff",
        "\ud800",
        "# \ud800 heading\n\ud800",
        "\x00",
        "# \x00\n\x00 para",
        "\r",
        "\r\r\r# a\r",
        "\n\n\n",
        " \t \u3000\n",
        ">" * 10_000 + " deep\n",
        "\n".join(">" * depth + " x" for depth in range(2_000)),
        "- " * 10_000 + "x\n",
        "1. " * 10_000 + "x\n",
        "> - " * 5_000 + "x\n",
        "\n".join("  " * depth + "- x" for depth in range(500)),
        "# " + "*a " * 50_000,
        "# " + " ".join("`" * n for n in range(1, 1_000)),
        "# " + "[a](" * 50_000,
        "---\na: " + "[" * 5_000 + "\n---\n",
        "---\ntitle: \ud800\n---\n",
        "---",
        "---\n---",
        "---\ntitle: x\n...\n# y",
    ],
)
def test_never_raises_on_odd_input(text: str) -> None:
    assert_invariants(parse_markdown(text))


def test_large_document_parses() -> None:
    unit = read_source(FIXTURES / "upgrade-options.md")
    body = unit[unit.index("\n---\n") + len("\n---\n") :]
    text = unit + body * (2_000_000 // len(body))
    assert len(text) > 2_000_000
    outline = parse_markdown(text)
    assert_invariants(outline)
    assert len(outline.headings) == 44 * (1 + 2_000_000 // len(body))


# ---------------------------------------------------------------- properties

MARKDOWN_LINES = [
    "# Heading",
    "## Heading *em* `code` ##",
    "### [Azure CLI](#tab/azure-cli)",
    "#### Heading",
    "###### Deep",
    "Setext",
    "===",
    "---",
    "***",
    "```python",
    "```",
    "~~~",
    "    indented code",
    "  ```bash",
    "| a | b |",
    "|---|---|",
    "| 1 | 2 |",
    "- item",
    "  - nested item",
    "* star item",
    "1. first",
    "   continued",
    "> quote",
    "> [!NOTE]",
    ">",
    "> > nested",
    "<!-- comment",
    "-->",
    "<div>",
    "</div>",
    "[ref]: https://example.com",
    "title: x",
    "# Customer intent: x",
    "",
    "   ",
    "\t",
    "plain words here",
    "中文标题 文字",
    "emoji 🎉 text 👩‍💻",
]

line_text = st.one_of(
    st.sampled_from(MARKDOWN_LINES),
    st.text(alphabet=st.sampled_from(list("#>-*_`|[]()<!:=~ \tab1中🎉\u3000\x00")), max_size=12),
)
line_ending = st.sampled_from(["\n", "\n", "\n", "\r\n", "\r"])


@st.composite
def markdown_documents(draw: st.DrawFn) -> str:
    """Documents assembled from markdown-ish lines with mixed line endings."""
    lines = draw(st.lists(st.tuples(line_text, line_ending), max_size=40))
    text = "".join(line + ending for line, ending in lines)
    if draw(st.booleans()):
        text = text.rstrip("\r\n")
    return text


@settings(max_examples=300, deadline=None)
@given(markdown_documents())
def test_invariants_hold_on_generated_markdown(text: str) -> None:
    outline = parse_markdown(text)
    assert_invariants(outline)
    assert outline.source is text
    assert parse_markdown(text) == outline


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_invariants_hold_on_arbitrary_text(text: str) -> None:
    assert_invariants(parse_markdown(text))
