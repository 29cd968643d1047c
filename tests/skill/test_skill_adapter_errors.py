"""Errors outside any record, through Azure's adapter and uvicorn: always the app's JSON answer.

Starlette's ServerErrorMiddleware re-raises an exception after sending its 500, and
Azure's `AsgiMiddleware` lets it leave the function, so the Functions host would answer
with its own 500. And a setting that cannot work is found at start-up: /api/health says
503 "misconfigured" and names it, every record gets a "misconfigured" error naming it.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import azure.functions as func
import httpx
import pytest

from skills.skill.app import build_app
from skills.skill.settings import Settings, SettingsError, load_settings
from tests.conftest import ExplodingEmbedder, function_app_with, skill_body
from tests.servers import uvicorn_subprocess

if TYPE_CHECKING:
    from tests.conftest import FunctionCaller

INTERNAL_DETAIL = "internal-detail-7f3a"
"""In the exception's message; never in an answer."""
UNPARSEABLE_URL = "http://[::1"
"""The issue's trigger: every POST raised InvalidURL while health said 200 "ok"."""


def settings_from(environ: dict[str, str]) -> Settings | SettingsError:
    """What the app reads from these app settings (a SettingsError when they cannot work)."""
    try:
        return load_settings(environ, local_installed=lambda _model: False)
    except SettingsError as error:
        return error


def one_record() -> bytes:
    return skill_body([{"recordId": "1", "data": {"text": "# Title\n\nSome words."}}])


def answer_of(response: func.HttpResponse) -> Any:
    assert response.mimetype == "application/json"
    return json.loads(response.get_body())


def test_regression_an_exception_outside_any_record_stays_inside_the_adapter(
    call_function: FunctionCaller,
) -> None:
    """Was: the exception left the function (the host's own 500, not JSON)."""
    app = func.AsgiFunctionApp(
        app=build_app(Settings(), embedder=ExplodingEmbedder(INTERNAL_DETAIL)),
        http_auth_level=func.AuthLevel.FUNCTION,
    )
    response = call_function(app, "POST", "/api/chunk", one_record())
    assert response.status_code == 500
    error = answer_of(response)["error"]
    assert error["status"] == 500
    assert "logs" in error["message"]
    assert INTERNAL_DETAIL not in error["message"]
    assert "RuntimeError" not in error["message"]
    # The app still answers the next request.
    health = call_function(app, "GET", "/api/health")
    assert health.status_code == 200


def test_an_embedder_that_cannot_be_built_is_a_json_500_through_the_adapter(
    call_function: FunctionCaller,
) -> None:
    """Settings made in code skip the app-setting checks; the build error stays inside."""
    from skills.embedding.settings import EmbeddingSettings

    embedding = EmbeddingSettings(provider="openai", openai_base_url=UNPARSEABLE_URL)
    app = function_app_with(Settings(embedding=embedding))
    response = call_function(app, "POST", "/api/chunk", one_record())
    assert response.status_code == 500
    assert "InvalidURL" not in answer_of(response)["error"]["message"]


def test_regression_an_unparseable_openai_base_url_is_found_at_start_up(
    call_function: FunctionCaller,
) -> None:
    """Was: health 200 "ok", and every POST raised InvalidURL out of the adapter."""
    app = function_app_with(
        settings_from({"EMBEDDING_PROVIDER": "openai", "OPENAI_BASE_URL": UNPARSEABLE_URL})
    )
    health = call_function(app, "GET", "/api/health")
    assert health.status_code == 503
    report = answer_of(health)
    assert report["status"] == "misconfigured"
    assert "OPENAI_BASE_URL" in report["error"]
    response = call_function(app, "POST", "/api/chunk", one_record())
    assert response.status_code == 200
    (value,) = answer_of(response)["values"]
    assert value["data"] == {}
    (error,) = value["errors"]
    assert "misconfigured" in error["message"]
    assert "OPENAI_BASE_URL" in error["message"]


def test_every_record_of_a_misconfigured_skill_names_the_setting(
    call_function: FunctionCaller,
) -> None:
    app = function_app_with(
        settings_from({"AZURE_OPENAI_ENDPOINT": "ftp://x", "EMBEDDING_DIMENSIONS": "8"})
    )
    values: list[dict[str, object]] = [
        {"recordId": str(n), "data": {"text": f"Record {n}."}} for n in range(3)
    ]
    response = call_function(app, "POST", "/api/chunk", skill_body(values))
    assert response.status_code == 200
    answered = answer_of(response)["values"]
    assert [value["recordId"] for value in answered] == ["0", "1", "2"]
    for value in answered:
        (error,) = value["errors"]
        assert error["message"].startswith("the skill is misconfigured")
        assert "AZURE_OPENAI_ENDPOINT" in error["message"]
        assert "/api/health" in error["message"]


@pytest.mark.integration
def test_regression_an_unparseable_openai_base_url_through_uvicorn() -> None:
    """The documented local command with the issue's app setting, read from the environment."""
    env = {**os.environ, "EMBEDDING_PROVIDER": "openai", "OPENAI_BASE_URL": UNPARSEABLE_URL}
    with uvicorn_subprocess(env) as (url, _):
        health = httpx.get(f"{url}/api/health", timeout=30.0)
        response = httpx.post(f"{url}/api/chunk", content=one_record(), timeout=30.0)
    assert health.status_code == 503
    assert "OPENAI_BASE_URL" in health.json()["error"]
    assert response.status_code == 200
    (error,) = response.json()["values"][0]["errors"]
    assert "OPENAI_BASE_URL" in error["message"]
