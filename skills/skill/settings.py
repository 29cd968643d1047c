"""The skill's one frozen settings object, read from app settings (environment) at first use."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from chunking import Limits, OptionError, Sections, SplitMode, Unit, WordScope, WordWindows
from chunking.options import (
    DEFAULT_ENCODER,
    DEFAULT_LANGUAGE,
    STRATEGY_NAMES,
    default_lengths,
    default_word_overlap,
)
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
from skills.embedding.values import parse_choice, parse_flag, parse_integer, parse_number

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from chunking import FormatName
    from skills.embedding.settings import EmbeddingProvider

ENV_TEXT_SPLIT_MODE = "CHUNK_TEXT_SPLIT_MODE"
ENV_UNIT = "CHUNK_UNIT"
ENV_MAXIMUM_PAGE_LENGTH = "CHUNK_MAXIMUM_PAGE_LENGTH"
ENV_PAGE_OVERLAP_LENGTH = "CHUNK_PAGE_OVERLAP_LENGTH"
ENV_MAXIMUM_PAGES_TO_TAKE = "CHUNK_MAXIMUM_PAGES_TO_TAKE"
ENV_ENCODER_MODEL_NAME = "CHUNK_ENCODER_MODEL_NAME"
ENV_DEFAULT_LANGUAGE_CODE = "CHUNK_DEFAULT_LANGUAGE_CODE"
ENV_FORMAT = "CHUNK_FORMAT"
ENV_TITLE_PREFIX = "CHUNK_TITLE_PREFIX"
ENV_SECTIONS = "CHUNK_SECTIONS"
ENV_STRIP_MARKUP = "CHUNK_STRIP_MARKUP"
ENV_STRATEGY = "CHUNK_STRATEGY"
ENV_WORDS_PER_CHUNK = "CHUNK_WORDS_PER_CHUNK"
ENV_WORD_OVERLAP = "CHUNK_WORD_OVERLAP"
ENV_WORD_SCOPE = "CHUNK_WORD_SCOPE"
ENV_MAX_REQUEST_BYTES = "MAX_REQUEST_BYTES"
ENV_MAX_RESPONSE_BYTES = "MAX_RESPONSE_BYTES"
ENV_MAX_CHUNKS_PER_RECORD = "MAX_CHUNKS_PER_RECORD"
ENV_DEADLINE_SECONDS = "SKILL_DEADLINE_SECONDS"
ENV_CHUNK_WORKERS = "CHUNK_WORKERS"
ENV_MARKDOWN_HEADER_DEPTH = "CHUNK_MARKDOWN_HEADER_DEPTH"

ALL_ENV_NAMES = (
    ENV_TEXT_SPLIT_MODE,
    ENV_UNIT,
    ENV_MAXIMUM_PAGE_LENGTH,
    ENV_PAGE_OVERLAP_LENGTH,
    ENV_MAXIMUM_PAGES_TO_TAKE,
    ENV_ENCODER_MODEL_NAME,
    ENV_DEFAULT_LANGUAGE_CODE,
    ENV_FORMAT,
    ENV_TITLE_PREFIX,
    ENV_SECTIONS,
    ENV_STRIP_MARKUP,
    ENV_STRATEGY,
    ENV_WORDS_PER_CHUNK,
    ENV_WORD_OVERLAP,
    ENV_WORD_SCOPE,
    ENV_MAX_REQUEST_BYTES,
    ENV_MAX_RESPONSE_BYTES,
    ENV_MAX_CHUNKS_PER_RECORD,
    ENV_DEADLINE_SECONDS,
    ENV_CHUNK_WORKERS,
    ENV_MARKDOWN_HEADER_DEPTH,
    *EMBEDDING_ENV_NAMES,
    *PAIR_ENV_NAMES,
)
"""Every app setting the skill reads; the three API keys are never shown or logged."""

SPLIT_MODES: Mapping[str, SplitMode] = {mode.value: mode for mode in SplitMode}
UNITS: Mapping[str, Unit] = {unit.value: unit for unit in Unit}
FORMATS: tuple[FormatName, ...] = ("auto", "markdown", "html", "text")
STRATEGIES: Mapping[str, str] = {name: name for name in STRATEGY_NAMES}
WORD_SCOPES: Mapping[str, WordScope] = {scope.value: scope for scope in WordScope}
MARKDOWN_HEADER_DEPTHS: Mapping[str, int] = {f"h{level}": level for level in range(1, 7)}
"""The Layout skill's `markdownHeaderDepth` values: the keys `sections` has (h1 to the depth)."""

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
DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
"""64 MiB of answer per request; records past it are refused one by one (answer_caps).
A request holds ~6-8x its answer's bytes at its peak with its body (bench.answer_memory:
640 records of 100 KB, 62 MB, answered within it at 511 MB), so two such requests and
the workers fit the default instance's 2,048 MB (infra/main.bicep instanceMemoryMB).
Azure asks for answers under 150 MB anyway."""
DEFAULT_MAX_CHUNKS_PER_RECORD = 20_000
"""A record with more chunks is refused. The largest document an indexer sends (16 million
characters) makes ~8,000 chunks at the default 512 tokens and 16,000 when its sections are
~1,000 characters each (sections apart); a window per word (`words`) makes one per word,
and planning stops past this many."""

DEFAULT_DEADLINE_SECONDS = 200.0
"""Answer well inside the 230 s ceiling of both the skill `timeout` and Azure's load balancer."""
MAX_DEADLINE_SECONDS = 230.0
"""Nobody waits longer: the indexer gives up at 230 s at most."""
MAX_CHUNK_WORKERS = 64


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
    sections: Sections = Sections.APART
    """Whether a heading ends a chunk (`apart`) or small sections share one (`packed`)."""
    strip_markup: bool = True
    """Embed markdown without link targets, HTML tags, comments and directive lines."""
    strategy: str = "structure"
    """Default `strategy`: `structure` (by sections, blocks, sentences) or `words`."""
    words: WordWindows = field(default_factory=WordWindows)
    """Default `wordsPerChunk`, `wordOverlap` and `wordScope` (the `words` strategy's)."""
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    """Bodies larger than this get HTTP 413 before they are parsed."""
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    """An answer takes at most this many bytes; records past it get a per-record error."""
    max_chunks_per_record: int = DEFAULT_MAX_CHUNKS_PER_RECORD
    """A record that makes more chunks than this gets a per-record error."""
    deadline_seconds: float = DEFAULT_DEADLINE_SECONDS
    """The response goes out by then; unfinished records get a per-record error."""
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

    def choice(name: str, choices: Mapping[str, object]) -> object | None:
        if name not in given:
            return None
        chosen = parse_choice(given[name], choices)
        if chosen is None:
            problems.append(f"{name} must be one of {', '.join(choices)} (got {given[name]!r})")
        return chosen

    def integer(name: str, minimum: int) -> int | None:
        if name not in given:
            return None
        number = parse_integer(given[name])
        if number is None or number < minimum:
            problems.append(
                f"{name} must be an integer of at least {minimum} (got {given[name]!r})"
            )
            return None
        return number

    defaults = Settings()
    mode = choice(ENV_TEXT_SPLIT_MODE, SPLIT_MODES)
    unit = choice(ENV_UNIT, UNITS)
    file_format = choice(ENV_FORMAT, {name: name for name in FORMATS})
    embedding = load_embedding_settings(given, problems, local_installed)
    pairs = load_pair_settings(given, problems)
    length = integer(ENV_MAXIMUM_PAGE_LENGTH, 1)
    overlap = integer(ENV_PAGE_OVERLAP_LENGTH, 0)
    pages = integer(ENV_MAXIMUM_PAGES_TO_TAKE, 0)
    max_bytes = integer(ENV_MAX_REQUEST_BYTES, 1)
    max_answer = integer(ENV_MAX_RESPONSE_BYTES, 1)
    max_chunks = integer(ENV_MAX_CHUNKS_PER_RECORD, 1)
    workers = integer(ENV_CHUNK_WORKERS, 0)
    if workers is not None and workers > MAX_CHUNK_WORKERS:
        problems.append(f"{ENV_CHUNK_WORKERS} must be at most {MAX_CHUNK_WORKERS} (got {workers})")
        workers = None

    def flag(name: str, default: bool) -> bool:
        if name not in given:
            return default
        value = parse_flag(given[name])
        if value is None:
            problems.append(f"{name} must be true or false (got {given[name]!r})")
            return default
        return value

    title_prefix = flag(ENV_TITLE_PREFIX, defaults.title_prefix)
    strip_markup = flag(ENV_STRIP_MARKUP, defaults.strip_markup)
    sections = choice(ENV_SECTIONS, {s.value: s for s in Sections})
    header_depth = choice(ENV_MARKDOWN_HEADER_DEPTH, MARKDOWN_HEADER_DEPTHS)

    strategy = choice(ENV_STRATEGY, STRATEGIES)
    words = _word_windows(
        integer(ENV_WORDS_PER_CHUNK, 1),
        integer(ENV_WORD_OVERLAP, 0),
        choice(ENV_WORD_SCOPE, WORD_SCOPES),
        problems,
    )

    deadline = defaults.deadline_seconds
    if ENV_DEADLINE_SECONDS in given:
        seconds = parse_number(given[ENV_DEADLINE_SECONDS])
        if seconds is None or not 0 < seconds <= MAX_DEADLINE_SECONDS:
            problems.append(
                f"{ENV_DEADLINE_SECONDS} must be a number of seconds above 0 and at most "
                f"{MAX_DEADLINE_SECONDS:g} (got {given[ENV_DEADLINE_SECONDS]!r})"
            )
        else:
            deadline = seconds

    settings = Settings(
        text_split_mode=mode if isinstance(mode, SplitMode) else defaults.text_split_mode,
        unit=unit if isinstance(unit, Unit) else defaults.unit,
        maximum_page_length=length,
        page_overlap_length=overlap,
        maximum_pages_to_take=defaults.maximum_pages_to_take if pages is None else pages,
        encoder_model_name=given.get(ENV_ENCODER_MODEL_NAME, defaults.encoder_model_name),
        default_language_code=given.get(ENV_DEFAULT_LANGUAGE_CODE, defaults.default_language_code),
        format=_format_or(file_format, defaults.format),
        title_prefix=title_prefix,
        sections=sections if isinstance(sections, Sections) else defaults.sections,
        strip_markup=strip_markup,
        strategy=strategy if isinstance(strategy, str) else defaults.strategy,
        words=words,
        max_request_bytes=defaults.max_request_bytes if max_bytes is None else max_bytes,
        max_response_bytes=defaults.max_response_bytes if max_answer is None else max_answer,
        max_chunks_per_record=(
            defaults.max_chunks_per_record if max_chunks is None else max_chunks
        ),
        deadline_seconds=deadline,
        chunk_workers=defaults.chunk_workers if workers is None else workers,
        markdown_header_depth=(
            header_depth if isinstance(header_depth, int) else defaults.markdown_header_depth
        ),
        embedding=embedding,
        pairs=pairs,
        app_settings_used=frozenset(given),
    )
    if not problems:
        # The limits every record starts from must be valid on their own; a record can
        # still override them, but a skill whose defaults fail every record is misconfigured.
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
        if settings.strategy != "structure" and settings.text_split_mode is SplitMode.SENTENCES:
            problems.append(
                f"{ENV_TEXT_SPLIT_MODE} sentences does not apply to {ENV_STRATEGY} "
                f"{settings.strategy} (it plans its own chunks; use pages)"
            )
    if problems:
        raise SettingsError("invalid app settings: " + "; ".join(problems))
    return settings


def _word_windows(
    size: int | None, overlap: int | None, scope: object, problems: list[str]
) -> WordWindows:
    """The `words` strategy's defaults from app settings; a bad pair is named in `problems`."""
    defaults = WordWindows()
    size = defaults.size if size is None else size
    try:
        return WordWindows(
            size=size,
            overlap=default_word_overlap(size) if overlap is None else overlap,
            scope=scope if isinstance(scope, WordScope) else defaults.scope,
        )
    except OptionError as error:
        problems.append(f"{error} (from app settings {ENV_WORDS_PER_CHUNK}, {ENV_WORD_OVERLAP})")
        return defaults


def _format_or(value: object, default: FormatName) -> FormatName:
    for name in FORMATS:
        if value == name:
            return name
    return default


@functools.cache
def settings_from_environment() -> Settings | SettingsError:
    """The process's settings, read from os.environ once at first use.

    A SettingsError is returned, not raised, so /api/health and every record can report it.
    """
    try:
        return load_settings(os.environ)
    except SettingsError as error:
        return error


def describe_settings(settings: Settings) -> dict[str, object]:
    """The effective configuration for /api/health: value, app setting and its source."""
    length, overlap = settings.length_defaults(settings.unit)
    entries: list[tuple[str, str, object]] = [
        ("textSplitMode", ENV_TEXT_SPLIT_MODE, settings.text_split_mode.value),
        ("unit", ENV_UNIT, settings.unit.value),
        ("maximumPageLength", ENV_MAXIMUM_PAGE_LENGTH, length),
        ("pageOverlapLength", ENV_PAGE_OVERLAP_LENGTH, overlap),
        ("maximumPagesToTake", ENV_MAXIMUM_PAGES_TO_TAKE, settings.maximum_pages_to_take),
        ("encoderModelName", ENV_ENCODER_MODEL_NAME, settings.encoder_model_name),
        ("defaultLanguageCode", ENV_DEFAULT_LANGUAGE_CODE, settings.default_language_code),
        ("format", ENV_FORMAT, settings.format),
        ("titlePrefix", ENV_TITLE_PREFIX, settings.title_prefix),
        ("sections", ENV_SECTIONS, settings.sections.value),
        ("stripMarkup", ENV_STRIP_MARKUP, settings.strip_markup),
        ("strategy", ENV_STRATEGY, settings.strategy),
        ("wordsPerChunk", ENV_WORDS_PER_CHUNK, settings.words.size),
        ("wordOverlap", ENV_WORD_OVERLAP, settings.words.overlap),
        ("wordScope", ENV_WORD_SCOPE, settings.words.scope.value),
        ("maxRequestBytes", ENV_MAX_REQUEST_BYTES, settings.max_request_bytes),
        ("maxResponseBytes", ENV_MAX_RESPONSE_BYTES, settings.max_response_bytes),
        ("maxChunksPerRecord", ENV_MAX_CHUNKS_PER_RECORD, settings.max_chunks_per_record),
        ("deadlineSeconds", ENV_DEADLINE_SECONDS, settings.deadline_seconds),
        ("chunkWorkers", ENV_CHUNK_WORKERS, settings.chunk_workers),
        (
            "markdownHeaderDepth",
            ENV_MARKDOWN_HEADER_DEPTH,
            f"h{settings.markdown_header_depth}",
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
    "Settings",
    "SettingsError",
    "describe_settings",
    "load_settings",
    "settings_from_environment",
]
