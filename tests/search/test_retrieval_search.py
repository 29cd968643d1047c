"""`search_and_merge`: the real azure-search-documents SDK against a local Search stub.

The stub holds chunk documents projected from the real skill's output with the
skillset's own mappings (offsets included), answers a scripted ranking, and keeps the
request bodies: the SDK must send the vector query, `select` and `top`, and the
passages must be slices of the source with their citations.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

import pytest
from azure.core.credentials import AzureKeyCredential
from azure.core.exceptions import HttpResponseError
from azure.search.documents import SearchClient

from skills.search.definitions import SEMANTIC_CONFIGURATION, build_definitions
from skills.search.indexer import ReplayReport, project, replay_setup, validate_documents
from skills.search.retrieval import INDEX_FIELDS, OFFSET_FIELDS, search_and_merge
from skills.skill.library import chunk_records
from skills.skill.render import chunk_json
from skills.skill.settings import Settings
from testing.search_stub import SearchStub

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.integration

DIMENSIONS = 16
SEARCH_KEY = "search-admin-key"
URL = "https://docs.example/guide.md"
SOURCE = "# Guide\n\n" + "\n\n".join(
    f"## Part {n}\n\n" + " ".join(f"w{n}{m:02d}🙂" for m in range(120)) for n in range(3)
)
"""One document, long sections (so continuations overlap), characters outside the BMP."""
OTHER = "# Other\n\n" + " ".join(f"o{m:03d}" for m in range(150))


def _wire() -> tuple[dict[str, Any], dict[str, Any]]:
    built = build_definitions(
        replay_setup(
            "http://127.0.0.1/api/chunk",
            embedding_dimensions=DIMENSIONS,
            embedding_model="text-embedding-3-small",
        )
    )
    return built.index.as_dict(), built.skillset.as_dict()


def _index_documents() -> list[dict[str, Any]]:
    """The chunk documents the indexer would upload for SOURCE and OTHER."""
    index, skillset = _wire()
    answers = chunk_records(
        [
            {"text": text, "url": url, "unit": "characters", "maximumPageLength": 400}
            | {"pageOverlapLength": 120}
            for text, url in ((SOURCE, URL), (OTHER, "https://docs.example/other.md"))
        ],
        Settings(chunk_workers=0),
    )
    report = ReplayReport()
    for parent, answer in zip(("guide", "other"), answers, strict=True):
        assert answer.ok, answer.errors
        report.documents += project(
            parent,
            {
                "metadata_storage_name": f"{parent}.md",
                "chunks": [chunk_json(c) for c in answer.chunks],
            },
            skillset,
            report,
        )
    validate_documents(report, index, DIMENSIONS, require_vectors=False)
    assert not report.problems, report.problems
    return report.documents


@pytest.fixture
def stub() -> Iterator[SearchStub]:
    with SearchStub(_wire()[0], api_key=SEARCH_KEY) as server:
        yield server


def _client(stub: SearchStub) -> SearchClient:
    return SearchClient(stub.endpoint, "chunks", AzureKeyCredential(SEARCH_KEY))


def _ranking(documents: list[dict[str, Any]], picks: list[tuple[str, int]]) -> list[dict[str, Any]]:
    by = {(d["parent_id"], d["ordinal"]): d for d in documents}
    return [{**by[pick], "@search.score": 10.0 - rank} for rank, pick in enumerate(picks)]


def test_the_top_chunks_come_back_as_merged_passages_with_citations(stub: SearchStub) -> None:
    documents = _index_documents()
    guide = sorted((d for d in documents if d["parent_id"] == "guide"), key=lambda d: d["ordinal"])
    # Neighbours 1 and 2 overlap; a chunk of the other document sits between them.
    assert guide[2]["offset"] < guide[1]["offset"] + guide[1]["length"]
    stub.ranking = _ranking(documents, [("guide", 2), ("other", 0), ("guide", 1), ("guide", 5)])
    passages = search_and_merge(_client(stub), "part one words", 4)

    body = stub.searches[-1]
    assert body["search"] == "part one words"
    assert body["top"] == 4
    assert set(body["select"].split(",")) == {*INDEX_FIELDS, *OFFSET_FIELDS}
    assert body["vectorQueries"] == [
        {"kind": "text", "text": "part one words", "k": 4, "fields": "embedding"}
    ]
    assert [(p.document, p.rank) for p in passages] == [("guide", 0), ("other", 1), ("guide", 3)]
    first = passages[0]
    assert first.start == guide[1]["offset"]
    assert first.end == guide[2]["offset"] + guide[2]["length"]
    assert first.text == SOURCE[first.start : first.end]
    assert first.score == pytest.approx(10.0)
    assert first.citation.chunk_ids == (guide[1]["chunk_id"], guide[2]["chunk_id"])
    assert first.citation.url == guide[1]["url"]
    assert str(first.citation.url).startswith(f"{URL}#part-")
    assert first.citation.headings == tuple(guide[1]["headings"])
    assert passages[1].text == OTHER[passages[1].start : passages[1].end]


def test_a_given_embedder_sends_the_vector_and_hybrid_off_sends_no_text(stub: SearchStub) -> None:
    documents = _index_documents()
    stub.ranking = _ranking(documents, [("guide", 0)])
    search_and_merge(_client(stub), "q", 3, embedder=lambda text: [0.5] * DIMENSIONS, hybrid=False)
    body = stub.searches[-1]
    assert "search" not in body
    (vector,) = body["vectorQueries"]
    assert (vector["kind"], vector["k"], vector["fields"]) == ("vector", 3, "embedding")
    assert vector["vector"] == [0.5] * DIMENSIONS
    search_and_merge(_client(stub), "q", 3, vector_field=None)
    assert "vectorQueries" not in stub.searches[-1]


def test_an_index_without_offsets_is_merged_by_ordinal(stub: SearchStub) -> None:
    """An index made before the offset fields: selecting them is the service's 400, and
    `offsets=False` merges the neighbours by the text they share."""
    old = copy.deepcopy(stub.index)
    old["fields"] = [f for f in old["fields"] if f["name"] not in OFFSET_FIELDS]
    stub.index = old
    documents = [{k: v for k, v in d.items() if k not in OFFSET_FIELDS} for d in _index_documents()]
    stub.ranking = _ranking(documents, [("guide", 2), ("guide", 1)])
    with pytest.raises(HttpResponseError, match="offset"):
        search_and_merge(_client(stub), "q", 2)
    (passage,) = search_and_merge(_client(stub), "q", 2, offsets=False)
    assert passage.start is None
    assert passage.text in SOURCE
    assert passage.text.startswith(documents[1]["content"])
    assert passage.text.endswith(documents[2]["content"])


def test_k_must_be_positive() -> None:
    with pytest.raises(ValueError, match="k must be at least 1"):
        search_and_merge(object(), "q", 0)


def test_the_selected_fields_are_retrievable_fields_of_the_chunk_index() -> None:
    index, _ = _wire()
    fields = {f["name"]: f for f in index["fields"]}
    for name in (*INDEX_FIELDS, *OFFSET_FIELDS):
        assert fields[name].get("retrievable", True), name
    assert fields["offset"]["type"] == fields["length"]["type"] == "Edm.Int32"


def test_semantic_asks_for_the_index_semantic_configuration_and_ranks_by_its_score(
    stub: SearchStub,
) -> None:
    documents = _index_documents()
    ranked = _ranking(documents, [("other", 0), ("guide", 0)])
    ranked[0]["@search.rerankerScore"] = 1.5
    ranked[1]["@search.rerankerScore"] = 3.25
    stub.ranking = ranked
    passages = search_and_merge(_client(stub), "part one words", 2, semantic=True)
    body = stub.searches[-1]
    assert body["queryType"] == "semantic"
    assert body["semanticConfiguration"] == SEMANTIC_CONFIGURATION
    assert body["search"] == "part one words"
    assert [p.score for p in passages] == [1.5, 3.25]


def test_semantic_needs_the_keyword_query() -> None:
    with pytest.raises(ValueError, match="semantic"):
        search_and_merge(object(), "q", 3, hybrid=False, semantic=True)
