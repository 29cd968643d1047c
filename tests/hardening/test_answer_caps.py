"""Bounded answers: chunks per record (MAX_CHUNKS_PER_RECORD) and answer bytes per
request (MAX_RESPONSE_BYTES), each refusing per record with what to change (issue 26)."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace

import httpx
import pytest

from chunking import ChunkOptions, WordWindows, chunk_document
from chunking.options import TooManyChunks
from skills.skill.answer_caps import (
    FLOAT_JSON_BYTES,
    AnswerCap,
    _surely_fits,
    cap_answer,
    chunk_count,
    refused_alone,
    vector_bytes,
)
from skills.skill.chunk_records import chunk_record
from skills.skill.chunker_state import Done
from skills.skill.contract import (
    RESPONSE_CLOSE,
    RESPONSE_OPEN,
    InputRecord,
    render_record,
    render_response,
)
from skills.skill.records import OutputRecord
from skills.skill.render import record_data
from skills.skill.service import answer_chunk_request, text_slices
from skills.skill.settings import Settings
from skills.skill.thread_chunker import ThreadChunker
from skills.skill.workers import ProcessChunker
from tests.conftest import GUIDE, LiveServers, good_record_data, skill_body
from tests.skill.typed_chunks import a_chunk

TIMEOUT = httpx.Timeout(120.0)
WORDS = " ".join(f"w{n}" for n in range(3000))
"""3,000 short words: one chunk per word with wordsPerChunk 1 (~1.3 MB of answer)."""


def output(record_id: str, chunks: int, text: str = "x" * 100) -> OutputRecord:
    return OutputRecord(record_id, tuple(a_chunk(text, n) for n in range(chunks)), warnings=("w",))


# --- answer bytes per request ----------------------------------------------------------------


def test_records_that_fit_are_left_alone() -> None:
    outputs = [output("a", 3), output("b", 2)]
    assert cap_answer(outputs, len(render_response(outputs))) == outputs


def test_a_record_past_the_limit_is_refused_and_later_ones_that_fit_are_kept() -> None:
    small, big = output("a", 3), output("b", 40)
    limit = len(render_response([small, output("c", 3)])) + 1000
    capped = cap_answer([small, big, output("c", 3)], limit)
    assert capped[0] == small
    assert capped[1].chunks is None
    (message,) = capped[1].errors
    assert message.startswith("not answered: this record's chunks would take ")
    assert "more than the" in message
    assert "app setting MAX_RESPONSE_BYTES" in message
    assert "raise maximumPageLength" in message
    assert capped[1].warnings == ("w",)  # its warnings stay
    assert capped[2] == output("c", 3)
    assert len(render_response(capped)) <= limit


def test_a_record_that_fits_alone_but_not_after_the_others_says_lower_the_batch_size() -> None:
    first, second = output("a", 10), output("b", 10)
    limit = len(render_response([first])) + 50
    (refused,) = cap_answer([first, second], limit)[1:]
    (message,) = refused.errors
    assert "and the records before it in the batch took" in message
    assert "lower the skill's batchSize" in message


def test_vectors_still_to_come_are_counted_at_their_most() -> None:
    record = output("a", 4)
    plain = len(render_response([record]))
    per_chunk = vector_bytes(1536)
    assert cap_answer([record], plain + 4 * per_chunk, per_chunk) == [record]
    assert cap_answer([record], plain + 4 * per_chunk - 1, per_chunk)[0].errors
    # The estimate is an upper bound of the vectors as rendered.
    worst = [-2.2250738585072014e-308] * 1536
    rendered = OutputRecord("a", (replace(a_chunk("x" * 100), embedding=worst),))
    bare = OutputRecord("a", (a_chunk("x" * 100),))
    assert len(render_record(rendered)) - len(render_record(bare)) <= per_chunk
    assert len(repr(worst[0])) + 1 == FLOAT_JSON_BYTES


def test_the_whole_answer_is_within_the_limit_in_process() -> None:
    """26.4's reproduction shape, one word per chunk: the answer stays under the cap, the
    records that fit are answered, the others say what to change."""
    settings = Settings(max_response_bytes=3_000_000, chunk_workers=0)
    values: list[dict[str, object]] = [
        {"recordId": str(n), "data": {"text": WORDS, "strategy": "words", "wordsPerChunk": 1}}
        for n in range(4)
    ]
    answer = asyncio.run(
        answer_chunk_request(skill_body(values), settings, chunker=ThreadChunker())
    )
    assert answer.status == 200
    assert len(answer.body) <= 3_000_000
    records = json.loads(answer.body)["values"]
    assert [bool(record["errors"]) for record in records] == [False, False, True, True]


# --- chunks per record ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "inputs"),
    [
        ({"strategy": "words", "wordsPerChunk": 1}, "raise wordsPerChunk or lower wordOverlap"),
        (
            {"unit": "characters", "maximumPageLength": 300},
            "raise maximumPageLength or lower pageOverlapLength",
        ),
    ],
)
def test_a_record_with_too_many_chunks_is_refused_naming_the_inputs(
    data: dict[str, object], inputs: str
) -> None:
    settings = Settings(max_chunks_per_record=40, chunk_workers=0)
    record = InputRecord("1", {"text": WORDS, **data})
    answered = chunk_record(record, settings)
    assert record_data(answered) == {}
    (message,) = answered.errors
    assert message.startswith("not chunked: the text makes ")
    assert "a record may have at most 40 (app setting MAX_CHUNKS_PER_RECORD)" in message
    assert inputs in message
    assert "maximumPagesToTake" in message


def test_the_words_strategy_stops_planning_past_the_cap() -> None:
    """A window per word is refused once the cap is passed, not after planning them all
    (issue 26.4: the worker held every window, each with its prefix)."""
    settings = Settings(max_chunks_per_record=40, chunk_workers=0)
    record = InputRecord("1", {"text": WORDS, "strategy": "words", "wordsPerChunk": 1})
    (message,) = chunk_record(record, settings).errors
    assert message.startswith("not chunked: the text makes more than 40 chunks, and a record")
    options = ChunkOptions(strategy="words", parameters=WordWindows(1, 0), max_chunks=40)
    with pytest.raises(TooManyChunks):
        chunk_document(WORDS, options=options, format="text")


def test_maximum_pages_to_take_keeps_a_record_under_the_chunk_cap() -> None:
    settings = Settings(max_chunks_per_record=100, chunk_workers=0)
    data = {"text": WORDS, "strategy": "words", "wordsPerChunk": 1, "maximumPagesToTake": 100}
    answered = chunk_record(InputRecord("1", data), settings)
    assert answered.errors == ()
    assert len(answered.chunks or ()) == 100


# --- over real HTTP -------------------------------------------------------------------------

AMPLIFIER = {
    "text": WORDS,
    "title": "T " * 2000,
    "strategy": "words",
    "wordsPerChunk": 1,
    "maximumPageLength": 8191,
}
"""A record of ~20 KB whose every chunk carries a 4,000-character title: ~3,000 chunks of
~12 KB each, ~36 MB of answer (issue 26.4's shape, within the overlap bound)."""


@pytest.fixture(scope="module")
def server(live_servers: LiveServers) -> str:
    return live_servers.start(Settings(max_response_bytes=8 * 2**20, deadline_seconds=100.0))


@pytest.mark.integration
def test_an_amplifying_batch_is_answered_within_the_cap_over_http(server: str) -> None:
    """Regression (issue 26.4): a 58.9 KB request was answered with 531 MB. Now a batch
    whose records would answer ~36 MB each gets a 200 within MAX_RESPONSE_BYTES, every
    record answered: the small one chunked, each amplifying one refused with what to
    change."""
    values: list[dict[str, object]] = [
        {"recordId": "small", "data": {"text": "# A\n\nShort text."}},
        {"recordId": "a1", "data": AMPLIFIER},
        {"recordId": "a2", "data": AMPLIFIER},
    ]
    body = skill_body(values)
    assert len(body) < 60_000
    response = httpx.post(f"{server}/api/chunk", content=body, timeout=TIMEOUT)
    assert response.status_code == 200
    assert len(response.content) <= 8 * 2**20
    small, a1, a2 = response.json()["values"]
    assert small["errors"] == []
    assert small["data"]["chunks"]
    for refused in (a1, a2):
        (error,) = refused["errors"]
        assert "app setting MAX_RESPONSE_BYTES" in error["message"]
        assert "raise maximumPageLength, or wordsPerChunk" in error["message"]


@pytest.mark.integration
def test_a_word_overlap_of_half_the_window_is_refused_over_http(server: str) -> None:
    """Regression (issue 26.4): wordOverlap could be wordsPerChunk - 1, a window per word."""
    data = {"text": WORDS, "strategy": "words", "wordsPerChunk": 100, "wordOverlap": 99}
    response = httpx.post(
        f"{server}/api/chunk",
        content=skill_body([{"recordId": "1", "data": data}]),
        timeout=TIMEOUT,
    )
    (value,) = response.json()["values"]
    assert value["errors"] == [
        {
            "message": "wordOverlap must be at least 0 and less than half of wordsPerChunk "
            "(< 50; got 99)"
        }
    ]


# --- slices ---------------------------------------------------------------------------------


def test_records_are_chunked_in_slices_of_about_the_given_text() -> None:
    records = [InputRecord(str(n), {"text": "x" * size}) for n, size in enumerate([3, 3, 9, 1])]
    slices = text_slices([*records, InputRecord("none", None)], 6)
    assert [[r.record_id for r in part] for part in slices] == [["0", "1"], ["2"], ["3", "none"]]
    assert text_slices([], 6) == [[]]


def test_the_cap_counts_across_slices() -> None:
    """A cap fed slice by slice refuses what one fed at once refuses."""
    outputs = [output(str(n), 5 + n) for n in range(8)]
    limit = len(render_response(outputs[:5])) + 10
    cap = AnswerCap(limit)
    in_slices = cap.keep(outputs[:3]) + cap.keep(outputs[3:])
    assert in_slices == cap_answer(outputs, limit)
    assert [bool(record.errors) for record in in_slices] == [False] * 5 + [True] * 3


# --- in the worker ----------------------------------------------------------------------------


def test_a_worker_refuses_an_answer_too_big_to_send_before_it_reaches_the_app() -> None:
    """Regression (the soak's peak): a 16-million-character record made ~400 MB of answer
    that crossed to the app, which held it several times over only to refuse it. The
    worker now sends the refusal instead: what crosses is one error, not the chunks."""
    settings = Settings(max_response_bytes=200_000, chunk_workers=1)
    big = "\n\n".join(GUIDE.format(n=n) for n in range(400))  # ~180 KB: ~1 MB of answer
    records = [InputRecord("big", {"text": big}), InputRecord("small", {"text": "# A\n\nB."})]
    pool = ProcessChunker(1)
    try:

        async def go() -> list[object]:
            return list(await pool.chunk(records, settings, time.monotonic() + 60))

        refused, kept = asyncio.run(go())
    finally:
        asyncio.run(pool.aclose())
    assert isinstance(refused, Done)
    assert isinstance(kept, Done)
    assert record_data(refused.output) == {}
    (message,) = refused.output.errors
    assert "more than the 200,000 bytes an answer may take" in message
    assert kept.output.chunks


@pytest.mark.parametrize("dimensions", [0, 1536])
def test_an_answer_judged_to_surely_fit_does_fit(dimensions: int) -> None:
    """The worker skips rendering records whose bound is within the cap: the bound must
    never be below the record's real size, on ASCII, non-ASCII and HTML records."""
    per_chunk = vector_bytes(dimensions) if dimensions else 0
    for n in range(12):
        record = InputRecord(str(n), good_record_data(n))
        produced = chunk_record(record, Settings())
        size = len(render_record(produced)) + chunk_count(produced) * per_chunk
        answer = size + len(RESPONSE_OPEN) + len(RESPONSE_CLOSE)
        assert chunk_count(produced)
        assert not _surely_fits(produced, size - 1, per_chunk)
        if not dimensions:  # the default provider is none: no vectors to come
            assert refused_alone(produced, Settings(max_response_bytes=answer - 1)).errors
            assert refused_alone(produced, Settings(max_response_bytes=answer)) == produced
