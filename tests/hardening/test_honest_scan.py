"""The one scan of answers and logs (testing/leaks.py `dishonest`) finds what it must.

Each library the skill uses is made to raise, and its message must be caught; messages
in the skill's own words, and what the caller sent, must pass.
"""

from __future__ import annotations

import codecs
import gzip
import json
import traceback
import zlib
from typing import TYPE_CHECKING

import httpx
import pydantic
import pytest
from azure.core.exceptions import HttpResponseError

from testing.leaks import dishonest, scan_answer

if TYPE_CHECKING:
    from collections.abc import Callable


class _Model(pydantic.BaseModel):
    number: int


def _status_error() -> None:
    request = httpx.Request("POST", "http://127.0.0.1:1/v1/embeddings")
    httpx.Response(500, request=request).raise_for_status()


def _azure_error() -> None:
    raise HttpResponseError(message="Operation returned an invalid status 'Bad Request'")


RAISED = (
    ValueError,
    LookupError,
    EOFError,
    OSError,
    zlib.error,
    pydantic.ValidationError,
    httpx.HTTPStatusError,
    HttpResponseError,
)

LIBRARY_FAILURES: tuple[tuple[str, Callable[[], object]], ...] = (
    ("zlib", lambda: zlib.decompress(b"not zlib")),
    ("zlib truncated", lambda: zlib.decompress(zlib.compress(b"abc")[:-3])),
    ("gzip", lambda: gzip.decompress(b"not gzip at all, no")),
    ("gzip truncated", lambda: gzip.decompress(gzip.compress(b"abc")[:-4])),
    ("json value", lambda: json.loads("")),
    ("json name", lambda: json.loads("{")),
    ("json colon", lambda: json.loads('{"a" 1}')),
    ("json comma", lambda: json.loads("[1 2]")),
    ("json control", lambda: json.loads('"\x01"')),
    ("json escape", lambda: json.loads('"\\q"')),
    ("json extra", lambda: json.loads("1 2")),
    ("json digits", lambda: json.loads("9" * 5000)),
    ("utf-8", b"\xff".decode),
    ("utf-8 end", b"\xe2\x82".decode),
    ("ascii", lambda: "\xe9".encode("ascii")),
    ("shift_jis", lambda: b"\x81".decode("shift_jis")),
    ("unknown codec", lambda: codecs.lookup("no-such-codec")),
    ("bytes codec", lambda: b"x".decode("zlib")),
    ("pydantic", lambda: _Model.model_validate({"other": 1})),
    ("pydantic type", lambda: _Model.model_validate({"number": "x"})),
    ("httpx status", _status_error),
    ("azure", _azure_error),
)


@pytest.mark.parametrize(("name", "fail"), LIBRARY_FAILURES, ids=[n for n, _ in LIBRARY_FAILURES])
def test_each_librarys_message_is_caught_without_its_exception_name(
    name: str, fail: Callable[[], object]
) -> None:
    with pytest.raises(RAISED) as raised:
        fail()
    assert dishonest(f"record 1 failed ({raised.value})"), name


def test_exception_names_and_tracebacks_are_caught() -> None:
    empty: dict[str, int] = {}
    try:
        empty["x"]
    except KeyError:
        text = traceback.format_exc()
    assert "KeyError" in dishonest("internal error: KeyError")
    assert dishonest("failed: SomeVendorSpecificException while embedding")
    assert dishonest(text)


@pytest.mark.parametrize(
    "text",
    [
        "embedding failed (openai at http://svc-user:S3cr3t@127.0.0.1:7601)",
        "endpoint https://example.com/v1?api-key=abc is refused",
        "OPENAI_BASE_URL is https://x.test/v1?deployment=a",
        "the key openai-secret was refused",
    ],
)
def test_secrets_user_info_and_queries_are_caught(text: str) -> None:
    assert dishonest(text)


@pytest.mark.parametrize(
    "text",
    [
        "The request body is not valid JSON (line 1, column 1).",
        "embedding the sentences failed (openai: model text-embedding-3-small at "
        "http://127.0.0.1:7601): the service refused the key; check OPENAI_API_KEY",
        "the file looks like a gzip file; send it decompressed",
        "internal error while answering this record; the log has the details",
    ],
)
def test_the_skills_own_words_pass(text: str) -> None:
    assert dishonest(text) == []


def test_what_the_caller_sent_is_no_leak() -> None:
    request = json.dumps(
        {"values": [{"recordId": "1", "data": {"text": "Catch ValueError at https://x.test/?q=1"}}]}
    ).encode()
    answer = json.dumps(
        {
            "values": [
                {"recordId": "1", "data": {"chunks": ["Catch ValueError at https://x.test/?q=1"]}}
            ]
        }
    ).encode()
    assert scan_answer(answer, request) == []
    assert scan_answer(answer) == ["ValueError", "https://x.test/?q=1"]
