"""infra/*.bicep: it parses, it has what the app needs, and checkov finds nothing unexplained."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import TYPE_CHECKING, Any

import pytest
import yaml
from pycep import BicepParser

import function_app
from infra import deploy
from skills.embedding.settings import EMBEDDING_ENV_NAMES
from skills.skill.settings import ALL_ENV_NAMES
from tests.infra_helpers import INFRA, parsed_bicep

if TYPE_CHECKING:
    from pathlib import Path

ROOT = INFRA.parent
CHECKOV = ROOT / ".venv-tools" / "bin" / "checkov"
CHECKOV_SECONDS = 240

ROLE_IDS = {
    "storageBlobDataOwner": "b7e6dc6d-f1e8-4753-8033-0f276bb0955b",
    "storageBlobDataReader": "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1",
    "cognitiveServicesOpenAIUser": "5e0bd9bd-7b93-4f28-af87-19fc36ad61bd",
    "monitoringMetricsPublisher": "3913510d-42f4-4e42-8a64-420c390055eb",
}
"""The built-in roles the app cannot work without (ids from Azure's built-in role list)."""

PLATFORM_SETTINGS = {
    "AzureWebJobsStorage__accountName",
    "APPLICATIONINSIGHTS_CONNECTION_STRING",
    "APPLICATIONINSIGHTS_AUTHENTICATION_STRING",
}


def leaves(expression: Any) -> set[str]:
    """Every string in a pycep expression tree (names, properties, literals)."""
    if isinstance(expression, str):
        return {expression}
    if isinstance(expression, dict):
        # "type" names the operator or function (property_accessor, string...), not a value.
        values = [v for k, v in expression.items() if k != "type"]
        return set().union(*(leaves(v) for v in values)) if values else set()
    if isinstance(expression, list):
        return set().union(*(leaves(v) for v in expression)) if expression else set()
    return set()


def resources() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = parsed_bicep()["resources"]["resources"]
    return found


def config(name: str) -> dict[str, Any]:
    """A resource's body (inside the condition of a conditional resource)."""
    body: dict[str, Any] = resources()[name]["config"]
    return body.get("config", body) if "condition" in body else body


def of_type(kind: str) -> list[str]:
    return [name for name, r in resources().items() if r["type"] == kind]


def test_main_wires_the_module_and_the_parameters_file() -> None:
    main = parsed_bicep()["main"]
    module = main["modules"]["resources"]
    passed = set(module["config"]["params"])
    declared = parsed_bicep()["resources"]["parameters"]
    required = {n for n, p in declared.items() if p.get("default") is None}
    assert required <= passed, required - passed
    assert passed <= set(declared), passed - set(declared)
    wanted = json.loads((INFRA / "main.parameters.json").read_text())["parameters"]
    assert set(wanted) <= set(main["parameters"]), set(wanted) - set(main["parameters"])
    main_required = {n for n, p in main["parameters"].items() if p.get("default") is None}
    assert main_required <= set(wanted)
    outputs = parsed_bicep()["resources"]["outputs"]
    used = {leaf for o in main["outputs"].values() for leaf in leaves(o)}
    for output in outputs:
        assert output in used, f"resources.bicep output {output} is not passed on"


def test_every_module_output_main_reads_exists() -> None:
    outputs = set(parsed_bicep()["resources"]["outputs"])
    for name, output in parsed_bicep()["main"]["outputs"].items():
        names = leaves(output)
        if {"resources", "outputs"} <= names:
            assert names - {"resources", "outputs"} <= outputs, name


def test_the_resources_the_app_needs_are_there() -> None:
    kinds = {r["type"] for r in resources().values()}
    assert {
        "Microsoft.Web/serverfarms",
        "Microsoft.Web/sites",
        "Microsoft.Insights/components",
        "Microsoft.OperationalInsights/workspaces",
        "Microsoft.Storage/storageAccounts",
        "Microsoft.Storage/storageAccounts/blobServices/containers",
        "Microsoft.Search/searchServices",
        "Microsoft.CognitiveServices/accounts",
        "Microsoft.CognitiveServices/accounts/deployments",
    } <= kinds
    (plan,) = of_type("Microsoft.Web/serverfarms")
    assert config(plan)["sku"] == {"name": "FC1", "tier": "FlexConsumption"}
    app = config("functionApp")
    assert app["kind"] == "functionapp,linux"
    assert app["identity"] == {"type": "SystemAssigned"}
    assert app["properties"]["httpsOnly"] is True
    flex = app["properties"]["functionAppConfig"]
    assert flex["runtime"]["name"] == "python"
    assert flex["deployment"]["storage"]["authentication"]["type"] == "SystemAssignedIdentity"
    assert "skill" in leaves(app["tags"])  # azd-service-name, as azure.yaml names the service
    search = config("search")
    assert search["identity"] == {"type": "SystemAssigned"}
    assert search["properties"]["disableLocalAuth"] is True
    openai = config("openAi")
    assert openai["kind"] == "OpenAI"
    assert openai["properties"]["disableLocalAuth"] is True
    assert "embeddingModel" in leaves(config("embeddingDeployment")["properties"]["model"])
    storage = config("storage")["properties"]
    assert storage["allowSharedKeyAccess"] is False
    assert storage["allowBlobPublicAccess"] is False
    # The indexer's deletion detection relies on blob soft delete.
    assert config("blobServices")["properties"]["deleteRetentionPolicy"]["enabled"] is True


def test_the_embedding_cache_is_deployed_with_its_lifecycle_rule() -> None:
    assert config("embeddingCacheContainer")["properties"] == {"publicAccess": "None"}
    assert "embeddingCacheContainerName" in leaves(config("embeddingCacheContainer")["name"])
    tracking = config("blobServices")["properties"]["lastAccessTimeTrackingPolicy"]
    assert tracking["enable"] is True
    (rule,) = config("lifecycle")["properties"]["policy"]["rules"]
    assert rule["enabled"] is True
    definition = rule["definition"]
    assert definition["filters"]["prefixMatch"] == ["${embeddingCacheContainerName}/"]
    delete = definition["actions"]["baseBlob"]["delete"]
    assert "embeddingCacheRetentionDays" in leaves(delete["daysAfterLastAccessTimeGreaterThan"])
    settings = app_settings()
    assert "embeddingCache" in leaves(settings["EMBEDDING_CACHE"])
    assert "embeddingCacheContainerName" in leaves(settings["EMBEDDING_CACHE_CONTAINER"])
    assert "storage" in leaves(settings["EMBEDDING_CACHE_ACCOUNT_URL"])
    # Managed identity: the account's Owner role covers the container; no connection string.
    assert "EMBEDDING_CACHE_CONNECTION_STRING" not in settings
    assert ("functionApp", "storageBlobDataOwner", "storage") in role_assignments()
    main = parsed_bicep()["main"]
    assert main["parameters"]["embeddingCache"]["default"] == "blob"
    assert {"EMBEDDING_CACHE", "EMBEDDING_CACHE_CONTAINER"} <= set(main["outputs"])


def role_assignments() -> set[tuple[str, str, str]]:
    """(who, role, scope) for every role assignment in resources.bicep."""
    found = set()
    for name in of_type("Microsoft.Authorization/roleAssignments"):
        body = config(name)
        principal = leaves(body["properties"]["principalId"])
        identities = principal & {"functionApp", "search"}
        who = next(iter(identities)) if identities else "principalId"
        role = next(iter(leaves(body["properties"]["roleDefinitionId"]) & set(roles())))
        found.add((who, role, body["scope"]))
    return found


def roles() -> dict[str, str]:
    value: dict[str, str] = parsed_bicep()["resources"]["variables"]["roles"]["value"]
    return value


def test_role_ids_are_the_built_in_ones() -> None:
    for name, role_id in ROLE_IDS.items():
        assert roles()[name] == role_id


def test_identities_get_exactly_the_access_they_need() -> None:
    assignments = role_assignments()
    assert {
        # The Function: host storage, telemetry, embeddings.
        ("functionApp", "storageBlobDataOwner", "storage"),
        ("functionApp", "monitoringMetricsPublisher", "appInsights"),
        ("functionApp", "cognitiveServicesOpenAIUser", "openAi"),
        # The search service: the documents container only, and query vectors.
        ("search", "storageBlobDataReader", "documentsContainer"),
        ("search", "cognitiveServicesOpenAIUser", "openAi"),
        # The deployer: definitions, uploads.
        ("principalId", "searchServiceContributor", "search"),
        ("principalId", "storageBlobDataContributor", "documentsContainer"),
    } <= assignments
    # The search service never gets more than read access to storage.
    assert not {a for a in assignments if a[0] == "search" and a[2] == "storage"}


def app_settings() -> dict[str, Any]:
    settings = config("functionApp")["properties"]["siteConfig"]["appSettings"]
    return {s["name"]: s["value"] for s in settings}


def test_app_settings_are_the_ones_the_skill_reads() -> None:
    settings = app_settings()
    assert {
        "AzureWebJobsStorage__accountName",
        "APPLICATIONINSIGHTS_CONNECTION_STRING",
        "EMBEDDING_PROVIDER",
        "AZURE_OPENAI_ENDPOINT",
        "AZURE_OPENAI_EMBEDDING_DEPLOYMENT",
        "AZURE_OPENAI_API_VERSION",
        "EMBEDDING_MODEL",
        "EMBEDDING_DIMENSIONS",
        function_app.AUTH_LEVEL_SETTING,
    } <= set(settings)
    known = set(ALL_ENV_NAMES) | set(EMBEDDING_ENV_NAMES) | {function_app.AUTH_LEVEL_SETTING}
    unknown = set(settings) - known - PLATFORM_SETTINGS
    assert not unknown, f"app settings nothing reads: {unknown}"
    assert settings["EMBEDDING_PROVIDER"] == "azure_openai"
    # Managed identity, never keys: no key setting, and Flex takes the runtime elsewhere.
    assert "AZURE_OPENAI_API_KEY" not in settings
    assert "FUNCTIONS_WORKER_RUNTIME" not in settings
    # The vector length the skill checks is the one the index gets.
    assert "embeddingDimensions" in leaves(settings["EMBEDDING_DIMENSIONS"])
    main = parsed_bicep()["main"]["outputs"]
    assert "embeddingDimensions" in leaves(main["EMBEDDING_DIMENSIONS"])


def test_entra_mode_guards_the_function_with_easy_auth() -> None:
    raw = resources()["functionAuth"]["config"]
    assert leaves(raw["condition"]) >= {"skillAuth", "entra"}
    body = config("functionAuth")
    assert body["name"] == "authsettingsV2"
    validation = body["properties"]["globalValidation"]
    assert validation["requireAuthentication"] is True
    assert validation["unauthenticatedClientAction"] == "Return401"
    aad = body["properties"]["identityProviders"]["azureActiveDirectory"]
    assert "search" in leaves(aad["validation"]["defaultAuthorizationPolicy"])
    assert "anonymous" in leaves(app_settings()[function_app.AUTH_LEVEL_SETTING])


def test_function_app_auth_level_follows_the_app_setting() -> None:
    anonymous = function_app.auth_level({"FUNCTION_AUTH_LEVEL": "anonymous"})
    assert anonymous.name == "ANONYMOUS"
    assert function_app.auth_level({}).name == "FUNCTION"
    assert function_app.auth_level({"FUNCTION_AUTH_LEVEL": "admin"}).name == "FUNCTION"


def test_azure_yaml_deploys_the_function_and_runs_the_deploy_script() -> None:
    azure = yaml.safe_load((ROOT / "azure.yaml").read_text())
    assert azure["infra"]["path"] == "infra"
    assert azure["services"]["skill"]["host"] == "function"
    assert azure["services"]["skill"]["language"] == "python"
    hook = azure["hooks"]["postprovision"]
    for shell in ("posix", "windows"):
        assert "-m infra.deploy apply" in hook[shell]["run"]


def test_outputs_cover_what_the_deploy_script_reads() -> None:
    assert set(deploy.BICEP_OUTPUTS) <= set(parsed_bicep()["main"]["outputs"])


def test_a_syntax_error_does_not_parse(tmp_path: Path) -> None:
    broken = tmp_path / "broken.bicep"
    broken.write_text((INFRA / "resources.bicep").read_text().replace("properties: {", "prop {", 1))
    with pytest.raises(Exception):  # noqa: B017, PT011  (pycep raises lark's errors)
        BicepParser().parse(file_path=broken)


def run_checkov(directory: Path) -> dict[str, Any]:
    if not CHECKOV.exists():
        pytest.fail("checkov is missing: run scripts/setup.sh (it installs .venv-tools/)")
    completed = subprocess.run(
        [
            str(CHECKOV),
            "-d",
            str(directory),
            "--framework",
            "bicep",
            "--skip-download",
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=CHECKOV_SECONDS,
        check=False,
    )
    report: dict[str, Any] = json.loads(completed.stdout)
    return report


@pytest.fixture(scope="session")
def checkov_report() -> dict[str, Any]:
    """checkov over infra/, once per session (it takes a few seconds)."""
    return run_checkov(INFRA)


def test_checkov_finds_nothing_unexplained(checkov_report: dict[str, Any]) -> None:
    summary = checkov_report["summary"]
    assert summary["parsing_errors"] == 0
    assert summary["resource_count"] >= 20
    assert summary["passed"] >= 20
    failed = [(c["check_id"], c["resource"]) for c in checkov_report["results"]["failed_checks"]]
    assert failed == []
    for skipped in checkov_report["results"]["skipped_checks"]:
        reason = skipped["check_result"].get("suppress_comment") or ""
        assert len(reason) > 30, f"{skipped['check_id']} is skipped without a reason"


def test_checkov_would_catch_a_regression(tmp_path: Path) -> None:
    copy = tmp_path / "infra"
    copy.mkdir()
    for bicep in INFRA.glob("*.bicep"):
        shutil.copy(bicep, copy)
    resources_file = copy / "resources.bicep"
    text = resources_file.read_text()
    resources_file.write_text(
        text.replace("minimumTlsVersion: 'TLS1_2'", "minimumTlsVersion: 'TLS1_0'")
    )
    (copy / "broken.bicep").write_text("resource x 'A/b@1' = {\n  name: \n")
    report = run_checkov(copy)
    assert report["summary"]["parsing_errors"] == 1
    failed = {c["check_id"] for c in report["results"]["failed_checks"]}
    assert "CKV_AZURE_44" in failed  # storage TLS version
