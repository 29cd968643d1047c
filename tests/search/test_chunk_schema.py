"""One versioned chunk schema (skills.chunk_schema): the skill's chunks, the cross-checks,
the index fields and projections and the Spark rows are what it derives."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from skills.chunk_schema import (
    CHUNK_MEMBERS,
    INDEX_FIELDS,
    INT32,
    OBJECT,
    SCHEMA_VERSION,
    STRING,
    STRINGS,
    VECTOR,
    fingerprint,
)
from skills.search.checks import MEASURE_UNITS, SKILL_CHUNK_FIELDS
from skills.search.definitions import CHUNK_FIELD_SOURCES, CHUNKS_CONTEXT, build_definitions
from skills.search.spark import CHUNK_SCHEMA
from skills.skill.service import answer_chunk_request
from skills.skill.settings import Settings
from tests.search.test_infra_definitions import make_setup
from tests.skill.test_skill_scoring import TopicEmbedder

FINGERPRINTS = {1: "52590b94a0727931", 2: "ccf8051be6dbf5e4"}
"""The schema's fingerprint at each version: a change to a member or field fails here
until SCHEMA_VERSION moves with it (and index users are told)."""

PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    STRING: (str,),
    STRINGS: (list,),
    INT32: (int,),
    OBJECT: (dict,),
    VECTOR: (list,),
}

DOCUMENT = "# Guide\n\nIntro text here.\n\n## Install\n\nRun the installer.\n"


def _chunks(**settings: Any) -> list[dict[str, Any]]:
    body = json.dumps(
        {
            "values": [
                {
                    "recordId": "1",
                    "data": {"text": DOCUMENT, "url": "https://example.com/guide"},
                }
            ]
        }
    ).encode()
    answer = asyncio.run(answer_chunk_request(body, Settings(chunk_workers=0), **settings))
    (value,) = json.loads(answer.body)["values"]
    assert value["errors"] == []
    return value["data"]["chunks"]  # type: ignore[no-any-return]


def test_the_schema_version_moves_with_the_schema() -> None:
    assert fingerprint() == FINGERPRINTS[SCHEMA_VERSION]


def test_the_skill_writes_the_schemas_members_in_order() -> None:
    names = [member.name for member in CHUNK_MEMBERS]
    without = _chunks()
    assert without
    for chunk in without:
        assert list(chunk) == [name for name in names if name != "embedding"]
    for chunk in _chunks(embedder=TopicEmbedder()):
        assert list(chunk) == names
        for member in CHUNK_MEMBERS:
            value = chunk[member.name]
            assert value is None or isinstance(value, PYTHON_TYPES[member.edm]), member
        assert set(chunk["offset"]) == set(MEASURE_UNITS)


def test_the_cross_checks_know_the_schemas_members() -> None:
    assert {member.name: member.edm for member in CHUNK_MEMBERS} == SKILL_CHUNK_FIELDS


def test_the_index_and_projection_are_the_schemas() -> None:
    definitions = build_definitions(make_setup())
    fields = definitions.index.as_dict()["fields"]
    assert [(f["name"], f["type"]) for f in fields] == [(f.name, f.edm) for f in INDEX_FIELDS]
    (selector,) = definitions.skillset.as_dict()["indexProjections"]["selectors"]
    mappings = {m["name"]: m["source"] for m in selector["mappings"]}
    assert mappings == CHUNK_FIELD_SOURCES
    members = {member.name for member in CHUNK_MEMBERS}
    for field in INDEX_FIELDS:
        if field.source is None:
            assert field.name not in mappings  # the service fills the keys
        elif field.source.startswith("/document/"):
            assert mappings[field.name] == field.source
        else:
            assert mappings[field.name] == f"{CHUNKS_CONTEXT}/{field.source}"
            assert field.source.partition("/")[0] in members, field


def test_the_spark_rows_are_the_index_fields() -> None:
    columns = [part.split(" ", 1) for part in CHUNK_SCHEMA.split(", ")]
    assert columns == [
        *([field.name, field.spark_type] for field in INDEX_FIELDS),
        ["error", "string"],
    ]
