"""One record in, one answer out: chunk objects, Split-skill offsets, warnings and errors."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chunking import Unit
from skills.skill.chunk_records import chunk_record, measure_positions
from skills.skill.contract import InputRecord
from skills.skill.library import chunk_records
from skills.skill.records import Measure, OutputRecord
from skills.skill.render import record_data
from skills.skill.service import answer_chunk_request
from skills.skill.settings import Settings, SettingsError

CHUNK_KEYS = {
    "content",
    "text",
    "readerText",
    "title",
    "headings",
    "sections",
    "ordinal",
    "offset",
    "length",
    "anchor",
    "url",
    "size",
    "id",
    "pageNumberFrom",
    "pageNumberTo",
}
MEASURE_KEYS = {"utf8", "utf16", "codePoint"}

DOCUMENT = """# Guide

Intro to the guide. It has a few sentences. Each one is short, but together they
take up enough room that the next section cannot share a chunk with this one.

## Install

Run the installer. Then restart. Überall grüßt 😀 der Installer, und zwar sehr
freundlich. Wer ihn nicht sieht, startet ihn noch einmal und liest die Meldungen.

## Use

Open the app and press the big button. The app shows a list of documents; pick
one, read it, and close the app again when you are done with your work for today.
"""

CHARACTERS = Settings(unit=Unit.CHARACTERS, maximum_page_length=300, page_overlap_length=0)


def answer(data: object, settings: Settings = CHARACTERS) -> OutputRecord:
    return chunk_record(InputRecord(record_id="r1", data=data), settings)


def chunks_of(record: OutputRecord) -> list[dict[str, Any]]:
    assert record.errors == ()
    chunks = record_data(record)["chunks"]
    assert isinstance(chunks, list)
    return chunks


def test_chunks_have_the_projection_shape_and_text_items_follow_them() -> None:
    record = answer({"text": DOCUMENT, "url": "https://docs.test/guide.md#old"})
    chunks = chunks_of(record)
    assert len(chunks) >= 2
    assert set(record_data(record)) == {
        "chunks",
        "textItems",
        "offsets",
        "lengths",
        "ordinalPositions",
    }
    assert record_data(record)["textItems"] == [chunk["text"] for chunk in chunks]
    for ordinal, chunk in enumerate(chunks):
        assert set(chunk) == CHUNK_KEYS
        assert set(chunk["offset"]) == MEASURE_KEYS
        assert set(chunk["length"]) == MEASURE_KEYS
        assert chunk["ordinal"] == ordinal
        assert chunk["title"] == "Guide"
        assert isinstance(chunk["headings"], list)
        assert chunk["content"] in chunk["text"]
        assert chunk["readerText"].endswith(chunk["content"])
        assert isinstance(chunk["id"], str)
        assert chunk["id"]
        assert 0 < chunk["size"] <= 300
        if chunk["anchor"] is not None:
            assert chunk["url"].startswith("https://docs.test/guide.md#")
            assert "#old" not in chunk["url"]
    assert any(chunk["headings"] == ["Install"] for chunk in chunks)
    assert any(chunk["url"] == f"https://docs.test/guide.md#{chunk['anchor']}" for chunk in chunks)


def test_offsets_are_the_split_skill_measures_of_the_content() -> None:
    chunks = chunks_of(answer({"text": DOCUMENT, "format": "markdown"}))
    utf8 = DOCUMENT.encode("utf-8")
    utf16 = DOCUMENT.encode("utf-16-le")
    for chunk in chunks:
        offset, length = chunk["offset"], chunk["length"]
        start, size = offset["codePoint"], length["codePoint"]
        assert DOCUMENT[start : start + size] == chunk["content"]
        assert utf8[offset["utf8"] : offset["utf8"] + length["utf8"]].decode() == chunk["content"]
        begin, count = 2 * offset["utf16"], 2 * length["utf16"]
        assert utf16[begin : begin + count].decode("utf-16-le") == chunk["content"]
    assert any(chunk["offset"]["utf8"] != chunk["offset"]["codePoint"] for chunk in chunks[1:])


@given(st.text(), st.lists(st.integers(min_value=0, max_value=1000)))
def test_measure_positions_matches_encoding_each_prefix(text: str, raw: list[int]) -> None:
    positions = [position % (len(text) + 1) for position in raw]
    measures = measure_positions(text, positions)
    for position in positions:
        prefix = text[:position]
        assert measures[position] == Measure(
            utf8=len(prefix.encode("utf-8", "surrogatepass")),
            utf16=len(prefix.encode("utf-16-le", "surrogatepass")) // 2,
            code_point=position,
        )


def test_no_url_means_null_urls_and_a_url_without_anchor_stays_as_is() -> None:
    assert all(chunk["url"] is None for chunk in chunks_of(answer({"text": DOCUMENT})))
    plain = chunks_of(
        answer({"text": "Just words here.", "format": "text", "url": "https://x.test/a"})
    )
    assert [(chunk["anchor"], chunk["url"]) for chunk in plain] == [(None, "https://x.test/a")]


@pytest.mark.parametrize(("text", "what"), [("", "empty"), (" \n\t\n ", "only whitespace")])
def test_empty_text_has_no_chunks_and_a_warning(text: str, what: str) -> None:
    record = answer({"text": text})
    assert record.errors == ()
    assert record_data(record) == {
        "chunks": [],
        "textItems": [],
        "offsets": [],
        "lengths": [],
        "ordinalPositions": [],
    }
    assert record.warnings == (f"input 'text' is {what}; the record has no chunks",)


def test_unknown_format_is_chunked_as_text_with_a_warning() -> None:
    record = answer({"text": "# Not a heading here\n\nWords.", "format": "docx"})
    assert chunks_of(record)
    assert any("'docx' is not one of" in warning for warning in record.warnings)


def test_lone_surrogates_are_replaced_and_reported() -> None:
    record = answer({"text": "Before \ud800 after.", "format": "text"})
    (chunk,) = chunks_of(record)
    assert chunk["content"] == "Before \ufffd after."
    assert any("lone surrogate" in warning for warning in record.warnings)


def test_option_errors_from_the_core_are_the_record_error() -> None:
    record = answer({"text": "x", "unit": "azureOpenAITokens", "encoderModelName": "nope"})
    assert record_data(record) == {}
    (message,) = record.errors
    assert "encoderModelName" in message


def test_settings_errors_fail_each_record_with_the_reason() -> None:
    # Issue 38: a SettingsError stops at the request's edge (`answer_chunk_request`), which
    # answers every record with it; nothing below, chunk_record included, sees one.
    broken = SettingsError("invalid app settings: CHUNK_UNIT must be ...")
    body = {"values": [{"recordId": "a", "data": {"text": "x"}}, {"recordId": "b", "data": {}}]}
    answer = asyncio.run(answer_chunk_request(json.dumps(body).encode(), broken))
    assert answer.status == 200
    values = json.loads(answer.body)["values"]
    assert [value["recordId"] for value in values] == ["a", "b"]
    for value in values:
        (error,) = value["errors"]
        assert error["message"].startswith(
            "the skill is misconfigured: invalid app settings: CHUNK_UNIT must be .... Fix the "
        )
        assert value["data"] == {}
    (chunks,) = chunk_records([{"text": "x"}], broken)
    assert chunks.errors == (values[0]["errors"][0]["message"],)
    assert chunks.chunks == ()


def test_a_record_answer_is_deterministic() -> None:
    data = {"text": DOCUMENT, "url": "https://docs.test/g"}
    assert answer(data) == answer(data)
    first = chunks_of(answer(data))
    assert [chunk["id"] for chunk in first] == [chunk["id"] for chunk in chunks_of(answer(data))]
    assert len({chunk["id"] for chunk in first}) == len(first)


def test_a_large_document_is_chunked_whole() -> None:
    paragraph = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 20
    text = "# Big\n\n" + "\n\n".join(f"## Part {n}\n\n{paragraph}" for n in range(200))
    chunks = chunks_of(answer({"text": text}, Settings()))
    assert len(chunks) >= 50
    last = chunks[-1]
    assert last["offset"]["codePoint"] + last["length"]["codePoint"] == len(text.rstrip())


@pytest.mark.parametrize(
    ("title", "kept"),
    [
        ("T" * 1_000_000, "T" * 32_766),
        ("a" + "😀" * 300_000, "a" + "😀" * 8191),  # 32,765 bytes: the next emoji would split
        ("é" * 20_000, "é" * 16_383),
    ],
)
def test_a_huge_title_is_capped_at_azures_term_limit_on_a_character_boundary(
    title: str, kept: str
) -> None:
    """Regression (issue 13, defect 7): a 1 MB title was copied into every chunk's
    `title`, which an index maps to a filterable field that takes 32,766 bytes at most."""
    record = answer({"text": DOCUMENT, "format": "text", "title": title})
    chunks = chunks_of(record)
    assert len(chunks) > 1
    assert all(chunk["title"] == kept for chunk in chunks)
    assert len(kept.encode("utf-8")) <= 32_766
    size = len(title.encode("utf-8"))
    assert (
        f"the title is {size} bytes of UTF-8; each chunk's 'title' keeps its first "
        f"{len(kept.encode('utf-8'))} bytes, as Azure AI Search takes at most 32766 bytes "
        "in a filterable, sortable or facetable field"
    ) in record.warnings


def test_a_title_at_the_term_limit_is_kept_whole() -> None:
    record = answer({"text": DOCUMENT, "format": "text", "title": "é" * 16_383})
    assert all(chunk["title"] == "é" * 16_383 for chunk in chunks_of(record))
    assert not any("bytes of UTF-8" in warning for warning in record.warnings)
