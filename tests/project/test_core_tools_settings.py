"""`func start` with local.settings.sample.json: the sample read as the Functions host hands
it to the app (its `Values` as the process environment, read by the same loader), and
what getting-started's "Run under Core Tools" says about it (issue 39, item 7)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from chunking import Unit
from skills.skill.settings import load_settings
from tests.conftest import function_app_with
from tests.paths import ROOT

if TYPE_CHECKING:
    from tests.conftest import FunctionCaller

SAMPLE = ROOT / "local.settings.sample.json"
PAGE = ROOT / "docs" / "guide" / "getting-started.md"
DIFFERING = ("EMBEDDING_PROVIDER", "CHUNK_MAXIMUM_PAGE_LENGTH", "CHUNK_PAGE_OVERLAP_LENGTH")
"""The lines the page says to delete for uvicorn's behaviour."""


def _values() -> dict[str, str]:
    values: dict[str, str] = json.loads(SAMPLE.read_text(encoding="utf-8"))["Values"]
    return values


def test_the_sample_is_read_without_a_problem_and_needs_no_storage() -> None:
    values = _values()
    settings = load_settings(values)  # raises SettingsError naming any bad value
    assert settings.embedding.provider == "none"
    assert settings.length_defaults(Unit.TOKENS) == (512, 64)
    assert values["AzureWebJobsStorage"] == ""  # HTTP functions only: no Azurite needed
    page = PAGE.read_text(encoding="utf-8")
    assert "UseDevelopmentStorage=true` works only with\n  the Azurite storage emulator" in page


def test_without_the_lines_the_page_names_the_host_serves_what_uvicorn_does() -> None:
    rest = {name: value for name, value in _values().items() if name not in DIFFERING}
    page = PAGE.read_text(encoding="utf-8")
    assert all(f"`{name}`" in page for name in DIFFERING)
    assert load_settings(rest) == load_settings({})


def test_the_sample_settings_answer_through_the_functions_adapter(
    call_function: FunctionCaller,
) -> None:
    app = function_app_with(load_settings(_values()))
    health = call_function(app, "GET", "/api/health")
    assert health.status_code == 200
    assert json.loads(health.get_body())["embedding"]["provider"] == "none"
    body = {"values": [{"recordId": "1", "data": {"text": "# T\n\nHello."}}]}
    answer = call_function(
        app, "POST", "/api/chunk", json.dumps(body).encode(), {"content-type": "application/json"}
    )
    assert answer.status_code == 200
    (value,) = json.loads(answer.get_body())["values"]
    (chunk,) = value["data"]["chunks"]
    assert "embedding" not in chunk
