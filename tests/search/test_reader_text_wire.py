"""Issue 37, item 1, on the wire: the skill answers each chunk's `readerText` over real
HTTP, and the deployed definitions' index projection maps it into the index's
`reader_text` field, which the Search stub stores and gives back."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from azure.core.credentials import AzureKeyCredential
from azure.search.documents import SearchClient

from infra import deploy
from skills.chunk_schema import index_field_for
from skills.search.definitions import CHUNK_FIELD_SOURCES, CHUNKS_CONTEXT
from skills.skill.settings import Settings
from testing.search_stub import SearchStub
from tests.search.test_infra_replay import SEARCH_KEY, definitions, run

if TYPE_CHECKING:
    from pathlib import Path

    from tests.conftest import LiveServers

pytestmark = pytest.mark.integration

HEADER = "| setting | default | meaning |\n| --- | --- | --- |\n"
DOCUMENT = (
    "# Service limits\n\n## Settings\n\n"
    + HEADER
    + "".join(
        f"| setting_{i} | {i * 16} | what setting number {i} changes in the service |\n"
        for i in range(120)
    )
    + "\n## Install script\n\n```bash\n"
    + "".join(
        f"az resource create --name item-{i} --kind storage --sku standard\n" for i in range(120)
    )
    + "```\n"
)
"""A table and a code block each longer than one chunk at the deployed 512 tokens."""


@pytest.fixture(scope="module")
def skill(live_servers: LiveServers) -> str:
    """The real skill (no embedding provider) on 127.0.0.1."""
    return live_servers.start(Settings())


def _check_reader_texts(chunks: list[dict[str, Any]], content: str, reader: str) -> None:
    """Every chunk's reader text is whole: a table continuation has its header rows after
    the title and path, code has both its fences."""
    tables = [c for c in chunks if c[content].startswith("| setting_")]
    code = [c for c in chunks if c[content].startswith("az resource create")]
    assert tables
    assert code
    for chunk in tables:
        assert chunk[reader] == "Service limits › Settings\n\n" + HEADER + chunk[content]
    for chunk in code:
        assert chunk[reader].startswith("Service limits › Install script\n\n```bash\naz ")
        assert chunk[reader].endswith("\n```")
    for chunk in chunks:
        assert chunk[reader].count("```") % 2 == 0
        assert chunk[content] in chunk[reader]


def test_the_skill_answers_reader_text_over_http(skill: str) -> None:
    body = {"values": [{"recordId": "1", "data": {"text": DOCUMENT, "format": "markdown"}}]}
    response = httpx.post(f"{skill}/api/chunk", json=body, timeout=60.0)
    assert response.status_code == 200
    (value,) = response.json()["values"]
    assert value["errors"] == []
    chunks = value["data"]["chunks"]
    _check_reader_texts(chunks, "content", "readerText")
    # The embedded text is as it was: no header or fence repeated in a continuation.
    for chunk in chunks:
        assert chunk["text"].endswith(chunk["content"])
        assert value["data"]["textItems"][chunk["ordinal"]] == chunk["text"]


def test_the_deployed_projection_maps_reader_text_into_the_index(
    skill: str, tmp_path: Path
) -> None:
    assert CHUNK_FIELD_SOURCES["reader_text"] == f"{CHUNKS_CONTEXT}/readerText"
    field = index_field_for("readerText")
    assert (field.name, field.searchable) == ("reader_text", False)
    # What `python -m infra.deploy show` prints is what is deployed.
    assert deploy.main(["show", "--out", str(tmp_path)], environ={}) == 0
    skillset = json.loads((tmp_path / "skillset.json").read_text(encoding="utf-8"))
    shown_index = json.loads((tmp_path / "index.json").read_text(encoding="utf-8"))
    (projection,) = skillset["indexProjections"]["selectors"]
    mappings = {m["name"]: m["source"] for m in projection["mappings"]}
    assert mappings["reader_text"] == "/document/chunks/*/readerText"
    (shown_field,) = [f for f in shown_index["fields"] if f["name"] == "reader_text"]
    assert shown_field["searchable"] is False
    assert shown_field["type"] == "Edm.String"
    index = definitions(skill)[1]
    # The indexer emulation: the skill over real HTTP, its answer projected as the
    # deployed skillset says, checked against the deployed index schema.
    path = tmp_path / "documents" / "limits.md"
    path.parent.mkdir()
    path.write_text(DOCUMENT, encoding="utf-8")
    report = run(skill, paths=[path])
    assert report.ok, report.problems
    _check_reader_texts(report.documents, "content", "reader_text")
    with SearchStub(index, api_key=SEARCH_KEY) as search:
        client = SearchClient(search.endpoint, index["name"], AzureKeyCredential(SEARCH_KEY))
        assert all(result.succeeded for result in client.upload_documents(report.documents))
        stored = list(client.search("*", select=["ordinal", "content", "reader_text"], top=1000))
    assert len(stored) == len(report.documents)
    _check_reader_texts(stored, "content", "reader_text")
