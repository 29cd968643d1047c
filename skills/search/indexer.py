"""Replay what an Azure AI Search indexer does with our skillset, against a local skill.

There is no Azure AI Search emulator, so this is the end-to-end test of the wiring:
1. read sample files the way the blob indexer does in `text` parsing mode;
2. build the skill requests from the skillset's own inputs, `batchSize`,
   `degreeOfParallelism`, `httpHeaders`, `httpMethod` and `timeout`;
3. send them over HTTP, retrying 429/502/503 twice as the indexer does;
4. check the response contract: JSON, every recordId back once, `errors`/`warnings`;
5. apply the index projection mappings and validate every projected chunk document
   against the index schema (fields exist, types fit, vector length = dimensions, no
   mapping to the key).

The product uses it too: `skills.search.push` reads files and projects chunk documents
exactly as here. The command line is `python -m infra.replay` (infra/replay.py).
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import mimetypes
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

import httpx

from skills.search.checks import (
    WEB_API_SKILL,
    check_definitions,
    fields_by_name,
    literal_value,
    parse_duration,
)
from skills.search.definitions import (
    INDEXED_EXTENSIONS,
    SearchSetup,
    SkillAuth,
    chunk_settings,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from skills.search.checks import WireJson

RETRIED_STATUSES = frozenset({429, 502, 503})
"""The indexer retries these twice (three attempts in all)."""
RETRIES = 2
DEFAULT_SKILL_TIMEOUT = "PT30S"
DEFAULT_SKILL_BATCH_SIZE = 1000
DEFAULT_DEGREE_OF_PARALLELISM = 5
FILTERABLE_STRING_BYTES = 32766
"""Largest UTF-8 string a filterable, sortable or facetable field accepts."""
INT32 = (-(2**31), 2**31 - 1)
REPLAY_ACCOUNT_URL = "https://replay.blob.core.windows.net"
REPLAY_CONTAINER = "documents"


@dataclass(frozen=True, slots=True)
class SourceDocument:
    """A blob as the indexer sees it: its key and its enrichment-tree root (/document)."""

    key: str
    fields: dict[str, Any]


@dataclass(slots=True)
class ReplayReport:
    """What happened: projected documents, failed documents and wiring problems."""

    documents: list[dict[str, Any]] = field(default_factory=list)
    """The chunk documents the projection would upload."""
    failed: dict[str, list[str]] = field(default_factory=dict)
    """Document file name -> why the indexer would fail it."""
    problems: list[str] = field(default_factory=list)
    """Wiring or schema problems: these would break the deployed pipeline."""
    warnings: list[str] = field(default_factory=list)
    requests: int = 0
    retries: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems and not self.failed


def read_blob_documents(
    paths: Sequence[Path],
    extensions: Sequence[str] = INDEXED_EXTENSIONS,
    *,
    file_data: bool = False,
    recursive: bool = True,
) -> list[SourceDocument]:
    """Files (or the files under directories; only their own files unless `recursive`) as
    `text`-mode blob documents.

    Like the blob indexer, only `indexedFileNameExtensions` are taken, content is the
    UTF-8 text as it is, and the key is the base64 of metadata_storage_path. With
    `file_data`, each also has `/document/file_data` as the indexer sends it with
    `allowSkillsetToReadFileData: true`: `{"$type": "file", "data": "<base64>"}`.
    """
    files: list[tuple[str, Path]] = []
    for path in paths:
        if path.is_dir():
            found = path.rglob("*") if recursive else path.iterdir()
            files += [(p.relative_to(path).as_posix(), p) for p in sorted(found)]
        else:
            files.append((path.name, path))
    documents = []
    seen: set[str] = set()
    for blob_name, file in files:
        if not file.is_file() or file.suffix.lower() not in extensions:
            continue
        name = blob_name
        copies = 1
        while name in seen:  # blob names are unique in a container
            copies += 1
            name = f"{copies}/{blob_name}"
        seen.add(name)
        raw = file.read_bytes()
        blob_url = f"{REPLAY_ACCOUNT_URL}/{REPLAY_CONTAINER}/{quote(name)}"
        content_type = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        if file.suffix.lower() in {".md", ".markdown"}:
            content_type = "text/markdown"
        documents.append(
            SourceDocument(
                key=base64.urlsafe_b64encode(blob_url.encode()).decode().rstrip("="),
                fields={
                    "content": raw.decode("utf-8-sig", errors="replace"),
                    "metadata_storage_name": file.name,
                    "metadata_storage_path": blob_url,
                    "metadata_content_type": content_type,
                    "metadata_storage_size": len(raw),
                    **(
                        {"file_data": {"$type": "file", "data": base64.b64encode(raw).decode()}}
                        if file_data
                        else {}
                    ),
                },
            )
        )
    return documents


def with_file_data(skillset: WireJson, indexer: WireJson) -> tuple[WireJson, WireJson]:
    """Copies of the definitions that send the raw file: each skill's `text` input (the
    document's content) becomes `file_data` <- /document/file_data, and the indexer
    allows it in the default parsing mode."""
    skillset = copy.deepcopy(skillset)
    indexer = copy.deepcopy(indexer)
    for skill in skillset.get("skills", []):
        for entry in skill.get("inputs", []):
            if entry.get("name") == "text" and entry.get("source") == "/document/content":
                entry["name"], entry["source"] = "file_data", "/document/file_data"
    configuration = indexer.setdefault("parameters", {}).setdefault("configuration", {})
    configuration["parsingMode"] = "default"
    configuration["allowSkillsetToReadFileData"] = True
    return skillset, indexer


def resolve(source: str, tree: dict[str, Any]) -> Any:
    """The value of an input source: a literal, or a /document/... path (None if absent)."""
    if source.startswith("="):
        return literal_value(source)
    value: Any = tree
    for part in source.removeprefix("/document").strip("/").split("/"):
        if not part:
            continue
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def replay(
    documents: Sequence[SourceDocument],
    data_source: WireJson,
    index: WireJson,
    skillset: WireJson,
    indexer: WireJson,
    *,
    embedding_dimensions: int,
    embedding_model: str | None = None,
    require_vectors: bool = False,
    retry_delay: float = 0.2,
    progress: Callable[[str], None] | None = None,
) -> ReplayReport:
    """Run the skillset over `documents` against its (local) URI and project the chunks;
    `progress` is told, in a line each, what is sent and what came back."""
    report = ReplayReport()
    report.problems += check_definitions(
        data_source,
        index,
        skillset,
        indexer,
        embedding_dimensions=embedding_dimensions,
        embedding_model=embedding_model,
        allow_http=True,
    )
    trees = {doc.key: dict(doc.fields) for doc in documents}
    if len({doc.key for doc in documents}) != len(documents):
        raise ValueError("two documents have the same key (blob path)")
    prefix = f"{REPLAY_ACCOUNT_URL}/{REPLAY_CONTAINER}/"
    names = {
        doc.key: str(doc.fields["metadata_storage_path"]).removeprefix(prefix) for doc in documents
    }
    for skill in skillset.get("skills", []):
        if skill.get("@odata.type") != WEB_API_SKILL:
            report.problems.append(
                f"replay runs only Web API skills, not {skill.get('@odata.type')}"
            )
            continue
        if (skill.get("context") or "/document") != "/document":
            report.problems.append(f"replay runs skills at /document only, not {skill['context']}")
            continue
        live = [doc for doc in documents if names[doc.key] not in report.failed]
        _run_skill(skill, live, trees, names, report, retry_delay, progress or _quiet)
    for doc in documents:
        if names[doc.key] in report.failed:
            continue
        report.documents += project(doc.key, trees[doc.key], skillset, report)
    validate_documents(report, index, embedding_dimensions, require_vectors)
    report.problems.extend(page_problems(report.documents))
    return report


@dataclass(frozen=True, slots=True)
class _SkillCall:
    """How the indexer calls one Web API skill, read from its definition with the
    indexer's defaults for what it leaves out."""

    uri: str
    method: str
    headers: dict[str, str]
    timeout: float
    batch_size: int
    parallelism: int
    inputs: list[tuple[str, str]]
    """(input name, source path in the enriched document)."""
    outputs: list[tuple[str, str]]
    """(output name, target name in the enriched document)."""

    @classmethod
    def of(cls, skill: WireJson) -> _SkillCall:
        """The call `skill` (a skillset's skill) describes."""
        return cls(
            uri=skill["uri"],
            method=skill.get("httpMethod") or "POST",
            headers={**(skill.get("httpHeaders") or {}), "Content-Type": "application/json"},
            timeout=parse_duration(skill.get("timeout") or DEFAULT_SKILL_TIMEOUT).total_seconds(),
            batch_size=skill.get("batchSize") or DEFAULT_SKILL_BATCH_SIZE,
            parallelism=skill.get("degreeOfParallelism") or DEFAULT_DEGREE_OF_PARALLELISM,
            inputs=[(i["name"], i["source"]) for i in skill.get("inputs", [])],
            outputs=[
                (o["name"], o.get("targetName") or o["name"]) for o in skill.get("outputs", [])
            ],
        )


def _run_skill(
    skill: WireJson,
    documents: Sequence[SourceDocument],
    trees: dict[str, dict[str, Any]],
    names: dict[str, str],
    report: ReplayReport,
    retry_delay: float,
    progress: Callable[[str], None],
) -> None:
    call = _SkillCall.of(skill)
    record_ids = {doc.key: str(number) for number, doc in enumerate(documents)}
    size = call.batch_size
    batches = [documents[i : i + size] for i in range(0, len(documents), size)]
    progress(
        f"sending {len(documents)} document(s) to {call.uri} in {len(batches)} request(s) "
        f"(batchSize {size}, degreeOfParallelism {call.parallelism}, "
        f"timeout {call.timeout:g} s)"
    )
    answered = [0]
    lock = threading.Lock()
    started = time.monotonic()

    def send(batch: Sequence[SourceDocument]) -> tuple[Sequence[SourceDocument], Any, int]:
        values = [
            {
                "recordId": record_ids[doc.key],
                "data": {name: resolve(source, trees[doc.key]) for name, source in call.inputs},
            }
            for doc in batch
        ]
        outcome, attempts = _post(call, json.dumps({"values": values}).encode("utf-8"), retry_delay)
        if isinstance(outcome, httpx.Response):
            with lock:
                answered[0] += 1
                progress(
                    f"request {answered[0]}/{len(batches)} answered: HTTP "
                    f"{outcome.status_code}, {len(batch)} document(s), "
                    f"{time.monotonic() - started:.1f} s"
                )
        return batch, outcome, attempts

    with ThreadPoolExecutor(max_workers=call.parallelism) as pool:
        results = list(pool.map(send, batches))
    for batch, outcome, attempts in results:
        report.requests += attempts
        report.retries += attempts - 1
        failures = _read_response(outcome, [record_ids[d.key] for d in batch], skill)
        by_record = {record_ids[doc.key]: doc for doc in batch}
        for record_id, answer in failures.items():
            doc = by_record[record_id]
            if isinstance(answer, list):
                report.failed[names[doc.key]] = answer
                continue
            for name, target in call.outputs:
                if name not in answer:
                    report.warnings.append(f"{names[doc.key]}: the skill returned no {name!r}")
                    continue
                trees[doc.key][target] = answer[name]


def _post(
    call: _SkillCall, body: bytes, retry_delay: float
) -> tuple[httpx.Response | httpx.HTTPError, int]:
    """The skill's answer to one request, or the error that stopped it, and how many
    attempts it took: a 429, 502 or 503 is retried up to RETRIES times with a doubling
    delay, as the indexer does."""
    attempts = 0
    with httpx.Client(timeout=call.timeout) as client:
        while True:
            attempts += 1
            try:
                response = client.request(call.method, call.uri, content=body, headers=call.headers)
            except httpx.HTTPError as error:
                return error, attempts
            if response.status_code not in RETRIED_STATUSES or attempts > RETRIES:
                return response, attempts
            time.sleep(retry_delay * 2 ** (attempts - 1))


def _quiet(line: str) -> None:
    """No progress lines."""


def _read_response(
    outcome: httpx.Response | Exception, record_ids: list[str], skill: WireJson
) -> dict[str, list[str] | dict[str, Any]]:
    """recordId -> its output data, or the reasons the indexer would fail that document."""
    name = skill.get("name", "skill")

    def everyone(message: str) -> dict[str, list[str] | dict[str, Any]]:
        return {record_id: [message] for record_id in record_ids}

    if isinstance(outcome, Exception):
        return everyone(f"{name}: the request failed: {type(outcome).__name__}: {outcome}")
    if outcome.status_code > 299:
        return everyone(f"{name}: HTTP {outcome.status_code}: {outcome.text[:300]}")
    content_type = outcome.headers.get("content-type", "")
    if not content_type.startswith("application/json"):
        return everyone(f"{name}: response content type {content_type!r} is not JSON")
    try:
        values = outcome.json()["values"]
    except (ValueError, KeyError, TypeError) as error:
        return everyone(f"{name}: the response has no readable 'values': {error}")
    answers: dict[str, list[str] | dict[str, Any]] = {}
    for value in values:
        record_id = value.get("recordId") if isinstance(value, dict) else None
        if record_id not in record_ids:
            return everyone(f"{name}: response record with unknown or missing id {record_id!r}")
        if record_id in answers:
            return everyone(f"{name}: recordId {record_id!r} answered twice")
        if "errors" not in value or "warnings" not in value:
            answers[record_id] = [f"{name}: record {record_id!r} lacks 'errors' or 'warnings'"]
            continue
        errors = value["errors"] or []
        if errors:
            answers[record_id] = [
                f"{name}: {e.get('message') if isinstance(e, dict) else e!r}" for e in errors
            ]
            continue
        data = value.get("data")
        answers[record_id] = data if isinstance(data, dict) else [f"{name}: data is not an object"]
    for record_id in record_ids:
        answers.setdefault(record_id, [f"{name}: record {record_id!r} did not come back"])
    return answers


def project(
    parent_key: str, tree: dict[str, Any], skillset: WireJson, report: ReplayReport
) -> list[dict[str, Any]]:
    """The chunk documents the index projection makes from one document's tree."""
    documents = []
    projection = skillset.get("indexProjections") or {}
    for selector in projection.get("selectors", []):
        context = selector.get("sourceContext", "")
        items = resolve(context.removesuffix("/*"), tree)
        if items is None:
            continue
        if not isinstance(items, list):
            report.problems.append(f"projection sourceContext {context!r} is not an array")
            continue
        collection = context.removesuffix("/*").rsplit("/", 1)[-1]
        # The service's keys: a hash, the parent key, the annotation path and the index.
        salt = hashlib.sha256(parent_key.encode()).hexdigest()[:12]
        for number, item in enumerate(items):
            document: dict[str, Any] = {}
            for mapping in selector.get("mappings", []):
                source = mapping.get("source", "")
                if source.startswith(context + "/"):
                    member = source[len(context) + 1 :]
                    document[mapping["name"]] = _Member(
                        resolve(f"/document/{member}", item), member, item
                    )
                else:
                    document[mapping["name"]] = _Member(resolve(source, tree), source, tree)
            document[selector.get("parentKeyFieldName", "")] = parent_key
            documents.append(
                {
                    "@key": f"{salt}_{parent_key}_{collection}_{number}",
                    "@index": selector.get("targetIndexName"),
                    **document,
                }
            )
    return documents


@dataclass(frozen=True, slots=True)
class _Member:
    """A projected value and whether its source path existed at all."""

    value: Any
    path: str
    container: Any

    @property
    def present(self) -> bool:
        value: Any = self.container
        for part in self.path.removeprefix("/document").strip("/").split("/"):
            if not isinstance(value, dict) or part not in value:
                return False
            value = value[part]
        return True


def validate_documents(
    report: ReplayReport, index: WireJson, dimensions: int, require_vectors: bool
) -> None:
    """Check the projected documents against the index; replace _Member by plain values."""
    fields = fields_by_name(index)
    keys = {name for name, f in fields.items() if f.get("key")}
    never_present: dict[str, int] = {}
    vectors_missing: dict[str, int] = {}
    type_problems: dict[str, list[str]] = {}
    """Problem -> the chunks that have it: one line per problem, however many chunks."""
    for document in report.documents:
        if document.pop("@index") != index.get("name"):
            report.problems.append("a projection targets another index than the chunk index")
        key = document.pop("@key")
        for name in list(document):
            member = document[name]
            if not isinstance(member, _Member):
                continue  # the parent key
            value = document[name] = member.value
            if not member.present:
                never_present[name] = never_present.get(name, 0) + 1
            target = fields.get(name)
            if target is None or name in keys:
                continue  # reported by the static checks
            if target.get("type") == "Collection(Edm.Single)" and value is None:
                vectors_missing[name] = vectors_missing.get(name, 0) + 1
                continue
            problem = _type_problem(value, target, dimensions)
            if problem:
                type_problems.setdefault(f"field {name!r}: {problem}", []).append(key)
        for name in keys:
            document[name] = key
    total = len(report.documents)
    for problem, chunk_keys in type_problems.items():
        where = (
            f"chunk {chunk_keys[0]}"
            if len(chunk_keys) == 1
            else f"{len(chunk_keys)} of {total} chunks, e.g. chunk {chunk_keys[0]}"
        )
        report.problems.append(f"{problem} ({where})")
    for name, count in sorted(never_present.items()):
        if name in vectors_missing and count == vectors_missing[name]:
            continue
        report.problems.append(
            f"field {name!r}: its source is missing from {count} of {total} chunks; the skill "
            "output has no such member (renamed or removed?)"
        )
    for name, count in sorted(vectors_missing.items()):
        message = (
            f"vector field {name!r} is empty in {count} of {total} chunks: the skill returned "
            "no embeddings (is EMBEDDING_PROVIDER set?)"
        )
        if require_vectors or count != total:
            report.problems.append(message)
        else:
            report.warnings.append(message)
    if not total and not report.failed:
        report.warnings.append("no chunk documents were projected")
    report.problems[:] = list(dict.fromkeys(report.problems))[:50]


PAGE_FIELDS = ("pageNumberFrom", "pageNumberTo")
"""Index fields of a chunk's pages (Layout markdown), null for a document without pages."""


def page_problems(documents: Sequence[dict[str, Any]]) -> list[str]:
    """Chunk documents whose page fields do not make a page range: both null, or
    1 <= pageNumberFrom <= pageNumberTo."""
    problems: list[str] = []
    for document in documents:
        if not all(name in document for name in PAGE_FIELDS):
            continue  # an index without the fields (saved definitions of an older one)
        low, high = (document[name] for name in PAGE_FIELDS)
        if low is None and high is None:
            continue
        if not (isinstance(low, int) and isinstance(high, int) and 1 <= low <= high):
            name = document.get("file_name") or document.get("chunk_id")
            problems.append(
                f"chunk of {name!r}: pageNumberFrom {low!r} and pageNumberTo {high!r} "
                "are not a page range"
            )
    return problems[:50]


def _type_problem(value: Any, target: WireJson, dimensions: int) -> str | None:
    """Why `value` cannot be stored in the index field `target`, or None."""
    kind = target.get("type")
    if value is None:
        return None
    if kind == "Edm.String":
        if not isinstance(value, str):
            return f"Edm.String but the value is {type(value).__name__}"
        limited = target.get("filterable") or target.get("sortable") or target.get("facetable")
        if limited and len(value.encode("utf-8")) > FILTERABLE_STRING_BYTES:
            return f"{len(value.encode())} bytes is over the {FILTERABLE_STRING_BYTES} limit"
        return None
    if kind == "Collection(Edm.String)":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return "Collection(Edm.String) but the value is not a list of strings"
        return None
    if kind in {"Edm.Int32", "Edm.Int64"}:
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{kind} but the value is {type(value).__name__}"
        if kind == "Edm.Int32" and not INT32[0] <= value <= INT32[1]:
            return "out of Edm.Int32 range"
        return None
    if kind == "Edm.Double":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return None if ok else f"Edm.Double but the value is {type(value).__name__}"
    if kind == "Edm.Boolean":
        return None if isinstance(value, bool) else "Edm.Boolean but the value is not a boolean"
    if kind == "Collection(Edm.Single)":
        if not isinstance(value, list) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in value
        ):
            return "vector field but the value is not a list of numbers"
        expected = target.get("dimensions")
        if len(value) != expected:
            return f"the vector has {len(value)} dimensions, the field {expected}"
        if expected != dimensions:
            return f"the field has {expected} dimensions, the embeddings {dimensions}"
        return None
    return f"replay cannot check fields of type {kind}"


def replay_setup(
    endpoint: str,
    *,
    embedding_dimensions: int,
    embedding_model: str,
    chunk_options: dict[str, Any] | None = None,
) -> SearchSetup:
    """The deployed definitions, pointed at a local endpoint (`.../api/chunk` added)."""
    uri = (
        endpoint
        if urlsplit(endpoint).path.endswith("/api/chunk")
        else f"{endpoint.rstrip('/')}/api/chunk"
    )
    return SearchSetup(
        skill_uri=uri,
        # Local servers do not check keys; the header is still sent, as in Azure.
        skill_auth=SkillAuth("functionKey", function_key="replay-function-key"),
        storage_resource_id="/subscriptions/replay/resourceGroups/replay/providers/"
        "Microsoft.Storage/storageAccounts/replay",
        container=REPLAY_CONTAINER,
        openai_endpoint="https://replay.openai.azure.com",
        embedding_deployment="embedding",
        embedding_model=embedding_model,
        embedding_dimensions=embedding_dimensions,
        chunk=chunk_settings(**(chunk_options or {})),
    )
