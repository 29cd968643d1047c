"""Embed chunks from Python, and build chunk options from the skill's app settings.

    from chunking import chunk_file
    from skills.api import embed_chunks
    vectors = embed_chunks(chunk_file("guide.md", max_length=384).chunks)

The embedding comes from `embedding_settings(...)`: the same names as the app settings
(`EMBEDDING_PROVIDER`, `AZURE_OPENAI_ENDPOINT`, ...), given as keywords or read from the
environment, so a notebook embeds exactly as the deployed skill does.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import TYPE_CHECKING

from chunking.options import ChunkOptions, Limits, Unit
from skills.embedding.clients import build_embedder
from skills.embedding.embedder import Failure
from skills.embedding.settings import EMBEDDING_ENV_NAMES, load_embedding_settings
from skills.skill.settings import SettingsError, load_settings

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from chunking.model import Chunk
    from skills.embedding.embedder import Vector
    from skills.embedding.settings import EmbeddingSettings

EMBED_SECONDS = 600.0
"""How long one call may take; nobody is waiting on an indexer's 230 s here."""


class EmbeddingError(Exception):
    """Some text got no vector; the message says why, in the skill's words."""


def embedding_settings(
    app_settings: Mapping[str, str] | None = None, **named: str
) -> EmbeddingSettings:
    """Embedding settings from app-setting names: `app_settings` (default: the
    environment), overridden by keywords, e.g. `embedding_settings(EMBEDDING_PROVIDER="local")`.
    Raises SettingsError naming every bad one."""
    source = dict(os.environ if app_settings is None else app_settings) | named
    given = {name: source[name].strip() for name in EMBEDDING_ENV_NAMES if source.get(name)}
    problems: list[str] = []
    settings = load_embedding_settings(given, problems)
    if problems:
        raise SettingsError("invalid embedding settings: " + "; ".join(problems))
    return settings


def embed_texts(texts: Sequence[str], settings: EmbeddingSettings | None = None) -> list[Vector]:
    """One vector per text, in order, from the provider `settings` name (default: the
    environment's app settings; the local model when nothing else is set and it is
    installed). Raises EmbeddingError when any text got none, SettingsError when no
    provider is configured."""
    chosen = embedding_settings() if settings is None else settings
    embedder = build_embedder(chosen)
    if embedder is None:
        raise SettingsError(
            f"no embedding provider: {chosen.provider_reason}; set EMBEDDING_PROVIDER "
            "(local needs `pip install .[local]`) or AZURE_OPENAI_ENDPOINT"
        )

    async def run() -> list[Vector | Failure]:
        try:
            outcome = await embedder.embed(list(texts), time.monotonic() + EMBED_SECONDS)
        finally:
            await embedder.aclose()
        return list(outcome.results)

    results = asyncio.run(run())
    failures = [r for r in results if isinstance(r, Failure)]
    if failures:
        raise EmbeddingError(
            f"{len(failures)} of {len(results)} text(s) got no vector: {failures[0].message}"
        )
    return [r for r in results if not isinstance(r, Failure)]


def embed_chunks(
    chunks: Iterable[Chunk], settings: EmbeddingSettings | None = None
) -> list[Vector]:
    """Each chunk's embedded `text` (title and heading path in front) as a vector, as the
    skill embeds it; see `embed_texts`."""
    return embed_texts([chunk.text for chunk in chunks], settings)


def options_from_app_settings(
    app_settings: Mapping[str, str] | None = None, unit: Unit | None = None
) -> ChunkOptions:
    """The chunk options the deployed skill starts every record from (CHUNK_* app
    settings, default: the environment), for `chunk_text` / `chunk_file`."""
    settings = load_settings(os.environ if app_settings is None else app_settings)
    chosen = settings.unit if unit is None else unit
    length, overlap = settings.length_defaults(chosen)
    return ChunkOptions(
        limits=Limits(
            unit=chosen,
            maximum_page_length=length,
            page_overlap_length=overlap,
            maximum_pages_to_take=settings.maximum_pages_to_take,
        ),
        mode=settings.text_split_mode,
        encoder_model_name=settings.encoder_model_name,
        language=settings.default_language_code,
        title_prefix=settings.title_prefix,
        section_fill=settings.section_packing.fill,
        strip_markup=settings.strip_markup,
        strategy=settings.strategy,
        parameters=settings.parameters_of(settings.strategy),
    )
