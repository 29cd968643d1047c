"""The search definitions: SDK round trip, and cross-checks that catch broken wiring."""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any

import pytest
from azure.search.documents.indexes.models import (
    SearchIndex,
    SearchIndexer,
    SearchIndexerDataSourceConnection,
    SearchIndexerSkillset,
    WebApiSkill,
)

from infra import deploy
from skills.__main__ import build_request
from skills.search.checks import (
    SKILL_CHUNK_FIELDS,
    check_definitions,
    literal_value,
    parse_duration,
    source_type,
    web_api_skills,
)
from skills.search.definitions import (
    CHUNK_FIELD_SOURCES,
    INDEXER_BATCH_SIZE,
    KEY_FIELD,
    SKILL_BATCH_SIZE,
    SearchSetup,
    SkillAuth,
    build_definitions,
    chunk_settings,
)
from skills.skill.service import answer_chunk_request
from skills.skill.settings import Settings
from tests.infra_helpers import parsed_bicep
from tests.paths import ROOT

if TYPE_CHECKING:
    from collections.abc import Callable

SAMPLES = ROOT / "samples"
DIMENSIONS = 1536
MODEL = "text-embedding-3-small"

Wire = dict[str, Any]


def make_setup(**changes: Any) -> SearchSetup:
    values: dict[str, Any] = {
        "skill_uri": "https://func-x.azurewebsites.net/api/chunk",
        "skill_auth": SkillAuth("functionKey", function_key="secret-key"),
        "storage_resource_id": "/subscriptions/s/resourceGroups/g/providers/"
        "Microsoft.Storage/storageAccounts/stx",
        "container": "documents",
        "openai_endpoint": "https://oai-x.openai.azure.com/",
        "embedding_deployment": "embedding",
        "embedding_model": MODEL,
        "embedding_dimensions": DIMENSIONS,
    }
    values.update(changes)
    return SearchSetup(**values)


def wire(setup: SearchSetup | None = None) -> tuple[Wire, Wire, Wire, Wire]:
    definitions = build_definitions(setup or make_setup())
    return (
        definitions.data_source.as_dict(),
        definitions.index.as_dict(),
        definitions.skillset.as_dict(),
        definitions.indexer.as_dict(),
    )


def problems_of(data_source: Wire, index: Wire, skillset: Wire, indexer: Wire) -> list[str]:
    return check_definitions(
        data_source,
        index,
        skillset,
        indexer,
        embedding_dimensions=DIMENSIONS,
        embedding_model=MODEL,
    )


def test_the_built_definitions_are_consistent() -> None:
    assert problems_of(*wire()) == []


def test_definitions_round_trip_through_the_sdk_models_and_json() -> None:
    data_source, index, skillset, indexer = wire()
    for model, document in (
        (SearchIndexerDataSourceConnection, data_source),
        (SearchIndex, index),
        (SearchIndexerSkillset, skillset),
        (SearchIndexer, indexer),
    ):
        text = json.dumps(document)
        rebuilt = model(json.loads(text))
        assert rebuilt.as_dict() == document
    rebuilt_skillset = SearchIndexerSkillset(json.loads(json.dumps(skillset)))
    (skill,) = rebuilt_skillset.skills
    assert isinstance(skill, WebApiSkill)  # the discriminator survives the round trip
    assert skill.timeout is not None
    assert skill.timeout.total_seconds() == 230
    assert rebuilt_skillset.index_projection is not None


def test_the_index_has_a_semantic_configuration_for_title_and_chunk() -> None:
    _, index, _, _ = wire()
    semantic = index["semantic"]
    (configuration,) = semantic["configurations"]
    assert semantic["defaultConfiguration"] == configuration["name"]
    assert configuration["prioritizedFields"] == {
        "titleField": {"fieldName": "title"},
        "prioritizedContentFields": [{"fieldName": "chunk"}],
        "prioritizedKeywordsFields": [],
    }


def test_the_skill_wiring_matches_the_agreements() -> None:
    _, index, skillset, indexer = wire()
    (skill,) = web_api_skills(skillset)
    assert parse_duration(skill["timeout"]).total_seconds() == 230
    assert skill["batchSize"] == SKILL_BATCH_SIZE
    assert INDEXER_BATCH_SIZE % SKILL_BATCH_SIZE == 0
    assert skill["httpHeaders"] == {"x-functions-key": "secret-key"}
    assert "authResourceId" not in skill
    inputs = {i["name"]: i["source"] for i in skill["inputs"]}
    assert inputs["text"] == "/document/content"
    assert inputs["fileName"] == "/document/metadata_storage_name"
    assert inputs["contentType"] == "/document/metadata_content_type"
    assert inputs["url"] == "/document/metadata_storage_path"
    assert literal_value(inputs["maximumPageLength"]) == 512
    assert literal_value(inputs["unit"]) == "azureOpenAITokens"
    assert skill["outputs"] == [{"name": "chunks", "targetName": "chunks"}]
    projection = skillset["indexProjections"]
    assert projection["parameters"]["projectionMode"] == "skipIndexingParentDocuments"
    (selector,) = projection["selectors"]
    assert selector["sourceContext"] == "/document/chunks/*"
    assert {m["name"]: m["source"] for m in selector["mappings"]}["chunk"] == (
        "/document/chunks/*/text"
    )
    configuration = indexer["parameters"]["configuration"]
    assert configuration["parsingMode"] == "text"
    assert configuration["indexedFileNameExtensions"] == ".md,.markdown,.html,.htm"
    key = next(f for f in index["fields"] if f.get("key"))
    assert key["name"] == KEY_FIELD
    assert key["analyzer"] == "keyword"


def test_entra_mode_uses_auth_resource_id_and_no_key() -> None:
    setup = make_setup(skill_auth=SkillAuth("entra", resource_id="api://1234"))
    _, _, skillset, _ = wire(setup)
    (skill,) = web_api_skills(skillset)
    assert skill["authResourceId"] == "api://1234"
    assert "httpHeaders" not in skill
    assert problems_of(*wire(setup)) == []


def test_auth_modes_refuse_missing_secrets() -> None:
    with pytest.raises(ValueError, match="function key"):
        SkillAuth("functionKey")
    with pytest.raises(ValueError, match="authResourceId"):
        SkillAuth("entra")


def test_chunk_settings_are_validated_by_the_chunking_core() -> None:
    assert chunk_settings(unit="characters").maximum_page_length == 2000
    with pytest.raises(ValueError, match="pageOverlapLength"):
        chunk_settings(maximum_page_length=512, page_overlap_length=256)


def _mapping(skillset: Wire, name: str) -> Wire:
    mappings = skillset["indexProjections"]["selectors"][0]["mappings"]
    found: Wire = next(m for m in mappings if m["name"] == name)
    return found


def _field(index: Wire, name: str) -> Wire:
    found: Wire = next(f for f in index["fields"] if f["name"] == name)
    return found


def _rename_output(defs: list[Wire]) -> None:
    web_api_skills(defs[2])[0]["outputs"][0]["targetName"] = "pieces"


def _rename_chunk_member(defs: list[Wire]) -> None:
    _mapping(defs[2], "chunk")["source"] = "/document/chunks/*/txt"


def _drop_index_field(defs: list[Wire]) -> None:
    defs[1]["fields"] = [f for f in defs[1]["fields"] if f["name"] != "headings"]


def _wrong_dimensions(defs: list[Wire]) -> None:
    _field(defs[1], "embedding")["dimensions"] = 3072


def _map_to_key(defs: list[Wire]) -> None:
    _mapping(defs[2], "chunk_hash")["name"] = KEY_FIELD


def _key_analyzer(defs: list[Wire]) -> None:
    _field(defs[1], KEY_FIELD)["analyzer"] = "standard.lucene"


def _wrong_type(defs: list[Wire]) -> None:
    _field(defs[1], "headings")["type"] = "Edm.String"


def _parent_mode(defs: list[Wire]) -> None:
    defs[2]["indexProjections"]["parameters"]["projectionMode"] = "includeIndexingParentDocuments"


def _parsing_mode(defs: list[Wire]) -> None:
    defs[3]["parameters"]["configuration"]["parsingMode"] = "default"


def _typo_input(defs: list[Wire]) -> None:
    inputs = web_api_skills(defs[2])[0]["inputs"]
    next(i for i in inputs if i["name"] == "maximumPageLength")["name"] = "maximumPagelength"


def _bad_literal(defs: list[Wire]) -> None:
    inputs = web_api_skills(defs[2])[0]["inputs"]
    next(i for i in inputs if i["name"] == "pageOverlapLength")["source"] = "=400"


def _long_timeout(defs: list[Wire]) -> None:
    web_api_skills(defs[2])[0]["timeout"] = "PT5M"


def _http_uri(defs: list[Wire]) -> None:
    web_api_skills(defs[2])[0]["uri"] = "http://func-x.azurewebsites.net/api/chunk"


def _big_skill_batch(defs: list[Wire]) -> None:
    web_api_skills(defs[2])[0]["batchSize"] = 50


def _renamed_index(defs: list[Wire]) -> None:
    defs[1]["name"] = "chunks-v2"


def _no_deletion_detection(defs: list[Wire]) -> None:
    del defs[0]["dataDeletionDetectionPolicy"]


def _undefined_profile(defs: list[Wire]) -> None:
    _field(defs[1], "embedding")["vectorSearchProfile"] = "nope"


def _misspelled_measure(defs: list[Wire]) -> None:
    _mapping(defs[2], "offset")["source"] = "/document/chunks/*/offset/codepoint"


def _whole_measure(defs: list[Wire]) -> None:
    # The whole {utf8, utf16, codePoint} object cannot land in an Edm.Int32 field.
    _mapping(defs[2], "length")["source"] = "/document/chunks/*/length"


def _drop_header_field(defs: list[Wire]) -> None:
    defs[1]["fields"] = [f for f in defs[1]["fields"] if f["name"] != "header_2"]


def _shallow_sections(defs: list[Wire]) -> None:
    # At depth h3 the skill's `sections` has no h4: the index's header_4 would stay empty.
    inputs = web_api_skills(defs[2])[0]["inputs"]
    next(i for i in inputs if i["name"] == "markdownHeaderDepth")["source"] = "='h3'"


def _no_semantic(defs: list[Wire]) -> None:
    del defs[1]["semantic"]


def _semantic_unknown_field(defs: list[Wire]) -> None:
    fields = defs[1]["semantic"]["configurations"][0]["prioritizedFields"]
    fields["prioritizedKeywordsFields"] = [{"fieldName": "keywords"}]


def _semantic_vector_field(defs: list[Wire]) -> None:
    fields = defs[1]["semantic"]["configurations"][0]["prioritizedFields"]
    fields["prioritizedContentFields"] = [{"fieldName": "embedding"}]


def _semantic_default_undefined(defs: list[Wire]) -> None:
    defs[1]["semantic"]["defaultConfiguration"] = "other"


MUTATIONS: dict[str, tuple[Callable[[list[Wire]], None], str]] = {
    "renamed skill output": (_rename_output, "not produced"),
    "renamed chunk member": (_rename_chunk_member, "/document/chunks/*/txt"),
    "missing index field": (_drop_index_field, "'headings', which is not an index field"),
    "wrong dimensions": (_wrong_dimensions, "3072 dimensions"),
    "mapping to the key": (_map_to_key, "to the key field"),
    "key without keyword analyzer": (_key_analyzer, "keyword analyzer"),
    "incompatible field type": (_wrong_type, "Collection(Edm.String)"),
    "parent documents indexed": (_parent_mode, "projectionMode"),
    "markup-stripping parsing mode": (_parsing_mode, "parsingMode"),
    "misspelled skill input": (_typo_input, "maximumPagelength"),
    "invalid chunk settings": (_bad_literal, "pageOverlapLength"),
    "timeout over 230 s": (_long_timeout, "timeout"),
    "http skill uri": (_http_uri, "https"),
    "skill batch larger than indexer batch": (_big_skill_batch, "batchSize 50"),
    "index renamed": (_renamed_index, "targetIndexName"),
    "no deletion detection": (_no_deletion_detection, "dataDeletionDetectionPolicy"),
    "undefined vector profile": (_undefined_profile, "'nope'"),
    "misspelled offset unit": (_misspelled_measure, "offset/codepoint"),
    "whole measure into an integer": (_whole_measure, "Edm.ComplexType"),
    "missing heading field": (_drop_header_field, "'header_2', which is not an index field"),
    "no semantic configuration": (_no_semantic, "no semantic configuration"),
    "semantic field not in the index": (_semantic_unknown_field, "'keywords', which is not"),
    "semantic content is a vector": (_semantic_vector_field, "not a searchable string"),
    "semantic default undefined": (_semantic_default_undefined, "'other' is not defined"),
    "heading level the skill does not emit": (
        _shallow_sections,
        "'/document/chunks/*/sections/h4' (for 'header_4') is not produced",
    ),
}


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_a_broken_definition_is_caught(name: str) -> None:
    mutate, words = MUTATIONS[name]
    definitions = [copy.deepcopy(d) for d in wire()]
    mutate(definitions)
    problems = problems_of(*definitions)
    assert any(words in problem for problem in problems), problems


def test_every_projected_member_is_one_the_real_skill_outputs() -> None:
    """The chunk members the projection reads are the ones the skill really returns."""
    request = build_request([str(SAMPLES / "concepts-network.md")], {})
    answer = __import__("asyncio").run(
        answer_chunk_request(json.dumps(request).encode(), Settings())
    )
    chunk = json.loads(answer.body)["values"][0]["data"]["chunks"][0]
    # Everything the skill returns is known here, and everything known (but the
    # embedding, which needs a provider) is returned.
    assert set(chunk) - {"embedding"} == set(SKILL_CHUNK_FIELDS) - {"embedding"}
    members = {
        source.removeprefix("/document/chunks/*/")
        for source in CHUNK_FIELD_SOURCES.values()
        if source.startswith("/document/chunks/*/")
    }
    assert {member.split("/")[0] for member in members} - {"embedding"} <= set(chunk)
    # A nested member (`offset/codePoint`) is one the skill's object really has.
    for member in members:
        outer, _, inner = member.partition("/")
        assert not inner or inner in chunk[outer], member


def test_a_projection_may_read_the_layout_sections_levels() -> None:
    _, _, skillset, _ = wire()
    context = "/document/chunks/*"
    assert source_type(f"{context}/sections", context, skillset) == "Edm.ComplexType"
    for level in range(1, 7):
        assert source_type(f"{context}/sections/h{level}", context, skillset) == "Edm.String"
    assert source_type(f"{context}/sections/h7", context, skillset) is None
    assert source_type(f"{context}/offset/h1", context, skillset) is None
    # A skill told a shallower depth has no keys below it.
    inputs = web_api_skills(skillset)[0]["inputs"]
    next(i for i in inputs if i["name"] == "markdownHeaderDepth")["source"] = "='h2'"
    assert source_type(f"{context}/sections/h2", context, skillset) == "Edm.String"
    assert source_type(f"{context}/sections/h3", context, skillset) is None


def test_the_index_has_a_field_for_each_heading_level_and_the_projection_fills_it() -> None:
    """Layout-compatible headings: header_1 .. header_6 <- the chunk's sections/h1 .. h6,
    and the skill is told the depth the index has (not left to an app setting)."""
    _, index, skillset, _ = wire()
    skill = web_api_skills(skillset)[0]
    depth = next(i for i in skill["inputs"] if i["name"] == "markdownHeaderDepth")
    assert literal_value(depth["source"]) == "h6"
    for level in range(1, 7):
        field = _field(index, f"header_{level}")
        assert field["type"] == "Edm.String"
        # Retrievable only: the heading's words are searchable in `chunk` already.
        assert field["searchable"] is False
        mapping = _mapping(skillset, f"header_{level}")
        assert mapping["source"] == f"/document/chunks/*/sections/h{level}"
    assert not any(f["name"] == "header_7" for f in index["fields"])


def test_the_deploy_script_reads_only_what_the_bicep_outputs() -> None:
    outputs = set(parsed_bicep()["main"]["outputs"])
    assert set(deploy.BICEP_OUTPUTS) <= outputs, set(deploy.BICEP_OUTPUTS) - outputs


def test_a_keyword_query_reads_the_chunk_and_the_title_only() -> None:
    """The heading path and title are in `chunk`; searchable `headings`, `header_<n>` or
    `file_name` would count them again and rank short chunks of the right page first."""
    _, index, _, _ = wire()
    searchable = {
        f["name"]
        for f in index["fields"]
        if f.get("searchable")
        and f["type"] in ("Edm.String", "Collection(Edm.String)")
        and f.get("analyzer") != "keyword"  # the key, matched whole
    }
    assert searchable == {"chunk", "title"}
