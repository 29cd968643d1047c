"""One table of parameters (skills.parameters): every surface is what the table derives,
and a row with an app setting works end to end (the `semantic` and `binary` app settings,
which exist because their rows name them)."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from chunking import ChunkOptions
from chunking.options import OptionError
from chunking.plan.strategies import PARAMETER_TYPES, STRATEGY_PARAMETERS
from infra.deploy import add_chunk_flags
from skills.commands.cli import OPTION_FLAGS, add_chunk_arguments, chunk_options
from skills.embedding.scoring import ScoringService
from skills.parameters import (
    DEPLOYED_PARAMETERS,
    PARAMETERS,
    RECORD_INPUTS,
    REFERENCE_PAGE,
    given_parameters,
    rendered_reference,
)
from skills.search.definitions import ENV_CHUNK_SETTINGS, ChunkSettings, chunk_settings
from skills.skill import record_inputs
from skills.skill.app import build_app
from skills.skill.service import answer_chunk_request
from skills.skill.settings import ALL_ENV_NAMES, SettingsError, describe_settings, load_settings
from skills.skill.thread_chunker import ThreadChunker
from testing.rerank_stub import RerankStub
from tests.search.test_infra_definitions import problems_of, wire
from tests.skill.test_skill_scoring import TopicEmbedder

if TYPE_CHECKING:
    from tests.conftest import LiveServers


def not_installed(model: str) -> bool:
    return False


# --- every surface is derived from the table ---------------------------------------------


def test_the_record_inputs_are_the_tables() -> None:
    assert record_inputs.KNOWN_INPUTS == RECORD_INPUTS
    names = {getattr(record_inputs, n) for n in dir(record_inputs) if n.startswith("INPUT_")}
    assert names <= set(RECORD_INPUTS)


def test_the_app_settings_and_health_listing_are_the_tables() -> None:
    settings_rows = [row for row in PARAMETERS if row.setting]
    assert list(ALL_ENV_NAMES[: len(settings_rows)]) == [row.setting for row in settings_rows]
    described = describe_settings(load_settings({}, local_installed=not_installed))
    listed = [(name, entry["appSetting"]) for name, entry in described.items()]  # type: ignore[index]
    assert listed[: len(settings_rows)] == [(row.name, row.setting) for row in settings_rows]


def test_each_strategys_parameters_are_the_cores() -> None:
    for strategy, names in STRATEGY_PARAMETERS.items():
        assert tuple(row.name for row in PARAMETERS if row.strategy == strategy) == names


def test_each_option_names_a_chunk_options_field() -> None:
    options = ChunkOptions()
    for row in PARAMETERS:
        if row.option is not None:
            value: Any = options
            parts = row.option.split(".")
            if row.strategy is not None:
                # A strategy's row: its strategy, and the field of `ChunkOptions.parameters`.
                assert parts[0] == row.strategy
                value, parts = PARAMETER_TYPES[row.strategy](), parts[1:]
            for part in parts:
                value = getattr(value, part)  # AttributeError names a row that drifted


def test_the_command_lines_flags_are_the_tables() -> None:
    parser = argparse.ArgumentParser()
    add_chunk_arguments(parser)
    flags = [a.option_strings[0] for a in parser._actions if a.option_strings != ["-h", "--help"]]
    assert flags == [row.flag.name for row in PARAMETERS if row.flag]
    assert set(OPTION_FLAGS) == {
        *(name for names in STRATEGY_PARAMETERS.values() for name in names),
        "pageOverlapLength",
    }


def test_the_deploy_scripts_literal_inputs_are_the_tables() -> None:
    assert list(ChunkSettings().literal_inputs()) == [row.name for row in DEPLOYED_PARAMETERS]
    assert list(ENV_CHUNK_SETTINGS.values()) == [row.setting for row in DEPLOYED_PARAMETERS]
    # The order is the skillset's: a new order would look like new inputs and re-chunk.
    assert list(ChunkSettings().literal_inputs()) == [
        "textSplitMode",
        "unit",
        "maximumPageLength",
        "pageOverlapLength",
    ]


def test_the_deploy_scripts_flags_are_the_deployed_rows_and_name_what_it_sends() -> None:
    parser = argparse.ArgumentParser()
    add_chunk_flags(parser)
    flags = [a.option_strings[0] for a in parser._actions if a.option_strings != ["-h", "--help"]]
    assert flags == [
        "--text-split-mode",
        "--unit",
        "--maximum-page-length",
        "--page-overlap-length",
    ]
    # Regression: the help said the skill's 5000 / 0 characters; the script sends 2000 / 500.
    shown = {a.option_strings[0]: a.help for a in parser._actions}
    sent = chunk_settings(unit="characters")
    assert f"/ {sent.maximum_page_length} characters" in str(shown["--maximum-page-length"])
    assert f"/ {sent.page_overlap_length} characters" in str(shown["--page-overlap-length"])


def test_the_settings_reference_page_is_up_to_date() -> None:
    page = REFERENCE_PAGE.read_text(encoding="utf-8")
    assert rendered_reference(page) == page, "run: python -m skills.parameters --write"


# --- one validation, written once ---------------------------------------------------------


def test_an_overlap_of_zero_is_no_conflict_for_records_and_the_command_line_alike() -> None:
    assert given_parameters({"pageOverlapLength": 0, "wordScope": None}) == []
    assert given_parameters({"pageOverlapLength": "0", "wordOverlap": ""}) == []
    assert given_parameters({"pageOverlapLength": 10}) == ["pageOverlapLength"]
    parser = argparse.ArgumentParser()
    add_chunk_arguments(parser)
    chunk_options(parser.parse_args(["--strategy", "words", "--overlap", "0"]))
    with pytest.raises(OptionError, match="option --overlap does not apply to strategy 'words'"):
        chunk_options(parser.parse_args(["--strategy", "words", "--overlap", "10"]))


def test_the_cross_checks_read_literal_inputs_as_the_skill_reads_records() -> None:
    definitions = wire()
    skill = definitions[2]["skills"][0]
    skill["inputs"].append({"name": "strategy", "source": "='semantik'"})
    problems = problems_of(*definitions)
    assert any(
        "chunk settings are invalid: input 'strategy' must be one of structure, words" in p
        for p in problems
    ), problems


# --- the semantic and binary app settings, end to end ---------------------------------------


def _topics() -> str:
    fruit = " ".join(f"Apples grow in orchard {i} and apples are sweet." for i in range(12))
    motors = " ".join(f"Engines burn fuel in cylinder {i} and engines get hot." for i in range(12))
    return f"{fruit} {motors}"  # one paragraph: only the meaning says where to cut


def _answer(environ: dict[str, str], data: dict[str, object]) -> dict[str, Any]:
    settings = load_settings(environ, local_installed=not_installed)
    body = json.dumps({"values": [{"recordId": "1", "data": data}]}).encode()
    scoring = ScoringService(embedder=TopicEmbedder())
    answer = asyncio.run(
        answer_chunk_request(body, settings, chunker=ThreadChunker(), scoring=scoring)
    )
    (value,) = json.loads(answer.body)["values"]
    return value  # type: ignore[no-any-return]


def _mixed_chunks(value: dict[str, Any]) -> int:
    assert value["errors"] == [], value["errors"]
    bodies = [chunk["content"].lower() for chunk in value["data"]["chunks"]]
    return sum("apples" in body and "engines" in body for body in bodies)


def test_the_semantic_app_settings_are_every_records_defaults() -> None:
    record = {"text": _topics(), "strategy": "semantic", "maximumPageLength": 200}
    # By default a chunk ends where the topic changes: none mixes the two.
    assert _mixed_chunks(_answer({}, record)) == 0
    # CHUNK_SEMANTIC_MIN_FILL 1: no break ends a chunk before it is full, so chunks mix them.
    full = {"CHUNK_SEMANTIC_MIN_FILL": "1"}
    assert _mixed_chunks(_answer(full, record)) > 0
    # A record's own input still beats the app setting.
    assert _mixed_chunks(_answer(full, {**record, "semanticMinFill": 0.25})) == 0


def test_bad_semantic_and_binary_app_settings_are_named() -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(
            {
                "CHUNK_SEMANTIC_WINDOW": "9",
                "CHUNK_SEMANTIC_PERCENTILE": "high",
                "CHUNK_BINARY_SCORER": "dice",
            },
            local_installed=not_installed,
        )
    message = str(caught.value)
    for words in (
        "CHUNK_SEMANTIC_PERCENTILE must be a number (got 'high')",
        "semanticWindow must be from 1 to 5 (got 9) (from app settings "
        "CHUNK_SEMANTIC_PERCENTILE, CHUNK_SEMANTIC_WINDOW, CHUNK_SEMANTIC_MIN_FILL)",
        "CHUNK_BINARY_SCORER must be one of embeddings, crossEncoder, rerank (got 'dice')",
    ):
        assert words in message


def test_the_binary_scorer_app_setting_sends_a_records_splits_to_the_rerank_endpoint(
    live_servers: LiveServers,
) -> None:
    cats = " ".join(f"The cat number {n} purrs on the warm mat." for n in range(12))
    ships = " ".join(f"A ship number {n} sails across the cold sea." for n in range(12))
    record = {
        "text": f"{cats} {ships}",
        "strategy": "binary",  # no binaryScorer: the app setting's
        "unit": "characters",
        "maximumPageLength": 700,
    }
    with RerankStub(api_key="secret") as stub:
        settings = load_settings(
            {
                "RERANK_ENDPOINT": stub.endpoint,
                "RERANK_API_KEY": "secret",
                "CHUNK_WORKERS": "1",
                "CHUNK_BINARY_SCORER": "rerank",
                "CHUNK_BINARY_CANDIDATES": "64",
            },
            not_installed,
        )
        url = live_servers.start_app(build_app(settings))
        body = json.dumps({"values": [{"recordId": "1", "data": record}]}).encode()
        response = httpx.post(f"{url}/api/chunk", content=body, timeout=60)
        health = httpx.get(f"{url}/api/health", timeout=60).json()
        asked = len(stub.requests)
    (value,) = response.json()["values"]
    assert value["errors"] == []
    assert [chunk["content"].split()[1] for chunk in value["data"]["chunks"]] == ["cat", "ship"]
    assert asked > 0
    assert health["configuration"]["binaryScorer"] == {
        "value": "rerank",
        "appSetting": "CHUNK_BINARY_SCORER",
        "source": "app setting",
    }
