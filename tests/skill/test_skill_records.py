"""Records stay typed until the response: chunking, the worker pipe and embedding hand on
`ChunkRecord`s, and `skills.skill.render` alone makes their wire JSON (issue 29)."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import fields, replace
from multiprocessing.reduction import ForkingPickler

from skills.chunk_schema import CHUNK_MEMBERS
from skills.embedding.embedder import EmbeddingOutcome, EmbeddingStats
from skills.embedding.scoring import ScoringService
from skills.skill.answer_caps import AnswerCap
from skills.skill.chunk_records import chunk_record
from skills.skill.chunker_state import Done
from skills.skill.contract import (
    RESPONSE_CLOSE,
    RESPONSE_OPEN,
    InputRecord,
    Rendered,
    render_record,
    render_response,
)
from skills.skill.embed_records import attach_embeddings, texts_to_embed
from skills.skill.records import ChunkRecord, OutputRecord
from skills.skill.render import chunk_json, record_data
from skills.skill.service import answer_cap, chunk_and_cap
from skills.skill.settings import Settings
from skills.skill.thread_chunker import ThreadChunker
from skills.skill.workers import ProcessChunker
from tests.conftest import GUIDE

DOCUMENT = "\n\n".join(GUIDE.format(n=n) for n in range(6))


def chunked(record_id: str = "1", text: str = DOCUMENT) -> OutputRecord:
    return chunk_record(
        InputRecord(record_id, {"text": text, "url": "https://x.test/g"}), Settings()
    )


def test_the_chunk_records_fields_are_the_schemas_members_in_order() -> None:
    assert [field.name for field in fields(ChunkRecord)] == [
        member.attribute for member in CHUNK_MEMBERS
    ]


def test_the_rendered_chunk_has_the_schemas_members_in_order() -> None:
    (chunk, *_) = chunked().chunks or ()
    names = [member.name for member in CHUNK_MEMBERS]
    assert list(chunk_json(chunk)) == [name for name in names if name != "embedding"]
    vector = [0.5, -0.25]
    embedded = chunk_json(replace(chunk, embedding=vector))
    assert list(embedded) == names
    assert embedded["embedding"] == vector


def test_the_chunk_stage_answers_typed_records() -> None:
    output = chunked()
    assert output.chunks
    assert all(isinstance(chunk, ChunkRecord) for chunk in output.chunks)


def test_the_worker_processes_send_typed_records_back() -> None:
    records = [InputRecord("1", {"text": DOCUMENT})]
    pool = ProcessChunker(1)
    try:

        async def go() -> list[object]:
            return list(await pool.chunk(records, Settings(), time.monotonic() + 60))

        (outcome,) = asyncio.run(go())
    finally:
        asyncio.run(pool.aclose())
    assert isinstance(outcome, Done)
    assert outcome.output == chunk_record(records[0], Settings())
    assert all(isinstance(chunk, ChunkRecord) for chunk in outcome.output.chunks or ())


def test_a_typed_answer_pickles_no_bigger_than_its_json_data() -> None:
    """What a worker sends through its pipe: the typed answer costs fewer bytes than the
    `data` dict the workers sent before (the same answer, rendered)."""
    output = chunked()
    as_data = (output.record_id, record_data(output), output.errors, output.warnings)
    assert len(ForkingPickler.dumps(output)) <= len(ForkingPickler.dumps(as_data))


def test_embedding_puts_each_vector_on_a_new_typed_record() -> None:
    first, second = chunked("a"), chunked("b", "# Other\n\nWords.")
    texts = texts_to_embed([first, second])
    assert [where.text for where in texts] == [
        chunk.text for output in (first, second) for chunk in output.chunks or ()
    ]
    vectors = tuple([float(position)] for position in range(len(texts)))
    stats = EmbeddingStats(len(texts), len(texts), 0, 0, 1, 1, 0, 0, 0.0)
    embedded = attach_embeddings([first, second], texts, EmbeddingOutcome(vectors, stats))
    got = [chunk.embedding for output in embedded for chunk in output.chunks or ()]
    assert got == list(vectors)
    # The chunked records are left as they were: vectors are on new ones.
    assert all(chunk.embedding is None for chunk in first.chunks or ())
    (rendered,) = json.loads(render_record(embedded[1]))["data"]["chunks"]
    assert rendered["embedding"] == vectors[-1]


def test_record_data_is_empty_for_a_failed_record_and_parallel_for_a_chunked_one() -> None:
    assert record_data(OutputRecord("1", errors=("no",))) == {}
    output = chunked()
    data = record_data(output)
    chunks = data["chunks"]
    assert isinstance(chunks, list)
    assert data["textItems"] == [chunk["text"] for chunk in chunks]
    assert data["offsets"] == [chunk["offset"] for chunk in chunks]
    assert data["lengths"] == [chunk["length"] for chunk in chunks]
    assert data["ordinalPositions"] == list(range(1, len(chunks) + 1))


def test_the_cap_keeps_the_bytes_it_measured_for_the_response_to_reuse() -> None:
    outputs = [chunked("a"), chunked("b", "# Other\n\nWords."), chunked("c")]
    limit = len(render_response(outputs[:2])) + 10
    store: Rendered = {}
    kept = AnswerCap(limit).keep(outputs, store)
    assert kept[2].errors  # refused: no room left
    assert [store[output.record_id][0] for output in kept] == kept
    assert all(store[output.record_id][1] == render_record(output) for output in kept)
    assert render_response(kept, store) == render_response(kept)


def test_the_response_reuses_a_rendering_only_for_the_same_record() -> None:
    output = chunked("a")
    marked = b'{"recordId":"a","data":{},"errors":[],"warnings":[]}'
    assert render_response([output], {"a": (output, marked)}) == RESPONSE_OPEN + marked + (
        RESPONSE_CLOSE
    )
    embedded = replace(output, warnings=("changed after the cap",))
    assert render_response([embedded], {"a": (output, marked)}) == render_response([embedded])


def test_a_one_slice_answer_keeps_every_rendering_for_the_response() -> None:
    records = [InputRecord("a", {"text": DOCUMENT}), InputRecord("b", {"text": "# B\n\nWords."})]
    store: Rendered = {}

    async def go() -> object:
        return await chunk_and_cap(
            records,
            Settings(),
            time.monotonic() + 60,
            ThreadChunker(),
            ScoringService(),
            rendered=store,
            cap=answer_cap(Settings(), embeds=False),
        )

    answered = asyncio.run(go())
    assert isinstance(answered, list)
    assert all(store[output.record_id][0] is output for output in answered)
