"""URL settings in answers and logs: scheme and host at most (issue 28, item 1).

A URL setting can carry credentials (`http://user:password@host`), a key in its query
(`?api-key=...`) or an internal path. /api/health, record errors and log lines show
scheme and host only; a URL that fails validation is described, never echoed.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

import httpx
import pytest

from skills.embedding.log_urls import HideUrlSecrets
from skills.embedding.settings import url_problem
from skills.skill.settings import SettingsError, describe_settings, load_settings
from skills.values import URL_NOT_SHOWN, shown_url
from testing.openai_stub import OpenAIStub, Reply
from tests.conftest import skill_body
from tests.servers import free_port, uvicorn_subprocess

if TYPE_CHECKING:
    from tests.conftest import LiveServers

USER = "svc-user"
PASSWORD = "S3cr3t"
KEY = "sk-canary-0123456789"
SECRETS = (USER, PASSWORD, KEY, "/internal", "api-key")
TIMEOUT = 30.0
SENTENCES = " ".join(
    f"Sentence number {n} says something about {'apples' if n < 6 else 'rivers'}."
    for n in range(12)
)


def with_credentials(url: str) -> str:
    """`url` (http://127.0.0.1:port/...) with user info put in front of the host."""
    return url.replace("http://", f"http://{USER}:{PASSWORD}@", 1)


def assert_nothing_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, (secret, text)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"http://{USER}:{PASSWORD}@127.0.0.1:7601/v1", "http://127.0.0.1:7601"),
        (f"https://api.example.com/v1?api-key={KEY}", "https://api.example.com"),
        ("https://x.openai.azure.com/internal/#frag", "https://x.openai.azure.com"),
        ("https://[::1]:8443/v1", "https://[::1]:8443"),
        ("HTTPS://Example.COM", "https://example.com"),
        (f"{KEY}:{PASSWORD}", URL_NOT_SHOWN),
        ("https://[::1/v1", URL_NOT_SHOWN),
        ("", URL_NOT_SHOWN),
    ],
)
def test_shown_url_keeps_scheme_and_host_only(url: str, shown: str) -> None:
    assert shown_url(url) == shown


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (f"https://api.example.com/v1?api-key={KEY} x", "a space or a control character"),
        (f"ftp://{USER}:{PASSWORD}@host/v1?api-key={KEY}", "must start with https:// or http://"),
        (f"{KEY}:{PASSWORD}", "must start with https:// or http://"),
        (f"https://{USER}:{PASSWORD}@/v1?api-key={KEY}", "has no host name"),
        (f"https://{USER}:{PASSWORD}@host:99999/v1?api-key={KEY}", "has an invalid port"),
        (f"https://[{KEY}/v1", "is not a URL"),
    ],
)
def test_a_rejected_url_is_described_never_echoed(value: str, problem: str) -> None:
    message = url_problem("OPENAI_BASE_URL", value)
    assert message is not None
    assert problem in message
    assert_nothing_secret(message)


def test_health_configuration_shows_scheme_and_host_of_every_url_setting() -> None:
    settings = load_settings(
        {
            "EMBEDDING_PROVIDER": "openai",
            "OPENAI_BASE_URL": f"http://{USER}:{PASSWORD}@127.0.0.1:7601/v1?api-key={KEY}",
            "AZURE_OPENAI_ENDPOINT": f"https://{USER}:{PASSWORD}@x.openai.azure.com/internal",
            "RERANK_ENDPOINT": f"https://{USER}:{PASSWORD}@rerank.example.com/v1?key={KEY}",
        },
        lambda _: False,
    )
    configuration = describe_settings(settings)
    assert configuration["openAIBaseUrl"]["value"] == "http://127.0.0.1:7601"  # type: ignore[index]
    assert configuration["azureOpenAIEndpoint"]["value"] == "https://x.openai.azure.com"  # type: ignore[index]
    assert configuration["rerankEndpoint"]["value"] == "https://rerank.example.com"  # type: ignore[index]
    assert_nothing_secret(repr(configuration))


def skill_env(**settings: str) -> dict[str, str]:
    names = ("CHUNK_", "EMBEDDING_", "OPENAI_", "AZURE_OPENAI_", "RERANK_", "CROSS_ENCODER")
    env = {key: value for key, value in os.environ.items() if not key.startswith(names)}
    env.update(CHUNK_WORKERS="0", **settings)
    return env


@pytest.mark.integration
def test_health_over_http_never_shows_user_info_path_or_query() -> None:
    with OpenAIStub() as stub:
        env = skill_env(
            EMBEDDING_PROVIDER="openai",
            OPENAI_BASE_URL=with_credentials(stub.base_url) + f"?api-key={KEY}",
            RERANK_ENDPOINT=with_credentials(stub.azure_endpoint) + "/internal",
        )
        with uvicorn_subprocess(env) as (url, _):
            health = httpx.get(f"{url}/api/health", timeout=TIMEOUT)
    assert health.status_code == 200, health.text
    assert_nothing_secret(health.text)
    assert f"{stub.port}/v1" not in health.text
    configuration = health.json()["configuration"]
    assert configuration["openAIBaseUrl"]["value"] == f"http://127.0.0.1:{stub.port}"


@pytest.mark.integration
def test_a_semantic_record_whose_embedding_fails_names_no_credentials() -> None:
    with OpenAIStub() as stub:
        stub.default = Reply(status=404, message="no such model")
        env = skill_env(
            EMBEDDING_PROVIDER="openai",
            EMBEDDING_MAX_RETRIES="0",
            OPENAI_BASE_URL=with_credentials(stub.base_url),
        )
        body = skill_body([{"recordId": "1", "data": {"text": SENTENCES, "strategy": "semantic"}}])
        with uvicorn_subprocess(env) as (url, _):
            answer = httpx.post(f"{url}/api/chunk", content=body, timeout=TIMEOUT)
        assert stub.requests  # the sentences were sent, and refused
    (value,) = answer.json()["values"]
    assert value["errors"], value
    message = value["errors"][0]["message"]
    assert "embedding the sentences failed" in message
    assert f"http://127.0.0.1:{stub.port}" in message
    assert f"{stub.port}/v1" not in answer.text
    assert_nothing_secret(answer.text)


@pytest.mark.integration
def test_an_invalid_url_setting_is_not_echoed_in_health_or_records() -> None:
    env = skill_env(
        EMBEDDING_PROVIDER="openai",
        OPENAI_BASE_URL=f"https://{USER}:{PASSWORD}@127.0.0.1:{free_port()}/v1?api-key={KEY} x",
    )
    body = skill_body([{"recordId": "1", "data": {"text": SENTENCES}}])
    with uvicorn_subprocess(env) as (url, _):
        health = httpx.get(f"{url}/api/health", timeout=TIMEOUT)
        answer = httpx.post(f"{url}/api/chunk", content=body, timeout=TIMEOUT)
    assert health.json()["status"] == "misconfigured"
    assert "OPENAI_BASE_URL" in health.json()["error"]
    assert "a space or a control character" in health.json()["error"]
    assert_nothing_secret(health.text)
    assert "OPENAI_BASE_URL" in answer.text
    assert_nothing_secret(answer.text)


def test_the_http_clients_log_lines_show_no_user_info_or_query(
    live_servers: LiveServers, caplog: pytest.LogCaptureFixture
) -> None:
    """The embedding client's HTTP library logs every request's URL at INFO, which the
    Functions host keeps: with a URL setting's user info and query (the soak found it)."""
    caplog.set_level(logging.INFO)
    with OpenAIStub() as stub:
        settings = load_settings(
            {
                "EMBEDDING_PROVIDER": "openai",
                "OPENAI_BASE_URL": with_credentials(stub.base_url) + f"?api-key={KEY}",
                "OPENAI_API_KEY": "k",
                "CHUNK_WORKERS": "0",
            },
            lambda _: False,
        )
        assert not isinstance(settings, SettingsError)
        url = live_servers.start(settings)
        body = skill_body([{"recordId": "1", "data": {"text": SENTENCES}}])
        answer = httpx.post(f"{url}/api/chunk", content=body, timeout=TIMEOUT)
        assert stub.requests
    assert answer.status_code == 200, answer.text
    lines = [record.getMessage() for record in caplog.records]
    assert any(f"127.0.0.1:{stub.port}" in line for line in lines), lines
    for line in lines:
        assert_nothing_secret(line)


def test_the_http_log_filter_drops_user_info_and_query_but_keeps_the_path() -> None:
    record = logging.LogRecord(
        "httpx2",
        logging.INFO,
        __file__,
        1,
        'HTTP Request: %s %s "%s %d %s"',
        ("POST", f"http://{USER}:{PASSWORD}@127.0.0.1:7601/v1/embeddings?api-key={KEY}",
         "HTTP/1.1", 200, "OK"),
        None,
    )  # fmt: skip
    assert HideUrlSecrets().filter(record)
    assert record.getMessage() == (
        'HTTP Request: POST http://127.0.0.1:7601/v1/embeddings "HTTP/1.1 200 OK"'
    )
