"""`python -m skills push PATHS --index NAME`: chunk, embed and upload files without an indexer.

The push path for teams that index from their own jobs. Files are read the way the blob
indexer reads them (`skills.search.indexer.read_blob_documents`: same keys, same metadata), the
skill's own inputs and index projection (built by `skills.search.definitions`, as
deployed) turn them into exactly the chunk documents the indexer path would upload, and
they are checked against the index's live schema before anything is sent.

Resumable: a document whose chunk ids (`chunk_hash`, a hash of the source, the span and
the chunk settings) are all in the index already is skipped before it is embedded, so a
second run costs one search request per batch and uploads nothing. A changed document
has its new chunks uploaded and its chunks that no longer exist deleted.

Uploads go through `SearchIndexingBufferedSender`, which retries 503s and the per-document
failures of a 207 answer that may pass (409, 422, 503) as the SDK does; batches are sized
to stay under the service's 1,000 documents and 16 MB per request.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from azure.core.credentials import AzureKeyCredential
from azure.core.exceptions import AzureError
from azure.search.documents import SearchClient, SearchIndexingBufferedSender
from azure.search.documents.indexes import SearchIndexClient

from chunking.cli.pipes import OneLineParser, command_name, run_piped
from skills.commands.cli import HelpFormatter
from skills.embedding.clients import build_embedder
from skills.search.checks import web_api_skills
from skills.search.definitions import (
    KEY_FIELD,
    PARENT_KEY_FIELD,
    build_definitions,
    chunk_settings_from_environment,
)
from skills.search.indexer import (
    ReplayReport,
    project,
    read_blob_documents,
    replay_setup,
    resolve,
    validate_documents,
)
from skills.search.service_errors import describe_service_error
from skills.skill.library import chunk_records, embed_records
from skills.skill.render import chunk_json
from skills.skill.settings import SettingsError, settings_from_environment

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence

    from azure.core.credentials import TokenCredential

    from skills.embedding.embedder import Embedder
    from skills.search.checks import WireJson
    from skills.search.definitions import ChunkSettings
    from skills.search.indexer import SourceDocument
    from skills.skill.library import RecordChunks
    from skills.skill.settings import Settings

ENV_SEARCH_ENDPOINT = "AZURE_SEARCH_ENDPOINT"
ENV_SEARCH_KEY = "AZURE_SEARCH_KEY"
MAX_BATCH_DOCUMENTS = 1000
"""The service's limit on documents per indexing request."""
MAX_BATCH_BYTES = 16 * 1024 * 1024
"""The service's limit on the size of one indexing request."""
BATCH_BYTES_TARGET = MAX_BATCH_BYTES // 2
"""What a batch is sized for: half the limit leaves room for JSON overhead and for the
largest documents of a batch being larger than the average one sizes it by."""
DOCUMENTS_PER_ROUND = 64
"""Source documents chunked, compared with the index and embedded together: one search
request per round, and embedding requests filled across documents."""
LOOKUP_PAGE = 1000
"""Chunks asked for per search request when looking up what the index holds."""
EXIT_FAILURES = 1
EXIT_REFUSED = 2


@dataclass(slots=True)
class PushSummary:
    """What a push did, document by document and chunk by chunk."""

    documents: int = 0
    unchanged: int = 0
    """Documents whose chunks were all in the index already: not embedded, not sent."""
    changed: int = 0
    uploaded: int = 0
    """Chunk documents the service accepted."""
    deleted: int = 0
    """Chunk documents of changed documents that no longer exist, removed."""
    failed_documents: dict[str, list[str]] = field(default_factory=dict)
    """File name -> why it could not be chunked or embedded (nothing of it was sent)."""
    failed_keys: dict[str, str] = field(default_factory=dict)
    """Chunk key -> why the service refused it, after the SDK's retries."""
    problems: list[str] = field(default_factory=list)
    """Schema problems: the documents do not fit the index, so nothing was sent."""

    @property
    def ok(self) -> bool:
        return not (self.failed_documents or self.failed_keys or self.problems)


@dataclass(frozen=True, slots=True)
class Target:
    """Where the chunk documents go: the service, the index and how to authenticate."""

    endpoint: str
    index_name: str
    credential: AzureKeyCredential | TokenCredential
    api_version: str | None = None
    """The REST API version the SDK sends (None: the SDK's default)."""


def push(
    documents: Sequence[SourceDocument],
    target: Target,
    *,
    settings: Settings | SettingsError | None = None,
    embedder: Embedder | None = None,
    embedding_dimensions: int,
    chunk: ChunkSettings | None = None,
    progress: Callable[[str], None] | None = None,
) -> PushSummary:
    """Chunk, embed and upload `documents` (as the blob indexer would see them).

    `chunk` is the skillset's chunk settings (its literal skill inputs: `CHUNK_*`, as
    `infra.deploy` deploys them); the embedder is closed at the end.
    """

    summary = PushSummary(documents=len(documents))
    versions = {"api_version": target.api_version} if target.api_version else {}
    index = SearchIndexClient(target.endpoint, target.credential, **versions).get_index(
        target.index_name
    )
    schema: WireJson = index.as_dict()
    skillset = _skillset(target.index_name, embedding_dimensions, chunk)
    search = SearchClient(target.endpoint, target.index_name, target.credential, **versions)
    sent = _Outcomes()
    sender: _Sender | None = None
    runner = asyncio.Runner()
    try:
        for first in range(0, len(documents), DOCUMENTS_PER_ROUND):
            group = documents[first : first + DOCUMENTS_PER_ROUND]
            held = _held_chunks(search, [doc.key for doc in group], PARENT_KEY_FIELD, KEY_FIELD)
            fresh = _changed(group, _chunk_group(group, skillset, settings), held, summary)
            if embedder is not None and fresh:
                embedded = embed_records([answer for _, answer in fresh], embedder, runner=runner)
                fresh = [(doc, answer) for (doc, _), answer in zip(fresh, embedded, strict=True)]
            uploads, stale = _documents_to_send(fresh, held, skillset, schema, summary)
            if summary.problems:
                return summary
            if uploads or stale:
                if sender is None:
                    sender = _sender(target, uploads, sent, SearchIndexingBufferedSender, versions)
                _queue(sender, uploads, stale)
            if progress is not None:
                progress(
                    f"{min(first + len(group), len(documents))}/{len(documents)} documents, "
                    f"{summary.unchanged} unchanged, {len(sent.succeeded)} chunks uploaded"
                )
        if sender is not None:
            sender.sender.flush()
    finally:
        if sender is not None:
            sender.sender.close()
        search.close()
        if embedder is not None:
            runner.run(embedder.aclose())
        runner.close()
    summary.uploaded = len(sent.succeeded - sent.deletions)
    summary.deleted = len(sent.succeeded & sent.deletions)
    summary.failed_keys = dict(sent.failed)
    return summary


def _changed(
    group: Sequence[SourceDocument],
    chunked: Sequence[RecordChunks],
    held: dict[str, dict[str, str]],
    summary: PushSummary,
) -> list[tuple[SourceDocument, RecordChunks]]:
    """The documents of `group` to send, with their chunks: those chunked whose chunk ids
    differ from the ones the index holds for them. The others are counted in `summary`:
    a failed document with its errors, an unchanged one as unchanged."""
    fresh: list[tuple[SourceDocument, RecordChunks]] = []
    for doc, answer in zip(group, chunked, strict=True):
        name = str(doc.fields["metadata_storage_name"])
        if not answer.ok:
            summary.failed_documents[name] = list(answer.errors)
            continue
        ids = {chunk.id for chunk in answer.chunks}
        if ids and ids == set(held.get(doc.key, {}).values()):
            summary.unchanged += 1
            continue
        fresh.append((doc, answer))
    return fresh


def _queue(sender: _Sender, uploads: list[dict[str, Any]], stale: list[str]) -> None:
    """Queue the uploads, then the deletions of stale chunk keys, one batch at a time: the
    sender sends whatever is queued once a batch is full, and when a request fails as a
    whole it requeues only the first of its actions (azure-search-documents 12.0), so
    never more than one batch is queued at once."""
    step = sender.batch_size
    for start in range(0, len(uploads), step):
        sender.sender.upload_documents(uploads[start : start + step])
    for start in range(0, len(stale), step):
        sender.sender.delete_documents([{KEY_FIELD: key} for key in stale[start : start + step]])


class _Outcomes:
    """What the buffered sender reported, per key; its callbacks run on its threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.succeeded: set[str] = set()
        self.deletions: set[str] = set()
        self.failed: dict[str, str] = {}
        self.key_field = ""

    def key(self, action: Any) -> str:
        return str(action.get(self.key_field, "")) if action is not None else ""

    def on_progress(self, action: Any) -> None:
        with self.lock:
            key = self.key(action)
            self.succeeded.add(key)
            self.failed.pop(key, None)
            if str(getattr(action, "action_type", "")).lower().endswith("delete"):
                self.deletions.add(key)

    def on_error(self, action: Any) -> None:
        with self.lock:
            self.failed[self.key(action)] = "the search service refused the document"


@dataclass(frozen=True, slots=True)
class _Sender:
    sender: Any
    """The SDK's SearchIndexingBufferedSender."""
    batch_size: int
    """Actions per indexing request."""


def _sender(
    target: Target,
    uploads: list[dict[str, Any]],
    outcomes: _Outcomes,
    sender_class: Any,
    versions: dict[str, str],
) -> _Sender:
    outcomes.key_field = KEY_FIELD
    average = (
        sum(len(json.dumps(document)) for document in uploads) / len(uploads) if uploads else 1
    )
    count = max(1, min(MAX_BATCH_DOCUMENTS, int(BATCH_BYTES_TARGET // max(average, 1))))
    sender = sender_class(
        target.endpoint,
        target.index_name,
        target.credential,
        initial_batch_action_count=count,
        on_progress=outcomes.on_progress,
        on_error=outcomes.on_error,
        **versions,
    )
    return _Sender(sender, count)


def _skillset(index_name: str, dimensions: int, chunk: ChunkSettings | None) -> WireJson:
    """The deployed skillset's inputs and projection, aimed at `index_name`."""
    setup = replay_setup(
        "http://127.0.0.1/api/chunk",
        embedding_dimensions=dimensions,
        embedding_model="text-embedding-3-small",
    )
    if chunk is not None:
        setup = dataclasses.replace(setup, chunk=chunk)
    skillset: WireJson = build_definitions(setup).skillset.as_dict()
    for selector in (skillset.get("indexProjections") or {}).get("selectors", []):
        selector["targetIndexName"] = index_name
    return skillset


def _chunk_group(
    group: Sequence[SourceDocument],
    skillset: WireJson,
    settings: Settings | SettingsError | None,
) -> list[RecordChunks]:
    """The skill's answers for `group`, with its inputs resolved as the indexer does."""
    (skill,) = web_api_skills(skillset)
    inputs = [(i["name"], i["source"]) for i in skill.get("inputs", [])]
    records = [
        {
            name: value
            for name, source in inputs
            if (value := resolve(source, dict(doc.fields))) is not None
        }
        for doc in group
    ]
    return chunk_records(records, settings)


def _held_chunks(
    search: Any, parents: list[str], parent_field: str, key_field: str
) -> dict[str, dict[str, str]]:
    """Parent key -> {chunk key: chunk_hash} of what the index holds for `parents`."""
    held: dict[str, dict[str, str]] = {}
    if not parents:
        return held
    # Document keys are base64url: no commas, so search.in's default separator is safe.
    quoted = ",".join(parents)
    results = search.search(
        search_text="*",
        filter=f"search.in({parent_field}, '{quoted}', ',')",
        select=[key_field, parent_field, "chunk_hash"],
        top=LOOKUP_PAGE * len(parents),
    )
    for result in results:
        held.setdefault(str(result[parent_field]), {})[str(result[key_field])] = str(
            result.get("chunk_hash")
        )
    return held


def _documents_to_send(
    fresh: list[tuple[SourceDocument, RecordChunks]],
    held: dict[str, dict[str, str]],
    skillset: WireJson,
    schema: WireJson,
    summary: PushSummary,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The chunk documents to upload (projected and checked), and stale keys to delete."""
    report = ReplayReport()
    uploads_of: dict[str, int] = {}
    for doc, answer in fresh:
        name = str(doc.fields["metadata_storage_name"])
        if not answer.ok:
            summary.failed_documents[name] = list(answer.errors)
            continue
        tree = {**doc.fields, "chunks": [chunk_json(chunk) for chunk in answer.chunks]}
        projected = project(doc.key, tree, skillset, report)
        uploads_of[doc.key] = len(projected)
        report.documents += projected
        summary.changed += 1
    dimensions = _vector_dimensions(schema)
    validate_documents(report, schema, dimensions, require_vectors=False)
    summary.problems += report.problems
    new_keys = {str(document[KEY_FIELD]) for document in report.documents}
    stale = [key for parent in uploads_of for key in held.get(parent, {}) if key not in new_keys]
    return report.documents, stale


def _vector_dimensions(schema: WireJson) -> int:
    for member in schema.get("fields", []):
        if member.get("type") == "Collection(Edm.Single)" and member.get("dimensions"):
            return int(member["dimensions"])
    return 0


def target_from_environment(
    index_name: str, endpoint: str | None, environ: dict[str, str] | None = None
) -> Target:
    """The service from --endpoint or AZURE_SEARCH_ENDPOINT; AZURE_SEARCH_KEY or Entra ID."""
    environ = dict(os.environ) if environ is None else environ
    chosen = endpoint or environ.get(ENV_SEARCH_ENDPOINT, "").strip()
    if not chosen:
        raise ValueError(
            f"no search service: give --endpoint or set {ENV_SEARCH_ENDPOINT} "
            "(https://NAME.search.windows.net)"
        )
    key = environ.get(ENV_SEARCH_KEY, "").strip()
    if key:
        return Target(chosen, index_name, AzureKeyCredential(key))
    # Only Microsoft Entra sign-in needs azure.identity, which is slow to import.
    from azure.identity import DefaultAzureCredential  # noqa: PLC0415

    return Target(chosen, index_name, DefaultAzureCredential())


def arguments_parser() -> argparse.ArgumentParser:
    """`python -m skills push`'s options."""

    parser = OneLineParser(
        prog=command_name("python -m skills push", "chunk-push", "chunk-skill push"),
        formatter_class=HelpFormatter,
        description="Chunk and embed local files with the skill's settings and upload the "
        "chunk documents to an Azure AI Search index (no indexer needed). App settings "
        f"(CHUNK_*, EMBEDDING_*, ...) come from the environment; {ENV_SEARCH_KEY} is an admin "
        "key (without it: Microsoft Entra ID sign-in).",
        epilog="example:\n"
        "  AZURE_SEARCH_ENDPOINT=https://NAME.search.windows.net AZURE_SEARCH_KEY=... \\\n"
        "    python -m skills push docs/ --index chunks",
    )
    parser.add_argument(
        "paths", nargs="+", type=Path, help="files, or folders (their files, subfolders too)"
    )
    parser.add_argument("--index", required=True, help="the chunk index's name")
    parser.add_argument(
        "--endpoint",
        help="the search service, https://NAME.search.windows.net "
        f"(default: ${ENV_SEARCH_ENDPOINT})",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """`python -m skills push`: 0 when everything was uploaded or unchanged."""
    parser = arguments_parser()
    args = parser.parse_args(argv)
    return run_piped(lambda: _run(args, parser.prog))


def _run(args: argparse.Namespace, prog: str) -> int:
    settings = settings_from_environment()
    if isinstance(settings, SettingsError):
        print(f"error: {settings}", file=sys.stderr)
        return EXIT_REFUSED
    try:
        target = target_from_environment(args.index, args.endpoint)
        chunk = chunk_settings_from_environment(os.environ)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_REFUSED
    embedder = None if settings.embedding.provider == "none" else build_embedder(settings.embedding)
    documents = read_blob_documents(args.paths)

    def show(line: str) -> None:
        sys.stderr.write(f"\rpush: {line}")
        sys.stderr.flush()

    try:
        summary = push(
            documents,
            target,
            settings=settings,
            embedder=embedder,
            embedding_dimensions=settings.embedding.dimensions,
            chunk=chunk,
            progress=show,
        )
    except AzureError as error:
        line = describe_service_error(
            error,
            endpoint=target.endpoint,
            endpoint_setting="--endpoint" if args.endpoint else ENV_SEARCH_ENDPOINT,
            index=args.index,
        )
        print(f"{prog}: {line}", file=sys.stderr)
        return EXIT_REFUSED
    sys.stderr.write("\n")
    print_summary(summary)
    if summary.problems:
        return EXIT_REFUSED
    return 0 if summary.ok else EXIT_FAILURES


def print_summary(summary: PushSummary) -> None:
    """A short human summary on stdout."""
    print(
        f"{summary.documents} document(s): {summary.unchanged} unchanged, {summary.changed} "
        f"changed, {len(summary.failed_documents)} failed; {summary.uploaded} chunk(s) "
        f"uploaded, {summary.deleted} deleted, {len(summary.failed_keys)} refused"
    )
    for name, reasons in summary.failed_documents.items():
        print(f"FAILED {name}: {'; '.join(reasons)}")
    for key, reason in sorted(summary.failed_keys.items()):
        print(f"REFUSED {key}: {reason}")
    for problem in summary.problems:
        print(f"PROBLEM {problem}")
