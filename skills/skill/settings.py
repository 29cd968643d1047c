"""The skill's one frozen settings object, read from app settings (environment) at first use."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING, Any

from chunking import ChunkOptions, Limits, OptionError, SectionPacking, SplitMode, Unit
from chunking.options import (
    DEFAULT_ENCODER,
    DEFAULT_LANGUAGE,
    ParameterNames,
    clipped_repr,
    default_lengths,
)
from chunking.plan.strategies import PARAMETER_TYPES
from skills.embedding.settings import (
    EMBEDDING_ENV_NAMES,
    ENV_EMBEDDING_PROVIDER,
    LOCAL_MODELS,
    PAIR_ENV_NAMES,
    EmbeddingSettings,
    PairScorerSettings,
    describe_embedding,
    describe_pairs,
    load_embedding_settings,
    load_pair_settings,
    local_provider_installed,
)
from skills.parameters import (
    MAX_CHUNK_WORKERS,
    MAX_DEADLINE_SECONDS,
    SETTING_PARAMETERS,
    Parameter,
    read_rows,
    setting_name,
    strategy_parameters,
)
from skills.values import Problem, Source

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from chunking import FormatName
    from skills.embedding.settings import EmbeddingProvider

ENV_TEXT_SPLIT_MODE = setting_name("textSplitMode")
ENV_UNIT = setting_name("unit")
ENV_MAXIMUM_PAGE_LENGTH = setting_name("maximumPageLength")
ENV_PAGE_OVERLAP_LENGTH = setting_name("pageOverlapLength")
ENV_MAXIMUM_PAGES_TO_TAKE = setting_name("maximumPagesToTake")
ENV_ENCODER_MODEL_NAME = setting_name("encoderModelName")
ENV_DEFAULT_LANGUAGE_CODE = setting_name("defaultLanguageCode")
ENV_FORMAT = setting_name("format")
ENV_TITLE_PREFIX = setting_name("titlePrefix")
ENV_SECTIONS = setting_name("sections")
ENV_STRIP_MARKUP = setting_name("stripMarkup")
ENV_STRATEGY = setting_name("strategy")
ENV_WORDS_PER_CHUNK = setting_name("wordsPerChunk")
ENV_WORD_OVERLAP = setting_name("wordOverlap")
ENV_WORD_SCOPE = setting_name("wordScope")
ENV_MAX_REQUEST_BYTES = setting_name("maxRequestBytes")
ENV_MAX_RESPONSE_BYTES = setting_name("maxResponseBytes")
ENV_MAX_CHUNKS_PER_RECORD = setting_name("maxChunksPerRecord")
ENV_MEMORY_BUDGET_BYTES = setting_name("memoryBudgetBytes")
ENV_DEADLINE_SECONDS = setting_name("deadlineSeconds")
ENV_TRANSFER_DEADLINE_SECONDS = setting_name("transferDeadlineSeconds")
ENV_CHUNK_WORKERS = setting_name("chunkWorkers")
ENV_MARKDOWN_HEADER_DEPTH = setting_name("markdownHeaderDepth")

APP_SETTINGS = Source(ParameterNames("", setting_name), clipped_repr, {})
"""App settings in messages: `CHUNK_UNIT must be one of ... (got 'chars')`."""

ALL_ENV_NAMES = (
    *(row.setting for row in SETTING_PARAMETERS if row.setting),
    *EMBEDDING_ENV_NAMES,
    *PAIR_ENV_NAMES,
)
"""Every app setting the skill reads (skills.parameters has one row for each but the
embedding ones); the three API keys are never shown or logged."""

DEFAULT_LENGTHS: Mapping[Unit, tuple[int, int]] = {unit: default_lengths(unit) for unit in Unit}
"""(maximumPageLength, pageOverlapLength) when neither a record nor an app setting gives them.

Tokens: the chunking core's defaults (512/64, the usual embedding-model advice).
Characters: the Split skill's own defaults (5,000, no overlap), so the skill drops in for it.
The `local` provider has its own, smaller ones (LocalModel.tokens_default): 512 tokens
are more than its model reads.
"""

DEFAULT_MAX_REQUEST_BYTES = 64 * 1024 * 1024
"""64 MiB: the largest document an indexer sends (16 million characters, at most ~48 MB of
UTF-8) still fits in one request, and a body this size is ~1/3 of what the default
instance can hold for it (docs/design/hardening.md, "Bounded answers"). Was 100 MiB, the
Functions host's own limit: 97 MB of ~100 KB records peaked at 2.5 GB."""
DEFAULT_MAX_RESPONSE_BYTES = 96 * 1024 * 1024
"""96 MiB of answer per request; records past it are refused one by one (answer_caps).
Was 64 MiB until each chunk answered its reader text too (a fourth copy of the chunk
beside `content`, `text` and `textItems`): the largest document an S3 indexer sends (16
million characters) then answered 68.4 MB at the default 512 tokens without vectors and
was refused (tests/hardening/test_hardening_inputs.py).
A request holds ~6-8x its answer's bytes at its peak with its body (bench.answer_memory:
640 records of 100 KB, 62 MB, answered within it at 511 MB), so two such requests and
the workers fit the default instance's 2,048 MB (infra/main.bicep instanceMemoryMB).
Azure asks for answers under 150 MB anyway."""
DEFAULT_MAX_CHUNKS_PER_RECORD = 20_000
"""A record with more chunks is refused. The largest document an indexer sends (16 million
characters) makes ~8,000 chunks at the default 512 tokens and 16,000 when its sections are
~1,000 characters each (sections apart); a window per word (`words`) makes one per word,
and planning stops past this many."""
DEFAULT_MEMORY_BUDGET_BYTES = 640 * 1024 * 1024
"""640 MiB: what every request in flight may reserve together (skills/skill/memory_budget.py).
The default instance's 2,048 MB (infra/main.bicep instanceMemoryMB) less the app (~150
MB), the forkserver (~100 MB) and the chunk workers (two at their 256 MB high-water
mark, two spares of ~100 MB) leaves ~1,080 MB; 640 MiB keeps ~400 MB of that as room,
and admits the largest request the caps allow on its own, with the whole budget (64 MiB
of body decoded to at most 256 MiB, and 5x a 96 MiB answer: 800 MiB at worst,
docs/design/hardening.md)."""

DEFAULT_DEADLINE_SECONDS = 200.0
"""Answer well inside the 230 s ceiling of both the skill `timeout` and Azure's load balancer."""
DEFAULT_TRANSFER_DEADLINE_SECONDS = 30.0
"""A body must arrive, and an answer be read, within this (never longer than the deadline):
the memory a request holds while its bytes move is held for the client, so a client that
sends 1 byte a second, or never reads, must not hold it for the whole deadline (issue 35).
30 s passes a 64 MiB body at 2.2 MB/s; the indexer sends from Azure's own network."""


def default_chunk_workers() -> int:
    """One worker process per CPU: chunking is CPU-bound, and embedding waits elsewhere."""
    return max(os.cpu_count() or 1, 1)


class SettingsError(Exception):
    """App settings that cannot be used; the message names every bad setting."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Effective app settings; record inputs override the chunking ones per record."""

    text_split_mode: SplitMode = SplitMode.PAGES
    """Default `textSplitMode`."""
    unit: Unit = Unit.TOKENS
    """Default `unit`."""
    maximum_page_length: int | None = None
    """Default `maximumPageLength`; None means the default for the unit (DEFAULT_LENGTHS)."""
    page_overlap_length: int | None = None
    """Default `pageOverlapLength`; None means the default for the unit (DEFAULT_LENGTHS)."""
    maximum_pages_to_take: int = 0
    """Default `maximumPagesToTake`; 0 takes all."""
    encoder_model_name: str = DEFAULT_ENCODER
    """Default `encoderModelName` (tiktoken encoding for the token unit)."""
    default_language_code: str = DEFAULT_LANGUAGE
    """Language when a record gives neither `language` nor `defaultLanguageCode`."""
    format: FormatName = "auto"
    """Default `format`; `auto` detects it from `contentType`, `fileName` and the text."""
    title_prefix: bool = True
    """Put the title and heading path in front of each chunk's embedded `text`."""
    section_packing: SectionPacking = SectionPacking.APART
    """Whether a heading ends a chunk (`apart`) or small sections share one (`packed`)."""
    strip_markup: bool = True
    """Embed markdown without link targets, HTML tags, comments and directive lines."""
    strategy: str = "structure"
    """Default `strategy`: `structure` (by sections, blocks, sentences), `words` (word
    windows), `semantic` (where the meaning shifts) or `binary` (least-similar split)."""
    strategy_parameters: Mapping[str, Any] = field(
        default_factory=lambda: {name: kind() for name, kind in PARAMETER_TYPES.items()},
        hash=False,
    )
    """Each strategy's own parameters a record starts from, by strategy name (`words`:
    `wordsPerChunk`, `wordOverlap`, `wordScope`); one missing has its declared defaults."""
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    """Bodies larger than this get HTTP 413 before they are parsed."""
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    """An answer takes at most this many bytes; records past it get a per-record error."""
    max_chunks_per_record: int = DEFAULT_MAX_CHUNKS_PER_RECORD
    """A record that makes more chunks than this gets a per-record error."""
    memory_budget_bytes: int = DEFAULT_MEMORY_BUDGET_BYTES
    """What the requests in flight may reserve together; a request waits for room."""
    deadline_seconds: float = DEFAULT_DEADLINE_SECONDS
    """The response goes out by then; unfinished records get a per-record error."""
    transfer_deadline_seconds: float = DEFAULT_TRANSFER_DEADLINE_SECONDS
    """A body must arrive, and an answer be read, within this many seconds."""
    chunk_workers: int = field(default_factory=default_chunk_workers)
    """Worker processes that chunk records (a record that overruns the deadline has its
    worker replaced); 0 chunks in the app's threads, where overrunning work cannot be stopped."""
    markdown_header_depth: int = 6
    """Default `markdownHeaderDepth` (1-6, Layout's default h6): the keys of each chunk's
    `sections`; it changes no cut."""
    embedding: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    """Embedding provider, model, batching and retries."""
    pairs: PairScorerSettings = field(default_factory=PairScorerSettings)
    """The cross-encoder folder or rerank endpoint of `binaryScorer` crossEncoder / rerank."""
    app_settings_used: frozenset[str] = field(default=frozenset(), compare=False)
    """Names of the app settings that were set (the rest are defaults), for /api/health."""

    @property
    def embedding_provider(self) -> EmbeddingProvider:
        """Where chunk embeddings come from; `none` leaves `embedding` out of the chunks."""
        return self.embedding.provider

    def parameters_of(self, strategy: str) -> Any:
        """`strategy`'s own parameters a record starts from; None: it has none."""
        found = self.strategy_parameters.get(strategy)
        if found is None and strategy in PARAMETER_TYPES:
            return PARAMETER_TYPES[strategy]()
        return found

    def length_defaults(self, unit: Unit) -> tuple[int, int]:
        """(maximumPageLength, pageOverlapLength) for `unit` when a record gives neither:
        the app settings', else the local model's (chunks it reads whole), else DEFAULT_LENGTHS."""
        length, overlap = DEFAULT_LENGTHS[unit]
        local = (
            LOCAL_MODELS.get(self.embedding.model) if self.embedding.provider == "local" else None
        )
        if local is not None:
            length, overlap = (
                local.tokens_default if unit is Unit.TOKENS else local.characters_default
            )
        return (
            length if self.maximum_page_length is None else self.maximum_page_length,
            overlap if self.page_overlap_length is None else self.page_overlap_length,
        )

    def length_defaults_reason(self, unit: Unit) -> str:
        """Why `length_defaults(unit)` are what they are, for a summary or a help line: the
        app settings where given, else the local model's window where it embeds, else the
        Split skill's defaults (the one rule every surface follows)."""
        given = [
            name
            for name, value in (
                (ENV_MAXIMUM_PAGE_LENGTH, self.maximum_page_length),
                (ENV_PAGE_OVERLAP_LENGTH, self.page_overlap_length),
            )
            if value is not None
        ]
        local = (
            LOCAL_MODELS.get(self.embedding.model) if self.embedding.provider == "local" else None
        )
        if local is not None:
            why = (
                f"the local model {self.embedding.model} reads {local.max_positions} "
                "word pieces, so chunks it reads whole"
            )
        else:
            why = "the Split skill's"
        if len(given) == 2:
            return f"from {' and '.join(given)}"
        return f"{why}{', ' + given[0] + ' set' if given else ''}"


def load_settings(
    environ: Mapping[str, str],
    local_installed: Callable[[str], bool] = local_provider_installed,
) -> Settings:
    """Read the settings from app settings; raise SettingsError naming every bad one.

    An empty value counts as unset (portals and templates often leave settings blank).
    `local_installed` says whether the local embedding model can be used (the default
    provider is `local` then, when no Azure OpenAI endpoint is set).
    """
    given = {name: environ[name].strip() for name in ALL_ENV_NAMES if environ.get(name, "").strip()}
    problems: list[str] = []
    defaults = Settings()
    embedding = load_embedding_settings(given, problems, local_installed)
    pairs = load_pair_settings(given, problems)
    by_name = {row.name: given.get(str(row.setting)) for row in SETTING_PARAMETERS}
    values, refused = read_rows(SETTING_PARAMETERS, by_name, APP_SETTINGS)
    problems += (problem.message for problem in refused)
    flat: dict[str, Any] = {
        str(row.attribute): values.get(row.name, getattr(defaults, str(row.attribute)))
        for row in SETTING_PARAMETERS
        if row.attribute is not None and "." not in row.attribute
    }
    strategies: dict[str, Any] = {}
    for strategy in PARAMETER_TYPES:
        own = defaults.parameters_of(strategy)
        read = strategy_parameters(strategy, own, values, APP_SETTINGS)
        if isinstance(read, Problem):
            problems.append(f"{read.message} (from app settings {read.name})")
            read = own
        strategies[strategy] = read
    settings = replace(
        defaults,
        **flat,
        strategy_parameters=strategies,
        embedding=embedding,
        pairs=pairs,
        app_settings_used=frozenset(given),
    )
    if not problems:
        problems += _default_problems(settings)
    if problems:
        raise SettingsError("invalid app settings: " + "; ".join(problems))
    return settings


def _default_problems(settings: Settings) -> list[str]:
    """What makes the defaults every record starts from fail on their own, by the options'
    own rules: a record can still override them, but a skill whose defaults fail every
    record is misconfigured."""
    problems = []
    length_default, overlap_default = settings.length_defaults(settings.unit)
    try:
        Limits(
            unit=settings.unit,
            maximum_page_length=length_default,
            page_overlap_length=overlap_default,
            maximum_pages_to_take=settings.maximum_pages_to_take,
        )
    except OptionError as error:
        problems.append(
            f"{error} (from app settings {ENV_UNIT}, {ENV_MAXIMUM_PAGE_LENGTH}, "
            f"{ENV_PAGE_OVERLAP_LENGTH}, {ENV_MAXIMUM_PAGES_TO_TAKE})"
        )
    try:
        ChunkOptions(mode=settings.text_split_mode, strategy=settings.strategy)
    except OptionError as error:
        problems.append(f"{error} (from app settings {ENV_TEXT_SPLIT_MODE}, {ENV_STRATEGY})")
    return problems


@functools.cache
def settings_from_environment() -> Settings | SettingsError:
    """The process's settings, read from os.environ once at first use.

    A SettingsError is returned, not raised, so /api/health and every record can report it.
    """
    try:
        return load_settings(os.environ)
    except SettingsError as error:
        return error


def settings_or_defaults(settings: Settings | SettingsError) -> Settings:
    """`settings`, or while the app settings are broken the defaults: the limits a request
    is still read and answered within (its body size, deadline and memory, counted as
    for worker processes). No record is chunked then; `answer_chunk_request` answers
    each with the error."""
    return Settings() if isinstance(settings, SettingsError) else settings


def _shown(settings: Settings, row: Parameter) -> object:
    """The value of `row`'s attribute as /api/health shows it: enums by name; a
    strategy's row (`words.size`) from that strategy's parameters."""
    value: object = settings
    if row.strategy is not None:
        value = settings.parameters_of(row.strategy)
    for part in (row.field_name,) if row.strategy is not None else str(row.attribute).split("."):
        value = getattr(value, part)
    return value.value if isinstance(value, Enum) else value


def describe_settings(settings: Settings) -> dict[str, object]:
    """The effective configuration for /api/health: value, app setting and its source."""
    length, overlap = settings.length_defaults(settings.unit)
    effective: dict[str, object] = {
        "maximumPageLength": length,
        "pageOverlapLength": overlap,
        "markdownHeaderDepth": f"h{settings.markdown_header_depth}",
    }
    entries: list[tuple[str, str, object]] = [
        *(
            (row.name, row.setting, effective.get(row.name, _shown(settings, row)))
            for row in SETTING_PARAMETERS
            if row.setting is not None and row.attribute is not None
        ),
        *describe_embedding(settings.embedding),
        *describe_pairs(settings.pairs),
    ]
    return {
        name: {
            "value": value,
            "appSetting": env_name,
            "source": "app setting" if env_name in settings.app_settings_used else "default",
        }
        for name, env_name, value in entries
    }


__all__ = [
    "ALL_ENV_NAMES",
    "ENV_EMBEDDING_PROVIDER",
    "MAX_CHUNK_WORKERS",
    "MAX_DEADLINE_SECONDS",
    "Settings",
    "SettingsError",
    "describe_settings",
    "load_settings",
    "settings_from_environment",
]
