"""Layout- and Split-compatible outputs: `sections` per chunk, `markdownHeaderDepth`, and
the Split skill's `offsets`, `lengths` and `ordinalPositions` next to `textItems`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking import Unit
from skills.skill.chunk_records import chunk_record, heading_levels
from skills.skill.contract import InputRecord
from skills.skill.render import record_data
from skills.skill.settings import Settings, SettingsError, load_settings
from tests.conftest import function_app_with, skill_body

if TYPE_CHECKING:
    from collections.abc import Mapping

    from skills.skill.records import OutputRecord
    from tests.conftest import FunctionCaller

CHARACTERS = Settings(unit=Unit.CHARACTERS, maximum_page_length=300, page_overlap_length=0)
LEVELS = [f"h{level}" for level in range(1, 7)]

SKIPPED = """# Guide

Intro to the guide, long enough to be its own chunk with a few more words in it.
It fills three quarters of the room, so the next heading starts a chunk of its own.
That is how sections stay apart: a heading ends a chunk that is this full.

### Deep

Text under a heading two levels down, with no h2 between it and the title.
"""

FILLER = "Each section says enough to need a chunk of its own, " * 3
NESTED = "".join(
    f"{'#' * level} {name}\n\n{FILLER}under {name} only.\n\n"
    for level, name in enumerate("ABCD", start=1)
)


def answer(data: object, settings: Settings = CHARACTERS) -> OutputRecord:
    return chunk_record(InputRecord(record_id="r1", data=data), settings)


def chunks_of(record: OutputRecord) -> list[dict[str, Any]]:
    assert record.errors == ()
    chunks = record_data(record)["chunks"]
    assert isinstance(chunks, list)
    return chunks


def sections_by_content(record: OutputRecord) -> dict[str, dict[str, str]]:
    return {chunk["content"].split()[-2]: chunk["sections"] for chunk in chunks_of(record)}


def test_a_skipped_level_is_empty_and_the_title_h1_is_h1() -> None:
    chunks = chunks_of(answer({"text": SKIPPED, "format": "markdown"}))
    deep = next(chunk for chunk in chunks if chunk["headings"] == ["Deep"])
    assert deep["title"] == "Guide"
    assert deep["sections"] == {"h1": "Guide", "h2": "", "h3": "Deep", "h4": "", "h5": "", "h6": ""}
    intro = next(chunk for chunk in chunks if chunk["headings"] == [])
    assert intro["sections"] == dict.fromkeys(LEVELS, "") | {"h1": "Guide"}


def test_depth_h2_keeps_two_keys_and_deeper_headings_roll_into_h2() -> None:
    record = answer({"text": NESTED, "format": "markdown", "markdownHeaderDepth": "h2"})
    found = sections_by_content(record)
    assert found["A"] == {"h1": "A", "h2": ""}
    assert found["B"] == {"h1": "A", "h2": "B"}
    assert found["C"] == {"h1": "A", "h2": "B"}
    assert found["D"] == {"h1": "A", "h2": "B"}


def test_depth_only_changes_sections() -> None:
    deep = answer({"text": NESTED, "format": "markdown"})
    shallow = answer({"text": NESTED, "format": "markdown", "markdownHeaderDepth": "H1"})
    for one, other in zip(chunks_of(deep), chunks_of(shallow), strict=True):
        assert set(other["sections"]) == {"h1"}
        assert {**one, "sections": None} == {**other, "sections": None}
    assert {k: v for k, v in record_data(deep).items() if k != "chunks"} == {
        k: v for k, v in record_data(shallow).items() if k != "chunks"
    }


LAYOUT_PAGES = (
    "## Benefits\n\nCoverage starts on the first day of the month after you join.\n\n"
    '<!-- PageFooter="Handbook" -->\n<!-- PageNumber="1" -->\n<!-- PageBreak -->\n\n'
    "## Leave\n\nYou get twenty days of paid leave a year, more after five years.\n"
)
"""Layout markdown with no H1: the document has no title of its own."""


def test_layout_chained_markdown_keeps_the_title_the_guide_maps_and_none_without_it() -> None:
    """docs/guide/layout-chaining.md maps `title` from metadata_storage_name: the title is
    the file name as before; with only `fileName` the file name is no longer a title."""
    titled = chunks_of(
        answer({"text": LAYOUT_PAGES, "title": "handbook.pdf", "fileName": "handbook.pdf"})
    )
    assert {chunk["title"] for chunk in titled} == {"handbook.pdf"}
    assert [chunk["text"][:25] for chunk in titled] == ["handbook.pdf\n\n## Benefits"]
    untitled = chunks_of(answer({"text": LAYOUT_PAGES, "fileName": "handbook.pdf"}))
    # One chunk holds both sections: its path is their common parent, so no prefix.
    assert [(chunk["title"], chunk["text"][:12]) for chunk in untitled] == [("", "## Benefits\n")]


def test_a_given_title_that_is_no_heading_is_not_a_section() -> None:
    text = "## Only\n\nSome words under the only heading."
    (chunk,) = chunks_of(answer({"text": text, "format": "markdown", "title": "Given"}))
    assert chunk["title"] == "Given"
    assert chunk["sections"] == dict.fromkeys(LEVELS, "") | {"h2": "Only"}


def test_headings_beyond_h6_roll_into_h6() -> None:
    assert heading_levels(((1, "A"), (6, "F"), (7, "Tab")), 6) == ("A", "", "", "", "", "F")
    assert heading_levels((), 3) == ("", "", "")


@pytest.mark.parametrize("value", ["h0", "h7", "3", 3, "deep"])
def test_a_bad_depth_is_a_record_error_naming_the_allowed_values(value: object) -> None:
    record = answer({"text": NESTED, "markdownHeaderDepth": value})
    assert record_data(record) == {}
    (error,) = record.errors
    assert "'markdownHeaderDepth' must be one of h1, h2, h3, h4, h5, h6" in error


def test_the_app_setting_sets_the_default_and_a_record_overrides_it() -> None:
    configured = load_settings({"CHUNK_MARKDOWN_HEADER_DEPTH": "h3", "CHUNK_UNIT": "characters"})
    assert configured.markdown_header_depth == 3
    (chunk, *_) = chunks_of(answer({"text": NESTED, "format": "markdown"}, configured))
    assert list(chunk["sections"]) == ["h1", "h2", "h3"]
    (chunk, *_) = chunks_of(
        answer({"text": NESTED, "format": "markdown", "markdownHeaderDepth": "h5"}, configured)
    )
    assert list(chunk["sections"]) == LEVELS[:5]
    with pytest.raises(SettingsError, match="CHUNK_MARKDOWN_HEADER_DEPTH must be one of h1"):
        load_settings({"CHUNK_MARKDOWN_HEADER_DEPTH": "h9"})


def check_parallel(data: Mapping[str, Any], source: str) -> None:
    chunks, items = data["chunks"], data["textItems"]
    n = len(chunks)
    assert len(items) == len(data["offsets"]) == len(data["lengths"]) == n
    assert data["ordinalPositions"] == list(range(1, n + 1))
    for chunk, item, offset, length in zip(
        chunks, items, data["offsets"], data["lengths"], strict=True
    ):
        assert item == chunk["text"]
        assert offset == chunk["offset"]
        assert length == chunk["length"]
        start = offset["codePoint"]
        assert source[start : start + length["codePoint"]] == chunk["content"]
        assert offset["utf16"] == len(source[:start].encode("utf-16-le")) // 2


def test_split_arrays_are_parallel_to_text_items_and_match_chunk_offsets() -> None:
    text = NESTED.replace("under C", "unter Ü 😀 C")
    record = answer({"text": text, "format": "markdown"})
    assert len(chunks_of(record)) >= 4
    check_parallel(record_data(record), text)


HEADING_TEXT = st.text(alphabet="abcdefgh", min_size=1, max_size=6)
DOCUMENTS = st.lists(
    st.tuples(st.integers(min_value=1, max_value=6), HEADING_TEXT, st.booleans()),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(DOCUMENTS, st.integers(min_value=1, max_value=6))
def test_sections_follow_the_heading_path(parts: list[tuple[int, str, bool]], depth: int) -> None:
    text = "\n\n".join(
        f"{'#' * level} {name}\n\n" + ("Words here. " * 30 if long else "Some words.")
        for level, name, long in parts
    )
    record = answer({"text": text, "format": "markdown", "markdownHeaderDepth": f"h{depth}"})
    full = answer({"text": text, "format": "markdown"})
    check_parallel(record_data(record), text)
    for chunk, whole in zip(chunks_of(record), chunks_of(full), strict=True):
        sections = chunk["sections"]
        assert list(sections) == LEVELS[:depth]
        # At depth h6 the non-empty values are the path, the title heading first if any.
        path = [value for value in whole["sections"].values() if value]
        assert path[len(path) - len(chunk["headings"]) :] == chunk["headings"]
        assert len(path) - len(chunk["headings"]) in (0, 1)
        levels = [level for level in LEVELS if whole["sections"][level]]
        assert [sections[level] for level in levels if level in sections] == [
            whole["sections"][level] for level in levels if int(level[1:]) <= depth
        ]
        assert all(sections[level] == "" for level in sections if level not in levels)


def test_the_endpoint_returns_sections_and_split_arrays(call_function: FunctionCaller) -> None:
    app = function_app_with(CHARACTERS)
    values: list[dict[str, object]] = [
        {"recordId": "a", "data": {"text": SKIPPED, "markdownHeaderDepth": "h3"}}
    ]
    response = call_function(
        app, "POST", "/api/chunk", skill_body(values), {"content-type": "application/json"}
    )
    assert response.status_code == 200
    (value,) = json.loads(response.get_body())["values"]
    assert value["errors"] == []
    data = value["data"]
    check_parallel(data, SKIPPED)
    assert [chunk["sections"] for chunk in data["chunks"]] == [
        {"h1": "Guide", "h2": "", "h3": ""},
        {"h1": "Guide", "h2": "", "h3": "Deep"},
    ]


def test_a_docfx_tab_below_h6_rolls_into_h6() -> None:
    # The tab label nests at depth 7 and its heading at 8: both belong to the h6 section.
    text = "###### Six\n\n# [A](#tab/a)\n\n## Inner\n\nP: inner\n\n---\n\nP: six\n"
    chunks = chunks_of(answer({"text": text, "format": "markdown", "fileName": "a.md"}))
    inner = next(chunk for chunk in chunks if "P: inner" in chunk["content"])
    assert inner["sections"] == dict.fromkeys(LEVELS, "") | {"h6": "Six"}
    assert "Six" in inner["headings"]
