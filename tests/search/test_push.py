"""`python -m skills push`: the real azure-search-documents SDK against a local Search stub.

The uploaded chunk documents must be the ones the indexer path projects (the replay of
the same files through the real skill on 127.0.0.1), a second run must upload nothing,
and the SDK's retries must carry 503s and 207 partial failures through.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Any

import pytest
from azure.core.credentials import AzureKeyCredential

from skills.__main__ import main
from skills.embedding.clients import build_embedder
from skills.embedding.settings import EmbeddingSettings
from skills.search.definitions import build_definitions
from skills.search.indexer import read_blob_documents, replay, replay_setup
from skills.search.push import Target, push
from skills.skill.settings import Settings, settings_from_environment
from testing.openai_stub import OpenAIStub
from testing.search_stub import SearchStub
from tests.paths import FIXTURES

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from tests.conftest import LiveServers

DIMENSIONS = 16
MODEL = "text-embedding-3-small"
SEARCH_KEY = "search-admin-key"
OPENAI_KEY = "openai-key"
FILES = [p for p in sorted(FIXTURES.glob("markdown/*.md")) if p.name != "SOURCES.md"][:3] + sorted(
    FIXTURES.glob("html/git-*.html")
)[:2]


def _definitions() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
    built = build_definitions(
        replay_setup(
            "http://127.0.0.1/api/chunk", embedding_dimensions=DIMENSIONS, embedding_model=MODEL
        )
    )
    return (
        built.data_source.as_dict(),
        built.index.as_dict(),
        built.skillset.as_dict(),
        built.indexer.as_dict(),
    )


@pytest.fixture
def openai() -> Iterator[OpenAIStub]:
    with OpenAIStub(dimensions=DIMENSIONS, api_key=OPENAI_KEY) as server:
        yield server


@pytest.fixture
def search() -> Iterator[SearchStub]:
    with SearchStub(_definitions()[1], api_key=SEARCH_KEY) as server:
        yield server


def _settings(openai: OpenAIStub) -> Settings:
    return Settings(
        chunk_workers=0,
        embedding=EmbeddingSettings(
            provider="azure_openai",
            provider_reason="test",
            model=MODEL,
            dimensions=DIMENSIONS,
            azure_endpoint=openai.azure_endpoint,
            azure_deployment="emb",
            azure_api_key=OPENAI_KEY,
        ),
    )


def _push(search: SearchStub, openai: OpenAIStub, files: list[Path]) -> Any:
    settings = _settings(openai)
    return push(
        read_blob_documents(files),
        Target(search.endpoint, "chunks", AzureKeyCredential(SEARCH_KEY)),
        settings=settings,
        embedder=build_embedder(settings.embedding),
        embedding_dimensions=DIMENSIONS,
    )


def test_push_uploads_what_the_indexer_path_projects_and_a_second_run_nothing(
    search: SearchStub, openai: OpenAIStub, live_servers: LiveServers
) -> None:
    summary = _push(search, openai, FILES)
    assert summary.ok, summary
    assert summary.unchanged == 0
    assert summary.changed == len(FILES)

    skill = live_servers.start(_settings(openai))
    data_source, index, skillset, indexer = _definitions()
    for member in skillset["skills"]:
        member["uri"] = f"{skill}/api/chunk"
    report = replay(
        read_blob_documents(FILES),
        data_source,
        index,
        skillset,
        indexer,
        embedding_dimensions=DIMENSIONS,
        embedding_model=MODEL,
        require_vectors=True,
        retry_delay=0.001,
    )
    assert report.ok, report.problems
    projected = {doc["chunk_id"]: doc for doc in report.documents}
    assert summary.uploaded == len(projected) > len(FILES)
    assert search.documents == projected  # same keys, same fields, same values, same vectors

    requests_before = len(search.indexing_requests())
    embeddings_before = len(openai.requests)
    again = _push(search, openai, FILES)
    assert again.ok
    assert again.unchanged == len(FILES)
    assert (again.uploaded, again.deleted) == (0, 0)
    assert len(search.indexing_requests()) == requests_before
    assert len(openai.requests) == embeddings_before  # nothing re-embedded either


def test_a_changed_document_replaces_its_chunks_and_deletes_the_stale_ones(
    search: SearchStub, openai: OpenAIStub, tmp_path: Path
) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# Guide\n\n" + "".join(f"## Part {n}\n\n{'word ' * 300}\n\n" for n in range(6))
    )
    first = _push(search, openai, [tmp_path])
    assert first.ok
    before = set(search.documents)
    page.write_text("# Guide\n\n## Part 0\n\nOnly this is left.\n")
    second = _push(search, openai, [tmp_path])
    assert second.ok
    assert (second.changed, second.unchanged) == (1, 0)
    after = set(search.documents)
    assert len(after) == 1
    assert second.deleted == len(before - after) > 0
    (only,) = search.documents.values()
    assert "Only this is left." in only["content"]


def test_503s_and_retryable_207_failures_are_retried_by_the_sdk(
    search: SearchStub, openai: OpenAIStub
) -> None:
    search.unavailable = 1
    documents = read_blob_documents(FILES[:1])
    summary = _push(search, openai, FILES[:1])
    assert summary.ok, summary
    statuses = [e.status for e in search.indexing_requests()]
    assert statuses[0] == 503
    assert statuses[-1] == 200
    assert len(search.documents) == summary.uploaded > 0
    del documents


def test_a_permanently_refused_chunk_is_reported_and_the_rest_land(
    search: SearchStub, openai: OpenAIStub, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(FILES[0], folder / FILES[0].name)
    probe = _push(search, openai, [folder])
    keys = sorted(search.documents)
    assert probe.ok
    assert len(keys) > 2
    search.documents.clear()
    search.refuse(keys[0], 400)
    search.refuse(keys[1], 503)  # once: the sender retries it
    summary = _push(search, openai, [folder])
    assert set(summary.failed_keys) == {keys[0]}
    assert not summary.ok
    assert set(search.documents) == set(keys) - {keys[0]}
    assert 207 in [e.status for e in search.indexing_requests()]


def test_batches_stay_within_the_services_limits(
    search: SearchStub, openai: OpenAIStub, tmp_path: Path
) -> None:
    for number in range(3):
        page = tmp_path / f"long-{number}.md"
        # Parts as long as a chunk, so each is one: over 1,000 chunks per document.
        page.write_text("".join(f"## Part {n}\n\n{'word ' * 400}\n\n" for n in range(1200)))
    summary = _push(search, openai, [tmp_path])
    assert summary.ok
    assert summary.uploaded > 1000
    sizes = [e.documents for e in search.indexing_requests()]
    assert max(sizes) <= 1000
    assert sum(sizes) == summary.uploaded


def _command_line(argv: list[str]) -> int:
    """`python -m skills push ARGV` with the settings read afresh from the environment."""
    settings_from_environment.cache_clear()
    try:
        return main(["push", *argv])
    finally:
        settings_from_environment.cache_clear()


def test_the_command_line_pushes_and_says_what_it_did(
    search: SearchStub, openai: OpenAIStub, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv("AZURE_SEARCH_ENDPOINT", search.endpoint)
    monkeypatch.setenv("AZURE_SEARCH_KEY", SEARCH_KEY)
    monkeypatch.setenv("EMBEDDING_PROVIDER", "none")
    code = _command_line([str(FILES[0]), "--index", "chunks"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "1 document(s): 0 unchanged, 1 changed, 0 failed" in out
    assert len(search.documents) > 0


def test_without_a_service_the_command_line_says_how_to_name_one(
    monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.delenv("AZURE_SEARCH_ENDPOINT", raising=False)
    monkeypatch.setenv("EMBEDDING_PROVIDER", "none")
    code = _command_line([str(FILES[0]), "--index", "chunks"])
    assert code == 2
    assert "AZURE_SEARCH_ENDPOINT" in capsys.readouterr().err
