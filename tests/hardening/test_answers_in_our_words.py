"""No answer carries Python's words: exception names, tracebacks, library or upstream messages.

Hostile request bodies, hostile front matter, every embedding fault the stub can play,
and bugs (an exception where none is expected): each answer says what happened and what
to do in the skill's own words; the details go to the logs only (testing/leaks.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import TYPE_CHECKING, Any

import azure.functions as func
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunking.measure.encodings import load_encoding
from chunking.measure.sizing import TokenSizer
from chunking.parse.markdown.outline import parse_markdown
from skills.embedding.clients import build_embedder
from skills.embedding.embedder import BatchEmbedder, RetryPolicy
from skills.embedding.settings import EmbeddingSettings
from skills.skill.app import build_app
from skills.skill.chunk_records import chunk_record
from skills.skill.contract import InputRecord
from skills.skill.service import answer_chunk_request, chunk_within_deadline
from skills.skill.settings import Settings
from skills.skill.thread_chunker import ThreadChunker
from testing.leaks import exception_names, leaks
from testing.openai_stub import OpenAIStub, Reply
from tests.conftest import ExplodingEmbedder, skill_body

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from chunking.parse.markdown.blocks import ParsedMarkdown
    from skills.embedding.embedder import ClientReply, Embedder
    from tests.conftest import FunctionCaller

DIMENSIONS = 8
KEY = "words-key"
UPSTREAM = "upstream-words-93c1"
"""In every message the stub or a library is made to say; never in an answer."""
MASKED_KEY = "wr*****ng"
"""What OpenAI's 401 quotes of a refused key."""
FAST = RetryPolicy(max_retries=1, initial_backoff=0.01, max_backoff=0.02, request_timeout=1.0)


def check(text: str, echoed: str = "") -> None:
    """`text` (an answer) is in the skill's words."""
    found = leaks(text, echoed, upstream=(UPSTREAM, MASKED_KEY))
    assert not found, (found, text[:600])


def answered(
    body: bytes, settings: Settings | None = None, embedder: Embedder | None = None
) -> str:
    """The answer's body to `body`, as text (the embedder is closed afterwards)."""

    async def go() -> bytes:
        try:
            answer = await answer_chunk_request(body, settings or Settings(), embedder=embedder)
        finally:
            if embedder is not None:
                await embedder.aclose()
        return answer.body

    return asyncio.run(go()).decode("utf-8")


def record_body(text: str, **inputs: object) -> bytes:
    return skill_body([{"recordId": "1", "data": {"text": text, **inputs}}])


def test_the_detector_knows_the_names_and_phrases() -> None:
    assert {"JSONDecodeError", "ConstructorError", "AttributeError", "InvalidURL"} <= set(
        exception_names()
    )
    assert leaks("internal error: AttributeError: 'NoneType' object has no attribute 'x'")
    assert leaks("is not valid JSON (Expecting value: line 1 column 1 (char 0))")
    assert not leaks("The request body is not valid JSON (line 1, column 1).")
    assert not leaks("ignored unknown input(s) 'KeyError'", echoed='{"KeyError": 1}')


# --- hostile bodies and records ---------------------------------------------------------------

BODIES: dict[str, bytes] = {
    "not JSON (was: JSONDecodeError's 'Expecting value ... (char 0)')": b"not json",
    "truncated JSON": b'{"values": [{"recordId": "1", "data": {"text": "x"',
    "extra data after the object": b'{"values": []} {"values": []}',
    "a lone backslash": b'{"values": "\\"}',
    "invalid UTF-8 (was: 'invalid start byte')": b'{"values": [{"recordId": "1", "data": '
    b'{"text": "caf\xe9"}}]}',
    "a 5,000-digit integer (was: Python's int-digits hint)": b'{"values": [{"recordId": "1", '
    b'"data": {"maximumPageLength": ' + b"9" * 5000 + b"}}]}",
    "JSON nested 100,000 deep": b'{"values": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "NaN and Infinity as page lengths": b'{"values": [{"recordId": "1", "data": {"text": "x", '
    b'"maximumPageLength": NaN, "pageOverlapLength": -Infinity}}]}',
    "UTF-16 with a BOM": '{"values": []}'.encode("utf-16"),
    "a NUL byte": b"\x00",
}

FRONT_MATTER: dict[str, str] = {
    "a tab (was: ScannerError's 'found character')": "\ttitle: x",
    "an unclosed flow list (was: ParserError)": "title: [unclosed",
    "an unknown tag (was: 'could not determine a constructor')": "title: !shout x",
    "a Python tag": "title: !!python/object/apply:os.system ['true']",
    "an impossible date (was: 'day is out of range for month')": "date: 2024-02-30\ntitle: x",
    "a 5,000-digit integer (was: Python's int-digits hint)": "title: [" + "1" * 5000 + "]",
    "an undefined alias (was: ComposerError)": "title: *nowhere",
    "an unhashable key": "? [a, b]\n: x\ntitle: y",
    "a control character (was: ReaderError)": "title: bell \x07 here",
    "deep nesting": "title: " + "[" * 2000 + "]" * 2000,
    "a duplicate anchor and a merge of a scalar": "a: &x 1\nb: &x 2\nc:\n  <<: *x",
}


@pytest.mark.parametrize("name", list(BODIES))
def test_a_hostile_body_is_answered_in_our_words(name: str) -> None:
    check(answered(BODIES[name]))


@pytest.mark.parametrize("name", list(FRONT_MATTER))
def test_hostile_front_matter_is_warned_about_in_our_words(name: str) -> None:
    text = f"---\n{FRONT_MATTER[name]}\n---\n# Heading\n\nSome words."
    answer = json.loads(answered(record_body(text, format="markdown")))
    (value,) = answer["values"]
    assert value["errors"] == []
    check(json.dumps(value["warnings"], ensure_ascii=False), echoed=FRONT_MATTER[name])


YAMLISH = st.text(alphabet=st.sampled_from(list("ab1:-?[]{}&*!|>'\"#%@`,\t\n \x07\\")), max_size=60)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(YAMLISH)
def test_any_front_matter_is_warned_about_in_our_words(front_matter: str) -> None:
    text = f"---\n{front_matter}\n---\n# Heading\n\nSome words."
    output = chunk_record(InputRecord("1", {"text": text, "format": "markdown"}), Settings())
    for message in (*output.errors, *output.warnings):
        check(message, echoed=front_matter)


# --- embedding faults through the real openai client -----------------------------------------


@pytest.fixture(scope="module")
def stub() -> Iterator[OpenAIStub]:
    with OpenAIStub(dimensions=DIMENSIONS, api_key=KEY) as server:
        yield server


def embedding(stub: OpenAIStub, **changes: Any) -> EmbeddingSettings:
    values: dict[str, Any] = {
        "provider": "azure_openai",
        "dimensions": DIMENSIONS,
        "azure_endpoint": stub.azure_endpoint,
        "azure_deployment": "emb",
        "azure_api_key": KEY,
    }
    return EmbeddingSettings(**{**values, **changes})


class FailingCredential:
    """A Microsoft Entra ID credential that fails as azure-identity's do, verbosely."""

    def get_token(self, *scopes: str, **kwargs: object) -> object:
        raise RuntimeError(f"ManagedIdentityCredential: {UPSTREAM}")


STUB_FAULTS: dict[str, Reply] = {
    "401 quoting a masked key (was: copied into the record)": Reply(
        status=401, message=f"Incorrect API key provided: {MASKED_KEY}. {UPSTREAM}"
    ),
    "403": Reply(status=403, message=f"Principal does not have access. {UPSTREAM}"),
    "404": Reply(status=404, message=f"The API deployment does not exist. {UPSTREAM}"),
    "400": Reply(status=400, message=f"maximum context length is 8192 tokens {UPSTREAM}"),
    "422": Reply(status=422, message=UPSTREAM),
    "500": Reply(status=500, message=UPSTREAM),
    "503 with an HTML page": Reply(
        status=503, body=f"<h1>{UPSTREAM}</h1>".encode(), content_type="text/html"
    ),
    "429": Reply(status=429, retry_after_ms=1, message=UPSTREAM),
    "malformed JSON (was: JSONDecodeError)": Reply(body=b'{"data": [{"index": 0, "embedd'),
    "JSON null (was: AttributeError)": Reply(body=b"null"),
    "a JSON array": Reply(body=b"[]"),
    "items without embeddings (was: AttributeError)": Reply(
        mangle=lambda data: [{"index": item["index"]} for item in data]
    ),
    "no vectors (was: the openai package's 'No embedding data received')": Reply(drop=99),
    "HTML with status 200": Reply(body=f"<p>{UPSTREAM}</p>".encode(), content_type="text/html"),
    "a reset connection": Reply(disconnect=True),
}

SETTINGS_FAULTS: dict[str, dict[str, Any]] = {
    "a key with a line break (was: the key in 'Illegal header value')": {
        "azure_api_key": "words\nkey"
    },
    "a non-ASCII key (was: UnicodeEncodeError's 'ordinal not in range')": {
        "azure_api_key": "caf\u00e9"
    },
    "an ftp endpoint": {"azure_endpoint": "ftp://x"},
    "https to a plain-HTTP server (was: '[SSL: WRONG_VERSION_NUMBER]')": {"https": True},
    "a failing managed identity (was: RuntimeError and its message)": {"azure_api_key": None},
}


def embedded_answer(stub: OpenAIStub, **changes: Any) -> str:
    if changes.pop("https", False):
        changes["azure_endpoint"] = stub.azure_endpoint.replace("http://", "https://")
    chosen = embedding(stub, **changes)
    embedder = build_embedder(chosen, retry=FAST, credential=FailingCredential())
    assert embedder is not None
    settings = Settings(deadline_seconds=2.0, embedding=chosen)
    return answered(record_body("# Title\n\nSome words to embed."), settings, embedder)


@pytest.mark.integration
@pytest.mark.parametrize("name", list(STUB_FAULTS))
def test_an_embedding_fault_is_answered_in_our_words(stub: OpenAIStub, name: str) -> None:
    stub.reset()
    stub.default = STUB_FAULTS[name]
    check(embedded_answer(stub))


@pytest.mark.integration
@pytest.mark.parametrize("name", list(SETTINGS_FAULTS))
def test_embedding_settings_that_fail_are_answered_in_our_words(
    stub: OpenAIStub, name: str
) -> None:
    stub.reset()
    check(embedded_answer(stub, **SETTINGS_FAULTS[name]))


def test_a_failing_local_model_is_answered_in_our_words() -> None:
    def load() -> Any:
        raise OSError(f"[Errno 2] No such file or directory: '/models/{UPSTREAM}'")

    local = EmbeddingSettings(provider="local", model="all-MiniLM-L6-v2", dimensions=384)
    embedder = build_embedder(local, retry=FAST, local_loader=load)
    check(answered(record_body("Some words."), Settings(embedding=local), embedder))


# --- bugs: an exception where none is expected ----------------------------------------------


class ExplodingClient:
    """An EmbeddingClient with a bug: it raises what no client should."""

    description = "exploding client"

    async def embed_batch(self, texts: Sequence[str], timeout: float) -> ClientReply:
        raise AttributeError(f"'NoneType' object has no attribute '{UPSTREAM}'")

    async def aclose(self) -> None:
        pass


class ExplodingText(str):
    """Record text whose slices raise: a bug inside chunking."""

    __slots__ = ()

    def __getitem__(self, key: Any) -> str:
        raise KeyError(UPSTREAM)


class ExplodingData(dict[str, object]):
    """Record data whose reading raises: a bug outside chunking, inside the batch."""

    def get(self, key: str, default: object = None) -> object:
        raise TypeError(f"unhashable type: '{UPSTREAM}'")


def test_a_bug_in_an_embedding_client_is_answered_in_our_words() -> None:
    embedder = BatchEmbedder(
        ExplodingClient(),
        TokenSizer(load_encoding("cl100k_base")),
        dimensions=DIMENSIONS,
        max_input_tokens=8191,
        batch_size=16,
        batch_tokens=300_000,
        concurrency=1,
        retry=FAST,
    )
    check(answered(record_body("Some words."), embedder=embedder))


def test_a_bug_inside_chunking_is_answered_in_our_words(caplog: pytest.LogCaptureFixture) -> None:
    """Was: 'internal error while chunking: KeyError: ...' with the exception's text."""
    with caplog.at_level(logging.ERROR):
        output = chunk_record(InputRecord("1", {"text": ExplodingText("# T\n\nwords")}), Settings())
    (message,) = output.errors
    check(message)
    assert UPSTREAM in caplog.text  # the details are in the logs


def test_a_bug_outside_chunking_is_answered_in_our_words(caplog: pytest.LogCaptureFixture) -> None:
    """Was: 'internal error while answering this record: TypeError: ...'."""
    records = [InputRecord("1", ExplodingData(text="x")), InputRecord("2", {"text": "Fine."})]
    with caplog.at_level(logging.ERROR):
        outputs = asyncio.run(
            chunk_within_deadline(records, Settings(), time.monotonic() + 30.0, ThreadChunker())
        )
    assert isinstance(outputs, list)
    assert [output.record_id for output in outputs] == ["1", "2"]
    (message,) = outputs[0].errors
    check(message)
    assert outputs[1].errors == ()
    assert UPSTREAM in caplog.text


def test_a_failing_markdown_parser_is_warned_about_in_our_words() -> None:
    """Was: 'the markdown parser failed (ValueError: ...)'."""

    def broken(text: str) -> ParsedMarkdown:
        raise ValueError(UPSTREAM)

    (warning,) = parse_markdown("# Title\n\nBody.\n", parser=broken).warnings
    check(warning)
    assert "fallback" in warning


def test_a_bug_outside_any_record_is_answered_in_our_words(call_function: FunctionCaller) -> None:
    """Was: 'internal error: RuntimeError; see the function's logs'."""
    app = func.AsgiFunctionApp(
        app=build_app(Settings(), embedder=ExplodingEmbedder(UPSTREAM)),
        http_auth_level=func.AuthLevel.FUNCTION,
    )
    response = call_function(app, "POST", "/api/chunk", record_body("Some words."))
    assert response.status_code == 500
    check(response.get_body().decode("utf-8"))
