"""Where the embedding cache keeps its entries: a SQLite file, or blobs in Azure Storage.

Both are synchronous and called on the cache's own threads. Every error becomes a
`CacheStoreError` in the skill's words; the SDK's or SQLite's own text goes nowhere (a
storage error can carry the account's URL with a SAS token, and a connection string
holds the account key), only its type name goes to the log.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import sqlite3
import threading
import time
from typing import TYPE_CHECKING, Any

from skills.embedding.cache import CacheStoreError
from skills.embedding.log_urls import hide_url_secrets_in_http_logs
from skills.values import shown_url

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence
    from pathlib import Path

logger = logging.getLogger(__name__)

SQLITE_FILE_NAME = "embedding-cache.sqlite3"
"""The file made in EMBEDDING_CACHE_PATH when it names a folder."""
SQLITE_BUSY_MS = 5_000
"""How long a writer waits for another process's write to end (WAL: readers never wait)."""
SQLITE_KEYS_PER_QUERY = 500
"""Keys in one `IN (...)`, under SQLite's default limit of host parameters."""
BLOB_PREFIX = "v1/"
"""Blob names are `v1/<key>`: a new value format gets a new prefix, not a migration."""
BLOB_THREADS = 16
"""Blob reads or writes in flight per lookup or write batch."""
BLOB_CONNECT_SECONDS = 2.0
"""Longest wait for a connection to the storage account."""
BLOB_READ_SECONDS = 10.0
"""Longest wait for a byte of an answer: a stalled store frees its threads by then."""
BLOB_WRITE_SECONDS = 10.0
"""Longest single blob write (they run after the answer has gone)."""


class _OutOfTime(CacheStoreError):
    """The store's requests did not all answer within the time they had."""


class SqliteStore:
    """Entries in one SQLite file (WAL), safe for several processes on one machine."""

    def __init__(self, path: Path) -> None:
        self.path = path / SQLITE_FILE_NAME if path.is_dir() else path
        self.description = f"local: SQLite file {self.path.name}"
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    def _connection(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(
                self.path, timeout=SQLITE_BUSY_MS / 1000, check_same_thread=False
            )
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute(
                "CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, value BLOB NOT NULL, "
                "written REAL NOT NULL) WITHOUT ROWID"
            )
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        return connection

    def get_many(self, keys: Sequence[str], timeout: float) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        try:
            connection = self._connection()
            for start in range(0, len(keys), SQLITE_KEYS_PER_QUERY):
                part = keys[start : start + SQLITE_KEYS_PER_QUERY]
                marks = ",".join("?" * len(part))
                rows = connection.execute(
                    f"SELECT key, value FROM vectors WHERE key IN ({marks})",
                    part,
                )
                found.update((key, bytes(value)) for key, value in rows)
        except (sqlite3.Error, OSError) as error:
            raise _sqlite_error("a lookup", error) from error
        return found

    def put_many(self, entries: Mapping[str, bytes]) -> None:
        now = time.time()
        try:
            connection = self._connection()
            with connection:
                connection.executemany(
                    "INSERT OR REPLACE INTO vectors (key, value, written) VALUES (?, ?, ?)",
                    [(key, value, now) for key, value in entries.items()],
                )
        except (sqlite3.Error, OSError) as error:
            raise _sqlite_error("a write", error) from error

    def close(self) -> None:
        with self._lock:
            connections, self._connections = self._connections, []
        for connection in connections:
            connection.close()


def _sqlite_error(what: str, error: Exception) -> CacheStoreError:
    logger.warning("embedding cache (SQLite): %s failed: %s", what, type(error).__name__)
    reason = (
        "the disk is full"
        if "full" in str(error).lower()
        else "the file is locked, unreadable or not a cache file; the logs say more"
    )
    return CacheStoreError(f"{what} in the local cache file failed: {reason}")


class BlobStore:
    """Entries as block blobs `v1/<key>` in one container; reads and writes fan out."""

    def __init__(
        self,
        *,
        container: str,
        account_url: str | None = None,
        connection_string: str | None = None,
        credential: Any | None = None,
    ) -> None:
        """`connection_string` (the emulator), else `account_url` with `credential` (by
        default DefaultAzureCredential: the Function app's managed identity)."""
        self.container = container
        self._account_url = account_url
        self._connection_string = connection_string
        self._credential = credential
        where = "a connection string" if connection_string else shown_url(account_url or "")
        self.description = f"blob: container {container} at {where}"
        self._client: Any = None
        self._lock = threading.Lock()
        self._threads = concurrent.futures.ThreadPoolExecutor(
            BLOB_THREADS, thread_name_prefix="embedding-cache-blob"
        )
        self._created = False

    def _container(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = self._build()
            return self._client

    def _build(self) -> Any:
        # Imported here: only the blob cache needs the storage SDK and its HTTP stack.
        import requests  # noqa: PLC0415
        from azure.core.pipeline.transport import RequestsTransport  # noqa: PLC0415
        from azure.storage.blob import ContainerClient  # noqa: PLC0415

        hide_url_secrets_in_http_logs()
        session = requests.Session()
        adapter = requests.adapters.HTTPAdapter(
            pool_connections=1, pool_maxsize=BLOB_THREADS * 2, max_retries=0
        )
        session.mount("https://", adapter)
        session.mount("http://", adapter)
        options: dict[str, Any] = {
            "transport": RequestsTransport(session=session, session_owner=True),
            # Retries belong to the cache's budget: a miss is cheaper than a wait.
            "retry_total": 0,
            "connection_timeout": BLOB_CONNECT_SECONDS,
            "read_timeout": BLOB_READ_SECONDS,
        }
        try:
            if self._connection_string:
                return ContainerClient.from_connection_string(
                    self._connection_string, self.container, **options
                )
            credential = self._credential
            if credential is None:
                # Imported here: azure-identity is only needed for the managed identity.
                from azure.identity import DefaultAzureCredential  # noqa: PLC0415

                credential = DefaultAzureCredential()
            return ContainerClient(self._account_url or "", self.container, credential, **options)
        except Exception as error:  # a malformed connection string or URL
            logger.warning("embedding cache (blob): no client: %s", type(error).__name__)
            raise CacheStoreError(
                "the blob cache's settings cannot make a client (check "
                "EMBEDDING_CACHE_ACCOUNT_URL or EMBEDDING_CACHE_CONNECTION_STRING)"
            ) from error

    def get_many(self, keys: Sequence[str], timeout: float) -> dict[str, bytes]:
        container = self._container()
        until = time.monotonic() + timeout
        found: dict[str, bytes] = {}
        answered = 0
        try:
            for key, value in self._fan_out(container, keys, until, write=False):
                answered += 1
                if value is not None:
                    found[key] = value
        except _OutOfTime:
            # A lookup larger than its budget allows (a record of thousands of chunks)
            # keeps what came back: the rest are misses. A store that answered nothing
            # in time is failing.
            if not answered:
                raise
        return found

    def put_many(self, entries: Mapping[str, bytes]) -> None:
        container = self._container()
        until = time.monotonic() + BLOB_WRITE_SECONDS
        for _ in self._fan_out(container, list(entries), until, write=True, entries=entries):
            pass

    def _fan_out(
        self,
        container: Any,
        keys: Sequence[str],
        until: float,
        *,
        write: bool,
        entries: Mapping[str, bytes] | None = None,
    ) -> Iterator[tuple[str, bytes | None]]:
        """(key, value or None) per key, from BLOB_THREADS requests at a time; raises
        CacheStoreError at the first failure (the rest count as misses or unwritten)."""

        def one(key: str) -> tuple[str, bytes | None]:
            seconds = max(until - time.monotonic(), 0.05)
            blob = container.get_blob_client(BLOB_PREFIX + key)
            if write:
                assert entries is not None
                self._upload(container, blob, entries[key], seconds)
                return key, None
            return key, _download(blob, seconds)

        futures = [self._threads.submit(one, key) for key in keys]
        try:
            for future in concurrent.futures.as_completed(
                futures, timeout=max(until - time.monotonic(), 0.05)
            ):
                yield future.result()
        except TimeoutError as error:
            raise _OutOfTime("the blob cache did not answer within its time budget") from error
        except CacheStoreError:
            raise
        except Exception as error:
            raise _blob_error(error) from error
        finally:
            for future in futures:
                future.cancel()

    def _upload(self, container: Any, blob: Any, data: bytes, seconds: float) -> None:
        from azure.core.exceptions import ResourceNotFoundError  # noqa: PLC0415 - SDK at first use

        try:
            blob.upload_blob(data, overwrite=True, timeout=max(int(seconds), 1))
        except ResourceNotFoundError:
            # The deploy makes the container; the emulator (or a reset) may not have it.
            self._create(container)
            blob.upload_blob(data, overwrite=True, timeout=max(int(seconds), 1))

    def _create(self, container: Any) -> None:
        from azure.core.exceptions import ResourceExistsError  # noqa: PLC0415 - SDK at first use

        with self._lock:
            if self._created:
                return
            with contextlib.suppress(ResourceExistsError):
                container.create_container()
            self._created = True

    def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()


def _download(blob: Any, seconds: float) -> bytes | None:
    from azure.core.exceptions import ResourceNotFoundError  # noqa: PLC0415 - SDK at first use

    try:
        data: bytes = blob.download_blob(timeout=max(int(seconds), 1), max_concurrency=1).readall()
    except ResourceNotFoundError:
        return None
    return data


def _blob_error(error: Exception) -> CacheStoreError:
    """The store's failure in our words: the status (429, 503, 403) or the error's type."""
    status = getattr(error, "status_code", None)
    logger.warning(
        "embedding cache (blob): request failed: %s (HTTP %s)", type(error).__name__, status
    )
    if status in (429, 503):
        return CacheStoreError(f"the blob cache is throttling or busy (HTTP {status})")
    if status in (401, 403):
        return CacheStoreError(
            f"the blob cache refused the skill's credentials (HTTP {status}); the Function "
            "app's identity needs Storage Blob Data Contributor on the container"
        )
    if status is not None:
        return CacheStoreError(f"the blob cache failed (HTTP {status})")
    return CacheStoreError("the blob cache could not be reached (the logs name the error)")
