"""App settings: names, defaults, precedence inputs, and clear errors for bad values."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from chunking import SectionPacking, SplitMode, Unit, WordScope, WordWindows
from chunking.plan.binary_params import BinarySplit
from chunking.plan.semantic_params import SemanticBreaks
from skills import __version__
from skills.skill.settings import (
    ALL_ENV_NAMES,
    DEFAULT_DEADLINE_SECONDS,
    DEFAULT_MAX_REQUEST_BYTES,
    Settings,
    SettingsError,
    describe_settings,
    load_settings,
)
from tests.paths import ROOT


def not_installed(model: str) -> bool:
    return False


def test_defaults_without_app_settings() -> None:
    settings = load_settings({}, local_installed=not_installed)
    assert settings == Settings()
    assert settings.unit is Unit.TOKENS
    assert settings.length_defaults(Unit.TOKENS) == (512, 64)
    assert settings.length_defaults(Unit.CHARACTERS) == (5000, 0)
    assert settings.max_request_bytes == DEFAULT_MAX_REQUEST_BYTES == 64 * 1024 * 1024
    assert settings.deadline_seconds == DEFAULT_DEADLINE_SECONDS == 200
    assert settings.embedding_provider == "none"
    assert settings.app_settings_used == frozenset()


def test_every_app_setting_is_read() -> None:
    settings = load_settings(
        {
            "CHUNK_TEXT_SPLIT_MODE": "sentences",
            "CHUNK_UNIT": "Characters",
            "CHUNK_MAXIMUM_PAGE_LENGTH": "2000",
            "CHUNK_PAGE_OVERLAP_LENGTH": " 500 ",
            "CHUNK_MAXIMUM_PAGES_TO_TAKE": "3",
            "CHUNK_ENCODER_MODEL_NAME": "p50k_base",
            "CHUNK_DEFAULT_LANGUAGE_CODE": "fr",
            "CHUNK_FORMAT": "markdown",
            "CHUNK_TITLE_PREFIX": "false",
            "CHUNK_SECTIONS": "packed",
            "CHUNK_STRIP_MARKUP": "true",
            # Words settings are defaults for records that ask for strategy words.
            "CHUNK_STRATEGY": "Structure",
            "CHUNK_WORDS_PER_CHUNK": "100",
            "CHUNK_WORD_OVERLAP": "10",
            "CHUNK_WORD_SCOPE": "document",
            "CHUNK_SEMANTIC_PERCENTILE": "90",
            "CHUNK_SEMANTIC_WINDOW": "3",
            "CHUNK_SEMANTIC_MIN_FILL": "0.5",
            "CHUNK_BINARY_SCORER": "Rerank",
            "CHUNK_BINARY_CANDIDATES": "8",
            "MAX_REQUEST_BYTES": "1000",
            "SKILL_DEADLINE_SECONDS": "12.5",
            "TRANSFER_DEADLINE_SECONDS": "7.5",
            "MAX_RESPONSE_BYTES": "2000",
            "MAX_CHUNKS_PER_RECORD": "50",
            "MEMORY_BUDGET_BYTES": "300000000",
            "EMBEDDING_PROVIDER": "openai",
            "AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com",
            "AZURE_OPENAI_EMBEDDING_DEPLOYMENT": "emb",
            "AZURE_OPENAI_API_VERSION": "2024-06-01",
            "AZURE_OPENAI_API_KEY": "azure-secret",
            "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
            "OPENAI_API_KEY": "openai-secret",
            "EMBEDDING_MODEL": "nomic-embed-text",
            "EMBEDDING_DIMENSIONS": "768",
            "EMBEDDING_BATCH_SIZE": "64",
            "EMBEDDING_BATCH_TOKENS": "20000",
            "EMBEDDING_CONCURRENCY": "2",
            "EMBEDDING_MAX_RETRIES": "0",
            # EMBEDDING_CACHE_ACCOUNT_URL is left out: it and the connection string exclude
            # each other.
            "EMBEDDING_CACHE": "Blob",
            "EMBEDDING_CACHE_PATH": "/tmp/unused-by-blob",
            "EMBEDDING_CACHE_CONTAINER": "vectors",
            "EMBEDDING_CACHE_CONNECTION_STRING": "AccountKey=cache-secret",
            "EMBEDDING_CACHE_LOOKUP_SECONDS": "0.5",
            "CHUNK_WORKERS": "3",
            "CHUNK_MARKDOWN_HEADER_DEPTH": "H4",
            # CROSS_ENCODER_PATH is the one left out: it and RERANK_ENDPOINT exclude each other.
            "RERANK_ENDPOINT": "https://rerank.example",
            "RERANK_API_KEY": "rerank-secret",
            "RERANK_MODEL": "rerank-multilingual-v3.0",
            "UNRELATED": "x",
        }
    )
    assert settings.text_split_mode is SplitMode.SENTENCES
    assert settings.unit is Unit.CHARACTERS
    assert settings.length_defaults(Unit.CHARACTERS) == (2000, 500)
    assert settings.maximum_pages_to_take == 3
    assert settings.encoder_model_name == "p50k_base"
    assert settings.default_language_code == "fr"
    assert settings.format == "markdown"
    assert settings.title_prefix is False
    assert settings.section_packing is SectionPacking.PACKED
    assert settings.strip_markup is True
    assert settings.strategy == "structure"
    assert settings.parameters_of("words") == WordWindows(100, 10, WordScope.DOCUMENT)
    assert settings.parameters_of("semantic") == SemanticBreaks(
        percentile=90.0, window=3, min_fill=0.5
    )
    assert settings.parameters_of("binary") == BinarySplit(scorer="rerank", candidates=8)
    assert settings.max_request_bytes == 1000
    assert (settings.max_response_bytes, settings.max_chunks_per_record) == (2000, 50)
    assert (settings.deadline_seconds, settings.transfer_deadline_seconds) == (12.5, 7.5)
    assert settings.chunk_workers == 3
    assert settings.memory_budget_bytes == 300_000_000
    assert settings.markdown_header_depth == 4
    embedding = settings.embedding
    assert settings.embedding_provider == embedding.provider == "openai"
    assert (embedding.model, embedding.dimensions, embedding.send_dimensions) == (
        "nomic-embed-text",
        768,
        True,
    )
    assert (embedding.azure_deployment, embedding.azure_api_version) == ("emb", "2024-06-01")
    assert (embedding.azure_api_key, embedding.openai_api_key) == ("azure-secret", "openai-secret")
    assert embedding.openai_base_url == "http://127.0.0.1:9/v1"
    assert (embedding.batch_size, embedding.batch_tokens) == (64, 20000)
    assert (embedding.concurrency, embedding.max_retries) == (2, 0)
    cache = embedding.cache
    assert (cache.mode, cache.container, cache.lookup_seconds) == ("blob", "vectors", 0.5)
    assert cache.connection_string == "AccountKey=cache-secret"
    assert "secret" not in repr(settings)
    pairs = settings.pairs
    assert (pairs.source, pairs.rerank_endpoint) == ("rerank", "https://rerank.example")
    assert (pairs.rerank_api_key, pairs.rerank_model) == (
        "rerank-secret",
        "rerank-multilingual-v3.0",
    )
    assert settings.app_settings_used == frozenset(ALL_ENV_NAMES) - {
        "CROSS_ENCODER_PATH",
        "EMBEDDING_CACHE_ACCOUNT_URL",
    }


def test_blank_values_count_as_unset() -> None:
    blank = {"CHUNK_UNIT": "", "MAX_REQUEST_BYTES": "  ", "EMBEDDING_PROVIDER": ""}
    assert load_settings(blank, local_installed=not_installed) == Settings()


def test_every_bad_value_is_named_in_one_error() -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(
            {
                "CHUNK_UNIT": "chars",
                "CHUNK_MAXIMUM_PAGE_LENGTH": "lots",
                "CHUNK_TITLE_PREFIX": "maybe",
                "CHUNK_SECTIONS": "together",
                "CHUNK_STRIP_MARKUP": "sometimes",
                "SKILL_DEADLINE_SECONDS": "500",
                "MAX_REQUEST_BYTES": "0",
                "EMBEDDING_PROVIDER": "magic",
                "EMBEDDING_BATCH_SIZE": "4096",
                "CHUNK_FORMAT": "pdf",
                "CHUNK_WORKERS": "65",
            }
        )
    message = str(caught.value)
    assert message.startswith("invalid app settings: ")
    for words in (
        "CHUNK_UNIT must be one of characters, azureOpenAITokens (got 'chars')",
        "CHUNK_MAXIMUM_PAGE_LENGTH must be an integer",
        "CHUNK_TITLE_PREFIX must be true or false",
        "CHUNK_SECTIONS must be one of apart, packed (got 'together')",
        "CHUNK_STRIP_MARKUP must be true or false (got 'sometimes')",
        "SKILL_DEADLINE_SECONDS must be a number of seconds above 0 and at most 230",
        "MAX_REQUEST_BYTES must be an integer of at least 1",
        "EMBEDDING_PROVIDER must be one of azure_openai, openai, local, none (got 'magic')",
        "EMBEDDING_BATCH_SIZE must be an integer from 1 to 2048",
        "CHUNK_FORMAT must be one of auto, markdown, html, text",
        "CHUNK_WORKERS must be at most 64 (got 65)",
    ):
        assert words in message


def test_default_limits_that_fail_every_record_are_a_settings_error() -> None:
    with pytest.raises(SettingsError, match="pageOverlapLength") as caught:
        load_settings({"CHUNK_MAXIMUM_PAGE_LENGTH": "512", "CHUNK_PAGE_OVERLAP_LENGTH": "256"})
    assert "CHUNK_PAGE_OVERLAP_LENGTH" in str(caught.value)
    with pytest.raises(SettingsError, match="maximumPageLength must be between 300 and 50000"):
        load_settings({"CHUNK_UNIT": "characters", "CHUNK_MAXIMUM_PAGE_LENGTH": "100"})


def test_describe_settings_names_value_setting_and_source() -> None:
    described: dict[str, Any] = describe_settings(
        load_settings({"CHUNK_UNIT": "characters"}, local_installed=not_installed)
    )
    assert described["unit"] == {
        "value": "characters",
        "appSetting": "CHUNK_UNIT",
        "source": "app setting",
    }
    assert described["maximumPageLength"] == {
        "value": 5000,
        "appSetting": "CHUNK_MAXIMUM_PAGE_LENGTH",
        "source": "default",
    }
    assert [entry["appSetting"] for entry in described.values()] == list(ALL_ENV_NAMES)


def test_version_matches_pyproject() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert __version__ == pyproject["project"]["version"]


# --- embedding settings that cannot work are found at start-up -----------------------------

OPENAI = {"EMBEDDING_PROVIDER": "openai", "EMBEDDING_MODEL": "text-embedding-3-small"}
AZURE = {"AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com", "AZURE_OPENAI_API_KEY": "k"}

UNUSABLE_SETTINGS: dict[str, tuple[dict[str, str], str]] = {
    "an unclosed IPv6 host (regression: InvalidURL on every POST)": (
        {**OPENAI, "OPENAI_BASE_URL": "http://[::1"},
        "OPENAI_BASE_URL is not a URL",
    ),
    "an ftp base URL (regression: 503 after 16 s of retries)": (
        {**OPENAI, "OPENAI_BASE_URL": "ftp://x"},
        "OPENAI_BASE_URL must start with https:// or http:// (it starts with ftp://",
    ),
    "a base URL without a scheme": (
        {**OPENAI, "OPENAI_BASE_URL": "localhost:8000/v1"},
        "OPENAI_BASE_URL must start with https:// or http://",
    ),
    "a base URL without a host": (
        {**OPENAI, "OPENAI_BASE_URL": "http:///v1"},
        "OPENAI_BASE_URL has no host name",
    ),
    "a port out of range": (
        {**OPENAI, "OPENAI_BASE_URL": "http://127.0.0.1:99999/v1"},
        "OPENAI_BASE_URL has an invalid port",
    ),
    "a port that is not a number": (
        {**OPENAI, "OPENAI_BASE_URL": "http://127.0.0.1:abc/v1"},
        "OPENAI_BASE_URL has an invalid port",
    ),
    "a space in the URL": (
        {**OPENAI, "OPENAI_BASE_URL": "http://exa mple.com/v1"},
        "OPENAI_BASE_URL must not contain spaces or control characters",
    ),
    "an ftp Azure endpoint": (
        {**AZURE, "AZURE_OPENAI_ENDPOINT": "ftp://x"},
        "AZURE_OPENAI_ENDPOINT must start with https:// or http://",
    ),
    "an Azure endpoint without a scheme": (
        {**AZURE, "AZURE_OPENAI_ENDPOINT": "x.openai.azure.com"},
        "AZURE_OPENAI_ENDPOINT must start with https:// or http://",
    ),
    "a line break inside the Azure key (regression: 503 after 16 s of retries)": (
        {**AZURE, "AZURE_OPENAI_API_KEY": "abc\ndef"},
        "AZURE_OPENAI_API_KEY has characters an HTTP header cannot carry",
    ),
    "a non-ASCII letter in the OpenAI key": (
        {**OPENAI, "OPENAI_API_KEY": "sk-caf\u00e9"},
        "OPENAI_API_KEY has characters an HTTP header cannot carry",
    ),
    "a slash in the deployment name": (
        {**AZURE, "AZURE_OPENAI_EMBEDDING_DEPLOYMENT": "emb/../other"},
        "AZURE_OPENAI_EMBEDDING_DEPLOYMENT must be a deployment name",
    ),
    "a space in the API version": (
        {**AZURE, "AZURE_OPENAI_API_VERSION": "2024-10-21 preview"},
        "AZURE_OPENAI_API_VERSION must not contain spaces",
    ),
}


@pytest.mark.parametrize("name", list(UNUSABLE_SETTINGS))
def test_embedding_settings_that_cannot_work_are_a_settings_error(name: str) -> None:
    environ, words = UNUSABLE_SETTINGS[name]
    with pytest.raises(SettingsError) as caught:
        load_settings(environ, local_installed=not_installed)
    assert words in str(caught.value)


@pytest.mark.parametrize(
    "key", ["abc\ndef", "sk-caf\u00e9", "tab\there"], ids=["newline", "non-ascii", "tab"]
)
def test_a_key_that_cannot_work_is_never_shown(key: str) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings({**AZURE, "AZURE_OPENAI_API_KEY": key}, local_installed=not_installed)
    assert key not in str(caught.value)
    assert repr(key) not in str(caught.value)


@pytest.mark.parametrize(
    "environ",
    [
        {**OPENAI, "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"},
        {**OPENAI, "OPENAI_BASE_URL": "http://[::1]:8080/v1"},
        {**OPENAI, "OPENAI_BASE_URL": "HTTPS://api.example.com/v1/"},
        {**OPENAI, "OPENAI_API_KEY": "sk-proj-AbC_123-xyz"},
        {**AZURE, "AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com/"},
        {**AZURE, "AZURE_OPENAI_EMBEDDING_DEPLOYMENT": "text-embedding-3-small_v2.1"},
        {**AZURE, "AZURE_OPENAI_API_VERSION": "2024-05-01-preview"},
        # Settings of a provider that is not used are not checked.
        {**AZURE, "OPENAI_BASE_URL": "ftp://unused"},
    ],
    ids=repr,
)
def test_embedding_settings_that_can_work_are_accepted(environ: dict[str, str]) -> None:
    load_settings(environ, local_installed=not_installed)


def test_the_words_strategy_is_an_app_setting_with_its_own_checks() -> None:
    settings = load_settings({"CHUNK_STRATEGY": "words", "CHUNK_WORDS_PER_CHUNK": "50"})
    assert settings.strategy == "words"
    assert settings.parameters_of("words") == WordWindows(
        50, 10
    )  # a fifth: the default 40 is over half
    with pytest.raises(SettingsError) as raised:
        load_settings(
            {
                "CHUNK_STRATEGY": "sliding",
                "CHUNK_WORDS_PER_CHUNK": "10",
                "CHUNK_WORD_OVERLAP": "10",
                "CHUNK_WORD_SCOPE": "page",
            }
        )
    message = str(raised.value)
    assert (
        "CHUNK_STRATEGY must be one of structure, words, semantic, binary, pages (got 'sliding')"
        in message
    )
    assert "wordOverlap must be at least 0 and less than half of wordsPerChunk (< 5" in message
    assert "CHUNK_WORD_SCOPE must be one of section, document (got 'page')" in message
    for strategy in ("words", "semantic", "binary"):
        with pytest.raises(
            SettingsError,
            match=f"textSplitMode sentences does not apply to strategy '{strategy}' .*"
            r"\(from app settings CHUNK_TEXT_SPLIT_MODE, CHUNK_STRATEGY\)",
        ):
            load_settings({"CHUNK_STRATEGY": strategy, "CHUNK_TEXT_SPLIT_MODE": "sentences"})


SETTINGS_ERROR_EDGE = frozenset({"settings.py", "service.py", "app.py", "health.py", "library.py"})
"""Where the skill meets broken app settings: where they are read (`settings`), the
request's edge that answers every record with the error (`service.answer_chunk_request`),
the app's handlers and health report, and the in-process library."""


def test_a_settings_error_stops_at_the_requests_edge() -> None:
    # Issue 38 item 3: a SettingsError is a value at one edge; below it (chunk_record,
    # the chunkers and workers, admission, the answer caps, the memory budget) every
    # function takes Settings, so none of those modules names the error.
    named = sorted(
        path.name
        for path in (ROOT / "skills" / "skill").glob("*.py")
        if "SettingsError" in path.read_text(encoding="utf-8")
    )
    assert set(named) <= SETTINGS_ERROR_EDGE, named
    assert "SettingsError" in (ROOT / "skills" / "skill" / "service.py").read_text("utf-8")
