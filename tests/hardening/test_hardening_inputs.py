"""The bad-input catalogue: every input the real world sends, and the exact answer it gets.

Each record-level case goes through the real HTTP endpoint (uvicorn on 127.0.0.1) and ends
in exactly one of: a normal result (chunks within the limit, nothing lost), a result with a
named warning, or `data: {}` with one named error. Request-level cases (bodies that cannot
be read at all) get a JSON 4xx that says what to fix. Nothing here may take the server down:
after the catalogue, the same server still answers a normal request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from chunking import ChunkOptions, chunk_document
from skills.skill.record_inputs import InputErrors, read_record_inputs
from skills.skill.settings import Settings
from tests.hardening_report import FIGURES

if TYPE_CHECKING:
    from tests.conftest import LiveServers

pytestmark = pytest.mark.integration

TIMEOUT = httpx.Timeout(120.0)
LIMIT = 2000
"""maximumPageLength (characters) of every catalogue record unless the case says otherwise."""
CHARACTERS: dict[str, object] = {
    "unit": "characters",
    "maximumPageLength": LIMIT,
    "pageOverlapLength": 200,
}


@dataclass(frozen=True, slots=True)
class Normal:
    """Chunks, no errors, no warnings; `contains` appears in some chunk's content."""

    contains: str = ""
    check_coverage: bool = True
    """Every non-whitespace character of `text` lies in some chunk (not for HTML, whose
    offsets point into the rendering)."""


@dataclass(frozen=True, slots=True)
class Warned:
    """Indexed, with one warning containing `words`."""

    words: str
    chunks: bool = True
    """Whether the record still has chunks."""


@dataclass(frozen=True, slots=True)
class Failed:
    """`data: {}` and exactly one error containing `words`."""

    words: str


Expect = Normal | Warned | Failed

TABLE_100K_CELLS = "| a | b | c | d |\n|---|---|---|---|\n" + "| 1 | 2 | 3 | 4 |\n" * 25_000
GARBAGE = bytes(range(256)).decode("latin-1") * 200

RECORDS: dict[str, tuple[object, Expect]] = {
    # --- text: empty, missing, wrong type -------------------------------------------------
    "empty text": ({"text": ""}, Warned("input 'text' is empty; the record has no chunks", False)),
    "whitespace-only text": (
        {"text": " \n\t\r\n\u3000 "},
        Warned("input 'text' is only whitespace; the record has no chunks", False),
    ),
    "text is a number": ({"text": 42}, Failed("input 'text' must be a string (got number 42)")),
    "text is a list": ({"text": ["a", "b"]}, Failed("input 'text' must be a string (got array")),
    "text is an object": ({"text": {"a": 1}}, Failed("input 'text' must be a string (got object")),
    "text is a boolean": ({"text": True}, Failed("input 'text' must be a string (got boolean")),
    "text is null": ({"text": None}, Failed("input 'text' is required (got null)")),
    "text is missing": ({"title": "x"}, Failed("input 'text' is required (got nothing)")),
    # --- data -----------------------------------------------------------------------------
    "data is null": (None, Failed("data must be a JSON object with a 'text' input (got null)")),
    "data is a string": ("text", Failed("data must be a JSON object with a 'text' input")),
    "data is a list": (
        [{"text": "x"}],
        Failed("data must be a JSON object with a 'text' input (got array"),
    ),
    # --- big and deep documents -------------------------------------------------------------
    "a single 1 MB line with no spaces": ({"text": "x" * 1_000_000, **CHARACTERS}, Normal("xxx")),
    "a 100,000-cell table": ({"text": TABLE_100K_CELLS, **CHARACTERS}, Normal("| 1 | 2 | 3 | 4 |")),
    "10,000 headings": (
        {"text": "".join(f"## H{i}\n\ntext {i}.\n\n" for i in range(10_000)), **CHARACTERS},
        Normal("## H9999"),
    ),
    "10,000 nested blockquotes": ({"text": ">" * 10_000 + " deep", **CHARACTERS}, Normal("deep")),
    "10,000 nested blockquotes with spaces": (
        {"text": "> " * 10_000 + "deep", **CHARACTERS},
        Normal("deep"),
    ),
    "10,000 nested bullet lists": ({"text": "- " * 10_000 + "deep", **CHARACTERS}, Normal("deep")),
    "10,000 nested ordered lists": (
        {"text": "1. " * 10_000 + "deep", **CHARACTERS},
        Normal("deep"),
    ),
    "5,000 nested quote-and-list levels": (
        {"text": "> - " * 5_000 + "deep", **CHARACTERS},
        Normal("deep"),
    ),
    "1,500 list levels by indentation": (
        {"text": "".join("  " * i + f"- item {i}\n" for i in range(1_500)), **CHARACTERS},
        Normal("item 1499"),
    ),
    "10,000 nested links and emphasis": (
        {"text": "[" * 10_000 + "x" + "](u)" * 10_000 + "*" * 10_000, **CHARACTERS},
        Normal("[[["),
    ),
    "HTML inside markdown nested 10,000 deep": (
        {"text": "<div>" * 10_000 + "deep" + "</div>" * 10_000, "format": "markdown", **CHARACTERS},
        Normal("deep"),
    ),
    "HTML divs nested 100,000 deep": (
        {"text": "<div>" * 100_000 + "deep" + "</div>" * 100_000, "format": "html", **CHARACTERS},
        Normal("deep", check_coverage=False),
    ),
    "HTML inline elements nested 100,000 deep, never closed": (
        {"text": "<b>" * 100_000 + "deep", "format": "html", **CHARACTERS},
        Normal("deep", check_coverage=False),
    ),
    "HTML lists nested 50,000 deep (100,000 elements)": (
        {"text": "<ul><li>" * 50_000 + "deep", "format": "html", **CHARACTERS},
        Normal("deep", check_coverage=False),
    ),
    "HTML blockquotes nested 100,000 deep": (
        {"text": "<blockquote>" * 100_000 + "deep", "format": "html", **CHARACTERS},
        Normal("deep", check_coverage=False),
    ),
    # --- broken structure -------------------------------------------------------------------
    "unclosed backtick fence": (
        {"text": "# T\n\n```python\n" + "x = 1\n" * 3_000, **CHARACTERS},
        Normal("x = 1"),
    ),
    "unclosed tilde fence": (
        {"text": "# T\n\n~~~\n" + "code\n" * 3_000, **CHARACTERS},
        Normal("code"),
    ),
    "table without a header row": (
        {"text": "| a | b |\n| 1 | 2 |\n" * 500, **CHARACTERS},
        Normal("| 1 | 2 |"),
    ),
    "table with ragged rows": (
        {"text": "| a | b |\n|---|---|\n| 1 |\n| 1 | 2 | 3 | 4 |\n| |\n" * 300, **CHARACTERS},
        Normal("| 1 | 2 | 3 | 4 |"),
    ),
    "HTML table without header, ragged, unclosed": (
        {
            "text": "<table>" + "<tr><td>1<td>2<td>3</tr><tr><td>only</tr>" * 300,
            "format": "html",
            **CHARACTERS,
        },
        Normal("only", check_coverage=False),
    ),
    # --- bytes and characters ---------------------------------------------------------------
    "binary garbage (every byte value)": ({"text": GARBAGE, **CHARACTERS}, Normal("\x7f")),
    "binary garbage as HTML": (
        {"text": GARBAGE, "format": "html", **CHARACTERS},
        Warned("removed 200 NUL characters"),
    ),
    "NUL bytes in markdown": (
        {"text": "# T\x00\n\nab\x00cd\n\n## U\n\n\x00\x00x", **CHARACTERS},
        Normal("ab\x00cd"),
    ),
    "NUL bytes in HTML": (
        {"text": "<h1>T\x00</h1><p>a\x00b</p>", "format": "html", **CHARACTERS},
        Warned("removed 2 NUL characters"),
    ),
    "mis-decoded UTF-8 in HTML (replacement characters, wrong meta charset)": (
        {
            "text": "<meta charset='shift_jis'><h1>Gr\ufffd\ufffde</h1><p>\u00c3\u00bc \ufffd</p>",
            "format": "html",
            **CHARACTERS,
        },
        Normal("Gr\ufffd\ufffde", check_coverage=False),
    ),
    "lone UTF-16 surrogates in HTML": (
        {"text": "<h1>S</h1><p>half \ud83d pair \ude00</p>", "format": "html", **CHARACTERS},
        Warned("input 'text' contained 2 lone surrogate(s)"),
    ),
    "lone surrogate in the title": (
        {"text": "Body.", "title": "T\udc00", **CHARACTERS},
        Warned("input 'title' contained 1 lone surrogate(s)"),
    ),
    "right-to-left text and bidi controls": (
        {
            "text": "# עברית\n\nשלום עולם. مرحبا بالعالم. \u202eevil\u202c \u2067x\u2069.\n\n"
            "## ثانية\n\nنص.",
            **CHARACTERS,
        },
        Normal("\u202eevil\u202c"),
    ),
    "5,000 combining marks on one letter": (
        {"text": "a" + "\u0301" * 5_000 + " end.", **CHARACTERS},
        Normal("end."),
    ),
    "emoji sequences": (
        {"text": "# 👩‍👩‍👧‍👦\n\n" + "👩🏽‍🚀 🏳️‍🌈 🇩🇪 " * 2_000, **CHARACTERS},
        Normal("👩🏽‍🚀"),
    ),
    "zero-width characters and BOMs": (
        {"text": "\ufeff# T\n\n" + "\u200b" * 5_000 + "\ufeff" * 100 + "x", **CHARACTERS},
        Normal("x"),
    ),
    "control and Unicode line separators": (
        {"text": "# T\n\n\x0c\x0b\x1c\x1d\x1e\x85\u2028\u2029 text", **CHARACTERS},
        Normal("text"),
    ),
    # --- line endings -----------------------------------------------------------------------
    "CRLF line endings": (
        {"text": "# A\r\n\r\npara one.\r\n\r\n## B\r\n\r\npara two.\r\n" * 300, **CHARACTERS},
        Normal("## B\r\n"),
    ),
    "CR line endings": (
        {"text": "# A\r\rpara one.\r\r## B\r\rpara two.\r" * 300, **CHARACTERS},
        Normal("## B\r"),
    ),
    "mixed line endings in HTML": (
        {"text": "<h1>A</h1>\r\n<p>one\r\ntwo</p>\r<h2>B</h2>\r<p>x</p>" * 300, "format": "html"},
        Normal("two", check_coverage=False),
    ),
    # --- parameters out of range or of the wrong type ----------------------------------------
    "maximumPageLength below 300 characters": (
        {"text": "x", "unit": "characters", "maximumPageLength": 299},
        Failed("maximumPageLength must be between 300 and 50000 characters (got 299)"),
    ),
    "maximumPageLength above 50,000 characters": (
        {"text": "x", "unit": "characters", "maximumPageLength": 50_001},
        Failed("maximumPageLength must be between 300 and 50000 characters (got 50001)"),
    ),
    "maximumPageLength below 64 tokens": (
        {"text": "x", "maximumPageLength": 63},
        Failed("maximumPageLength must be between 64 and 8191 azureOpenAITokens (got 63)"),
    ),
    "maximumPageLength above 8,191 tokens": (
        {"text": "x", "maximumPageLength": 8192},
        Failed("maximumPageLength must be between 64 and 8191 azureOpenAITokens (got 8192)"),
    ),
    "maximumPageLength zero": (
        {"text": "x", "maximumPageLength": 0},
        Failed("maximumPageLength must be between 64 and 8191"),
    ),
    "maximumPageLength negative": (
        {"text": "x", "maximumPageLength": -5},
        Failed("maximumPageLength must be between 64 and 8191"),
    ),
    "maximumPageLength astronomically large": (
        {"text": "x", "maximumPageLength": 10**30},
        Failed("maximumPageLength must be between 64 and 8191"),
    ),
    "maximumPageLength a fraction": (
        {"text": "x", "maximumPageLength": 512.5},
        Failed("input 'maximumPageLength' must be an integer"),
    ),
    "maximumPageLength a word": (
        {"text": "x", "maximumPageLength": "big"},
        Failed("input 'maximumPageLength' must be an integer"),
    ),
    "maximumPageLength a boolean": (
        {"text": "x", "maximumPageLength": True},
        Failed("input 'maximumPageLength' must be an integer"),
    ),
    "maximumPageLength a list": (
        {"text": "x", "maximumPageLength": [512]},
        Failed("input 'maximumPageLength' must be an integer"),
    ),
    "maximumPageLength an object": (
        {"text": "x", "maximumPageLength": {"v": 512}},
        Failed("input 'maximumPageLength' must be an integer"),
    ),
    "pageOverlapLength half the maximum": (
        {"text": "x", "maximumPageLength": 512, "pageOverlapLength": 256},
        Failed("pageOverlapLength must be at least 0 and less than half of maximumPageLength"),
    ),
    "pageOverlapLength negative": (
        {"text": "x", "pageOverlapLength": -1},
        Failed("pageOverlapLength must be at least 0"),
    ),
    "pageOverlapLength a word": (
        {"text": "x", "pageOverlapLength": "some"},
        Failed("input 'pageOverlapLength' must be an integer"),
    ),
    "maximumPagesToTake negative": (
        {"text": "x", "maximumPagesToTake": -1},
        Failed("maximumPagesToTake must be 0 (all) or more (got -1)"),
    ),
    "maximumPagesToTake a list": (
        {"text": "x", "maximumPagesToTake": [1]},
        Failed("input 'maximumPagesToTake' must be an integer"),
    ),
    "unit unknown": ({"text": "x", "unit": "words"}, Failed("input 'unit' must be one of")),
    "unit a number": ({"text": "x", "unit": 1}, Failed("input 'unit' must be one of")),
    "textSplitMode unknown": (
        {"text": "x", "textSplitMode": "paragraphs"},
        Failed("input 'textSplitMode' must be one of pages, sentences"),
    ),
    "textSplitMode an object": (
        {"text": "x", "textSplitMode": {}},
        Failed("input 'textSplitMode' must be one of"),
    ),
    "encoderModelName unknown": (
        {"text": "x", "encoderModelName": "gpt2"},
        Failed("encoderModelName must be one of cl100k_base"),
    ),
    "encoderModelName a path": (
        {"text": "x", "encoderModelName": "../../etc/passwd"},
        Failed("encoderModelName must be one of"),
    ),
    "encoderModelName a number": (
        {"text": "x", "encoderModelName": 100},
        Failed("input 'encoderModelName' must be a string (got number 100)"),
    ),
    "format a number": ({"text": "x", "format": 5}, Failed("input 'format' must be a string")),
    "format unknown": (
        {"text": "x", "format": "pdf"},
        Warned("input 'format' 'pdf' is not one of"),
    ),
    "title an object": ({"text": "x", "title": {}}, Failed("input 'title' must be a string")),
    "url a number": (
        {"text": "x", "url": 7},
        Failed("input 'url' must be a string (got number 7)"),
    ),
    "url a javascript: link": (
        {"text": "x", "url": "javascript:alert(document.cookie)"},
        Failed("input 'url' must be an absolute http or https URL (got string 'javascript:"),
    ),
    "url with a line break": (
        {"text": "x", "url": "https://x.test/a\r\nSet-Cookie: a=b"},
        Failed("input 'url' must be without control characters (U+000D at 16)"),
    ),
    "title of 1 MB": (
        {"text": "Body.", "format": "text", "title": "T" * 1_000_000, **CHARACTERS},
        Warned("each chunk's 'title' keeps its first 32766 bytes"),
    ),
    "maximumPageLength 1e308": (
        {"text": "x", "maximumPageLength": 1e308},
        Failed("maximumPageLength must be between 64 and 8191 azureOpenAITokens (got 1e+308)"),
    ),
    "language a boolean": (
        {"text": "x", "language": False},
        Failed("input 'language' must be a string"),
    ),
    "numbers as strings with spaces, floats with integral values": (
        {
            "text": "x",
            "maximumPageLength": " 512 ",
            "pageOverlapLength": "0",
            "maximumPagesToTake": 2.0,
        },
        Normal("x"),
    ),
    "names matched ignoring case": (
        {"text": "x", "unit": "CHARACTERS", "textSplitMode": "Sentences", "format": "MD"},
        Normal("x"),
    ),
    "nulls and empty strings for every optional input": (
        {
            "text": "x",
            "title": None,
            "format": "",
            "url": None,
            "unit": "",
            "maximumPageLength": None,
            "textSplitMode": None,
            "language": "",
        },
        Normal("x"),
    ),
    "unknown inputs": (
        {"text": "x", "colour": "blue", "MaximumPageLength": 10},
        Warned(
            "ignored unknown input(s) 'MaximumPageLength' "
            "(did you mean 'maximumPageLength'?), 'colour'"
        ),
    ),
    "every problem at once": (
        {"text": 1, "unit": 2, "maximumPageLength": "x", "url": 3},
        Failed("input 'text' must be a string"),
    ),
}
"""Record data -> the exact outcome. The request carries them all in one batch."""

REQUESTS: dict[str, tuple[bytes, int, str]] = {
    "empty body": (b"", 400, "The request body is empty"),
    "UTF-16 body": (
        '{"values": []}'.encode("utf-16"),
        400,
        "is UTF-16 text; send the JSON as UTF-8",
    ),
    "non-JSON body": (b"recordId=1&text=hello", 400, "not valid JSON"),
    "truncated JSON": (
        b'{"values": [{"recordId": "1", "data": {"text": "x"',
        400,
        "not valid JSON",
    ),
    "NUL bytes": (b"\x00" * 64, 400, "not valid JSON"),
    "invalid UTF-8 in a document": (
        b'{"values": [{"recordId": "1", "data": {"text": "<p>\xff\xfe caf\xe9</p>"}}]}',
        400,
        "not UTF-8",
    ),
    "JSON array": (b"[]", 400, "is a JSON array; expected an object"),
    "JSON string": (b'"values"', 400, "is a JSON string; expected an object"),
    "JSON number": (b"42", 400, "is a JSON number; expected an object"),
    "JSON null": (b"null", 400, "is a JSON null; expected an object"),
    "no values": (b'{"value": []}', 400, "has no 'values' array"),
    "values an object": (b'{"values": {"recordId": "1"}}', 400, "'values' must be an array"),
    "values a string": (b'{"values": "1"}', 400, "'values' must be an array"),
    "values null": (
        b'{"values": null}',
        400,
        "'values' must be an array of records, got a JSON null",
    ),
    "a record that is not an object": (b'{"values": [7]}', 400, "values[0] is a JSON number"),
    "missing recordId": (
        b'{"values": [{"recordId": "1", "data": {}}, {"data": {"text": "x"}}]}',
        400,
        "values[1] has no recordId",
    ),
    "numeric recordId": (b'{"values": [{"recordId": 1}]}', 400, "recordId is a JSON number"),
    "duplicate recordIds": (
        b'{"values": [{"recordId": "a"}, {"recordId": "a"}]}',
        400,
        "recordId 'a' is used 2 times (values[0], values[1])",
    ),
    "JSON nested 100,000 deep (regression: was a 500)": (
        b'{"values": [{"recordId": "1", "data": {"text": "x", "extra": '
        + b"[" * 100_000
        + b"]" * 100_000
        + b"}}]}",
        400,
        "nests JSON arrays or objects too deeply",
    ),
}
"""Bodies that cannot be answered record by record -> status and words of the message."""


@pytest.fixture(scope="module")
def base_url(live_servers: LiveServers) -> str:
    return live_servers.start(Settings())


def post(base_url: str, body: bytes) -> httpx.Response:
    return httpx.post(
        f"{base_url}/api/chunk",
        content=body,
        headers={"content-type": "application/json"},
        timeout=TIMEOUT,
    )


def check_normal(text: str, value: dict[str, Any], limit: int, expect: Normal) -> None:
    """Chunks within the limit, consistent offsets and text items, nothing lost."""
    chunks = value["data"]["chunks"]
    assert chunks, "no chunks"
    assert value["data"]["textItems"] == [chunk["text"] for chunk in chunks]
    assert [chunk["ordinal"] for chunk in chunks] == list(range(len(chunks)))
    assert all(chunk["size"] <= limit for chunk in chunks)
    if expect.contains:
        assert any(expect.contains in chunk["content"] for chunk in chunks), expect.contains
    if not expect.check_coverage:
        return
    # A leading byte order mark is not text: markdown's body starts after it.
    covered = 1 if text.startswith("\ufeff") else 0
    for chunk in chunks:
        start = chunk["offset"]["codePoint"]
        end = start + chunk["length"]["codePoint"]
        assert chunk["content"] == text[start:end]
        assert not text[covered:start].strip(), "text lost between chunks"
        covered = max(covered, end)
    assert not text[covered:].strip(), "text lost at the end"


def test_the_record_catalogue_in_one_batch(base_url: str) -> None:
    values = [{"recordId": name, "data": data} for name, (data, _) in RECORDS.items()]
    response = post(base_url, json.dumps({"values": values}).encode())
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    answered = response.json()["values"]
    assert [value["recordId"] for value in answered] == list(RECORDS)
    for value in answered:
        name = value["recordId"]
        data, expect = RECORDS[name]
        assert set(value) == {"recordId", "data", "errors", "warnings"}, name
        messages = [error["message"] for error in value["errors"]]
        warnings = [warning["message"] for warning in value["warnings"]]
        if isinstance(expect, Failed):
            assert value["data"] == {}, name
            assert messages, name
            assert expect.words in messages[0], (name, messages)
            if name != "every problem at once":
                assert len(messages) == 1, (name, messages)
            continue
        assert messages == [], (name, messages)
        assert isinstance(data, dict)
        text = data["text"]
        assert isinstance(text, str)
        limit = int(str(data.get("maximumPageLength") or 512).strip())
        if isinstance(expect, Warned):
            assert any(expect.words in warning for warning in warnings), (name, warnings)
            assert bool(value["data"]["chunks"]) is expect.chunks, name
            continue
        assert warnings == [], (name, warnings)
        check_normal(text, value, limit, expect)
    FIGURES.add("inputs tried", len(RECORDS))
    FIGURES.add("records answered", len(answered))
    assert post(base_url, b'{"values": [{"recordId": "1", "data": {"text": "ok"}}]}').is_success


@pytest.mark.parametrize("name", list(REQUESTS))
def test_unreadable_requests_get_a_json_4xx_naming_the_problem(base_url: str, name: str) -> None:
    body, status, words = REQUESTS[name]
    response = post(base_url, body)
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    message = response.json()["error"]["message"]
    assert words in message
    assert "Traceback" not in message
    FIGURES.add("inputs tried")


def test_a_5000_digit_number_fails_only_the_record_that_uses_it(base_url: str) -> None:
    """Regression (issue 28.5): such a number anywhere was a 400 for the whole batch. Now
    the record whose input holds it fails, naming the input; one whose unknown input holds
    it is chunked (with the usual warning), and so is the rest of the batch."""
    huge = b"9" * 5000
    body = (
        b'{"values": [{"recordId": "a", "data": {"text": "x", "maximumPageLength": '
        + huge
        + b'}}, {"recordId": "b", "data": {"text": "Some words.", "colour": ['
        + huge
        + b']}}, {"recordId": "c", "data": {"text": "More words."}}]}'
    )
    response = post(base_url, body)
    assert response.status_code == 200
    a, b, c = response.json()["values"]
    assert a["errors"] == [
        {
            "message": "input 'maximumPageLength' holds a JSON number of 5000 digits; the "
            "skill reads numbers of at most 4300 digits (no input needs more than a few)"
        }
    ]
    assert (b["errors"], len(b["data"]["chunks"])) == ([], 1)
    assert b["warnings"][0]["message"].startswith("ignored unknown input(s) 'colour'")
    assert (c["errors"], len(c["data"]["chunks"])) == ([], 1)


def test_an_empty_batch_is_an_empty_answer(base_url: str) -> None:
    response = post(base_url, b'{"values": []}')
    assert response.status_code == 200
    assert response.json() == {"values": []}


def test_10000_records_in_one_batch(base_url: str) -> None:
    values = [
        {"recordId": f"rec-{n:05d}", "data": {"text": f"# Doc {n}\n\nShort body of document {n}."}}
        for n in range(10_000)
    ]
    response = post(base_url, json.dumps({"values": values}).encode())
    assert response.status_code == 200
    answered = response.json()["values"]
    assert [value["recordId"] for value in answered] == [value["recordId"] for value in values]
    for n, value in enumerate(answered):
        assert value["errors"] == []
        (chunk,) = value["data"]["chunks"]
        assert f"Short body of document {n}." in chunk["content"]
    FIGURES.add("inputs tried")
    FIGURES.add("records answered", len(answered))


def test_a_16_million_character_document(base_url: str) -> None:
    """The most an S3 indexer extracts from one blob (16 M characters), default settings."""
    paragraph = "Plain words in a sentence about the system. " * 25
    sections = "".join(f"## Section {n}\n\n{paragraph}\n\n" for n in range(16_000_000 // 1_000))
    text = ("# A very long document\n\n" + sections)[:16_000_000]
    assert len(text) == 16_000_000
    response = post(
        base_url, json.dumps({"values": [{"recordId": "big", "data": {"text": text}}]}).encode()
    )
    assert response.status_code == 200
    (value,) = response.json()["values"]
    assert value["errors"] == []
    assert value["warnings"] == []
    check_normal(text, value, 512, Normal("# A very long document"))
    FIGURES.add("inputs tried")
    FIGURES.add("records answered")


@pytest.mark.timeout(10)
def test_html_tables_nested_100000_elements_deep_are_chunked_in_linear_time() -> None:
    """Regression: nested tables were quadratic (tag.find("table") per <table>): 100,000
    elements took ~100 s where <div>s nested as deep take ~1 s."""
    html = "<table><tr><td>" * 33_334 + "deep"
    document = chunk_document(html, options=ChunkOptions(), format="html")
    (chunk,) = document.chunks
    assert "deep" in chunk.content


def test_regression_an_html5_embed_element_does_not_swallow_the_rest_of_the_page() -> None:
    html = "<h1>Intro</h1><p>First.</p><embed src=movie.swf><h2>Next</h2><p>Second part.</p>"
    document = chunk_document(html, options=ChunkOptions(), format="html")
    rendered = "".join(chunk.content for chunk in document.chunks)
    assert "Second part." in rendered


def test_regression_null_data_is_described_as_null() -> None:
    """`data: null` was reported as "(got null None)"."""
    errors = read_record_inputs(None, Settings())
    assert isinstance(errors, InputErrors)
    assert errors.messages == ("data must be a JSON object with a 'text' input (got null)",)
