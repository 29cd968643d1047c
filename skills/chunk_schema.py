"""The chunk schema, declared once and versioned: what each chunk the skill answers holds,
and the index document each becomes.

Derived from it: the fields of the typed `skills.skill.records.ChunkRecord` and the members
`skills.skill.render.chunk_json` writes (tests hold them equal),
`skills.search.checks.SKILL_CHUNK_FIELDS`, the index fields and the projection's
mappings of `skills.search.definitions`, and `skills.search.spark.CHUNK_SCHEMA`. Bump
`SCHEMA_VERSION` when a member or field is removed, renamed or changes type or meaning
(tests/search/test_chunk_schema.py fails until the version and its fingerprint move together).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

SCHEMA_VERSION = 2
"""The version of `CHUNK_MEMBERS` and `INDEX_FIELDS` together (2: the `readerText` member
and its `reader_text` field)."""

STRING = "Edm.String"
STRINGS = "Collection(Edm.String)"
INT32 = "Edm.Int32"
VECTOR = "Collection(Edm.Single)"
OBJECT = "Edm.ComplexType"

SPARK_TYPES = {STRING: "string", STRINGS: "array<string>", INT32: "int", VECTOR: "array<float>"}
"""The Spark SQL type of each index field type a chunk row holds."""


@dataclass(frozen=True, slots=True)
class ChunkMember:
    """A member of each object in the skill's `chunks` output."""

    name: str
    edm: str
    """The Azure AI Search type it fits (`Edm.ComplexType` for an object)."""
    description: str

    @property
    def attribute(self) -> str:
        """Its name as a field of the typed chunk record: snake case (`pageNumberFrom` ->
        `page_number_from`)."""
        return "".join(f"_{c.lower()}" if c.isupper() else c for c in self.name)


@dataclass(frozen=True, slots=True)
class IndexField:
    """A field of the chunk index: one search document per chunk."""

    name: str
    edm: str
    source: str | None
    """Where the projection takes it from: a chunk member path (`text`, `offset/codePoint`),
    or an enrichment path of the document (`/document/...`); None: the service fills it
    (the key and the parent key)."""
    searchable: bool | None = None
    """None leaves the service's default (searchable for strings)."""
    filterable: bool | None = None
    sortable: bool | None = None
    facetable: bool | None = None
    retrievable: bool | None = None
    key: bool = False
    analyzer: str | None = None

    @property
    def spark_type(self) -> str:
        """Its type in a Spark row."""
        return SPARK_TYPES[self.edm]


CHUNK_MEMBERS: tuple[ChunkMember, ...] = (
    ChunkMember("content", STRING, "the chunk's exact span of the source text"),
    ChunkMember("text", STRING, "what is embedded: title and heading path, then the content"),
    ChunkMember(
        "readerText",
        STRING,
        "what to hand a reader or a model: title and heading path, a continuation's table "
        "header or opening fence, the content, the closing fence of code cut short",
    ),
    ChunkMember("title", STRING, "the document's title"),
    ChunkMember("headings", STRINGS, "the heading path at the chunk's start"),
    ChunkMember("sections", OBJECT, "the Layout skill's `{h1: ..., h6: ...}` heading levels"),
    ChunkMember("ordinal", INT32, "0-based position of the chunk in its document"),
    ChunkMember("offset", OBJECT, "where `content` starts: `{utf8, utf16, codePoint}`"),
    ChunkMember("length", OBJECT, "the length of `content`: `{utf8, utf16, codePoint}`"),
    ChunkMember("anchor", STRING, "the nearest heading's anchor (null without one)"),
    ChunkMember("url", STRING, "the document URL with `#anchor` (null without `url`)"),
    ChunkMember("size", INT32, "the size of `text` in the record's unit"),
    ChunkMember("id", STRING, "a hash of the source, the span and the options"),
    ChunkMember("pageNumberFrom", INT32, "first page of the chunk (null without page markers)"),
    ChunkMember("pageNumberTo", INT32, "last page of the chunk (null without page markers)"),
    ChunkMember("embedding", VECTOR, "the embedded `text` (only with an embedding provider)"),
)
"""The members of each chunk, in the order the skill writes them."""

MEASURE_UNITS = ("utf8", "utf16", "codePoint")
"""Members of a chunk's `offset` and `length` (each an Edm.Int32)."""
SECTION_DEPTH = 6
"""Heading levels the index keeps per chunk (`header_1` .. `header_6`)."""

KEY_FIELD = "chunk_id"
PARENT_KEY_FIELD = "parent_id"
VECTOR_FIELD = "embedding"

INDEX_FIELDS: tuple[IndexField, ...] = (
    # Index projections require a keyword-analyzed string key; the service fills it.
    IndexField(
        KEY_FIELD,
        STRING,
        None,
        searchable=True,
        filterable=True,
        sortable=True,
        key=True,
        analyzer="keyword",
    ),
    IndexField(PARENT_KEY_FIELD, STRING, None, filterable=True),
    # The searchable `chunk` is the chunk's `text`: the title and heading path, then the
    # content. It is exactly what gets embedded, so keyword and vector matching see the
    # same words, and a query naming a section finds its chunks even when the words of
    # the heading only occur in it. The bare span is kept in `content` for display.
    IndexField("chunk", STRING, "text", searchable=True),
    IndexField("content", STRING, "content", searchable=False),
    # What a RAG app hands its model: the chunk self-contained (a table continuation with
    # its header rows, code with its fences). Retrievable only: keyword and semantic
    # ranking stay on `chunk`, the text the evaluation measured.
    IndexField("reader_text", STRING, "readerText", searchable=False),
    IndexField("title", STRING, "title", searchable=True, filterable=True, facetable=True),
    IndexField("headings", STRINGS, "headings", searchable=False, filterable=True, facetable=True),
    IndexField("url", STRING, "url", filterable=True),
    IndexField("anchor", STRING, "anchor", filterable=True),
    IndexField("ordinal", INT32, "ordinal", filterable=True, sortable=True),
    IndexField("chunk_hash", STRING, "id", filterable=True),
    IndexField(
        "file_name",
        STRING,
        "/document/metadata_storage_name",
        searchable=False,
        filterable=True,
        facetable=True,
    ),
    IndexField(VECTOR_FIELD, VECTOR, "embedding", searchable=True, retrievable=False),
    # The span in code points, so query-time merging (skills.search.retrieval) can join the
    # overlapping neighbours among the top k without the source document.
    IndexField("offset", INT32, "offset/codePoint", filterable=True, sortable=True),
    IndexField("length", INT32, "length/codePoint"),
    # Pages of a chunk of Layout markdown (null without page markers): citations.
    IndexField("pageNumberFrom", INT32, "pageNumberFrom", filterable=True, sortable=True),
    IndexField("pageNumberTo", INT32, "pageNumberTo", filterable=True, sortable=True),
    # Retrievable only: a heading has no length limit, so a filterable string over
    # 32,766 bytes would fail the document (`headings` is the field to filter on), and
    # the heading's words are already searchable in `chunk`.
    *(
        IndexField(f"header_{level}", STRING, f"sections/h{level}", searchable=False)
        for level in range(1, SECTION_DEPTH + 1)
    ),
)
"""The chunk index's fields, in the index's order."""


def index_field_for(source: str) -> IndexField:
    """The index field chunk member `source` fills (`offset/codePoint` -> `offset`);
    KeyError when no field reads it."""
    for field in INDEX_FIELDS:
        if field.source == source:
            return field
    raise KeyError(f"no index field reads chunk member {source!r}")


def chunk_member_types() -> dict[str, str]:
    """Chunk member -> the index type it fits."""
    return {member.name: member.edm for member in CHUNK_MEMBERS}


def fingerprint() -> str:
    """A short hash of the whole schema: it changes with any member or field."""
    text = repr((CHUNK_MEMBERS, INDEX_FIELDS))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
