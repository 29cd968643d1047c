"""`python -m infra.replay` as documented: vector size from the skill, progress, one line per
problem, folders without their subfolders unless asked (issue 30, item 3)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from infra import replay as replay_module
from infra.replay import embeddings_of, serve_locally
from skills.search.indexer import read_blob_documents
from skills.skill.service import answer_chunk_request
from skills.skill.settings import Settings
from tests.paths import ROOT

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from starlette.requests import Request

pytestmark = pytest.mark.integration

SAMPLE = ROOT / "samples" / "concepts-network.md"


class EmbeddingSkill:
    """The real skill's chunks with vectors of `dimensions`, and a health that says so."""

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions

    async def chunk(self, request: Request) -> Response:
        answer = await answer_chunk_request(await request.body(), Settings())
        body = json.loads(answer.body)
        for value in body["values"]:
            for chunk in value["data"].get("chunks", []):
                chunk["embedding"] = [0.5] * self.dimensions
        return Response(json.dumps(body).encode(), media_type="application/json")

    async def health(self, request: Request) -> Response:
        return JSONResponse(
            {"status": "ok", "embedding": {"model": "e5", "dimensions": self.dimensions}}
        )


@pytest.fixture
def skill_384() -> Iterator[str]:
    skill = EmbeddingSkill(384)
    app = Starlette(
        routes=[
            Route("/api/chunk", skill.chunk, methods=["POST"]),
            Route("/api/health", skill.health, methods=["GET"]),
        ]
    )
    with serve_locally(app) as endpoint:
        yield endpoint


def test_the_vector_size_comes_from_the_skills_health(
    skill_384: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = replay_module.main([str(SAMPLE), "--endpoint", skill_384], environ={})
    captured = capsys.readouterr()
    assert status == 0, captured.out
    assert "OK: the indexer pipeline would work" in captured.out
    assert "384 dimensions (from the skill's /api/health)" in captured.err
    assert "request 1/1 answered: HTTP 200" in captured.err


def test_a_wrong_vector_size_is_one_line_for_all_chunks(
    skill_384: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status = replay_module.main(
        [str(SAMPLE), "--endpoint", skill_384, "--dimensions", "1536"], environ={}
    )
    out = capsys.readouterr().out
    assert status == 1
    problems = [line for line in out.splitlines() if line.startswith("PROBLEM")]
    assert len(problems) == 1, problems
    assert "the vector has 384 dimensions, the field 1536" in problems[0]
    assert " of " in problems[0]
    assert "chunks, e.g. chunk" in problems[0]


def test_without_a_health_the_default_says_how_to_set_it() -> None:
    found = embeddings_of("http://127.0.0.1:9/api/chunk", None, None, {})
    assert found.dimensions == 1536
    assert "pass --dimensions N" in found.source
    assert embeddings_of("http://x", None, None, {"EMBEDDING_DIMENSIONS": "64"}).dimensions == 64


def test_folders_are_read_without_their_subfolders_unless_asked(
    tmp_path: Path, skill_384: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "top.md").write_text("# Top\n\nText.\n", encoding="utf-8")
    (tmp_path / "eval").mkdir()
    (tmp_path / "eval" / "deep.md").write_text("# Deep\n\nText.\n", encoding="utf-8")
    shallow = read_blob_documents([tmp_path], recursive=False)
    assert [doc.fields["metadata_storage_name"] for doc in shallow] == ["top.md"]
    deep = read_blob_documents([tmp_path])
    assert sorted(doc.fields["metadata_storage_name"] for doc in deep) == ["deep.md", "top.md"]
    assert replay_module.main([str(tmp_path), "--endpoint", skill_384], environ={}) == 0
    err = capsys.readouterr().err
    assert "not read: 1 subfolder(s)" in err
    assert "--recursive reads them" in err
    assert "sending 1 document(s)" in err
