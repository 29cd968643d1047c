"""docfx containers: tab groups and zone pivots are scopes of a section, not sections."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking import ChunkOptions, Limits, Unit, chunk_document
from chunking.model import BlockKind
from chunking.outline.sections import SectionTree
from chunking.parse.markdown import markdown_it_parser
from chunking.parse.markdown.outline import parse_markdown
from tests.helpers import SECTION_PER_CHUNK, chunk_and_audit, embedded_content, paths_and_anchors
from tests.paths import FIXTURES
from tests.strategies import HEADING_WORDS

FIXTURES = FIXTURES / "markdown"
SMALL = ChunkOptions(limits=Limits(Unit.CHARACTERS, 300, 0), section_fill=SECTION_PER_CHUNK)
ROOMY = ChunkOptions(limits=Limits(Unit.CHARACTERS, 420, 0), section_fill=SECTION_PER_CHUNK)
"""Room for a `P:` paragraph under a long path, never for two (see `chunk_paths`)."""


def tree_paths(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """Each heading's text and its path in the section tree; both parsers must agree."""
    outline = parse_markdown(text)
    reference = parse_markdown(text, parser=markdown_it_parser.parse_blocks)
    assert outline.headings == reference.headings
    assert outline.blocks == reference.blocks
    tree = SectionTree.build(outline)
    return [(h.text, tree.names(tree.chain_at(h.start))) for h in outline.headings]


FILLER = ", words enough for a paragraph to fill a chunk of its own" + " and more" * 14 + "."


def chunk_paths(text: str, options: ChunkOptions | None = None) -> dict[str, tuple[str, ...]]:
    """The path of the chunk holding each paragraph that starts with `P:`.

    Each such line gets `FILLER`, so that no two share a chunk (whose path would be
    the sections' common parent).
    """
    lines = text.split("\n")
    text = "\n".join(line + FILLER if line.startswith("P:") else line for line in lines)
    document, audit = chunk_and_audit(text, options or SMALL)
    assert not audit.violations, audit.examples
    found: dict[str, tuple[str, ...]] = {}
    for chunk in document.chunks:
        for line in chunk.content.splitlines():
            if line.startswith("P:"):
                key = line.removesuffix(FILLER)
                assert key not in found, "a paragraph split across chunks"
                found[key] = chunk.headings
    return found


TABS = (
    "# Guide\n\nP: intro\n\n## Setup\n\nP: setup\n\n"
    "# [Ollama](#tab/ollama)\n\nP: ollama\n\n"
    "# [OpenAI](#tab/openai)\n\nP: openai\n\n"
    "---\n\nP: after the tabs\n\n"
    "## Usage\n\nP: usage\n"
)


def test_tab_labels_go_below_the_enclosing_section_and_the_path_comes_back() -> None:
    # The example: tab labels written as `#` no longer reset the path.
    assert chunk_paths(TABS) == {
        "P: intro": (),
        "P: setup": ("Setup",),
        "P: ollama": ("Setup", "Ollama"),
        "P: openai": ("Setup", "OpenAI"),
        "P: after the tabs": ("Setup",),
        "P: usage": ("Usage",),
    }


@pytest.mark.parametrize("level", range(1, 7))
def test_the_tab_heading_level_does_not_matter(level: int) -> None:
    text = TABS.replace("# [", "#" * level + " [")
    assert chunk_paths(text) == chunk_paths(TABS)


def test_headings_inside_a_tab_nest_below_its_label() -> None:
    text = (
        "## Setup\n\n### [CLI](#tab/cli)\n\n#### Install\n\nP: install\n\n##### Deep\n\nP: deep\n\n"
        "### [Portal](#tab/portal)\n\nP: portal\n\n---\n\n### Next\n\nP: next\n"
    )
    assert tree_paths(text) == [
        ("Setup", ("Setup",)),
        ("CLI", ("Setup", "CLI")),
        ("Install", ("Setup", "CLI", "Install")),
        ("Deep", ("Setup", "CLI", "Install", "Deep")),
        ("Portal", ("Setup", "Portal")),
        ("Next", ("Setup", "Next")),
    ]
    assert chunk_paths(text)["P: deep"] == ("Setup", "CLI", "Install", "Deep")


def test_a_tab_group_under_an_h6_nests_past_h6() -> None:
    text = "###### Six\n\n# [A](#tab/a)\n\n## Inner\n\nP: inner\n\n---\n\nP: six\n"
    outline = parse_markdown(text)
    six, tab, inner = (h.depth for h in outline.headings)
    assert (six, tab) == (6, 7)
    assert inner > tab
    assert chunk_paths(text) == {"P: inner": ("Six", "A", "Inner"), "P: six": ("Six",)}


def test_the_closing_rule_is_not_content() -> None:
    outline = parse_markdown(TABS)
    closing = TABS.index("---")
    markers = [b for b in outline.blocks if b.kind is BlockKind.MARKER]
    assert [(b.start, b.end) for b in markers] == [(closing, closing + 3)]
    document = chunk_document(TABS, options=SMALL)
    assert not [c for c in document.chunks if "---" in c.text]
    assert any("---" in c.content for c in document.chunks)  # the span still covers it
    # A chunk never begins with the marker: it ends the last tab.
    assert not [c for c in document.chunks if c.content.startswith("---")]


def test_a_zone_end_after_empty_sections_does_not_shorten_the_path() -> None:
    """Found by hypothesis (test_chunk_paths_match_a_reference_parse) in a CI run: a
    chunk of headings only (`## A`, a zone, `### B`, `#### C`) that ends with the zone's
    end marker had the path A › C# › B, as if the marker were content outside C's
    section. A marker is no content: the path is C's, as without the zone end."""
    text = (
        "# Title\n\nIntro words.\n\n## 0 n1\n\n"
        ':::zone pivot="programming-language-csharp"\n\n### 0 n3\n\n#### 0 n4\n\n:::zone-end\n'
    )
    chunked = chunk_document(text, options=ChunkOptions(limits=Limits(Unit.CHARACTERS, 300, 0)))
    assert chunked.chunks[-1].headings == ("0 n1", "C#", "0 n3", "0 n4")


def test_a_rule_outside_a_tab_group_stays_a_rule_and_stays_in_the_text() -> None:
    text = "## A\n\nOne.\n\n---\n\nTwo.\n"
    outline = parse_markdown(text)
    assert [b.kind for b in outline.blocks] == [
        BlockKind.HEADING,
        BlockKind.PARAGRAPH,
        BlockKind.RULE,
        BlockKind.PARAGRAPH,
    ]
    assert "---" in embedded_content(text, "markdown", 0, len(text))


def test_a_setext_underline_does_not_end_a_tab_group() -> None:
    # `text` + `---` is a setext h2 in CommonMark (and in docfx's markdig): a
    # heading inside the tab, not the group's end.
    text = "## S\n\n# [A](#tab/a)\n\nTitle here\n---\n\nP: inside\n\n---\n\nP: after\n"
    assert tree_paths(text) == [
        ("S", ("S",)),
        ("A", ("S", "A")),
        ("Title here", ("S", "A", "Title here")),
    ]
    assert chunk_paths(text) == {"P: inside": ("S", "A", "Title here"), "P: after": ("S",)}


def test_a_heading_at_the_tabs_level_is_tab_content_when_the_group_goes_on() -> None:
    # docfx: everything up to the `---` is tab content (azure-cli-endpoints.md has
    # `### Endpoint suffixes` in each `### [Public Cloud](#tab/...)` tab).
    text = (
        "## S\n\n### [A](#tab/a)\n\n### Sub\n\nP: a sub\n\n### [B](#tab/b)\n\n### Sub\n\n"
        "P: b sub\n\n---\n\n### T\n\nP: t\n"
    )
    assert [path for _, path in tree_paths(text)] == [
        ("S",),
        ("S", "A"),
        ("S", "A", "Sub"),
        ("S", "B"),
        ("S", "B", "Sub"),
        ("S", "T"),
    ]
    assert chunk_paths(text) == {
        "P: a sub": ("S", "A", "Sub"),
        "P: b sub": ("S", "B", "Sub"),
        "P: t": ("S", "T"),
    }


def test_headings_at_and_below_the_tabs_level_keep_their_nesting_in_a_tab() -> None:
    """Regression (found by `test_chunk_paths_match_a_reference_parse`): `## n3` and
    `### n4` inside a `##` tab were siblings."""
    text = "## n1\n\n## [n2](#tab/t2)\n\n## n3\n\n### n4\n\n---\n"
    assert [path for _, path in tree_paths(text)] == [
        ("n1",),
        ("n1", "n2"),
        ("n1", "n2", "n3"),
        ("n1", "n2", "n3", "n4"),
    ]


def test_a_heading_above_the_tabs_ends_a_group_without_its_rule() -> None:
    text = "## S\n\n### [A](#tab/a)\n\nP: a\n\n## T\n\nP: t\n\n---\n"
    assert [path for _, path in tree_paths(text)] == [("S",), ("S", "A"), ("T",)]


def test_a_heading_as_high_as_the_tabs_ends_a_group_without_its_rule() -> None:
    text = "## S\n\n### [A](#tab/a)\n\nP: a\n\n### [B](#tab/b)\n\nP: b\n\n### T\n\nP: t\n"
    assert tree_paths(text) == [
        ("S", ("S",)),
        ("A", ("S", "A")),
        ("B", ("S", "B")),
        ("T", ("S", "T")),
    ]


def test_dependent_tabs_name_their_condition() -> None:
    text = (
        "# [Linux](#tab/linux)\n\nL.\n\n# [Windows](#tab/windows)\n\nW.\n\n---\n\n"
        "# [.NET](#tab/dotnet/linux)\n\nN.\n\n# [.NET](#tab/dotnet/windows)\n\nM.\n\n"
        "# [REST](#tab/rest/other)\n\nR.\n\n---\n"
    )
    assert [path for _, path in tree_paths(text)] == [
        ("Linux",),
        ("Windows",),
        (".NET (Linux)",),
        (".NET (Windows)",),
        ("REST (other)",),
    ]


def test_tab_headings_have_no_anchor_so_chunks_link_to_the_section() -> None:
    text = "## Setup\n\nIntro.\n\n### [CLI](#tab/cli)\n\nRun it.\n\n---\n\n## CLI\n\nMore.\n"
    outline = parse_markdown(text)
    assert [(h.text, h.anchor) for h in outline.headings] == [
        ("Setup", "setup"),
        ("CLI", None),
        # The tab still takes its slug, as docfx's ids count every heading.
        ("CLI", "cli-1"),
    ]
    # The tab's chunk links to its section.
    assert paths_and_anchors(text) == [
        (("Setup",), "setup"),
        (("Setup", "CLI"), "setup"),
        (("CLI",), "cli-1"),
    ]


@pytest.mark.parametrize(
    "heading",
    [
        "## [A](#tab/a) and more",
        "## [A](https://example.com/#tab/a)",
        "## [A](#tab/a%20b)",
        "## Not [A](#tab/a)",
        "## [A](#tab/)",
    ],
)
def test_headings_that_are_not_tabs_stay_headings(heading: str) -> None:
    text = f"# Top\n\n## Section\n\n{heading}\n\nBody.\n\n---\n\n## Last\n\nEnd.\n"
    paths = tree_paths(text)
    assert paths[2][1] == ("Top", paths[2][0])
    outline = parse_markdown(text)
    assert [b.kind for b in outline.blocks].count(BlockKind.RULE) == 1


def test_a_tab_heading_inside_a_list_item_is_list_content() -> None:
    text = "## S\n\n1. Step\n\n   # [Bash](#tab/bash)\n\n   Run.\n\n   ---\n\n## T\n"
    assert tree_paths(text) == [("S", ("S",)), ("T", ("T",))]


ZONES = (
    "# Quickstart\n\nP: intro\n\n"
    '::: zone pivot="programming-language-csharp"\n\n## Prerequisites\n\nP: dotnet\n\n'
    "### Details\n\nP: csharp details\n\n::: zone-end\n\n"
    ':::zone pivot="programming-language-python"\n\n## Prerequisites\n\nP: pip\n\n:::zone-end\n\n'
    "## Next steps\n\nP: next\n"
)


def test_zones_give_their_pivot_to_the_path_and_it_comes_back_after() -> None:
    top = "Quickstart"
    assert tree_paths(ZONES) == [
        (top, (top,)),
        ("C#", (top, "C#")),
        ("Prerequisites", (top, "C#", "Prerequisites")),
        ("Details", (top, "C#", "Prerequisites", "Details")),
        ("Python", (top, "Python")),
        ("Prerequisites", (top, "Python", "Prerequisites")),
        ("Next steps", (top, "Next steps")),
    ]
    # The single leading h1 is the title, kept out of chunk paths.
    assert chunk_paths(ZONES) == {
        "P: intro": (),
        "P: dotnet": ("C#", "Prerequisites"),
        "P: csharp details": ("C#", "Prerequisites", "Details"),
        "P: pip": ("Python", "Prerequisites"),
        "P: next": ("Next steps",),
    }


def test_zone_markers_are_not_in_the_embedded_text() -> None:
    document = chunk_document(ZONES, options=SMALL)
    assert not [c for c in document.chunks if ":::" in c.text or "zone" in c.text]
    # Spans stay spans of the source, markers included.
    assert sum(":::" in c.content for c in document.chunks) >= 2


def test_a_zone_inside_a_section_nests_below_it() -> None:
    text = (
        "## Enable\n\nP: shared\n\n"
        ':::zone pivot="programming-language-go"\nP: go\n:::zone-end\n\n'
        "P: shared again\n\n## Other\n\nP: other\n"
    )
    # The markers sit inside one paragraph (no blank lines): they still count.
    assert tree_paths(text) == [
        ("Enable", ("Enable",)),
        ("Go", ("Enable", "Go")),
        ("Other", ("Other",)),
    ]
    assert chunk_paths(text) == {
        "P: shared": ("Enable",),
        "P: go": ("Enable", "Go"),
        "P: shared again": ("Enable",),
        "P: other": ("Other",),
    }


@pytest.mark.parametrize(
    ("marker", "label"),
    [
        ('::: zone pivot="azure-cli"', "Azure CLI"),
        (':::zone target="docs" pivot="azure-portal"', "Azure portal"),
        (":::zone pivot='azure-powershell'", "Azure PowerShell"),
        ('::: zone pivot="azure-cli, terraform"', "Azure CLI, Terraform"),
        ('::: zone pivot="cluster-scope" :::', "Cluster scope"),
        ('::: zone pivot="programming-language-javascript"', "JavaScript"),
    ],
)
def test_pivot_labels_read_as_words(marker: str, label: str) -> None:
    text = f"## S\n\n{marker}\n\nBody.\n\n::: zone-end\n"
    assert tree_paths(text) == [("S", ("S",)), (label, ("S", label))]


def test_a_target_only_zone_has_no_label_and_its_markers_no_text() -> None:
    text = '## S\n\n::: zone target="docs"\n\nFor the web.\n\n::: zone-end\n\nP: after\n'
    assert tree_paths(text) == [("S", ("S",))]
    assert embedded_content(text, "markdown", 0, len(text)).split() == [
        "##",
        "S",
        "For",
        "the",
        "web.",
        "P:",
        "after",
    ]


@pytest.mark.parametrize(
    "text",
    [
        '## S\n\n```md\n::: zone pivot="azure-cli"\n```\n\nBody.\n',
        '## S\n\n<!--\n::: zone pivot="azure-cli"\n-->\n\nBody.\n',
        '## S\n\n    ::: zone pivot="azure-cli"\n\nBody.\n',
        '## S\n\n::: zonely pivot="azure-cli"\n\nBody.\n',
    ],
)
def test_zone_markers_in_code_comments_or_indented_are_text(text: str) -> None:
    assert tree_paths(text) == [("S", ("S",))]


def test_an_unclosed_zone_ends_at_the_next_zone() -> None:
    text = (
        ':::zone pivot="python"\n\nP: py\n\n:::zone pivot="go"\n\nP: go\n\n:::zone-end\n\nP: end\n'
    )
    assert chunk_paths(text) == {"P: py": ("Python",), "P: go": ("Go",), "P: end": ()}


def test_a_stray_zone_end_is_ignored() -> None:
    text = "## S\n\n:::zone-end\n\nP: s\n\n## T\n\nP: t\n"
    assert chunk_paths(text) == {"P: s": ("S",), "P: t": ("T",)}


def test_tabs_inside_a_zone_end_with_it() -> None:
    text = (
        "## S\n\n"
        ':::zone pivot="programming-language-python"\n\n'
        "# [Bash](#tab/bash)\n\nP: bash\n\n# [PowerShell](#tab/powershell)\n\nP: pwsh\n\n"
        ":::zone-end\n\nP: s\n"
    )
    assert chunk_paths(text) == {
        "P: bash": ("S", "Python", "Bash"),
        "P: pwsh": ("S", "Python", "PowerShell"),
        "P: s": ("S",),
    }


# A connector page in the Semantic Kernel style (written for this test, after the
# layout of learn.microsoft.com/semantic-kernel connector pages): shared `##`
# sections, then zones that hold `##` sections of their own per language.
KERNEL_PAGE = (
    "# Using the Hotel Search connector\n\nP: page intro\n\n"
    "## Overview\n\nP: overview\n\n"
    "## Limitations\n\nP: limitations\n\n"
    '::: zone pivot="programming-language-csharp"\n\n'
    "## Getting started\n\nP: csharp getting started\n\n"
    "### Dependency injection\n\nP: csharp injection\n\n"
    "## Data mapping\n\nP: csharp mapping\n\n"
    "::: zone-end\n"
    '::: zone pivot="programming-language-python"\n\n'
    "## Getting started\n\nP: python getting started\n\n"
    "## Serialization\n\nP: python serialization\n\n"
    "::: zone-end\n"
    '::: zone pivot="programming-language-java"\n::: zone-end\n\n'
    "## Search options\n\nP: search options\n\n"
    '::: zone pivot="programming-language-csharp"\n\nP: csharp options\n\n'
    "### Filters\n\nP: csharp filters\n\n::: zone-end\n\n"
    "## Next steps\n\nP: next\n"
)


def test_a_heading_inside_a_zone_closes_the_sections_of_its_level() -> None:
    # Issue 28, item 8: `## Getting started` inside a zone opened under `## Limitations`
    # read `Limitations › C# › Getting started`; the page shows it as a sibling of
    # `Limitations`, and the zone stays on the path of what it holds.
    assert chunk_paths(KERNEL_PAGE, ROOMY) == {
        "P: page intro": (),
        "P: overview": ("Overview",),
        "P: limitations": ("Limitations",),
        "P: csharp getting started": ("C#", "Getting started"),
        "P: csharp injection": ("C#", "Getting started", "Dependency injection"),
        "P: csharp mapping": ("C#", "Data mapping"),
        "P: python getting started": ("Python", "Getting started"),
        "P: python serialization": ("Python", "Serialization"),
        "P: search options": ("Search options",),
        # A zone of deeper headings still nests below the section it is in.
        "P: csharp options": ("Search options", "C#"),
        "P: csharp filters": ("Search options", "C#", "Filters"),
        "P: next": ("Next steps",),
    }


def test_a_zone_closes_only_the_sections_its_headings_close() -> None:
    text = (
        "# Agents\n\n## Orchestration\n\nP: orchestration\n\n### Sequential\n\nP: sequential\n\n"
        ':::zone pivot="programming-language-python"\n\nP: python before\n\n'
        "### Concurrent\n\nP: python concurrent\n\n#### Results\n\nP: results\n\n"
        ":::zone-end\n\n### Handoff\n\nP: handoff\n"
    )
    # `### Concurrent` closes `Sequential`, not `Orchestration`; the zone's text before
    # it is the zone's, under what the zone's headings leave open.
    assert chunk_paths(text, ROOMY) == {
        "P: orchestration": ("Orchestration",),
        "P: sequential": ("Orchestration", "Sequential"),
        "P: python before": ("Orchestration", "Python"),
        "P: python concurrent": ("Orchestration", "Python", "Concurrent"),
        "P: results": ("Orchestration", "Python", "Concurrent", "Results"),
        "P: handoff": ("Orchestration", "Handoff"),
    }


def test_headings_of_a_tab_group_inside_a_zone_close_nothing_outside_it() -> None:
    text = (
        "## Install\n\nP: install\n\n"
        ':::zone pivot="programming-language-python"\n\n'
        "# [Bash](#tab/bash)\n\n## Steps\n\nP: bash steps\n\n---\n\n"
        ":::zone-end\n\n## Use\n\nP: use\n"
    )
    assert chunk_paths(text, ROOMY) == {
        "P: install": ("Install",),
        "P: bash steps": ("Install", "Python", "Bash", "Steps"),
        "P: use": ("Use",),
    }


def test_fixture_zone_holding_h2_sections_is_a_sibling_of_the_section_before() -> None:
    path = FIXTURES / "dialects" / "docfx-af-workflows-observability.md"
    outline = parse_markdown(path.read_text(encoding="utf-8"))
    tree = SectionTree.build(outline)
    paths = {tree.names(tree.chain_at(h.start))[1:] for h in outline.headings}
    # Its last zone (Go) opens under `## Telemetry Configuration` and holds
    # `## Workflow observability`.
    assert ("Go", "Workflow observability", "Enable workflow tracing") in paths
    assert not [p for p in paths if p[:2] == ("Telemetry Configuration", "Go") and len(p) > 2]


ROWS = (
    '## Zoom\n\n:::row:::\n:::column span="":::\nP: left\n:::column-end:::\n'
    ':::column span="2":::\nP: right\n:::column-end:::\n:::row-end:::\n\n## Next\n\nP: next\n'
)


def test_rows_and_columns_are_markers_only() -> None:
    assert chunk_paths(ROWS) == {"P: left": ("Zoom",), "P: right": ("Zoom",), "P: next": ("Next",)}
    plain = embedded_content(ROWS, "markdown", 0, len(ROWS))
    assert ":::" not in plain
    assert "P: left" in plain
    assert "P: right" in plain


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_markers_are_left_out_whatever_the_line_endings(newline: str) -> None:
    text = (ZONES + ROWS).replace("\n", newline)
    document = chunk_document(text, options=SMALL)
    assert [c.headings for c in document.chunks] == [
        c.headings for c in chunk_document(ZONES + ROWS, options=SMALL).chunks
    ]
    embedded = "".join(c.text for c in document.chunks)
    assert ":::" not in embedded
    assert embedded.count("P: ") == (ZONES + ROWS).count("P: ")


def test_alerts_in_tabs_keep_their_label() -> None:
    text = "## S\n\n# [A](#tab/a)\n\n> [!NOTE]\n> Mind the gap.\n\n---\n"
    document = chunk_document(text, options=SMALL)
    assert [c.headings for c in document.chunks] == [("S", "A")]
    assert "> NOTE:\n> Mind the gap." in document.chunks[0].text


def test_a_chunk_across_the_end_of_a_group_has_the_enclosing_path() -> None:
    # No boundary of its own where a group ends: content after it is often a line
    # ("Learn more..."), which would else start a chunk and pull the next section in.
    body = "Words of the tab go here. " * 3
    text = f"## S\n\n### [A](#tab/a)\n\n{body}\n\n---\n\nBack in S.\n\n## T\n\n{body}\n"
    options = ChunkOptions(limits=Limits(Unit.CHARACTERS, 400, 0), section_fill=SECTION_PER_CHUNK)
    document = chunk_document(text, options=options)
    assert [c.headings for c in document.chunks] == [("S",), ("T",)]
    assert document.chunks[0].content.endswith("Back in S.")


def test_section_tree_ends_a_container_at_its_section_end() -> None:
    outline = parse_markdown(TABS)
    tree = SectionTree.build(outline)
    texts = [h.text for h in outline.headings]
    openai = texts.index("OpenAI")
    after = TABS.index("P: after")
    assert tree.ends[openai] == after
    assert tree.ends[texts.index("Setup")] == TABS.index("## Usage")
    assert tree.names(tree.chain_at(after)) == ("Guide", "Setup")


def test_documents_without_docfx_markup_are_untouched() -> None:
    text = "# A\n\n## B [link](#b)\n\nx ::: y\n\n---\n\n### C\n"
    outline = parse_markdown(text)
    assert [h.depth for h in outline.headings] == [1, 2, 3]
    assert all(h.section_end is None for h in outline.headings)
    assert BlockKind.MARKER not in {b.kind for b in outline.blocks}


def test_fixture_tab_pages_keep_their_sections() -> None:
    path = FIXTURES / "dialects" / "docfx-af-hosting-azure-functions.md"
    text = path.read_text(encoding="utf-8")
    document = chunk_document(text, options=SMALL, file_name=path.name)
    paths = {chunk.headings for chunk in document.chunks}
    tutorial = "Tutorial: Create and run a durable agent with Azure Functions"
    assert (tutorial, "Test the agent locally", "Start a new conversation", "Bash") in paths
    assert (tutorial, "Prerequisites", "C#") in paths
    assert (tutorial, "Prerequisites", "Python") in paths
    # Before: the `# [Bash](#tab/bash)` tabs were h1s, and every later section sat
    # under the last of them (`PowerShell › Next steps`).
    assert not [p for p in paths if p and p[0] in {"Bash", "PowerShell"}]
    assert ("Next steps",) in paths
    zone_lines = [
        line
        for chunk in document.chunks
        for line in chunk.text.splitlines()
        if line.lstrip().startswith((":::zone", "::: zone"))
    ]
    assert not zone_lines


# ---------------------------------------------------------------- properties

PIVOTS = [
    ("programming-language-csharp", "C#"),
    ("azure-cli", "Azure CLI"),
    ("python", "Python"),
    ("cluster-scope", "Cluster scope"),
]


@dataclass(frozen=True)
class Element:
    """A generated block: its span, the heading path a reference parse gives it."""

    start: int
    end: int
    path: tuple[tuple[str, int], ...]
    """Names with a number each: two zones of one pivot are two sections."""
    glued: bool
    """A heading or container end marker: a chunk that begins with it is about what follows."""


class _Writer:
    """Builds a document and, block by block, the path each block has by docfx's rules."""

    def __init__(self) -> None:
        self.text = ""
        self.elements: list[Element] = []
        self.count = 0

    def add(self, block: str, path: tuple[tuple[str, int], ...], *, glued: bool = False) -> None:
        if self.text:
            self.text += "\n\n"
        self.elements.append(Element(len(self.text), len(self.text) + len(block), path, glued))
        self.text += block

    def name(self, words: list[str]) -> tuple[str, int]:
        """A section's name and number."""
        self.count += 1
        return f"{' '.join(words)} n{self.count}", self.count

    def heading(self, depth: int, name: tuple[str, int], form: str) -> str:
        text, number = name
        if form == "raw":
            return f'<h{depth} id="raw{number}">{text}</h{depth}>'
        return f"{'#' * depth} {text}{form % number if form else ''}"


SectionPath = tuple[tuple[str, int], ...]


def _nest(
    stack: list[tuple[int, tuple[str, int]]], depth: int, name: tuple[str, int]
) -> SectionPath:
    """Open a heading in a plain markdown section stack; its path."""
    while stack and stack[-1][0] >= depth:
        stack.pop()
    stack.append((depth, name))
    return tuple(entry for _, entry in stack)


HEADING_FORM = st.sampled_from(["", "", " {#id%d}", " {: #attr%d}", "raw"])
INNER = st.lists(
    st.one_of(
        st.tuples(st.just("heading"), st.integers(2, 6), HEADING_WORDS, HEADING_FORM),
        st.tuples(st.just("para"), st.integers(1, 30)),
    ),
    max_size=4,
)
TOP = st.lists(
    st.one_of(
        st.tuples(st.just("heading"), st.integers(2, 6), HEADING_WORDS, HEADING_FORM),
        st.tuples(st.just("para"), st.integers(1, 30)),
        st.tuples(
            st.just("tabs"),
            st.integers(1, 6),
            st.lists(st.tuples(HEADING_WORDS, INNER), min_size=1, max_size=3),
        ),
        st.tuples(st.just("zone"), st.sampled_from(PIVOTS), st.booleans(), INNER),
    ),
    min_size=1,
    max_size=10,
)


def _inner(writer: _Writer, items: list[Any], base: SectionPath, floor: int) -> SectionPath:
    """Blocks inside a tab or zone: headings nest below the label; the path at the end."""
    stack: list[tuple[int, tuple[str, int]]] = []
    path = base
    for item in items:
        if item[0] == "heading":
            _, depth, words, form = item
            if depth < floor:
                continue  # above the tabs: it would end the group
            name = writer.name(words)
            path = base + _nest(stack, depth, name)
            writer.add(writer.heading(depth, name, form), path, glued=True)
        else:
            writer.add("Words here. " * item[1], path)
    return path


@st.composite
def docfx_documents(draw: st.DrawFn) -> tuple[str, list[Element]]:
    """A docfx page of sections, tab groups and zone pivots, and each block's path."""
    writer = _Writer()
    writer.add("# Title", (), glued=True)
    writer.add("Intro words.", ())
    stack: list[tuple[int, tuple[str, int]]] = []
    items: list[Any] = draw(TOP)
    for item in items:
        here = tuple(entry for _, entry in stack)
        if item[0] == "heading":
            _, depth, words, form = item
            name = writer.name(words)
            writer.add(writer.heading(depth, name, form), _nest(stack, depth, name), glued=True)
        elif item[0] == "para":
            writer.add("Some words. " * item[1], here)
        elif item[0] == "tabs":
            _, level, tabs = item
            path = here
            for words, inner in tabs:
                label = writer.name(words)
                tab = f"{'#' * level} [{label[0]}](#tab/t{label[1]})"
                writer.add(tab, (*here, label), glued=True)
                path = _inner(writer, inner, (*here, label), level)
            writer.add("---", path, glued=True)
        else:
            _, (pivot, words), spaced, inner = item
            # The zone's headings close the sections of their level or deeper, from
            # its start: its label takes the first one's place.
            levels = [entry[1] for entry in inner if entry[0] == "heading"]
            while levels and stack and stack[-1][0] >= min(levels):
                stack.pop()
            here = tuple(entry for _, entry in stack)
            writer.count += 1
            label = (words, writer.count)
            space = " " if spaced else ""
            writer.add(f':::{space}zone pivot="{pivot}"', (*here, label), glued=True)
            path = _inner(writer, inner, (*here, label), 1)
            writer.add(f":::{space}zone-end", path, glued=True)
    return writer.text + "\n", writer.elements


def _common(paths: list[SectionPath]) -> tuple[str, ...]:
    """The names of the longest path all of `paths` begin with."""
    common = paths[0]
    for path in paths[1:]:
        size = 0
        while size < min(len(common), len(path)) and common[size] == path[size]:
            size += 1
        common = common[:size]
    return tuple(name for name, _ in common)


def _is_marker(block: str) -> bool:
    return block == "---" or block.endswith("zone-end")


@settings(max_examples=150, deadline=None)
@given(docfx_documents(), st.integers(300, 900))
def test_chunk_paths_match_a_reference_parse(
    document: tuple[str, list[Element]], limit: int
) -> None:
    text, elements = document
    chunked, audit = chunk_and_audit(text, ChunkOptions(limits=Limits(Unit.CHARACTERS, limit, 0)))
    assert not audit.violations, audit.examples
    for chunk in chunked.chunks:
        # Markers are not in the embedded text the chunks are planned on: no content.
        inside = [
            e
            for e in elements
            if e.start < chunk.end and e.end > chunk.start and not _is_marker(text[e.start : e.end])
        ]
        # Leading markers are skipped when content follows them, and so is a leading
        # heading whose section holds what follows; an empty section's heading stays, so
        # the path is the common parent (issue 14, item 10).
        while len(inside) > 1 and inside[0].glued and inside[0].start >= chunk.start:
            first = inside[0]
            if not _is_marker(text[first.start : first.end]):
                following = next(
                    (e for e in inside[1:] if not _is_marker(text[e.start : e.end])), None
                )
                if following is None or following.path[: len(first.path)] != first.path:
                    break
            inside.pop(0)
        assert chunk.headings == _common([e.path for e in inside]), (chunk.start, chunk.end)


def test_two_empty_sections_packed_together_take_their_common_parent() -> None:
    """Found by the reference-parse property once the empty-sections rule (issue 14,
    item 10) met the docfx reference: a chunk of two empty sections is under neither."""
    text = "# Title\n\nIntro words.\n\n## 0 n1\n\n## 0 n2\n"
    chunked, audit = chunk_and_audit(text, ChunkOptions(limits=Limits(Unit.CHARACTERS, 300, 0)))
    assert not audit.violations
    assert [chunk.headings for chunk in chunked.chunks if "## 0 n1" in chunk.content] == [()]
