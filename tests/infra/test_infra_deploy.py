"""`python -m infra.deploy` against a local recording stand-in for Azure AI Search."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from azure.core.credentials import AccessToken

from infra import deploy
from testing.search_stub import SearchStub
from tests.infra_helpers import RecordingService
from tests.search.test_service_errors import closed_port, one_error_line

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.integration

ADMIN_KEY = "test-admin-key"


@pytest.fixture
def service() -> Iterator[RecordingService]:
    with RecordingService() as recording:
        yield recording


def environment(service: RecordingService, **changes: str) -> dict[str, str]:
    env = {
        "AZURE_SEARCH_ENDPOINT": service.url,
        "AZURE_SEARCH_KEY": ADMIN_KEY,
        "SKILL_ENDPOINT": "https://func-x.azurewebsites.net/api/chunk",
        "SKILL_AUTH": "functionKey",
        "SKILL_FUNCTION_KEY": "the-function-key",
        "AZURE_FUNCTION_APP_NAME": "func-x",
        "AZURE_RESOURCE_GROUP": "rg-x",
        "AZURE_SUBSCRIPTION_ID": "sub-x",
        "AZURE_STORAGE_ACCOUNT_ID": "/subscriptions/sub-x/resourceGroups/rg-x/providers/"
        "Microsoft.Storage/storageAccounts/stx",
        "AZURE_STORAGE_CONTAINER": "documents",
        "AZURE_OPENAI_ENDPOINT": "https://oai-x.openai.azure.com/",
        "AZURE_OPENAI_EMBEDDING_DEPLOYMENT": "embedding",
        "EMBEDDING_MODEL": "text-embedding-3-small",
        "EMBEDDING_DIMENSIONS": "1536",
    }
    env.update(changes)
    return env


def resource(path: str) -> str:
    """`/indexes('chunks')/search.reset` -> `indexes/search.reset`-style short names."""
    parts = [part.split("(")[0] for part in path.strip("/").split("/")]
    return "/".join(parts)


def writes(service: RecordingService) -> list[str]:
    """Every call but the skillset look-up, as `METHOD collection[/action]`."""
    return [
        f"{call.method} {resource(call.path)}" for call in service.calls if call.method != "GET"
    ]


def test_apply_creates_the_four_definitions_in_order(service: RecordingService) -> None:
    assert deploy.main(["apply"], environ=environment(service)) == 0
    assert service.calls[0].method == "GET"  # is there a skillset to compare with?
    assert writes(service) == [
        "PUT datasources",
        "PUT indexes",
        "PUT skillsets",
        "PUT indexers",
    ]
    for call in service.calls:
        assert call.headers["api-key"] == ADMIN_KEY
        assert "api-version=" in call.query
    by_kind = {resource(c.path): c.body for c in service.calls if c.method == "PUT"}
    assert by_kind["indexes"]["name"] == "chunks"
    vector = next(f for f in by_kind["indexes"]["fields"] if f["name"] == "embedding")
    assert vector["dimensions"] == 1536
    (skill,) = by_kind["skillsets"]["skills"]
    assert skill["httpHeaders"] == {"x-functions-key": "the-function-key"}
    assert skill["uri"] == "https://func-x.azurewebsites.net/api/chunk"
    assert by_kind["skillsets"]["indexProjections"]["selectors"][0]["targetIndexName"] == "chunks"
    assert by_kind["indexers"]["skillsetName"] == "chunks-skillset"
    assert by_kind["datasources"]["credentials"]["connectionString"].startswith("ResourceId=")


def test_reapplying_the_same_settings_changes_nothing_else(service: RecordingService) -> None:
    assert deploy.main(["apply"], environ=environment(service)) == 0
    service.calls.clear()
    assert deploy.main(["apply"], environ=environment(service)) == 0
    assert writes(service) == ["PUT datasources", "PUT indexes", "PUT skillsets", "PUT indexers"]


def test_new_chunk_settings_reset_and_rerun_the_indexer(service: RecordingService) -> None:
    assert deploy.main(["apply"], environ=environment(service)) == 0
    service.calls.clear()
    env = environment(service, CHUNK_MAXIMUM_PAGE_LENGTH="1024")
    assert deploy.main(["apply", "--page-overlap-length", "128"], environ=env) == 0
    assert writes(service) == [
        "PUT datasources",
        "PUT indexes",
        "PUT skillsets",
        "PUT indexers",
        "POST indexers/search.reset",
        "POST indexers/search.run",
    ]
    skillset = next(
        c.body for c in service.calls if c.method == "PUT" and resource(c.path) == "skillsets"
    )
    inputs = {i["name"]: i["source"] for i in skillset["skills"][0]["inputs"]}
    assert inputs["maximumPageLength"] == "=1024"
    assert inputs["pageOverlapLength"] == "=128"


def test_a_newly_projected_field_resets_and_reruns_the_indexer(service: RecordingService) -> None:
    """A skillset deployed before `offset` and `length` were mapped: its chunk documents
    have no span until they are indexed again, so `apply` re-runs the indexer."""
    assert deploy.main(["apply"], environ=environment(service)) == 0
    path = next(path for path in service.stored if path.startswith("/skillsets"))
    (selector,) = service.stored[path]["indexProjections"]["selectors"]
    selector["mappings"] = [
        m for m in selector["mappings"] if m["name"] not in {"offset", "length"}
    ]
    service.calls.clear()
    assert deploy.main(["apply"], environ=environment(service)) == 0
    assert writes(service)[-2:] == ["POST indexers/search.reset", "POST indexers/search.run"]


def test_recreate_index_deletes_it_first_then_reindexes(service: RecordingService) -> None:
    env = environment(service, EMBEDDING_DIMENSIONS="512")
    assert deploy.main(["apply", "--recreate-index"], environ=env) == 0
    assert writes(service) == [
        "PUT datasources",
        "DELETE indexes",
        "PUT indexes",
        "PUT skillsets",
        "PUT indexers",
        "POST indexers/search.reset",
        "POST indexers/search.run",
    ]


def test_run_resets_and_runs(service: RecordingService) -> None:
    assert deploy.main(["run", "--reset"], environ=environment(service)) == 0
    assert writes(service) == ["POST indexers/search.reset", "POST indexers/search.run"]


def test_invalid_settings_stop_before_any_call(
    service: RecordingService, capsys: pytest.CaptureFixture[str]
) -> None:
    env = environment(service, CHUNK_PAGE_OVERLAP_LENGTH="300")
    assert deploy.main(["apply"], environ=env) == 2
    assert "pageOverlapLength" in capsys.readouterr().err
    assert service.calls == []


def test_inconsistent_dimensions_stop_before_any_call(
    service: RecordingService, capsys: pytest.CaptureFixture[str]
) -> None:
    env = environment(service, EMBEDDING_DIMENSIONS="3072")  # 3-small gives at most 1536
    assert deploy.main(["apply"], environ=env) == 2
    assert "3072" in capsys.readouterr().err
    assert service.calls == []


def test_entra_mode_sends_auth_resource_id(service: RecordingService) -> None:
    env = environment(service, SKILL_AUTH="entra", SKILL_AUTH_RESOURCE_ID="api://app-id")
    del env["SKILL_FUNCTION_KEY"]
    assert deploy.main(["apply"], environ=env) == 0
    skillset = next(
        c.body for c in service.calls if c.method == "PUT" and resource(c.path) == "skillsets"
    )
    (skill,) = skillset["skills"]
    assert skill["authResourceId"] == "api://app-id"
    assert "httpHeaders" not in skill


class StaticToken:
    """A TokenCredential stand-in."""

    def __init__(self) -> None:
        self.scopes: list[str] = []

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        self.scopes += scopes
        return AccessToken("arm-token", 4102444800)


def test_the_function_key_comes_from_resource_manager(service: RecordingService) -> None:
    env = environment(service, AZURE_RESOURCE_MANAGER_ENDPOINT=service.url)
    del env["SKILL_FUNCTION_KEY"]
    credential = StaticToken()
    setup = deploy.setup_from_environment(
        env, lambda: deploy.fetch_function_key(env, credential, attempts=1)
    )
    assert setup.skill_auth.function_key == "key-from-resource-manager"
    (call,) = service.calls
    assert call.method == "POST"
    assert call.path == (
        "/subscriptions/sub-x/resourceGroups/rg-x/providers/Microsoft.Web/sites/func-x"
        "/host/default/listKeys"
    )
    assert call.headers["authorization"] == "Bearer arm-token"
    assert credential.scopes == ["https://management.azure.com/.default"]


def test_show_needs_no_azure_and_hides_the_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert deploy.main(["show", "--maximum-page-length", "800"], environ={}) == 0
    shown = capsys.readouterr()
    assert '"source": "=800"' in shown.out
    assert "<function key>" in shown.out
    # The embedding cache the Bicep sets up: settings, container, lifecycle rule, access.
    assert '"EMBEDDING_CACHE": "blob"' in shown.err
    assert "https://<storage account>.blob.core.windows.net/" in shown.err
    assert "not read for 30 days" in shown.err
    assert "embedding-cache-unused" in shown.err


def test_show_prints_the_deployed_embedding_cache(capsys: pytest.CaptureFixture[str]) -> None:
    env = {"AZURE_STORAGE_ACCOUNT": "stabc", "EMBEDDING_CACHE_RETENTION_DAYS": "7"}
    assert deploy.main(["show"], environ=env) == 0
    err = capsys.readouterr().err
    assert "https://stabc.blob.core.windows.net/" in err
    assert "stabc/embedding-cache" in err
    assert "not read for 7 days" in err
    assert deploy.main(["show"], environ={"EMBEDDING_CACHE": "off"}) == 0
    assert '"EMBEDDING_CACHE": "off"' in capsys.readouterr().err


def test_apply_lists_every_missing_setting_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert deploy.main(["apply"], environ={}) == 2
    line = one_error_line(capsys)
    for name in (*deploy.APPLY_REQUIRED, "SKILL_FUNCTION_KEY", "AZURE_SUBSCRIPTION_ID"):
        assert name in line


def test_apply_dry_run_checks_without_calling_the_service(
    service: RecordingService, capsys: pytest.CaptureFixture[str]
) -> None:
    env = environment(service)
    del env["AZURE_SEARCH_ENDPOINT"]  # a dry run needs no service
    assert deploy.main(["apply", "--dry-run"], environ=env) == 0
    assert "dry run: the definitions are consistent" in capsys.readouterr().out
    assert deploy.main(["apply", "--dry-run"], environ={**env, "EMBEDDING_DIMENSIONS": "3072"}) == 2
    assert "3072" in capsys.readouterr().err
    assert service.calls == []


def test_a_wrong_key_or_an_unreachable_service_is_one_line(
    service: RecordingService, capsys: pytest.CaptureFixture[str]
) -> None:
    with SearchStub({"name": "x", "fields": [{"name": "k", "key": True}]}, api_key="right") as stub:
        env = environment(service, AZURE_SEARCH_ENDPOINT=stub.endpoint, AZURE_SEARCH_KEY="wrong")
        assert deploy.main(["apply"], environ=env) == 1
        assert "refused the credentials (HTTP 403)" in one_error_line(capsys)
    env = environment(service, AZURE_SEARCH_ENDPOINT=closed_port())
    assert deploy.main(["status"], environ=env) == 1
    assert "cannot reach the search service" in one_error_line(capsys)
