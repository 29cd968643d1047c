"""The skill through Azure's own adapter: func.HttpRequest into the registered function."""

from __future__ import annotations

import gzip
import json
from typing import TYPE_CHECKING, Any

import azure.functions as func
import pytest

import function_app
from chunking import Unit
from skills.skill.settings import Settings, SettingsError
from tests.conftest import (
    BAD_RECORDS,
    GUIDE,
    FunctionCaller,
    function_app_with,
    good_record_data,
    hundred_with_ten_bad,
    skill_body,
)

if TYPE_CHECKING:
    from tests.conftest import Batch

RECORD_KEYS = {"recordId", "data", "errors", "warnings"}


@pytest.fixture(scope="module")
def skill() -> func.AsgiFunctionApp:
    return function_app_with(Settings())


def post(
    call: FunctionCaller, app: func.AsgiFunctionApp, body: bytes, path: str = "/api/chunk"
) -> tuple[func.HttpResponse, Any]:
    response = call(app, "POST", path, body, {"content-type": "application/json"})
    return response, json.loads(response.get_body())


def check_answer(values: list[dict[str, Any]], batch: Batch) -> None:
    """Every record answered once, in order, with the exact shape; bad ones with one error."""
    assert [value["recordId"] for value in values] == [v["recordId"] for v in batch.values]
    for value in values:
        assert set(value) == RECORD_KEYS
        assert all(set(message) == {"message"} for message in value["errors"] + value["warnings"])
        words = batch.bad.get(value["recordId"])
        if words is None:
            assert value["errors"] == []
            assert set(value["data"]) == {
                "chunks",
                "textItems",
                "offsets",
                "lengths",
                "ordinalPositions",
            }
            assert value["data"]["chunks"]
        else:
            assert value["data"] == {}
            (error,) = value["errors"]
            assert words in error["message"]


def test_the_module_exports_one_catch_all_function_for_the_host() -> None:
    assert isinstance(function_app.app, func.AsgiFunctionApp)
    assert function_app.app.auth_level == func.AuthLevel.FUNCTION


def test_the_real_function_app_answers(call_function: FunctionCaller) -> None:
    response = call_function(function_app.app, "GET", "/api/health")
    assert response.status_code in (200, 503)  # 503 only if this machine's env is misconfigured
    assert response.mimetype == "application/json"
    assert json.loads(response.get_body())["version"]


def test_a_hundred_records_with_ten_bad_ones(
    call_function: FunctionCaller, skill: func.AsgiFunctionApp, batch_of_100: Batch
) -> None:
    response, answer = post(call_function, skill, batch_of_100.body())
    assert response.status_code == 200
    assert response.mimetype == "application/json"
    check_answer(answer["values"], batch_of_100)
    assert sum(1 for value in answer["values"] if value["errors"]) == 10


def test_edge_cases_in_one_batch(
    call_function: FunctionCaller, skill: func.AsgiFunctionApp
) -> None:
    huge = "# Huge\n\n" + "\n\n".join(
        f"## Part {n}\n\n" + "Many words in a long paragraph of text. " * 30 for n in range(500)
    )
    data: dict[str, object] = {
        "empty": {"text": ""},
        "blank": {"text": "  \n\n  "},
        "unknown-format": {"text": "Some words.", "format": "pdf"},
        "non-ascii": {"text": "# Ü\n\n日本語 😀 𝄞 text.", "format": "markdown"},
        "surrogates": {"text": "# S\n\nhalf \ud83d pair \ude00 end", "format": "markdown"},
        "huge": {"text": huge, "unit": "characters", "maximumPageLength": 2000},
        "number": {"text": 3.5},
        "text-is-array": {"text": ["a", "b"]},
    }
    values: list[dict[str, object]] = [
        {"recordId": key, "data": value} for key, value in data.items()
    ]
    response, answer = post(call_function, skill, skill_body(values))
    assert response.status_code == 200
    by_id = {value["recordId"]: value for value in answer["values"]}
    assert list(by_id) == list(data)

    for key in ("empty", "blank"):
        assert by_id[key]["data"] == {
            "chunks": [],
            "textItems": [],
            "offsets": [],
            "lengths": [],
            "ordinalPositions": [],
        }
        assert by_id[key]["errors"] == []
        assert "no chunks" in by_id[key]["warnings"][0]["message"]
    assert by_id["unknown-format"]["data"]["chunks"]
    assert "chunked as text" in by_id["unknown-format"]["warnings"][0]["message"]
    assert "日本語 😀 𝄞" in by_id["non-ascii"]["data"]["chunks"][0]["content"]
    surrogates = by_id["surrogates"]
    assert "half \ufffd pair \ufffd end" in surrogates["data"]["chunks"][0]["content"]
    assert "2 lone surrogate(s)" in surrogates["warnings"][0]["message"]
    huge_chunks = by_id["huge"]["data"]["chunks"]
    assert len(huge_chunks) >= 500 * 1200 // 2000
    covered = 0  # nothing lost: only whitespace lies between consecutive chunks
    for chunk in huge_chunks:
        start = chunk["offset"]["codePoint"]
        assert not huge[covered:start].strip()
        covered = max(covered, start + chunk["length"]["codePoint"])
    assert not huge[covered:].strip()
    for key in ("number", "text-is-array"):
        assert by_id[key]["data"] == {}
        assert "'text' must be a string" in by_id[key]["errors"][0]["message"]


def test_order_does_not_change_any_answer(
    call_function: FunctionCaller, skill: func.AsgiFunctionApp
) -> None:
    batch = hundred_with_ten_bad()
    _, forward = post(call_function, skill, batch.body())
    _, backward = post(call_function, skill, skill_body(batch.values[::-1]))
    assert [v["recordId"] for v in backward["values"]] == [
        v["recordId"] for v in batch.values[::-1]
    ]
    assert sorted(forward["values"], key=lambda v: v["recordId"]) == sorted(
        backward["values"], key=lambda v: v["recordId"]
    )


def test_answers_are_byte_for_byte_deterministic(
    call_function: FunctionCaller, skill: func.AsgiFunctionApp
) -> None:
    body = skill_body([{"recordId": str(n), "data": good_record_data(n)} for n in range(12)])
    first, _ = post(call_function, skill, body)
    second, _ = post(call_function, skill, body)
    assert first.get_body() == second.get_body()


def test_put_is_accepted_like_post(
    call_function: FunctionCaller, skill: func.AsgiFunctionApp
) -> None:
    body = skill_body([{"recordId": "1", "data": {"text": GUIDE.format(n=1)}}])
    response = call_function(skill, "PUT", "/api/chunk", body)
    assert response.status_code == 200
    assert json.loads(response.get_body())["values"][0]["data"]["chunks"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"not json", "not valid JSON"),
        (b'{"value": []}', "has no 'values' array"),
        (b'{"values": [{"recordId": "1"}, {"recordId": "1"}]}', "recordId '1' is used 2 times"),
        (b'{"values": [{"data": {"text": "x"}}]}', "values[0] has no recordId"),
    ],
)
def test_unreadable_bodies_get_a_json_400(
    call_function: FunctionCaller, skill: func.AsgiFunctionApp, body: bytes, words: str
) -> None:
    response, answer = post(call_function, skill, body)
    assert response.status_code == 400
    assert response.mimetype == "application/json"
    assert answer["error"]["status"] == 400
    assert words in answer["error"]["message"]


def test_empty_batch(call_function: FunctionCaller, skill: func.AsgiFunctionApp) -> None:
    response, answer = post(call_function, skill, b'{"values": []}')
    assert (response.status_code, answer) == (200, {"values": []})


def test_oversized_bodies_get_413_before_parsing(call_function: FunctionCaller) -> None:
    small = function_app_with(Settings(max_request_bytes=1000))
    for headers in ({"content-length": "5000"}, {}):  # declared, and counted while reading
        response = call_function(small, "POST", "/api/chunk", b"x" * 5000, headers)
        assert response.status_code == 413
        assert response.mimetype == "application/json"
        message = json.loads(response.get_body())["error"]["message"]
        assert "the limit is 1000 bytes (app setting MAX_REQUEST_BYTES)" in message
    response = call_function(small, "POST", "/api/chunk", skill_body([]))
    assert response.status_code == 200


def test_a_gzip_body_through_azures_adapter(
    call_function: FunctionCaller, skill: func.AsgiFunctionApp, batch_of_100: Batch
) -> None:
    headers = {"content-type": "application/json", "content-encoding": "gzip"}
    response = call_function(
        skill, "POST", "/api/chunk", gzip.compress(batch_of_100.body()), headers
    )
    assert response.status_code == 200
    check_answer(json.loads(response.get_body())["values"], batch_of_100)


def test_unknown_routes_and_methods_are_json(
    call_function: FunctionCaller, skill: func.AsgiFunctionApp
) -> None:
    missing = call_function(skill, "GET", "/api/nothing")
    assert missing.status_code == 404
    assert missing.mimetype == "application/json"
    assert "POST /api/chunk" in json.loads(missing.get_body())["error"]["message"]
    wrong = call_function(skill, "GET", "/api/chunk")
    assert wrong.status_code == 405
    assert wrong.mimetype == "application/json"
    assert "POST" in wrong.headers["allow"]


def test_health_reports_version_and_effective_configuration(call_function: FunctionCaller) -> None:
    app = function_app_with(
        Settings(unit=Unit.CHARACTERS, app_settings_used=frozenset({"CHUNK_UNIT"}))
    )
    response = call_function(app, "GET", "/api/health")
    assert response.status_code == 200
    report = json.loads(response.get_body())
    assert report["status"] in ("ok", "starting")  # the workers start with the app
    assert report["version"] == "0.1.0"
    configuration = report["configuration"]
    assert configuration["unit"] == {
        "value": "characters",
        "appSetting": "CHUNK_UNIT",
        "source": "app setting",
    }
    assert configuration["maximumPageLength"]["value"] == 5000
    assert configuration["embeddingProvider"]["value"] == "none"


def test_health_shows_no_embedding_model_when_nothing_embeds(call_function: FunctionCaller) -> None:
    """Regression (issue 13, defect 7): provider `none` was shown with a model and its
    dimensions, as if chunks got vectors from it."""
    report = json.loads(
        call_function(function_app_with(Settings()), "GET", "/api/health").get_body()
    )
    embedding = report["embedding"]
    assert embedding["provider"] == "none"
    assert embedding["model"] is None
    assert embedding["dimensions"] is None
    assert embedding["reason"]


def test_misconfiguration_is_reported_not_crashed(call_function: FunctionCaller) -> None:
    broken = function_app_with(SettingsError("invalid app settings: CHUNK_UNIT must be one of ..."))
    health = call_function(broken, "GET", "/api/health")
    assert health.status_code == 503
    assert json.loads(health.get_body())["error"].startswith("invalid app settings: CHUNK_UNIT")
    response, answer = post(
        call_function, broken, skill_body([{"recordId": "1", "data": {"text": "x"}}])
    )
    assert response.status_code == 200
    assert answer["values"][0]["errors"][0]["message"].startswith("the skill is misconfigured: ")


def test_the_answer_arrives_by_the_deadline(call_function: FunctionCaller) -> None:
    deadline = 0.5
    hurried = function_app_with(Settings(deadline_seconds=deadline, chunk_workers=2))
    post(call_function, hurried, skill_body([{"recordId": "warm", "data": {"text": "Hi."}}]))
    big = "# h\n" * 1_000_000  # the slowest shape per character: ~7 s of chunking here
    values: list[dict[str, object]] = [{"recordId": "big", "data": {"text": big}}]
    values += [{"recordId": f"r{n}", "data": {"text": GUIDE.format(n=n)}} for n in range(5)]
    response, answer = post(call_function, hurried, skill_body(values))
    assert response.status_code == 200
    assert [value["recordId"] for value in answer["values"]] == [
        "big",
        "r0",
        "r1",
        "r2",
        "r3",
        "r4",
    ]
    # The big record overran and was stopped; the other worker chunked the rest meanwhile.
    stopped, *finished = answer["values"]
    assert stopped["data"] == {}
    (error,) = stopped["errors"]
    assert (
        f"this record's text ({len(big):,} characters) was still being chunked" in error["message"]
    )
    assert "deadline (0.5 s, app setting SKILL_DEADLINE_SECONDS)" in error["message"]
    assert "split the document" in error["message"]
    for value in finished:
        assert value["errors"] == []
        assert value["data"]["chunks"]


def test_bad_records_each_name_their_problem() -> None:
    assert len(BAD_RECORDS) == 10
    assert len({words for _, words in BAD_RECORDS}) >= 8
