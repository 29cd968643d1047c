"""The skill on Spark: chunk (and embed) a DataFrame of documents into chunk rows.

For data already on a Spark cluster (Synapse, Fabric, Databricks). `chunk_frames` is a
function for `DataFrame.mapInPandas`: documents in (columns `key`, `text`, and optionally
`title`, `url`, `format`, `file_name`), rows out with the chunk index's fields
(`CHUNK_SCHEMA`), made by the same code the skill runs (`skills.skill.library`), so a chunk
has the same text, path, id and vector as through the indexer. `upload_rows` sends the
rows of one partition to the index with the SDK's buffered sender (for
`foreachPartition`); SynapseML's AzureSearchWriter takes the same rows where it is
installed.

    from skills.search.spark import CHUNK_SCHEMA, chunk_frames, upload_rows
    chunks = documents.mapInPandas(chunk_frames(embed=True), CHUNK_SCHEMA)
    chunks.foreachPartition(upload_rows(endpoint, "chunks", api_key))

Settings come from the executors' environment (the Function's app-setting names:
CHUNK_*, EMBEDDING_*), or are given. pandas and PySpark are needed only here.
"""

from __future__ import annotations

import asyncio
import base64
from typing import TYPE_CHECKING, Any

from skills.chunk_schema import INDEX_FIELDS
from skills.skill.library import chunk_records, embed_records
from skills.skill.render import chunk_json

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    import pandas as pd

    from skills.skill.settings import Settings, SettingsError

CHUNK_SCHEMA = ", ".join(
    [*(f"{field.name} {field.spark_type}" for field in INDEX_FIELDS), "error string"]
)
"""The rows' Spark schema: the chunk index's fields (`skills.chunk_schema.INDEX_FIELDS`,
as `skills.search.definitions` projects them), and `error`, set on the one row of a
document that could not be chunked or embedded (its other fields are empty but
`parent_id` and `file_name`)."""

_MEMBERS = {
    field.name: field.source
    for field in INDEX_FIELDS
    if field.source is not None and "/" not in field.source
}
"""Row column <- member of a skill chunk object, as the index projection maps them."""
_INPUTS = {"text": "text", "title": "title", "url": "url", "format": "format"}
"""Skill record input <- document column."""
UPLOAD_BATCH = 500
"""Rows per indexing request from one partition (1,000 is the service's limit; vectors
of 1,536 floats make 500 rows about 10 MB, under the 16 MB limit)."""


def chunk_frames(
    *, embed: bool = False, settings: Settings | SettingsError | None = None
) -> Callable[[Iterable[pd.DataFrame]], Iterator[pd.DataFrame]]:
    """The function to give `mapInPandas` with `CHUNK_SCHEMA`."""

    def run(frames: Iterable[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        import pandas as pd  # noqa: PLC0415  (on the executor)

        # Imported on the executor, where `run` is unpickled, not on the driver.
        from skills.embedding.clients import build_embedder  # noqa: PLC0415
        from skills.skill.settings import SettingsError, settings_from_environment  # noqa: PLC0415

        chosen = settings_from_environment() if settings is None else settings
        embedder = None
        if embed and not isinstance(chosen, SettingsError):
            embedder = build_embedder(chosen.embedding)
        with asyncio.Runner() as runner:
            try:
                for frame in frames:
                    documents = [
                        {str(name): value for name, value in row.items()}
                        for row in frame.to_dict("records")
                    ]
                    answers = chunk_records(map(_record, documents), chosen)
                    if embedder is not None:
                        answers = embed_records(answers, embedder, runner=runner)
                    rows = [
                        row
                        for document, answer in zip(documents, answers, strict=True)
                        for row in _rows(document, map(chunk_json, answer.chunks), answer.errors)
                    ]
                    yield pd.DataFrame(rows, columns=_COLUMNS)
            finally:
                if embedder is not None:
                    runner.run(embedder.aclose())

    return run


def chunk_key(parent: str, ordinal: int) -> str:
    """A valid index key for chunk `ordinal` of document `parent` (base64url + ordinal)."""
    encoded = base64.urlsafe_b64encode(parent.encode("utf-8")).decode("ascii").rstrip("=")
    return f"{encoded}_{ordinal}"


_COLUMNS = [part.split()[0] for part in CHUNK_SCHEMA.split(", ")]


def _record(document: dict[str, Any]) -> dict[str, Any]:
    record = {
        name: document[column] for name, column in _INPUTS.items() if _present(document.get(column))
    }
    name = document.get("file_name")
    if _present(name):
        record["fileName"] = name
    return record


def _present(value: Any) -> bool:
    # pandas gives NaN or None for a missing cell.
    return value is not None and value == value  # noqa: PLR0124  (NaN != NaN)


def _rows(
    document: dict[str, Any], chunks: Iterable[dict[str, Any]], errors: Iterable[str]
) -> Iterator[dict[str, Any]]:
    parent = str(document["key"])
    file_name = document.get("file_name") if _present(document.get("file_name")) else None
    problems = list(errors)
    if problems:
        # Every column set: pandas would fill missing ones with NaN, which no array takes.
        yield {
            **dict.fromkeys(_COLUMNS),
            "parent_id": parent,
            "file_name": file_name,
            "error": "; ".join(problems),
        }
        return
    for chunk in chunks:
        row = {column: chunk.get(member) for column, member in _MEMBERS.items()}
        row["headings"] = list(row["headings"] or [])
        # The index's span fields are the code-point members of the skill's measures.
        row["offset"] = chunk["offset"]["codePoint"]
        row["length"] = chunk["length"]["codePoint"]
        # The Layout-style heading levels: `header_<n>` <- `sections/h<n>` ("" if unset).
        sections = chunk.get("sections") or {}
        for level in range(1, 7):
            row[f"header_{level}"] = sections.get(f"h{level}", "")
        row["chunk_id"] = chunk_key(parent, int(chunk["ordinal"]))
        row["parent_id"] = parent
        row["file_name"] = file_name
        row["error"] = None
        yield row


def upload_rows(
    endpoint: str, index_name: str, api_key: str, *, api_version: str | None = None
) -> Callable[[Iterable[Any]], None]:
    """A `foreachPartition` function that uploads one partition's chunk rows (rows with an
    `error` are skipped); raises if the service refused any, so Spark retries the task."""

    def run(rows: Iterable[Any]) -> None:
        from azure.core.credentials import AzureKeyCredential  # noqa: PLC0415
        from azure.search.documents import SearchIndexingBufferedSender  # noqa: PLC0415

        refused: list[str] = []
        versions = {"api_version": api_version} if api_version else {}
        sender = SearchIndexingBufferedSender(
            endpoint,
            index_name,
            AzureKeyCredential(api_key),
            initial_batch_action_count=UPLOAD_BATCH,
            on_error=lambda action: refused.append(str(action.get("chunk_id"))),
            **versions,
        )
        batch: list[dict[str, Any]] = []
        try:
            for row in rows:
                values = row.asDict() if hasattr(row, "asDict") else dict(row)
                if values.get("error"):
                    continue
                values.pop("error", None)
                batch.append(values)
                if len(batch) == UPLOAD_BATCH:
                    # One batch queued at a time (see skills.search.push).
                    sender.upload_documents(batch)
                    batch = []
            if batch:
                sender.upload_documents(batch)
            sender.flush()
        finally:
            sender.close()
        if refused:
            raise RuntimeError(
                f"the search service refused {len(refused)} chunk(s), e.g. {refused[0]}"
            )

    return run
