"""The embedding cache's app settings: off, a local SQLite file, or a blob container."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, get_args

from skills.values import parse_choice, parse_number, shown_url

if TYPE_CHECKING:
    from collections.abc import Mapping

CacheMode = Literal["off", "local", "blob"]
CACHE_MODES: tuple[CacheMode, ...] = get_args(CacheMode)

ENV_EMBEDDING_CACHE = "EMBEDDING_CACHE"
ENV_EMBEDDING_CACHE_PATH = "EMBEDDING_CACHE_PATH"
ENV_EMBEDDING_CACHE_CONTAINER = "EMBEDDING_CACHE_CONTAINER"
ENV_EMBEDDING_CACHE_ACCOUNT_URL = "EMBEDDING_CACHE_ACCOUNT_URL"
ENV_EMBEDDING_CACHE_CONNECTION_STRING = "EMBEDDING_CACHE_CONNECTION_STRING"
ENV_EMBEDDING_CACHE_LOOKUP_SECONDS = "EMBEDDING_CACHE_LOOKUP_SECONDS"

CACHE_ENV_NAMES = (
    ENV_EMBEDDING_CACHE,
    ENV_EMBEDDING_CACHE_PATH,
    ENV_EMBEDDING_CACHE_CONTAINER,
    ENV_EMBEDDING_CACHE_ACCOUNT_URL,
    ENV_EMBEDDING_CACHE_CONNECTION_STRING,
    ENV_EMBEDDING_CACHE_LOOKUP_SECONDS,
)
"""The cache's app settings, in the order /api/health lists them."""

DEFAULT_CONTAINER = "embedding-cache"
DEFAULT_LOOKUP_SECONDS = 2.0
"""A lookup of 200 chunks takes ~0.1 s against the emulator (docs/results/
2026-12-07-embedding-cache-store.md); past 2 s the store is sick and the chunks are
embedded as without a cache."""
MAX_LOOKUP_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class CacheSettings:
    """Where the embedding cache keeps vectors, if anywhere."""

    mode: CacheMode = "off"
    path: str | None = None
    """`local`: a SQLite file, or a folder to make `embedding-cache.sqlite3` in."""
    container: str = DEFAULT_CONTAINER
    """`blob`: the container's name."""
    account_url: str | None = None
    """`blob`: https://<account>.blob.core.windows.net, reached with the managed identity."""
    connection_string: str | None = field(default=None, repr=False)
    """`blob`: instead of the account URL (the Azurite emulator); never shown or logged."""
    lookup_seconds: float = DEFAULT_LOOKUP_SECONDS
    """The most a lookup waits (and never more than a quarter of the time left)."""


def load_cache_settings(given: Mapping[str, str], problems: list[str]) -> CacheSettings:
    """The cache settings that are set (blank ones removed); bad ones go to `problems`."""
    mode: CacheMode = "off"
    if ENV_EMBEDDING_CACHE in given:
        chosen = parse_choice(given[ENV_EMBEDDING_CACHE], {name: name for name in CACHE_MODES})
        if chosen is None:
            problems.append(
                f"{ENV_EMBEDDING_CACHE} must be one of {', '.join(CACHE_MODES)} "
                f"(got {given[ENV_EMBEDDING_CACHE]!r})"
            )
        else:
            mode = chosen
    lookup = DEFAULT_LOOKUP_SECONDS
    if ENV_EMBEDDING_CACHE_LOOKUP_SECONDS in given:
        number = parse_number(given[ENV_EMBEDDING_CACHE_LOOKUP_SECONDS])
        if number is None or not 0 < number <= MAX_LOOKUP_SECONDS:
            problems.append(
                f"{ENV_EMBEDDING_CACHE_LOOKUP_SECONDS} must be a number of seconds above 0 and "
                f"at most {MAX_LOOKUP_SECONDS:g} "
                f"(got {given[ENV_EMBEDDING_CACHE_LOOKUP_SECONDS]!r})"
            )
        else:
            lookup = number
    path = given.get(ENV_EMBEDDING_CACHE_PATH)
    account_url = given.get(ENV_EMBEDDING_CACHE_ACCOUNT_URL)
    connection_string = given.get(ENV_EMBEDDING_CACHE_CONNECTION_STRING)
    container = given.get(ENV_EMBEDDING_CACHE_CONTAINER, DEFAULT_CONTAINER)
    if mode == "local" and path is None:
        problems.append(
            f"{ENV_EMBEDDING_CACHE} local needs {ENV_EMBEDDING_CACHE_PATH} (a file, or a folder "
            "to keep embedding-cache.sqlite3 in)"
        )
    if mode == "blob":
        if not account_url and not connection_string:
            problems.append(
                f"{ENV_EMBEDDING_CACHE} blob needs {ENV_EMBEDDING_CACHE_ACCOUNT_URL} (reached with "
                f"the managed identity) or {ENV_EMBEDDING_CACHE_CONNECTION_STRING} (the emulator)"
            )
        if account_url and connection_string:
            problems.append(
                f"set {ENV_EMBEDDING_CACHE_ACCOUNT_URL} or "
                f"{ENV_EMBEDDING_CACHE_CONNECTION_STRING}, not both"
            )
        if not _container_name(container):
            problems.append(
                f"{ENV_EMBEDDING_CACHE_CONTAINER} must be a container name: 3 to 63 lowercase "
                f"letters, digits and single hyphens (got {container!r})"
            )
    return CacheSettings(
        mode=mode,
        path=path,
        container=container,
        account_url=account_url,
        connection_string=connection_string,
        lookup_seconds=lookup,
    )


def _container_name(name: str) -> bool:
    """Azure's rule for container names."""
    allowed = set("abcdefghijklmnopqrstuvwxyz0123456789-")
    return (
        3 <= len(name) <= 63
        and set(name) <= allowed
        and name[0] != "-"
        and name[-1] != "-"
        and "--" not in name
    )


def describe_cache(settings: CacheSettings) -> list[tuple[str, str, object]]:
    """(name, app setting, value) for /api/health; the connection string only says whether
    it is set."""
    return [
        ("embeddingCache", ENV_EMBEDDING_CACHE, settings.mode),
        ("embeddingCachePath", ENV_EMBEDDING_CACHE_PATH, settings.path),
        ("embeddingCacheContainer", ENV_EMBEDDING_CACHE_CONTAINER, settings.container),
        (
            "embeddingCacheAccountUrl",
            ENV_EMBEDDING_CACHE_ACCOUNT_URL,
            None if settings.account_url is None else shown_url(settings.account_url),
        ),
        (
            "embeddingCacheConnectionString",
            ENV_EMBEDDING_CACHE_CONNECTION_STRING,
            "set" if settings.connection_string else "not set",
        ),
        (
            "embeddingCacheLookupSeconds",
            ENV_EMBEDDING_CACHE_LOOKUP_SECONDS,
            settings.lookup_seconds,
        ),
    ]
