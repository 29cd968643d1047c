"""The wire format: reading request bodies and rendering response bodies."""

from __future__ import annotations

import dataclasses
import json
import sys

import pytest

from skills.skill.chunk_records import chunk_record
from skills.skill.contract import (
    InputRecord,
    RequestError,
    parse_request,
    render_error,
    render_record,
    render_response,
)
from skills.skill.records import OutputRecord, failed_record
from skills.skill.render import record_data
from skills.skill.settings import Settings
from skills.values import HugeNumber
from tests.paths import ROOT
from tests.skill.typed_chunks import a_chunk


def test_reads_records_in_order_with_their_data() -> None:
    body = b'{"values": [{"recordId": "b", "data": {"text": "x"}}, {"recordId": "a"}]}'
    assert parse_request(body) == [
        InputRecord(record_id="b", data={"text": "x"}),
        InputRecord(record_id="a", data=None),
    ]


def test_empty_values_is_an_empty_batch() -> None:
    assert parse_request(b'{"values": []}') == []


def test_utf8_bom_and_non_ascii_are_read() -> None:
    body = '\ufeff{"values": [{"recordId": "ü", "data": {"text": "日本"}}]}'.encode()
    assert parse_request(body) == [InputRecord(record_id="ü", data={"text": "日本"})]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"{nope", "not valid JSON"),
        (b"\xff\xfe\xfa", "not"),
        (b"[1, 2]", "is a JSON array; expected an object with a 'values' array"),
        (b'{"records": []}', "has no 'values' array"),
        (
            b'{"values": {"recordId": "1"}}',
            "'values' must be an array of records, got a JSON object",
        ),
        (b'{"values": [1]}', "values[0] is a JSON number, not an object"),
        (b'{"values": [{"data": {}}]}', "values[0] has no recordId"),
        (b'{"values": [{"recordId": null}]}', "values[0] has no recordId"),
        (b'{"values": [{"recordId": ""}]}', "values[0] has no recordId"),
        (b'{"values": [{"recordId": 7}]}', "values[0].recordId is a JSON number, not a string"),
        (
            b'{"values": [{"recordId": "a"}, {"recordId": "b"}, {"recordId": "a"}]}',
            "recordId 'a' is used 2 times (values[0], values[2])",
        ),
    ],
)
def test_unreadable_requests_are_a_400_with_an_actionable_message(body: bytes, words: str) -> None:
    error = parse_request(body)
    assert isinstance(error, RequestError)
    assert error.status == 400
    assert words in error.message


def test_many_record_problems_are_summarized() -> None:
    body = json.dumps({"values": [{"data": {}} for _ in range(8)]}).encode()
    error = parse_request(body)
    assert isinstance(error, RequestError)
    assert "values[4] has no recordId; and 3 more" in error.message
    assert "No record was processed" in error.message


def test_response_has_every_key_and_message_objects() -> None:
    body = render_response(
        [
            OutputRecord(record_id="1", chunks=(), warnings=("empty",)),
            failed_record("2", "bad input", warnings=("note",)),
        ]
    )
    assert json.loads(body) == {
        "values": [
            {
                "recordId": "1",
                "data": {
                    "chunks": [],
                    "textItems": [],
                    "offsets": [],
                    "lengths": [],
                    "ordinalPositions": [],
                },
                "errors": [],
                "warnings": [{"message": "empty"}],
            },
            {
                "recordId": "2",
                "data": {},
                "errors": [{"message": "bad input"}],
                "warnings": [{"message": "note"}],
            },
        ]
    }


def test_response_is_compact_utf8() -> None:
    body = render_response([OutputRecord(record_id="ü", chunks=(a_chunk("日本 😀"),))])
    assert "日本 😀".encode() in body
    assert b": " not in body


def test_lone_surrogate_in_a_record_id_is_echoed_as_valid_json() -> None:
    record_id = "id-\ud800"
    body = render_response([OutputRecord(record_id=record_id)])
    body.decode("ascii")  # escaped, so any JSON reader accepts the bytes
    assert json.loads(body)["values"][0]["recordId"] == record_id


def test_a_record_cannot_have_both_data_and_errors() -> None:
    with pytest.raises(ValueError, match="empty data"):
        OutputRecord(record_id="1", chunks=(), errors=("boom",))


def test_error_body() -> None:
    assert json.loads(render_error(RequestError(413, "too big"))) == {
        "error": {"status": 413, "message": "too big"}
    }


# --- empty, UTF-16/32 and huge numbers (issue 28) ------------------------------------------

EXAMPLE = '{"values": [{"recordId": "1", "data": {"text": "x"}}]}'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "The request body is empty; send a JSON object such as "),
        (b" \r\n\t", "The request body holds only whitespace; send a JSON object such as "),
    ],
)
def test_an_empty_body_is_said_to_be_empty(body: bytes, message: str) -> None:
    """Regression (issue 28.10): an empty body was "not valid JSON (line 1, column 1)"."""
    error = parse_request(body)
    assert isinstance(error, RequestError)
    assert error.status == 400
    assert error.message.startswith(message)
    assert "line 1" not in error.message


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-be"])
def test_utf16_and_utf32_bodies_are_refused_naming_their_encoding(codec: str) -> None:
    """Regression (issue 28.10): json.loads read UTF-16 and UTF-32 bodies, although the
    docs say a body that is not UTF-8 gets a 400 (RFC 8259 8.1: JSON between systems is
    UTF-8). Refused, naming the encoding found."""
    error = parse_request(EXAMPLE.encode(codec))
    assert isinstance(error, RequestError)
    assert error.status == 400
    family = "UTF-16" if "16" in codec else "UTF-32"
    assert error.message.startswith(f"The request body is {family} text; send the JSON as UTF-8")


def test_nul_bytes_are_not_taken_for_utf32() -> None:
    error = parse_request(b"\x00" * 64)
    assert isinstance(error, RequestError)
    assert "not valid JSON" in error.message


LIMIT = sys.get_int_max_str_digits()
HUGE = "9" * (LIMIT + 1)


def test_a_huge_number_is_read_as_a_marker_not_a_400() -> None:
    """Regression (issue 28.5): one number over Python's digit limit anywhere failed the
    whole batch with a 400; now it is read as a marker its record deals with."""
    body = (
        '{"values": [{"recordId": "1", "data": {"text": "x", "colour": ' + HUGE + "}}, "
        '{"recordId": "2", "data": {"maximumPageLength": -' + HUGE + "}}]}"
    ).encode()
    assert parse_request(body) == [
        InputRecord("1", {"text": "x", "colour": HugeNumber(LIMIT + 1)}),
        InputRecord("2", {"maximumPageLength": HugeNumber(LIMIT + 1)}),
    ]


def test_numbers_up_to_the_limit_are_read_as_ints() -> None:
    body = ('{"values": [{"recordId": "1", "data": {"n": ' + "9" * LIMIT + "}}]}").encode()
    (record,) = parse_request(body)  # type: ignore[misc]
    assert record.data == {"n": int("9" * LIMIT)}


def test_a_huge_record_id_is_a_number_not_a_string() -> None:
    error = parse_request(('{"values": [{"recordId": ' + HUGE + "}]}").encode())
    assert isinstance(error, RequestError)
    assert "values[0].recordId is a JSON number, not a string" in error.message


# --- a record rendered a chunk at a time (issue 35, item 4) ----------------------------------


@pytest.mark.parametrize(
    "sample", ["concepts-network.md", "git-stash.html", "layout-report.md"], ids=str
)
def test_a_record_rendered_a_chunk_at_a_time_is_what_json_dumps_writes(sample: str) -> None:
    """render_record builds a record's JSON item by item to hold less (a 16-million-
    character record's answer was held ~7 times by json.dumps); the bytes stay what
    json.dumps of the whole record writes, with vectors, non-ASCII text and messages."""
    text = (ROOT / "samples" / sample).read_text(encoding="utf-8") + "\n\nÜnïcode 日本 😀 \x07"
    chunked = chunk_record(InputRecord("r-ü", {"text": text}), Settings())
    assert chunked.chunks
    vectors = [(-0.1 * n, 2.5e-8, 1e300, -2.2250738585072014e-308) for n in range(3)]
    chunks = tuple(
        dataclasses.replace(chunk, embedding=vectors[n % 3])
        for n, chunk in enumerate(chunked.chunks)
    )
    record = dataclasses.replace(chunked, chunks=chunks, warnings=("a warning «x»",))
    for each in (record, chunked, failed_record("bad", "one", "two 😀")):
        whole = {
            "recordId": each.record_id,
            "data": record_data(each),
            "errors": [{"message": message} for message in each.errors],
            "warnings": [{"message": message} for message in each.warnings],
        }
        expected = json.dumps(whole, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        assert render_record(each) == expected.encode("utf-8")
    assert json.loads(render_response([record, chunked]))["values"][1]["recordId"] == "r-ü"
