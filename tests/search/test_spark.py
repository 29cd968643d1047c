"""`skills.search.spark` for real: PySpark in local mode (local[2]) on the test fixtures.

Skipped, with the reason, where PySpark or a Java runtime is missing; scripts/setup.sh
installs PySpark (requirements-spark.txt) and uses the machine's Java (17 or newer).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from typing import TYPE_CHECKING, Any

import pytest

from skills.search.definitions import CHUNK_FIELD_SOURCES
from skills.search.spark import CHUNK_SCHEMA, chunk_frames, chunk_key, upload_rows
from skills.skill.library import chunk_records
from skills.skill.settings import Settings
from tests.paths import ROOT

if TYPE_CHECKING:
    from collections.abc import Iterator

pyspark = pytest.importorskip("pyspark", reason="PySpark is not installed")
if shutil.which("java") is None:
    pytest.skip("no Java runtime for Spark", allow_module_level=True)

FIXTURES = ROOT / "tests" / "fixtures"
DOCUMENTS = [
    *(
        p
        for p in sorted(FIXTURES.rglob("*"))
        if p.suffix in {".md", ".html"} and p.name != "SOURCES.md"
    ),
    ROOT / "samples" / "layout-report.md",  # Layout markdown: page fields and sections
]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from pyspark.sql import SparkSession

    # Executors start Python workers from this interpreter, with this checkout importable.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    session = (
        SparkSession.builder.master("local[2]")
        .appName("chunking-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    yield session
    session.stop()


def _frame(spark: Any) -> Any:
    rows = [
        {
            "key": path.relative_to(ROOT).as_posix(),
            "text": path.read_text(encoding="utf-8"),
            "file_name": path.name,
            "url": f"https://docs.example/{path.relative_to(ROOT).as_posix()}",
            "title": None,
            "format": None,
        }
        for path in DOCUMENTS
    ]
    return spark.createDataFrame(
        rows, "key string, text string, file_name string, url string, title string, format string"
    ).repartition(2)


def test_rows_equal_the_skills_chunks_for_the_same_documents(spark: Any) -> None:
    settings = Settings(chunk_workers=0)
    started = time.monotonic()
    rows = _frame(spark).mapInPandas(chunk_frames(settings=settings), CHUNK_SCHEMA).collect()
    cold = time.monotonic() - started
    started = time.monotonic()
    again = _frame(spark).mapInPandas(chunk_frames(settings=settings), CHUNK_SCHEMA).count()
    warm = time.monotonic() - started
    # Printed for the README's figures (pytest -s): the first job starts the Python workers.
    print(
        f"spark local[2]: {len(DOCUMENTS)} documents, {len(rows)} rows; first job "
        f"{cold:.1f} s, second {warm:.1f} s ({again / warm:.0f} rows/s)"
    )
    assert again == len(rows)
    assert all(row.error is None for row in rows)
    by_parent: dict[str, list[Any]] = {}
    for row in rows:
        by_parent.setdefault(row.parent_id, []).append(row)
    assert len(by_parent) == len(DOCUMENTS)
    for path in DOCUMENTS:
        key = path.relative_to(ROOT).as_posix()
        (answer,) = chunk_records(
            [
                {
                    "text": path.read_text(encoding="utf-8"),
                    "fileName": path.name,
                    "url": f"https://docs.example/{key}",
                }
            ],
            settings,
        )
        got = sorted(by_parent[key], key=lambda row: row.ordinal)
        chunks = answer.chunks
        assert [row.chunk for row in got] == [c.text for c in chunks]
        assert [row.content for row in got] == [c.content for c in chunks]
        assert [list(row.headings) for row in got] == [list(c.headings) for c in chunks]
        assert [row.chunk_hash for row in got] == [c.id for c in chunks]
        assert [row.url for row in got] == [c.url for c in chunks]
        assert [(row.offset, row.length) for row in got] == [
            (c.offset.code_point, c.length.code_point) for c in chunks
        ]
        assert [row.chunk_id for row in got] == [chunk_key(key, c.ordinal) for c in chunks]
        assert [(row.pageNumberFrom, row.pageNumberTo) for row in got] == [
            (c.page_number_from, c.page_number_to) for c in chunks
        ]
        assert [[row[f"header_{n}"] for n in range(1, 7)] for row in got] == [
            [*c.sections, *[""] * (6 - len(c.sections))] for c in chunks
        ]
        assert all(row.embedding is None for row in got)


def test_the_rows_have_every_field_the_index_projection_fills() -> None:
    """A field added to the index (pages, Layout heading levels) reaches Spark's rows too."""
    columns = {part.split()[0] for part in CHUNK_SCHEMA.split(", ")}
    assert columns == {*CHUNK_FIELD_SOURCES, "chunk_id", "parent_id", "error"}


def test_a_bad_document_gets_an_error_row_and_the_rest_chunk(spark: Any) -> None:
    frame = spark.createDataFrame(
        [
            {"key": "good", "text": "# Title\n\nSome words here.", "format": None},
            {"key": "bad", "text": None, "format": None},
        ],
        "key string, text string, format string",
    )
    rows = frame.mapInPandas(
        chunk_frames(settings=Settings(chunk_workers=0)), CHUNK_SCHEMA
    ).collect()
    errors = {row.parent_id: row.error for row in rows if row.error}
    assert set(errors) == {"bad"}
    assert "input 'text' is required" in errors["bad"]
    assert any(row.parent_id == "good" and row.chunk for row in rows)


def test_embedded_rows_carry_the_vectors_and_upload_to_the_index(spark: Any) -> None:
    from testing.openai_stub import OpenAIStub, vector_for
    from testing.search_stub import SearchStub
    from tests.search.test_push import DIMENSIONS, SEARCH_KEY, _definitions, _settings

    with (
        OpenAIStub(dimensions=DIMENSIONS, api_key="openai-key") as openai,
        SearchStub(_definitions()[1], api_key=SEARCH_KEY) as search,
    ):
        settings = _settings(openai)
        chunks = _frame(spark).mapInPandas(
            chunk_frames(embed=True, settings=settings), CHUNK_SCHEMA
        )
        rows = chunks.collect()
        assert all(row.error is None for row in rows)
        for row in rows[:5]:
            assert list(row.embedding) == pytest.approx(vector_for(row.chunk, DIMENSIONS), abs=1e-6)
        chunks.drop("error").foreachPartition(upload_rows(search.endpoint, "chunks", SEARCH_KEY))
        assert set(search.documents) == {row.chunk_id for row in rows}
