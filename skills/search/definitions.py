"""The Azure AI Search definitions (data source, index, skillset, indexer) as SDK models.

Everything the service needs is built here from one `SearchSetup`, so the deploy script,
the replay and the tests all read the same definitions. Names of index fields and skill
outputs are constants, because the cross-checks in `skills.search.checks` key on them.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING, Literal

from azure.search.documents.indexes.models import (
    AzureOpenAIVectorizer,
    AzureOpenAIVectorizerParameters,
    BlobIndexerDataToExtract,
    BlobIndexerParsingMode,
    DataSourceCredentials,
    HnswAlgorithmConfiguration,
    HnswParameters,
    IndexingParameters,
    IndexingParametersConfiguration,
    IndexingSchedule,
    IndexProjectionMode,
    InputFieldMappingEntry,
    NativeBlobSoftDeleteDeletionDetectionPolicy,
    OutputFieldMappingEntry,
    SearchField,
    SearchIndex,
    SearchIndexer,
    SearchIndexerDataContainer,
    SearchIndexerDataSourceConnection,
    SearchIndexerIndexProjection,
    SearchIndexerIndexProjectionSelector,
    SearchIndexerIndexProjectionsParameters,
    SearchIndexerSkillset,
    SemanticConfiguration,
    SemanticField,
    SemanticPrioritizedFields,
    SemanticSearch,
    VectorSearch,
    VectorSearchAlgorithmMetric,
    VectorSearchProfile,
    WebApiHttpHeaders,
    WebApiSkill,
)

from chunking import Limits, OptionError, SplitMode, Unit
from skills import chunk_schema
from skills.chunk_schema import INDEX_FIELDS, VECTOR, IndexField
from skills.parameters import DEPLOYED_PARAMETERS, deploy_lengths, read_rows
from skills.skill.settings import APP_SETTINGS

if TYPE_CHECKING:
    from collections.abc import Mapping

SkillAuthMode = Literal["functionKey", "entra"]
"""How the indexer authenticates to the Function: a function key header or an Entra token."""

FUNCTION_KEY_HEADER = "x-functions-key"
"""The Functions host reads a function key from this header (or from `?code=`)."""

INDEXED_EXTENSIONS = (".md", ".markdown", ".html", ".htm")
"""Blobs the indexer picks up; everything else in the container is skipped."""

SKILL_TIMEOUT = datetime.timedelta(seconds=230)
"""The maximum a Web API skill may wait (PT230S), also Azure's load-balancer idle limit.

The skill answers by SKILL_DEADLINE_SECONDS (200 s by default), inside this."""

SKILL_BATCH_SIZE = 4
"""Documents per skill request.

One request holds the documents' chunking *and* embedding, which is where the time goes.
A typical docs page gives 5-40 chunks, so 4 documents are at most a few embedding calls,
far inside the skill's 200 s deadline even with throttling retries; and if a request
fails or times out, only 4 documents fail and get retried on the next run."""

SKILL_DEGREE_OF_PARALLELISM = 4
"""Concurrent skill requests (service default 5, maximum 10).

4 requests x 4 documents x ~20 chunks x ~512 tokens is ~160k tokens in flight, about
one minute of the default embedding deployment's capacity (120k TPM). More parallelism
would only turn into 429s that the skill has to wait out inside its deadline; raise it
together with the deployment's capacity."""

INDEXER_BATCH_SIZE = 8
"""Documents per indexer batch; a multiple of SKILL_BATCH_SIZE, as the scale guidance
asks (the skill batch must not exceed the indexer batch)."""

# The names below are the contract between the skill output, the projection and the index.
SKILL_NAME = "structure-aware-chunking"
SKILL_OUTPUT_CHUNKS = "chunks"
"""The skill's output (`data.chunks`), an array of chunk objects."""
CHUNKS_TARGET = "chunks"
"""Where the output lands in the enrichment tree: /document/chunks."""
CHUNKS_CONTEXT = f"/document/{CHUNKS_TARGET}/*"
"""The projection's grain: one search document per chunk."""

KEY_FIELD = next(f.name for f in INDEX_FIELDS if f.key)
"""The index key: index projections fill it, one per chunk."""
PARENT_KEY_FIELD = chunk_schema.PARENT_KEY_FIELD
"""The parent document's key, which projections fill on every chunk."""
VECTOR_FIELD = chunk_schema.VECTOR_FIELD
SECTION_DEPTH = chunk_schema.SECTION_DEPTH
"""Heading levels the index keeps per chunk: the skill is sent `markdownHeaderDepth`
`h6`, so its `sections` has h1 to h6, one `header_<n>` field each."""
HNSW_NAME = "hnsw"
VECTOR_PROFILE_NAME = "hnsw-aoai"
VECTORIZER_NAME = "aoai"
SEMANTIC_CONFIGURATION = "chunks"
"""The index's semantic configuration (and its default): what the semantic ranker reads."""
SEMANTIC_TITLE_FIELD = "title"
SEMANTIC_CONTENT_FIELDS = ("chunk",)
"""The text the ranker reads first: the embedded text (title, heading path, content)."""
SEMANTIC_KEYWORD_FIELDS: tuple[str, ...] = ()
"""None: the heading path is already in `chunk`, and a keywords field must be searchable,
which `headings` is not (see FULL_TEXT_FIELDS)."""
FULL_TEXT_FIELDS = tuple(
    f.name for f in INDEX_FIELDS if f.searchable and not f.key and f.edm != VECTOR
)
"""The fields a keyword query reads (`skills.chunk_schema.INDEX_FIELDS`). `chunk` holds
the title and heading path in front of the content, so a searchable `headings`,
`header_<n>` or `file_name` would count the same words two or three times more, and BM25
would then rank the short chunks of the right page over the one holding the answer
(docs/guide/evaluation.md, "What goes in the keyword index")."""
OFFSET_FIELD = "offset"
"""Where the chunk starts in its document's source, in code points."""
LENGTH_FIELD = "length"
"""The chunk's length in code points (`content` has exactly this many)."""
CHUNK_FIELD_SOURCES: dict[str, str] = {
    f.name: f.source if f.source.startswith("/") else f"{CHUNKS_CONTEXT}/{f.source}"
    for f in INDEX_FIELDS
    if f.source is not None
}
"""Index field <- enrichment path, for every projected field (the key and parent id are
filled by the service and must not be mapped)."""
HEADER_FIELDS: dict[str, str] = {
    name: source for name, source in CHUNK_FIELD_SOURCES.items() if "/sections/" in source
}
"""Index field <- the chunk's Layout-style `sections/h<n>`: the heading at each level,
"" where there is none. Named as the portal wizard and Microsoft's Layout how-to name
the fields they fill from the Layout skill's `sections`, so queries and projections
written for a Layout index keep working. The skill is sent `markdownHeaderDepth` `h6`,
so its `sections` has h1 to h6, one `header_<n>` field each."""


@dataclass(frozen=True, slots=True)
class ChunkSettings:
    """The chunk settings sent to the skill as literal inputs (Text Split skill names)."""

    text_split_mode: SplitMode = SplitMode.PAGES
    """`textSplitMode`: `pages` packs sections up to the limit; `sentences` one per chunk."""
    unit: Unit = Unit.TOKENS
    """`unit`: what the lengths count."""
    maximum_page_length: int = deploy_lengths(Unit.TOKENS)[0]
    """`maximumPageLength`, for the whole embedded text (title and headings included)."""
    page_overlap_length: int = deploy_lengths(Unit.TOKENS)[1]
    """`pageOverlapLength`: tail of the previous chunk repeated in a continuation."""

    def __post_init__(self) -> None:
        # The chunking core's own validation: a bad setting fails here, at deploy time,
        # instead of failing every document at indexing time.
        Limits(
            unit=self.unit,
            maximum_page_length=self.maximum_page_length,
            page_overlap_length=self.page_overlap_length,
        )

    def literal_inputs(self) -> dict[str, str]:
        """Skill input name -> literal source (`='pages'`, `=512`): one for each parameter
        `skills.parameters` marks as deployed, in the table's order."""
        return {row.name: _literal(getattr(self, row.field_name)) for row in DEPLOYED_PARAMETERS}


def _literal(value: object) -> str:
    """A skillset's literal source for `value`: `='pages'` for a choice, `=512` for a number."""
    return f"='{value.value}'" if isinstance(value, Enum) else f"={value}"


@dataclass(frozen=True, slots=True)
class SkillAuth:
    """How the indexer calls the Function."""

    mode: SkillAuthMode
    function_key: str | None = None
    """The function key sent in `x-functions-key` (functionKey mode); never stored in git."""
    resource_id: str | None = None
    """`authResourceId`, e.g. `api://<app id>` (entra mode)."""

    def __post_init__(self) -> None:
        if self.mode == "functionKey" and not self.function_key:
            raise ValueError("functionKey auth needs the function key")
        if self.mode == "entra" and not self.resource_id:
            raise ValueError("entra auth needs authResourceId (api://<application id>)")


@dataclass(frozen=True, slots=True)
class SearchSetup:
    """Everything the search definitions depend on."""

    skill_uri: str
    """The skill endpoint, `https://<app>.azurewebsites.net/api/chunk`."""
    skill_auth: SkillAuth
    storage_resource_id: str
    """Resource id of the storage account; the search service reads it with its identity."""
    container: str
    """The blob container holding the source documents."""
    openai_endpoint: str
    """Azure OpenAI endpoint for the query-time vectorizer."""
    embedding_deployment: str
    embedding_model: str
    embedding_dimensions: int
    """Length of the index's vector field; must equal what the skill returns."""
    prefix: str = "chunks"
    """Names: `<prefix>` (index), `<prefix>-blob`, `<prefix>-skillset`, `<prefix>-indexer`."""
    chunk: ChunkSettings = field(default_factory=ChunkSettings)
    skill_batch_size: int = SKILL_BATCH_SIZE
    skill_parallelism: int = SKILL_DEGREE_OF_PARALLELISM
    indexer_batch_size: int = INDEXER_BATCH_SIZE
    url_source: str = "/document/metadata_storage_path"
    """Enrichment path of each document's URL (chunk URLs add `#anchor`); e.g. a custom
    blob metadata property `url` is `/document/url`."""
    title_source: str | None = None
    """Enrichment path of a title input, e.g. `/document/title` from blob metadata; without
    it the skill takes the title from front matter, <title>, the first heading or the name."""
    schedule_minutes: int | None = 60
    """How often the indexer looks for new, changed and deleted blobs; None: on demand."""
    folder: str | None = None
    """The blob virtual folder this data source reads (its container `query`); None: all."""
    partition: int | None = None
    """This setup's number among partitions (see `partition_setups`); None: not partitioned."""

    @property
    def index_name(self) -> str:
        return self.prefix

    @property
    def data_source_name(self) -> str:
        return f"{self.prefix}-blob{self._suffix}"

    @property
    def _suffix(self) -> str:
        return "" if self.partition is None else f"-{self.partition}"

    @property
    def skillset_name(self) -> str:
        return f"{self.prefix}-skillset"

    @property
    def indexer_name(self) -> str:
        return f"{self.prefix}-indexer{self._suffix}"


MAX_PARTITIONS = 200
"""More indexers than any search tier runs at once (S3 has 200 indexers in all)."""


def partition_folders(count: int, folders: str | None = None) -> list[str]:
    """The blob folders of `count` partitions: `folders` (comma-separated) or part-0, part-1...

    Raises ValueError for a count out of range, a folder list of another length, or folders
    that overlap (one inside another would index its documents twice).
    """
    if not 1 <= count <= MAX_PARTITIONS:
        raise ValueError(f"partitions must be 1 to {MAX_PARTITIONS} (got {count})")
    names = (
        [name.strip().strip("/") for name in folders.split(",")]
        if folders
        else [f"part-{number}" for number in range(count)]
    )
    if len(names) != count or not all(names):
        raise ValueError(
            f"{count} partitions need {count} non-empty folder names (got {folders!r})"
        )
    for number, first in enumerate(names):
        for second in names[number + 1 :]:
            if first == second or second.startswith(f"{first}/") or first.startswith(f"{second}/"):
                raise ValueError(
                    f"partition folders {first!r} and {second!r} overlap: documents in both "
                    "would be indexed twice"
                )
    return names


def partition_setups(setup: SearchSetup, folders: list[str]) -> list[SearchSetup]:
    """One setup per blob folder: its own data source and indexer, the same index and
    skillset. One folder keeps today's names and reads the whole container."""
    if len(folders) <= 1:
        return [setup]
    return [
        replace(setup, folder=folder, partition=number) for number, folder in enumerate(folders)
    ]


def build_data_source(setup: SearchSetup) -> SearchIndexerDataSourceConnection:
    """Blob data source read with the search service's managed identity (no keys)."""
    return SearchIndexerDataSourceConnection(
        name=setup.data_source_name,
        type="azureblob",
        description="Markdown and HTML documents for the structure-aware chunking skill",
        # A ResourceId connection string makes the service use its system identity.
        credentials=DataSourceCredentials(
            connection_string=f"ResourceId={setup.storage_resource_id};"
        ),
        # A partition reads one virtual folder; keys stay unique across partitions
        # because the document key is the blob's whole path, folder included.
        container=SearchIndexerDataContainer(name=setup.container, query=setup.folder),
        # Blob change detection is built in (LastModified); deletions are seen through
        # native blob soft delete, which the Bicep turns on for the account.
        data_deletion_detection_policy=NativeBlobSoftDeleteDeletionDetectionPolicy(),
    )


def build_index(setup: SearchSetup) -> SearchIndex:
    """The chunk index: one document per chunk, with a vector field and its vectorizer."""
    fields = [_search_field(f, setup) for f in INDEX_FIELDS]
    vector_search = VectorSearch(
        algorithms=[
            HnswAlgorithmConfiguration(
                name=HNSW_NAME,
                parameters=HnswParameters(
                    m=4,
                    ef_construction=400,
                    ef_search=500,
                    metric=VectorSearchAlgorithmMetric.COSINE,
                ),
            )
        ],
        profiles=[
            VectorSearchProfile(
                name=VECTOR_PROFILE_NAME,
                algorithm_configuration_name=HNSW_NAME,
                vectorizer_name=VECTORIZER_NAME,
            )
        ],
        # Queries are embedded by the service with its own identity (Cognitive Services
        # OpenAI User on the account, granted in the Bicep), so no key is stored here.
        vectorizers=[
            AzureOpenAIVectorizer(
                vectorizer_name=VECTORIZER_NAME,
                parameters=AzureOpenAIVectorizerParameters(
                    resource_url=setup.openai_endpoint,
                    deployment_name=setup.embedding_deployment,
                    model_name=setup.embedding_model,
                ),
            )
        ],
    )
    # The semantic ranker reranks the top 50 of a keyword or hybrid query; it reads the
    # fields named here (title, then content, then keywords), so queries can ask for
    # queryType=semantic without naming a configuration.
    semantic = SemanticSearch(
        default_configuration_name=SEMANTIC_CONFIGURATION,
        configurations=[
            SemanticConfiguration(
                name=SEMANTIC_CONFIGURATION,
                prioritized_fields=SemanticPrioritizedFields(
                    title_field=SemanticField(field_name=SEMANTIC_TITLE_FIELD),
                    content_fields=[SemanticField(field_name=n) for n in SEMANTIC_CONTENT_FIELDS],
                    keywords_fields=[SemanticField(field_name=n) for n in SEMANTIC_KEYWORD_FIELDS],
                ),
            )
        ],
    )
    return SearchIndex(
        name=setup.index_name, fields=fields, vector_search=vector_search, semantic_search=semantic
    )


def _search_field(field: IndexField, setup: SearchSetup) -> SearchField:
    """The SDK model of one field of `skills.chunk_schema.INDEX_FIELDS`; the vector field
    gets the setup's dimensions and profile, and is not stored (only its index is)."""
    vector = (
        {
            "stored": False,
            "vector_search_dimensions": setup.embedding_dimensions,
            "vector_search_profile_name": VECTOR_PROFILE_NAME,
        }
        if field.name == VECTOR_FIELD
        else {}
    )
    flags = {
        name: value
        for name, value in (
            ("key", field.key or None),
            ("searchable", field.searchable),
            ("filterable", field.filterable),
            ("sortable", field.sortable),
            ("facetable", field.facetable),
            ("retrievable", field.retrievable),
            ("analyzer_name", field.analyzer),
        )
        if value is not None
    }
    return SearchField(name=field.name, type=field.edm, **flags, **vector)


def build_skill(setup: SearchSetup) -> WebApiSkill:
    """The custom Web API skill: one call per SKILL_BATCH_SIZE documents, chunks out."""
    inputs = [
        InputFieldMappingEntry(name="text", source="/document/content"),
        InputFieldMappingEntry(name="fileName", source="/document/metadata_storage_name"),
        InputFieldMappingEntry(name="contentType", source="/document/metadata_content_type"),
        InputFieldMappingEntry(name="url", source=setup.url_source),
    ]
    if setup.title_source:
        inputs.append(InputFieldMappingEntry(name="title", source=setup.title_source))
    inputs += [
        InputFieldMappingEntry(name=name, source=source)
        for name, source in setup.chunk.literal_inputs().items()
    ]
    # Pinned, not left to the app setting: the index has a field for each level.
    inputs.append(InputFieldMappingEntry(name="markdownHeaderDepth", source=f"='h{SECTION_DEPTH}'"))
    auth = setup.skill_auth
    return WebApiSkill(
        name=SKILL_NAME,
        description="Chunks markdown and HTML by structure and embeds the chunks",
        context="/document",
        uri=setup.skill_uri,
        http_method="POST",
        timeout=SKILL_TIMEOUT,
        batch_size=setup.skill_batch_size,
        degree_of_parallelism=setup.skill_parallelism,
        http_headers=(
            WebApiHttpHeaders({FUNCTION_KEY_HEADER: auth.function_key})
            if auth.mode == "functionKey"
            else None
        ),
        # With authResourceId the service sends a token for that app, got with its system
        # identity; the Function's Easy Auth (Bicep) accepts only that identity.
        auth_resource_id=auth.resource_id if auth.mode == "entra" else None,
        inputs=inputs,
        outputs=[OutputFieldMappingEntry(name=SKILL_OUTPUT_CHUNKS, target_name=CHUNKS_TARGET)],
    )


def build_skillset(setup: SearchSetup) -> SearchIndexerSkillset:
    """The skillset: the Web API skill and one index projection from /document/chunks/*."""
    return SearchIndexerSkillset(
        name=setup.skillset_name,
        description="Structure-aware chunking (and embedding) with a custom Web API skill",
        skills=[build_skill(setup)],
        index_projection=SearchIndexerIndexProjection(
            selectors=[
                SearchIndexerIndexProjectionSelector(
                    target_index_name=setup.index_name,
                    parent_key_field_name=PARENT_KEY_FIELD,
                    source_context=CHUNKS_CONTEXT,
                    mappings=[
                        InputFieldMappingEntry(name=name, source=source)
                        for name, source in CHUNK_FIELD_SOURCES.items()
                    ],
                )
            ],
            # Only chunks go into the index, no parent document with empty chunk fields.
            parameters=SearchIndexerIndexProjectionsParameters(
                projection_mode=IndexProjectionMode.SKIP_INDEXING_PARENT_DOCUMENTS
            ),
        ),
    )


def build_indexer(setup: SearchSetup) -> SearchIndexer:
    """The indexer: blobs as raw text through the skillset into the chunk index."""
    return SearchIndexer(
        name=setup.indexer_name,
        description="Blob documents -> structure-aware chunks",
        data_source_name=setup.data_source_name,
        target_index_name=setup.index_name,
        skillset_name=setup.skillset_name,
        schedule=(
            IndexingSchedule(interval=datetime.timedelta(minutes=setup.schedule_minutes))
            if setup.schedule_minutes
            else None
        ),
        parameters=IndexingParameters(
            batch_size=setup.indexer_batch_size,
            configuration=IndexingParametersConfiguration(
                # `text` hands the skill the file as it is. `default` would run the HTML
                # extractor and drop every tag (headings become plain lines), and
                # `markdown` splits the file into sections itself; the skill needs the
                # markup to find the structure.
                parsing_mode=BlobIndexerParsingMode.TEXT,
                indexed_file_name_extensions=",".join(INDEXED_EXTENSIONS),
                data_to_extract=BlobIndexerDataToExtract.CONTENT_AND_METADATA,
            ),
        ),
    )


@dataclass(frozen=True, slots=True)
class Definitions:
    """The four definitions, in the order they must be created."""

    data_source: SearchIndexerDataSourceConnection
    index: SearchIndex
    skillset: SearchIndexerSkillset
    indexer: SearchIndexer


def build_definitions(setup: SearchSetup) -> Definitions:
    """All four definitions for `setup`."""
    return Definitions(
        data_source=build_data_source(setup),
        index=build_index(setup),
        skillset=build_skillset(setup),
        indexer=build_indexer(setup),
    )


def chunk_settings(
    *,
    text_split_mode: str | None = None,
    unit: str | None = None,
    maximum_page_length: int | None = None,
    page_overlap_length: int | None = None,
) -> ChunkSettings:
    """ChunkSettings from strings and numbers (command line, environment), defaults elsewhere.

    Raises ValueError with the chunking core's message when the combination is invalid.
    """
    defaults = ChunkSettings()
    chosen_unit = defaults.unit if unit is None else Unit(unit)
    try:
        return ChunkSettings(
            text_split_mode=(
                defaults.text_split_mode if text_split_mode is None else SplitMode(text_split_mode)
            ),
            unit=chosen_unit,
            maximum_page_length=(
                deploy_lengths(chosen_unit)[0]
                if maximum_page_length is None
                else maximum_page_length
            ),
            page_overlap_length=(
                deploy_lengths(chosen_unit)[1]
                if page_overlap_length is None
                else page_overlap_length
            ),
        )
    except OptionError as error:
        raise ValueError(str(error)) from error


ENV_CHUNK_SETTINGS = {
    row.field_name: row.setting for row in DEPLOYED_PARAMETERS if row.setting is not None
}
"""The chunk settings the skillset sends as literal inputs (`skills.parameters`' deployed
rows), by the Function's app-setting names (they mean the same thing)."""


def chunk_settings_from_environment(environ: Mapping[str, str]) -> ChunkSettings:
    """The skillset's chunk settings from CHUNK_* (the same names as the Function's),
    each read as the Function reads its app settings (`read_rows`, `APP_SETTINGS`).

    Raises ValueError naming every bad setting."""
    given = {row.name: environ.get(str(row.setting), "").strip() for row in DEPLOYED_PARAMETERS}
    values, problems = read_rows(
        DEPLOYED_PARAMETERS, {name: value for name, value in given.items() if value}, APP_SETTINGS
    )
    if problems:
        raise ValueError(
            f"invalid chunk settings: {'; '.join(problem.message for problem in problems)}"
        )
    fields = {row.field_name: values.get(row.name) for row in DEPLOYED_PARAMETERS}
    try:
        return chunk_settings(**fields)  # type: ignore[arg-type]
    except ValueError as error:
        raise ValueError(f"invalid chunk settings: {error}") from None
