"""The library in a few calls: chunk a string or a file with plain keyword options.

    from chunking import chunk_file
    document = chunk_file("guide.md", max_length=512)
    for chunk in document.chunks: print(chunk.headings, chunk.size, chunk.content[:60])

`chunk_options` builds the `ChunkOptions` these take (the skill's defaults for the unit);
`ChunkOptions` itself has every knob. The skill's app settings are one way to build them
(`skills.api.options_from_app_settings`), not the only one.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from chunking.options import (
    ChunkOptions,
    Limits,
    OptionError,
    SectionPacking,
    SplitMode,
    Unit,
    default_lengths,
)
from chunking.parse.decode import BinaryFile, decode_file
from chunking.pipeline import chunk_document
from chunking.plan.strategies import STRATEGY_NAMES

if TYPE_CHECKING:
    import os

    from chunking.model import ChunkedDocument
    from chunking.pipeline import FormatName
    from chunking.scoring import Scoring

UnitName = Literal["tokens", "characters", "azureOpenAITokens"]
"""`tokens` is short for the skill's `azureOpenAITokens` (tiktoken, cl100k_base by default)."""
UNIT_NAMES: dict[str, Unit] = {
    "tokens": Unit.TOKENS,
    Unit.TOKENS.value: Unit.TOKENS,
    Unit.CHARACTERS.value: Unit.CHARACTERS,
}


def chunk_options(
    *,
    max_length: int | None = None,
    overlap: int | None = None,
    unit: UnitName | Unit = "tokens",
    sentences: bool = False,
    sections: Literal["apart", "packed"] = "apart",
    title_prefix: bool = True,
    strategy: str = STRATEGY_NAMES[0],
    encoder: str | None = None,
    language: str | None = None,
) -> ChunkOptions:
    """Options from plain values; what is not given is the skill's default (512/64 tokens,
    5000/0 characters: the Split skill's). Raises `OptionError` naming a bad value."""
    if strategy not in STRATEGY_NAMES:
        raise OptionError(f"strategy must be one of {', '.join(STRATEGY_NAMES)} (got {strategy!r})")
    chosen = unit if isinstance(unit, Unit) else UNIT_NAMES.get(unit)
    if chosen is None:
        raise OptionError(f"unit must be one of {', '.join(UNIT_NAMES)} (got {unit!r})")
    default_max, default_overlap = default_lengths(chosen)
    base = ChunkOptions()
    return ChunkOptions(
        limits=Limits(
            unit=chosen,
            maximum_page_length=default_max if max_length is None else max_length,
            page_overlap_length=default_overlap if overlap is None else overlap,
        ),
        mode=SplitMode.SENTENCES if sentences else SplitMode.PAGES,
        encoder_model_name=encoder or base.encoder_model_name,
        language=language or base.language,
        title_prefix=title_prefix,
        section_fill=SectionPacking(sections).fill,
        strategy=strategy,
    )


def chunk_text(
    text: str,
    options: ChunkOptions | None = None,
    *,
    format: FormatName = "auto",
    title: str | None = None,
    file_name: str | None = None,
    scoring: Scoring | None = None,
    **option_values: object,
) -> ChunkedDocument:
    """Chunk a markdown, HTML or plain-text string. Give `options`, or `chunk_options`'s
    keywords (`max_length=512, unit="characters"`, ...), not both. The result's `chunks`
    are spans of `text` (`content == text[start:end]`) with their heading path, title and
    embedded `text`; its `warnings` say what could not be done as asked."""
    if options is not None and option_values:
        raise OptionError(f"give options or {', '.join(option_values)}, not both")
    if options is None:
        options = chunk_options(**option_values)  # type: ignore[arg-type]
    return chunk_document(
        text, options=options, format=format, title=title, file_name=file_name, scoring=scoring
    )


def chunk_file(
    path: str | os.PathLike[str],
    options: ChunkOptions | None = None,
    *,
    format: FormatName = "auto",
    title: str | None = None,
    scoring: Scoring | None = None,
    **option_values: object,
) -> ChunkedDocument:
    """Chunk a file, decoded as the skill decodes `file_data` (byte order mark, declared
    charset, UTF-8, else detection); its name picks the format when `format` is auto.
    Raises `OptionError` for a binary format (PDF, Office, images) and OSError when the
    file cannot be read. Decoding warnings come first in the result's `warnings`."""
    name = Path(path)
    decoded = decode_file(name.read_bytes(), file_name=name.name)
    if isinstance(decoded, BinaryFile):
        raise OptionError(f"{name}: {decoded.message}")
    document = chunk_text(
        decoded.text,
        options,
        format=format,
        title=title,
        file_name=name.name,
        scoring=scoring,
        **option_values,
    )
    if not decoded.warnings:
        return document
    return replace(document, warnings=(*decoded.warnings, *document.warnings))
