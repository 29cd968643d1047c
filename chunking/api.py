"""The library in a few calls: chunk a string or a file with plain keyword options.

    from chunking import chunk_file
    document = chunk_file("guide.md", max_length=512)
    for chunk in document.chunks: print(chunk.headings, chunk.size, chunk.content[:60])

`chunk_options` builds the `ChunkOptions` these take (the skill's defaults for the unit);
`ChunkOptions` itself has every knob. The skill's app settings are one way to build them
(`skills.api.options_from_app_settings`), not the only one.
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from chunking.cli.files import read_limited
from chunking.options import (
    PAGE_OVERLAP_LENGTH,
    WORD_OVERLAP,
    ChunkOptions,
    Limits,
    OptionError,
    ParameterNames,
    SectionPacking,
    SplitMode,
    Unit,
    default_lengths,
)
from chunking.parse.decode import BinaryFile, decode_file
from chunking.pipeline import chunk_document
from chunking.plan.strategies import STRATEGY_NAMES, strategy_conflicts

if TYPE_CHECKING:
    import os
    from collections.abc import Iterable

    from chunking.model import ChunkedDocument
    from chunking.pipeline import FormatName
    from chunking.plan.scoring import Scoring

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
    # The skill's and the command line's refusals, in this API's words.
    problems = strategy_conflicts(
        strategy, [PAGE_OVERLAP_LENGTH] if overlap is not None else [], LIBRARY_NAMES
    )
    if problems:
        raise OptionError("; ".join(problems))
    default_max, default_overlap = default_lengths(chosen)
    base = ChunkOptions()
    try:
        limits = Limits(
            unit=chosen,
            maximum_page_length=default_max if max_length is None else max_length,
            page_overlap_length=default_overlap if overlap is None else overlap,
        )
    except OptionError as error:
        raise OptionError(_in_library_words(str(error), chosen)) from None
    return ChunkOptions(
        limits=limits,
        mode=SplitMode.SENTENCES if sentences else SplitMode.PAGES,
        encoder_model_name=encoder or base.encoder_model_name,
        language=language or base.language,
        title_prefix=title_prefix,
        section_fill=SectionPacking(sections).fill,
        strategy=strategy,
    )


LIBRARY_SPELLING = {
    "maximumPageLength": "max_length",
    PAGE_OVERLAP_LENGTH: "overlap",
    WORD_OVERLAP: "ChunkOptions(words=WordWindows(overlap=...))",
}
"""The record inputs `chunk_options` takes under other names, or where this API sets them."""
LIBRARY_NAMES = ParameterNames("argument", lambda name: LIBRARY_SPELLING.get(name, name))
"""Parameters as this API's messages name them: argument overlap, not pageOverlapLength."""
OPTION_KEYWORDS = frozenset(inspect.signature(chunk_options).parameters)


def _in_library_words(message: str, unit: Unit) -> str:
    """A Limits refusal with the skill's names turned into this API's."""
    for name, spelled in LIBRARY_SPELLING.items():
        message = message.replace(name, spelled)
    if unit is Unit.TOKENS:
        message = message.replace(Unit.TOKENS.value, 'tokens (unit="tokens")')
    return message


def _check_keywords(given: Iterable[str]) -> None:
    """OptionError for a keyword `chunk_options` does not take, with the nearest one."""
    for name in given:
        if name not in OPTION_KEYWORDS:
            import difflib  # noqa: PLC0415  # for a wrong keyword only: start-up skips it

            near = difflib.get_close_matches(name, sorted(OPTION_KEYWORDS), n=1)
            hint = f"; did you mean {near[0]}?" if near else ""
            raise OptionError(
                f"unknown option {name!r}{hint} (options: {', '.join(sorted(OPTION_KEYWORDS))})"
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
        _check_keywords(option_values)
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
    file cannot be read (FileRefused when it is not a regular file, or larger than the
    skill takes: `chunking.cli.files`). Decoding warnings come first in the result's `warnings`."""
    name = Path(path)
    decoded = decode_file(read_limited(name), file_name=name.name)
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
