"""`python -m infra.deploy`: create or update the search definitions, re-chunk, run the indexer.

Idempotent: every call creates or updates the data source, index, skillset and indexer,
in that order (the index must exist before a skillset projects into it). azd runs
`apply` after provisioning; it also runs alone, reading the azd environment
(`.azure/<env>/.env`) or plain environment variables.

When the skill's inputs (the chunk settings, its URI or key) or the projection's
mappings changed, `apply` resets the indexer and runs it, so every document is chunked
again with the new settings and gets every mapped field.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from azure.core.credentials import AzureKeyCredential
from azure.core.exceptions import AzureError, HttpResponseError, ResourceNotFoundError
from azure.search.documents.indexes import SearchIndexClient, SearchIndexerClient

from chunking import Unit
from chunking.cli.pipes import OneLineParser, command_name
from chunking.options import ParameterNames, clipped_repr
from skills.commands.cli import HelpFormatter
from skills.parameters import BY_NAME, DEPLOYED_PARAMETERS, read_rows
from skills.search.checks import check_definitions, check_partitions, web_api_skills
from skills.search.definitions import (
    ENV_CHUNK_SETTINGS,
    FUNCTION_KEY_HEADER,
    INDEXER_BATCH_SIZE,
    SKILL_BATCH_SIZE,
    SKILL_DEGREE_OF_PARALLELISM,
    ChunkSettings,
    Definitions,
    SearchSetup,
    SkillAuth,
    build_definitions,
    chunk_settings,
    chunk_settings_from_environment,
    partition_folders,
    partition_setups,
)
from skills.search.service_errors import describe_service_error
from skills.values import Problem, Source

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Mapping, Sequence

    from azure.core.credentials import TokenCredential


# Environment variables. The AZURE_*, SKILL_* and EMBEDDING_* ones are outputs of
# infra/main.bicep (azd writes them to .azure/<env>/.env); tests check that they match.
ENV_SEARCH_ENDPOINT = "AZURE_SEARCH_ENDPOINT"
ENV_SKILL_ENDPOINT = "SKILL_ENDPOINT"
ENV_SKILL_AUTH = "SKILL_AUTH"
ENV_SKILL_AUTH_RESOURCE_ID = "SKILL_AUTH_RESOURCE_ID"
ENV_FUNCTION_APP_NAME = "AZURE_FUNCTION_APP_NAME"
ENV_RESOURCE_GROUP = "AZURE_RESOURCE_GROUP"
ENV_SUBSCRIPTION_ID = "AZURE_SUBSCRIPTION_ID"
ENV_STORAGE_ACCOUNT_ID = "AZURE_STORAGE_ACCOUNT_ID"
ENV_STORAGE_CONTAINER = "AZURE_STORAGE_CONTAINER"
ENV_OPENAI_ENDPOINT = "AZURE_OPENAI_ENDPOINT"
ENV_EMBEDDING_DEPLOYMENT = "AZURE_OPENAI_EMBEDDING_DEPLOYMENT"
ENV_EMBEDDING_MODEL = "EMBEDDING_MODEL"
ENV_EMBEDDING_DIMENSIONS = "EMBEDDING_DIMENSIONS"
ENV_STORAGE_ACCOUNT = "AZURE_STORAGE_ACCOUNT"
ENV_EMBEDDING_CACHE = "EMBEDDING_CACHE"
ENV_EMBEDDING_CACHE_CONTAINER = "EMBEDDING_CACHE_CONTAINER"
ENV_EMBEDDING_CACHE_RETENTION_DAYS = "EMBEDDING_CACHE_RETENTION_DAYS"
EMBEDDING_CACHE_DEFAULTS = {
    ENV_EMBEDDING_CACHE: "blob",
    ENV_EMBEDDING_CACHE_CONTAINER: "embedding-cache",
    ENV_EMBEDDING_CACHE_RETENTION_DAYS: "30",
}
"""infra/main.bicep's defaults, shown before anything is provisioned."""
LIFECYCLE_RULE = "embedding-cache-unused"
"""The storage account's lifecycle rule that deletes cache entries (infra/resources.bicep)."""
BICEP_OUTPUTS = (
    ENV_SEARCH_ENDPOINT,
    ENV_SKILL_ENDPOINT,
    ENV_SKILL_AUTH,
    ENV_SKILL_AUTH_RESOURCE_ID,
    ENV_FUNCTION_APP_NAME,
    ENV_RESOURCE_GROUP,
    ENV_SUBSCRIPTION_ID,
    ENV_STORAGE_ACCOUNT_ID,
    ENV_STORAGE_CONTAINER,
    ENV_OPENAI_ENDPOINT,
    ENV_EMBEDDING_DEPLOYMENT,
    ENV_EMBEDDING_MODEL,
    ENV_EMBEDDING_DIMENSIONS,
)
"""What the deploy script reads from the provisioned infrastructure."""

# Optional settings, set with `azd env set NAME VALUE` or in the shell.
ENV_SEARCH_KEY = "AZURE_SEARCH_KEY"
"""An admin key; without it the script signs in with Microsoft Entra (azd/az login)."""
ENV_FUNCTION_KEY = "SKILL_FUNCTION_KEY"
"""The function key; without it the script reads it from Azure Resource Manager."""
ENV_MANAGEMENT_ENDPOINT = "AZURE_RESOURCE_MANAGER_ENDPOINT"
ENV_NAME_PREFIX = "SEARCH_NAME_PREFIX"
ENV_PARTITIONS = "SEARCH_PARTITIONS"
"""How many data source + indexer pairs share the index (`azd env set SEARCH_PARTITIONS 3`)."""
ENV_PARTITION_FOLDERS = "SEARCH_PARTITION_FOLDERS"
"""Their blob folders, comma-separated; default part-0, part-1, ..."""
ENV_SKILL_BATCH_SIZE = "SKILL_BATCH_SIZE"
ENV_SKILL_PARALLELISM = "SKILL_DEGREE_OF_PARALLELISM"
ENV_SCHEDULE_MINUTES = "INDEXER_SCHEDULE_MINUTES"
ENV_URL_SOURCE = "SKILL_URL_SOURCE"
ENV_TITLE_SOURCE = "SKILL_TITLE_SOURCE"

MANAGEMENT_ENDPOINT = "https://management.azure.com"
MANAGEMENT_SCOPE = "https://management.azure.com/.default"
WEB_API_VERSION = "2024-04-01"
KEY_FETCH_ATTEMPTS = 6
KEY_FETCH_PAUSE_SECONDS = 10.0
"""A new Function app's host can take a minute before it hands out keys."""
DEFAULT_SCHEDULE_MINUTES = 60


class DeployError(Exception):
    """Configuration or service state that stops the deployment; the message says why."""


@dataclass(frozen=True, slots=True)
class Target:
    """Where to deploy and how to sign in."""

    search_endpoint: str
    credential: AzureKeyCredential | TokenCredential


def read_env_file(path: Path) -> dict[str, str]:
    """`KEY="value"` lines of an azd .env file."""
    values = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        name, equals, value = line.strip().partition("=")
        if equals and name and not name.startswith("#"):
            values[name.strip()] = value.strip().strip('"')
    return values


def azd_environment(root: Path) -> dict[str, str]:
    """The default azd environment's values under `root`, or nothing if there is none."""
    config = root / ".azure" / "config.json"
    if not config.is_file():
        return {}
    name = json.loads(config.read_text(encoding="utf-8")).get("defaultEnvironment")
    env_file = root / ".azure" / str(name) / ".env"
    return read_env_file(env_file) if name and env_file.is_file() else {}


def _required(environ: Mapping[str, str], name: str) -> str:
    value = environ.get(name, "").strip()
    if not value:
        raise DeployError(
            f"{name} is not set; run `azd provision` first, or set it (see infra/README.md)"
        )
    return value


APPLY_REQUIRED = tuple(
    name
    for name in BICEP_OUTPUTS
    if name
    not in {
        ENV_SKILL_AUTH,  # functionKey by default
        ENV_SKILL_AUTH_RESOURCE_ID,  # entra only
        ENV_FUNCTION_APP_NAME,  # these three only to read the function key
        ENV_RESOURCE_GROUP,
        ENV_SUBSCRIPTION_ID,
    }
)
"""What `apply` needs in every case (azd provision writes them all)."""
KEY_LOOKUP_REQUIRED = (ENV_SUBSCRIPTION_ID, ENV_RESOURCE_GROUP, ENV_FUNCTION_APP_NAME)
"""What reading the function key from Resource Manager needs, without SKILL_FUNCTION_KEY."""


def lengths_line(chunk: ChunkSettings, environ: Mapping[str, str]) -> str:
    """The lengths the skillset will send, and why they are those (the one rule's deploy
    case: app settings where given, else the skill's defaults, else for characters the
    starting values Microsoft's chunking guidance cites)."""
    names = (ENV_CHUNK_SETTINGS["maximum_page_length"], ENV_CHUNK_SETTINGS["page_overlap_length"])
    given = [name for name in names if environ.get(name, "").strip()]
    if len(given) == len(names):
        why = f"from {' and '.join(given)}"
    elif chunk.unit is Unit.CHARACTERS:
        why = (
            "the deploy's starting values in characters, as Microsoft's chunking guidance "
            "cites them for the Split skill: docs/guide/deploy.md"
        )
    else:
        why = "the skill's defaults"
    if given and len(given) < len(names):
        why += f"; {given[0]} set"
    return (
        f"chunk lengths: maximumPageLength {chunk.maximum_page_length}, pageOverlapLength "
        f"{chunk.page_overlap_length}, {chunk.unit.value} ({why})"
    )


def placeholder_settings() -> dict[str, str]:
    """What `show` and `apply --dry-run` put in place of settings not provisioned yet."""
    placeholders = {
        name: f"<{name}>"
        for name in BICEP_OUTPUTS
        if name not in {ENV_SKILL_AUTH, ENV_SKILL_AUTH_RESOURCE_ID}
    }
    placeholders.update(
        {
            ENV_SKILL_ENDPOINT: "https://<app>/api/chunk",
            ENV_EMBEDDING_DIMENSIONS: "1536",
            ENV_EMBEDDING_MODEL: "text-embedding-3-small",
            ENV_FUNCTION_KEY: "<function key>",
        }
    )
    return placeholders


def missing_settings(environ: Mapping[str, str], command: str, *, dry_run: bool = False) -> str:
    """Every setting `command` needs that is not set, in one message ("" when none is):
    so one run names them all, not one per run."""

    def unset(name: str) -> bool:
        return not environ.get(name, "").strip()

    if command in {"run", "status"}:
        return f"not set: {ENV_SEARCH_ENDPOINT}" if unset(ENV_SEARCH_ENDPOINT) else ""
    if command != "apply":
        return ""
    if dry_run:
        return ""  # placeholders stand in (placeholder_settings), and the dry run says so
    missing = [name for name in APPLY_REQUIRED if unset(name)]
    mode = environ.get(ENV_SKILL_AUTH, "").strip() or "functionKey"
    if mode == "entra" and unset(ENV_SKILL_AUTH_RESOURCE_ID):
        missing.append(ENV_SKILL_AUTH_RESOURCE_ID)
    lookup = [name for name in KEY_LOOKUP_REQUIRED if unset(name)]
    if mode == "functionKey" and unset(ENV_FUNCTION_KEY) and lookup:
        missing.append(f"{ENV_FUNCTION_KEY} (or {', '.join(lookup)} to read it from Azure)")
    if not missing:
        return ""
    return (
        f"not set: {', '.join(missing)}; run `azd provision` first, or set them in the "
        "environment (infra/README.md lists them)"
    )


def _integer(environ: Mapping[str, str], name: str, default: int | None) -> int | None:
    value = environ.get(name, "").strip()
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise DeployError(f"{name} must be an integer (got {value!r})") from None


def setup_from_environment(
    environ: Mapping[str, str], function_key: Callable[[], str] | None = None
) -> SearchSetup:
    """The SearchSetup the environment describes; `function_key` fetches a missing key."""
    mode = environ.get(ENV_SKILL_AUTH, "").strip() or "functionKey"
    if mode == "entra":
        auth = SkillAuth("entra", resource_id=_required(environ, ENV_SKILL_AUTH_RESOURCE_ID))
    elif mode == "functionKey":
        key = environ.get(ENV_FUNCTION_KEY, "").strip()
        if not key:
            if function_key is None:
                raise DeployError(f"{ENV_FUNCTION_KEY} is not set")
            key = function_key()
        auth = SkillAuth("functionKey", function_key=key)
    else:
        raise DeployError(f"{ENV_SKILL_AUTH} must be functionKey or entra (got {mode!r})")
    try:
        chunk = chunk_settings_from_environment(environ)
    except ValueError as error:
        raise DeployError(str(error)) from None
    schedule = _integer(environ, ENV_SCHEDULE_MINUTES, DEFAULT_SCHEDULE_MINUTES)
    return SearchSetup(
        skill_uri=_required(environ, ENV_SKILL_ENDPOINT),
        skill_auth=auth,
        storage_resource_id=_required(environ, ENV_STORAGE_ACCOUNT_ID),
        container=_required(environ, ENV_STORAGE_CONTAINER),
        openai_endpoint=_required(environ, ENV_OPENAI_ENDPOINT),
        embedding_deployment=_required(environ, ENV_EMBEDDING_DEPLOYMENT),
        embedding_model=_required(environ, ENV_EMBEDDING_MODEL),
        embedding_dimensions=_integer(environ, ENV_EMBEDDING_DIMENSIONS, None)
        or int(_required(environ, ENV_EMBEDDING_DIMENSIONS)),
        prefix=environ.get(ENV_NAME_PREFIX, "").strip() or "chunks",
        chunk=chunk,
        skill_batch_size=_integer(environ, ENV_SKILL_BATCH_SIZE, SKILL_BATCH_SIZE) or 1,
        skill_parallelism=_integer(environ, ENV_SKILL_PARALLELISM, SKILL_DEGREE_OF_PARALLELISM)
        or 1,
        indexer_batch_size=max(
            INDEXER_BATCH_SIZE, _integer(environ, ENV_SKILL_BATCH_SIZE, SKILL_BATCH_SIZE) or 1
        ),
        url_source=environ.get(ENV_URL_SOURCE, "").strip() or "/document/metadata_storage_path",
        title_source=environ.get(ENV_TITLE_SOURCE, "").strip() or None,
        schedule_minutes=schedule or None,
    )


def partitions_from_environment(
    setup: SearchSetup, environ: Mapping[str, str]
) -> list[Definitions]:
    """The definitions of every partition SEARCH_PARTITIONS / SEARCH_PARTITION_FOLDERS ask
    for (one, the unpartitioned setup, by default)."""
    count = _integer(environ, ENV_PARTITIONS, 1) or 1
    try:
        folders = partition_folders(count, environ.get(ENV_PARTITION_FOLDERS, "").strip() or None)
    except ValueError as error:
        raise DeployError(f"{ENV_PARTITIONS}: {error}") from None
    return [build_definitions(part) for part in partition_setups(setup, folders)]


def indexer_names(prefix: str, environ: Mapping[str, str]) -> list[str]:
    """The indexers `apply` made: `<prefix>-indexer`, or one per partition."""
    count = _integer(environ, ENV_PARTITIONS, 1) or 1
    if count <= 1:
        return [f"{prefix}-indexer"]
    return [f"{prefix}-indexer-{number}" for number in range(count)]


def fetch_function_key(
    environ: Mapping[str, str],
    credential: TokenCredential,
    *,
    attempts: int = KEY_FETCH_ATTEMPTS,
    pause: float = KEY_FETCH_PAUSE_SECONDS,
) -> str:
    """The Function app's default function key, from Azure Resource Manager (listKeys)."""
    management = environ.get(ENV_MANAGEMENT_ENDPOINT, "").strip() or MANAGEMENT_ENDPOINT
    url = (
        f"{management.rstrip('/')}/subscriptions/{_required(environ, ENV_SUBSCRIPTION_ID)}"
        f"/resourceGroups/{_required(environ, ENV_RESOURCE_GROUP)}/providers/Microsoft.Web/sites/"
        f"{_required(environ, ENV_FUNCTION_APP_NAME)}/host/default/listKeys"
    )
    last = ""
    for attempt in range(attempts):
        token = credential.get_token(MANAGEMENT_SCOPE).token
        response = httpx.post(
            url,
            params={"api-version": WEB_API_VERSION},
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )
        if response.is_success:
            key = (response.json().get("functionKeys") or {}).get("default")
            if key:
                return str(key)
            last = "the answer has no functionKeys.default"
        else:
            last = f"HTTP {response.status_code}: {response.text[:200]}"
        if attempt + 1 < attempts:
            time.sleep(pause)
    raise DeployError(f"could not read the function key from {url}: {last}")


def default_credential() -> TokenCredential:
    """azd, Azure CLI, environment or managed identity sign-in, whichever is there."""
    from azure.identity import DefaultAzureCredential  # noqa: PLC0415  (only for Azure)

    return DefaultAzureCredential(exclude_interactive_browser_credential=True)


def skill_signature(skillset: Any) -> str:
    """What decides the chunk documents a document gets: the Web API skills' inputs and
    URI, and the projection's mappings (a newly mapped field, such as `offset`, is empty
    in every chunk indexed before it until the documents are indexed again)."""
    wire = skillset.as_dict() if hasattr(skillset, "as_dict") else skillset
    selectors = (wire.get("indexProjections") or {}).get("selectors") or []
    return json.dumps(
        [
            {"uri": s.get("uri"), "inputs": s.get("inputs"), "headers": s.get("httpHeaders")}
            for s in web_api_skills(wire)
        ]
        + [
            sorted((m.get("name"), m.get("source")) for m in selector.get("mappings") or [])
            for selector in selectors
        ],
        sort_keys=True,
    )


def apply(
    definitions: Definitions | Sequence[Definitions],
    target: Target,
    *,
    embedding_dimensions: int,
    embedding_model: str,
    reset: bool = False,
    run: bool = False,
    recreate_index: bool = False,
    dry_run: bool = False,
    log: Callable[[str], None] = print,
) -> None:
    """Create or update the definitions in order; reset and run when needed. With
    `dry_run`, check them and say what would be written, without calling the service.

    Partitions (a sequence, from `partition_setups`) share the index and the skillset and
    have a data source and an indexer each; the index and skillset are written once.
    """
    partitions = [definitions] if isinstance(definitions, Definitions) else list(definitions)
    wire = [
        (d.data_source.as_dict(), d.index.as_dict(), d.skillset.as_dict(), d.indexer.as_dict())
        for d in partitions
    ]
    problems = [
        problem
        for parts in wire
        for problem in check_definitions(
            *parts, embedding_dimensions=embedding_dimensions, embedding_model=embedding_model
        )
    ]
    problems = list(dict.fromkeys(problems)) + check_partitions(wire)
    if problems:
        raise DeployError("the definitions are inconsistent:\n  " + "\n  ".join(problems))
    first = partitions[0]
    if dry_run:
        names = [f"data source {p.data_source.name}" for p in partitions]
        names += [f"index {first.index.name}", f"skillset {first.skillset.name}"]
        names += [f"indexer {p.indexer.name}" for p in partitions]
        log(f"dry run: the definitions are consistent; apply would write {', '.join(names)}")
        return
    index_client = SearchIndexClient(target.search_endpoint, target.credential)
    indexer_client = SearchIndexerClient(target.search_endpoint, target.credential)

    try:
        previous = skill_signature(indexer_client.get_skillset(first.skillset.name))
    except ResourceNotFoundError:
        previous = None
    changed = previous is not None and previous != skill_signature(first.skillset)

    for partition in partitions:
        log(f"data source {partition.data_source.name}")
        indexer_client.create_or_update_data_source_connection(partition.data_source)
    if recreate_index:
        log(f"deleting index {first.index.name} (--recreate-index)")
        index_client.delete_index(first.index.name)
    log(f"index {first.index.name}")
    try:
        index_client.create_or_update_index(first.index)
    except HttpResponseError as error:
        raise DeployError(
            f"the index cannot be updated in place ({error.message}). A changed field, such "
            "as the vector dimensions, needs a new index: rerun with --recreate-index"
        ) from error
    log(f"skillset {first.skillset.name}")
    indexer_client.create_or_update_skillset(first.skillset)
    for partition in partitions:
        log(f"indexer {partition.indexer.name}")
        indexer_client.create_or_update_indexer(partition.indexer)

    if changed and not reset:
        log("the skill's inputs changed: resetting the indexers to re-chunk every document")
    for partition in partitions:
        name = partition.indexer.name
        if reset or changed or recreate_index:
            log(f"reset {name}")
            indexer_client.reset_indexer(name)
        if run or changed or recreate_index:
            log(f"run {name}")
            indexer_client.run_indexer(name)


def run_indexer(target: Target, name: str, *, reset: bool, log: Callable[[str], None]) -> None:
    """Reset (optionally) and run the indexer now."""
    client = SearchIndexerClient(target.search_endpoint, target.credential)
    if reset:
        log(f"reset {name}")
        client.reset_indexer(name)
    log(f"run {name}")
    client.run_indexer(name)


def print_status(target: Target, name: str) -> None:
    """The indexer's state, its last run and the first errors."""
    status = SearchIndexerClient(target.search_endpoint, target.credential).get_indexer_status(name)
    print(f"indexer {name}: {status.status}")
    last = status.last_result
    if last is None:
        print("no run yet")
        return
    print(
        f"last run: {last.status}, {last.item_count} processed, {last.failed_item_count} failed"
        + (f": {last.error_message}" if last.error_message else "")
    )
    for error in (last.errors or [])[:10]:
        print(f"  error {error.key}: {error.error_message}")
    for warning in (last.warnings or [])[:10]:
        print(f"  warning {warning.key}: {warning.message}")


def redacted(definitions: Definitions) -> dict[str, dict[str, Any]]:
    """The definitions as REST JSON, with the function key blanked out."""
    skillset = definitions.skillset.as_dict()
    for skill in web_api_skills(skillset):
        if FUNCTION_KEY_HEADER in (skill.get("httpHeaders") or {}):
            skill["httpHeaders"][FUNCTION_KEY_HEADER] = "<function key>"
    return {
        "data-source": definitions.data_source.as_dict(),
        "index": definitions.index.as_dict(),
        "skillset": skillset,
        "indexer": definitions.indexer.as_dict(),
    }


def embedding_cache(environ: Mapping[str, str]) -> dict[str, Any]:
    """What the deployment sets up for the embedding cache: the Function app's settings,
    the container, the lifecycle rule and the access (infra/resources.bicep)."""
    given = {
        name: environ.get(name, "").strip() or d for name, d in EMBEDDING_CACHE_DEFAULTS.items()
    }
    mode = given[ENV_EMBEDDING_CACHE]
    if mode == "off":
        return {"appSettings": {ENV_EMBEDDING_CACHE: "off"}}
    account = environ.get(ENV_STORAGE_ACCOUNT, "").strip() or "<storage account>"
    container = given[ENV_EMBEDDING_CACHE_CONTAINER]
    days = given[ENV_EMBEDDING_CACHE_RETENTION_DAYS]
    return {
        "appSettings": {
            ENV_EMBEDDING_CACHE: mode,
            "EMBEDDING_CACHE_ACCOUNT_URL": f"https://{account}.blob.core.windows.net/",
            ENV_EMBEDDING_CACHE_CONTAINER: container,
        },
        "container": f"{account}/{container}",
        "lifecycleRule": {
            "name": LIFECYCLE_RULE,
            "deletes": f"blobs under {container}/ not read for {days} days",
            "basis": "last access time tracking (a lookup that reads an entry keeps it)",
        },
        "access": "the Function app's managed identity (Storage Blob Data Owner on the "
        "account); no key, no connection string",
    }


def _chunk_overrides(args: argparse.Namespace) -> dict[str, str] | tuple[Problem, ...]:
    """The app settings the command line's chunk flags and partition flags override, each
    chunk flag read as the skill reads the same record input (`read_rows`); else every
    problem found."""
    given = {row.name: getattr(args, row.field_name, None) for row in DEPLOYED_PARAMETERS}
    _, problems = read_rows(DEPLOYED_PARAMETERS, given, DEPLOY_FLAGS)
    if problems:
        return problems
    overrides = {
        str(row.setting): str(given[row.name])
        for row in DEPLOYED_PARAMETERS
        if given[row.name] is not None
    }
    if getattr(args, "partitions", None) is not None:
        overrides[ENV_PARTITIONS] = str(args.partitions)
    if getattr(args, "partition_folders", None) is not None:
        overrides[ENV_PARTITION_FOLDERS] = args.partition_folders
    return overrides


def _deploy_flag(name: str) -> str:
    """The deploy's flag of deployed parameter `name`: `--maximum-page-length`."""
    return "--" + BY_NAME[name].field_name.replace("_", "-")


DEPLOY_FLAGS = Source(ParameterNames("option", _deploy_flag), clipped_repr, {})
"""The deploy's chunk flags in messages: option --unit must be one of ... (got 'chars')."""


def add_chunk_flags(parser: argparse.ArgumentParser) -> None:
    """A flag for each literal input the skillset sends (`skills.parameters`' deployed
    rows: --text-split-mode, --unit, --maximum-page-length, --page-overlap-length). Values
    stay strings here: `_chunk_overrides` reads them."""
    tokens, characters = chunk_settings(), chunk_settings(unit=Unit.CHARACTERS.value)
    for row in DEPLOYED_PARAMETERS:
        flag = _deploy_flag(row.name)
        default = getattr(tokens, row.field_name)
        if row.kind == "choice":
            shown = default.value if isinstance(default, Enum) else default
            parser.add_argument(
                flag,
                # A choice's names in the usage line, as argparse shows its own choices.
                metavar="{" + ",".join(row.choices) + "}",
                help=f"the skill's {row.name} (default: ${row.setting}, else {shown})",
            )
        else:
            parser.add_argument(
                flag,
                help=f"the skill's {row.name} (default: ${row.setting}, else {default} tokens "
                f"/ {getattr(characters, row.field_name)} characters)",
            )


def arguments_parser() -> argparse.ArgumentParser:
    """The command line's options, one subcommand each for apply, show, run and status."""
    parser = OneLineParser(
        prog=command_name("python -m infra.deploy", "chunk-deploy"),
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        formatter_class=HelpFormatter,
        epilog="examples:\n"
        "  python -m infra.deploy show --out definitions/\n"
        "  python -m infra.deploy apply --dry-run\n"
        "  python -m infra.deploy apply --unit characters --maximum-page-length 2000",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name: str, text: str, example: str) -> argparse.ArgumentParser:
        return commands.add_parser(
            name,
            help=text,
            description=text,
            formatter_class=HelpFormatter,
            epilog=f"example:\n  {example}",
        )

    apply_parser = command(
        "apply",
        "create or update all definitions (settings from the azd environment or the shell)",
        "python -m infra.deploy apply --dry-run",
    )
    show_parser = command(
        "show",
        "print the definitions (no Azure needed)",
        "python -m infra.deploy show --out definitions/",
    )
    run_parser = command("run", "run the indexer(s) now", "python -m infra.deploy run --reset")
    status_parser = command(
        "status", "show each indexer's last run", "python -m infra.deploy status"
    )
    for sub in (apply_parser, show_parser, run_parser, status_parser):
        sub.add_argument(
            "--partitions",
            type=int,
            help=f"data source + indexer pairs over blob folders (default ${ENV_PARTITIONS} or 1)",
        )
    for sub in (apply_parser, show_parser):
        sub.add_argument(
            "--partition-folders",
            help=f"their folders, comma-separated (default ${ENV_PARTITION_FOLDERS} or "
            "part-0,part-1,...)",
        )
    for sub in (apply_parser, show_parser):
        add_chunk_flags(sub)
    apply_parser.add_argument("--reset", action="store_true", help="re-chunk every document")
    apply_parser.add_argument("--run", action="store_true", help="run the indexer afterwards")
    apply_parser.add_argument(
        "--recreate-index", action="store_true", help="delete and recreate the index (dimensions)"
    )
    apply_parser.add_argument(
        "--dry-run",
        action="store_true",
        help="check the settings and definitions and say what would be written; call nothing",
    )
    show_parser.add_argument(
        "--out", type=Path, help="write one JSON file per definition here (default: print them)"
    )
    run_parser.add_argument("--reset", action="store_true", help="re-chunk every document")
    return parser


def main(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = arguments_parser()
    args = parser.parse_args(argv)

    if environ is None:  # the real environment, over the azd environment's file
        env: dict[str, str] = {**azd_environment(Path.cwd()), **os.environ}
    else:
        env = dict(environ)
    overrides = _chunk_overrides(args) if args.command in {"apply", "show"} else {}
    if isinstance(overrides, tuple):
        parser.error("; ".join(problem.message for problem in overrides))
    env.update(overrides)
    if args.command in {"run", "status"} and args.partitions is not None:
        env[ENV_PARTITIONS] = str(args.partitions)
    dry_run = bool(getattr(args, "dry_run", False))
    missing = missing_settings(env, args.command, dry_run=dry_run)
    if missing:
        print(f"{parser.prog}: {missing}", file=sys.stderr)
        return 2
    endpoint = env.get(ENV_SEARCH_ENDPOINT, "").strip()
    try:
        if dry_run:
            placeholders = {
                name: value
                for name, value in placeholder_settings().items()
                if not env.get(name, "").strip()
            }
            placed = sorted(set(placeholders) & {*APPLY_REQUIRED, ENV_FUNCTION_KEY})
            if placed:
                print(
                    f"dry run: not set, so placeholders stand in: {', '.join(placed)} "
                    "(`azd provision` sets them; `apply` without --dry-run needs them)"
                )
            env = {**placeholders, **env}
            setup = setup_from_environment(env)
            print(f"dry run: {lengths_line(setup.chunk, env)}")
            apply(
                partitions_from_environment(setup, env),
                Target(endpoint or "<search endpoint>", AzureKeyCredential("dry-run")),
                embedding_dimensions=setup.embedding_dimensions,
                embedding_model=setup.embedding_model,
                dry_run=True,
            )
            return 0
        if args.command == "show":
            environment = {**placeholder_settings(), **env}
            partitions = partitions_from_environment(
                setup_from_environment(environment), environment
            )
            shown = [redacted(partition) for partition in partitions]
            cache = json.dumps(embedding_cache(env), indent=2)
            # Not a search definition: on stderr, so that stdout stays the definitions.
            print(f"embedding cache (infra/resources.bicep): {cache}", file=sys.stderr)
            if args.out:
                # One folder per partition when partitioned, each loadable by the replay.
                for number, documents in enumerate(shown):
                    folder = args.out if len(shown) == 1 else args.out / f"partition-{number}"
                    folder.mkdir(parents=True, exist_ok=True)
                    for name, document in documents.items():
                        (folder / f"{name}.json").write_text(
                            json.dumps(document, indent=2) + "\n", encoding="utf-8"
                        )
                    (folder / "embedding-cache.json").write_text(cache + "\n", encoding="utf-8")
            else:
                print(json.dumps(shown[0] if len(shown) == 1 else shown, indent=2))
            return 0
        search_key = env.get(ENV_SEARCH_KEY, "").strip()
        token_credential: TokenCredential | None = None

        def credential() -> TokenCredential:
            nonlocal token_credential
            if token_credential is None:
                token_credential = default_credential()
            return token_credential

        target = Target(
            _required(env, ENV_SEARCH_ENDPOINT),
            AzureKeyCredential(search_key) if search_key else credential(),
        )
        prefix = env.get(ENV_NAME_PREFIX, "").strip() or "chunks"
        if args.command == "status":
            not_found = 0
            for name in indexer_names(prefix, env):
                try:
                    print_status(target, name)
                except ResourceNotFoundError:
                    print(f"indexer {name}: not found (python -m infra.deploy apply creates it)")
                    not_found += 1
            return 1 if not_found else 0
        if args.command == "run":
            for name in indexer_names(prefix, env):
                run_indexer(target, name, reset=args.reset, log=print)
            return 0
        setup = setup_from_environment(env, lambda: fetch_function_key(env, credential()))
        print(lengths_line(setup.chunk, env))
        apply(
            partitions_from_environment(setup, env),
            target,
            embedding_dimensions=setup.embedding_dimensions,
            embedding_model=setup.embedding_model,
            reset=args.reset,
            run=args.run,
            recreate_index=args.recreate_index,
        )
    except DeployError as error:
        print(f"{parser.prog}: {error}", file=sys.stderr)
        return 2
    except AzureError as error:
        line = describe_service_error(
            error, endpoint=endpoint, endpoint_setting=ENV_SEARCH_ENDPOINT
        )
        print(f"{parser.prog}: {line}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
