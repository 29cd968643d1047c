"""Turn one record's `data` and the settings into chunking arguments, or per-record errors.

Precedence for every parameter: record input > app setting > built-in default.
"""

from __future__ import annotations

import difflib
import re
import sys
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from chunking import ChunkOptions, Limits, OptionError
from chunking.options import ParameterNames, clipped_repr
from skills.parameters import (
    FORMATS,
    PARAMETERS,
    RECORD_INPUTS,
    read_rows,
    read_strategy,
)
from skills.skill.file_data import INPUT_FILE_DATA, FileDataError, read_file_data
from skills.values import Problem, Source, describe, huge_numbers, parse_choice

if TYPE_CHECKING:
    from collections.abc import Mapping

    from chunking import FormatName
    from skills.parameters import Parameter
    from skills.skill.settings import Settings

INPUT_TEXT = "text"
INPUT_TITLE = "title"
INPUT_FORMAT = "format"
INPUT_CONTENT_TYPE = "contentType"
INPUT_FILE_NAME = "fileName"
INPUT_URL = "url"
INPUT_LANGUAGE = "language"
INPUT_LANGUAGE_CODE = "languageCode"
"""The Split skill's name for the record's language; accepted so the skill drops in for it."""
INPUT_TEXT_SPLIT_MODE = "textSplitMode"
INPUT_MAXIMUM_PAGE_LENGTH = "maximumPageLength"
INPUT_PAGE_OVERLAP_LENGTH = "pageOverlapLength"
INPUT_MAXIMUM_PAGES_TO_TAKE = "maximumPagesToTake"
INPUT_UNIT = "unit"
INPUT_ENCODER_MODEL_NAME = "encoderModelName"
INPUT_DEFAULT_LANGUAGE_CODE = "defaultLanguageCode"
INPUT_STRATEGY = "strategy"
INPUT_MARKDOWN_HEADER_DEPTH = "markdownHeaderDepth"
"""The Layout skill's name: how many `sections` keys each chunk has (output only)."""
INPUT_WORDS_PER_CHUNK = "wordsPerChunk"
INPUT_WORD_OVERLAP = "wordOverlap"
INPUT_WORD_SCOPE = "wordScope"
INPUT_SEMANTIC_PERCENTILE = "semanticPercentile"
INPUT_SEMANTIC_WINDOW = "semanticWindow"
INPUT_SEMANTIC_MIN_FILL = "semanticMinFill"
INPUT_BINARY_SCORER = "binaryScorer"
INPUT_BINARY_CANDIDATES = "binaryCandidates"
RECORD_INPUT_NAMES = ParameterNames("input", repr)
"""Parameters in a record's errors: input 'wordOverlap'."""
RECORD_INPUT = Source(
    RECORD_INPUT_NAMES,
    describe,
    {
        "integer": ', as a JSON number or a numeric string such as "512"',
        "number": ', as a JSON number or a numeric string such as "95"',
    },
)
"""Record inputs in messages: input 'unit' must be one of ... (got string 'tokens')."""

KNOWN_INPUTS = RECORD_INPUTS
"""Every record input the skill reads (skills.parameters has a row for each)."""
OPTION_ROWS: tuple[Parameter, ...] = tuple(
    row
    for row in PARAMETERS
    if row.record_input and row.option and row.strategy is None and row.name != INPUT_STRATEGY
)
"""The record inputs that set a `ChunkOptions` field as they are read, in table order
(`textSplitMode`, `unit`, the lengths, `maximumPagesToTake`, `encoderModelName`,
`defaultLanguageCode`); `strategy` and its own inputs are read with it."""
READ_ROWS: tuple[Parameter, ...] = tuple(
    replace(row, kind="string") if row.name == INPUT_FORMAT else row
    for row in PARAMETERS
    if row.record_input and row.strategy is None and row.name not in (INPUT_TEXT, INPUT_FILE_DATA)
)
"""The record inputs read by their kind, in table order: all but the document (`text`,
`file_data`) and the strategy's own. `format` is read as a string: a name it does not
know is chunked as text, with a warning (`FORMAT_ALIASES`)."""
STRING_INPUTS: tuple[str, ...] = tuple(row.name for row in READ_ROWS if row.kind == "string")
"""The string inputs, whose lone surrogates are replaced (with a warning)."""
OPTION_PATHS: tuple[tuple[str, str, str], ...] = tuple(
    (row.name, str(row.option), str(row.attribute)) for row in OPTION_ROWS
)
"""Each of `OPTION_ROWS` as (record input, `ChunkOptions` path, `Settings` attribute)."""
LENGTH_INPUTS = (INPUT_MAXIMUM_PAGE_LENGTH, INPUT_PAGE_OVERLAP_LENGTH)
"""The inputs whose default follows the unit (`Settings.length_defaults`), in its order."""
LANGUAGE_OPTION = "language"
"""The `ChunkOptions` field a record's `language` or `languageCode` sets."""

FORMAT_ALIASES: Mapping[str, FormatName] = {
    **{name: name for name in FORMATS},
    "md": "markdown",
    "htm": "html",
    "txt": "text",
    "plain": "text",
}
"""Accepted spellings of `format`, matched ignoring case."""

URL_SCHEMES = frozenset({"http", "https"})
"""The schemes a chunk's `url` may have: a link a search page shows (no javascript:,
file: or data:)."""
_CONTROL_CHARACTER = re.compile("[\x00-\x1f\x7f-\x9f]")
"""Unicode's control characters (category Cc). None belongs in a URL, and urlsplit drops
tabs and line breaks without a word, so they are refused before it looks."""

NOT_IN_HOSTS = frozenset('<>"{}|\\^`')
"""Characters RFC 3986 allows nowhere in a URL, so in no host (with whitespace, checked
apart: Unicode's spaces too)."""

REPLACEMENT_CHARACTER = "\ufffd"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""JSON may carry "\\ud800" escapes that decode to lone surrogates: text no encoder accepts.

Python joins valid escaped pairs into one code point, so any surrogate left in a str is
lone. Each is one UTF-16 unit and one code point, as is U+FFFD, so replacing one by the
other keeps every utf16 and codePoint offset the same.
"""


@dataclass(frozen=True, slots=True)
class RecordInputs:
    """Everything needed to chunk one record."""

    text: str
    options: ChunkOptions
    format: FormatName
    title: str | None
    file_name: str | None
    content_type: str | None
    url: str | None
    """Base URL of the document; chunk URLs add `#anchor`."""
    warnings: tuple[str, ...]
    """Things fixed or ignored while reading the inputs."""
    markdown_header_depth: int = 6
    """`markdownHeaderDepth` as a number 1-6: `sections` has keys h1 to it."""


@dataclass(frozen=True, slots=True)
class InputErrors:
    """Why a record cannot be chunked; each message names the input and what is allowed."""

    messages: tuple[str, ...]


def read_record_inputs(data: object, settings: Settings) -> RecordInputs | InputErrors:
    """Validate a record's `data` against the inputs the skill knows, with app-setting defaults.

    `null` and a missing input mean the same thing (the indexer sends null for missing
    enrichments), and so does "" for the optional string inputs. Each input is read by
    the table's rule for its kind (`skills.values.read_value`), as app settings and flags
    are; what cannot be used comes back as values, collected here into the record's errors.
    """
    if not isinstance(data, dict):
        return InputErrors(
            (f"data must be a JSON object with a 'text' input (got {describe(data)})",)
        )
    huge = _huge_number_errors(data)
    if huge:
        return InputErrors(huge)
    text, file_data = data.get(INPUT_TEXT), data.get(INPUT_FILE_DATA)
    read, refused = read_rows(READ_ROWS, data, RECORD_INPUT)
    values, warnings = _without_lone_surrogates(read)
    errors = [*_text_problems(data, text, file_data), *(problem.message for problem in refused)]
    url = values.get(INPUT_URL)
    unlinkable = None if url is None else url_problem(url)
    if unlinkable is not None:
        errors.append(f"input {INPUT_URL!r} must be {unlinkable}")
    file_format, format_warnings = _format(values.get(INPUT_FORMAT), settings)
    warnings += format_warnings
    file_name, content_type = values.get(INPUT_FILE_NAME), values.get(INPUT_CONTENT_TYPE)
    if file_data is not None and text is None and not errors:
        text, file_warnings, file_errors = _file_text(file_data, file_name, content_type)
        warnings += file_warnings
        errors += file_errors
    strategy = values.get(INPUT_STRATEGY, settings.strategy)
    own_parameters, refused = read_strategy(
        strategy, settings.parameters_of(strategy), data, RECORD_INPUT
    )
    errors += (problem.message for problem in refused)

    warnings += _unknown_inputs(data)
    options = None if errors else _chunk_options(values, settings, strategy, own_parameters)
    if isinstance(options, Problem):
        errors.append(options.message)
    if errors or not isinstance(options, ChunkOptions) or not isinstance(text, str):
        return InputErrors(tuple(errors))
    text, text_warnings = _cleaned(INPUT_TEXT, text)
    return RecordInputs(
        text=text,
        options=options,
        format=file_format,
        title=values.get(INPUT_TITLE),
        file_name=file_name,
        content_type=content_type,
        url=url,
        warnings=(*warnings, *text_warnings),
        markdown_header_depth=values.get(
            INPUT_MARKDOWN_HEADER_DEPTH, settings.markdown_header_depth
        ),
    )


def _file_text(
    file_data: object, file_name: str | None, content_type: str | None
) -> tuple[str | None, tuple[str, ...], tuple[str, ...]]:
    """The text of `file_data` (None when it has none), its decoding warnings and errors."""
    decoded = read_file_data(file_data, file_name=file_name, content_type=content_type)
    if isinstance(decoded, FileDataError):
        return None, (), (decoded.message,)
    warnings = tuple(f"input {INPUT_FILE_DATA!r}: {warning}" for warning in decoded.warnings)
    return decoded.text, warnings, ()


def _unknown_inputs(data: Mapping[str, object]) -> tuple[str, ...]:
    """A warning naming the inputs the skill does not know (and the nearest it knows)."""
    unknown = sorted(name for name in data if name not in KNOWN_INPUTS)
    if not unknown:
        return ()
    return (
        f"ignored unknown input(s) {', '.join(map(_with_nearest, unknown))}; "
        f"known inputs are {', '.join(KNOWN_INPUTS)}",
    )


def _text_problems(data: Mapping[str, object], text: object, file_data: object) -> list[str]:
    """What is wrong with the record's document: neither or both of `text` and
    `file_data`, or a `text` that is no string."""
    if text is not None and file_data is not None:
        return [
            f"give input 'text' or input {INPUT_FILE_DATA!r}, not both: 'text' for the "
            "document's content, 'file_data' for the raw file (/document/file_data)"
        ]
    if text is None and file_data is None:
        return [
            f"input 'text' is required (got {'null' if INPUT_TEXT in data else 'nothing'}); "
            "map it to the document's content, e.g. /document/content (or map "
            f"{INPUT_FILE_DATA!r} to /document/file_data to send the raw file)"
        ]
    if text is not None and not isinstance(text, str):
        return [f"input 'text' must be a string (got {describe(text)})"]
    return []


def _chunk_options(
    values: Mapping[str, Any], settings: Settings, strategy: str, own_parameters: Any
) -> ChunkOptions | Problem:
    """The options of a record: each of `OPTION_ROWS` from its input, else its app
    setting, by its `ChunkOptions` path (`limits.unit`); its strategy; and what only the
    app settings set. The lengths' defaults follow the unit; a record's `language` (or
    the Split skill's `languageCode`) comes before `defaultLanguageCode`. A Problem when
    the options' own validation refuses them."""
    unit = values.get(INPUT_UNIT, settings.unit)
    lengths = dict(zip(LENGTH_INPUTS, settings.length_defaults(unit), strict=True))
    limits: dict[str, Any] = {}
    others: dict[str, Any] = {}
    for name, path, attribute in OPTION_PATHS:
        value = values.get(name)
        if value is None:
            value = lengths[name] if name in lengths else getattr(settings, attribute)
        if path.startswith("limits."):
            limits[path.removeprefix("limits.")] = value
        else:
            others[path] = value
    spoken = values.get(INPUT_LANGUAGE) or values.get(INPUT_LANGUAGE_CODE)
    if spoken:
        others[LANGUAGE_OPTION] = spoken
    try:
        return ChunkOptions(
            limits=Limits(**limits),
            **others,
            title_prefix=settings.title_prefix,
            section_fill=settings.section_packing.fill,
            strip_markup=settings.strip_markup,
            strategy=strategy,
            parameters=own_parameters,
            max_chunks=settings.max_chunks_per_record,
        )
    except OptionError as error:
        return Problem(", ".join(RECORD_INPUT.name(row.name) for row in OPTION_ROWS), str(error))


def _huge_number_errors(data: Mapping[str, object]) -> tuple[str, ...]:
    """An error for each known input holding a JSON integer too long to read. An unknown
    input holding one is ignored with the other unknown inputs: it changes nothing."""
    errors = []
    for name in KNOWN_INPUTS:
        found = huge_numbers(data.get(name))
        if found:
            digits = max(number.digits for number in found)
            errors.append(
                f"input {name!r} holds a JSON number of {digits} digits; the skill reads "
                f"numbers of at most {sys.get_int_max_str_digits()} digits (no input needs "
                "more than a few)"
            )
    return tuple(errors)


def _format(name: str | None, settings: Settings) -> tuple[FormatName, tuple[str, ...]]:
    """`format` (any of `FORMAT_ALIASES`), or the app setting; an unknown name falls back
    to text with a warning."""
    if name is None:
        return settings.format, ()
    known = parse_choice(name, FORMAT_ALIASES)
    if known is None:
        return "text", (
            f"input 'format' {clipped_repr(name)} is not one of {', '.join(FORMATS)}; "
            "chunked as text",
        )
    return known, ()


def _without_lone_surrogates(
    values: dict[str, Any],
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """`values` with the string inputs' lone surrogates replaced, a warning for each such
    input (`values` itself when none has any)."""
    cleaned = values
    warnings: tuple[str, ...] = ()
    for name in STRING_INPUTS:
        value = values.get(name)
        if value is None:
            continue
        replaced, warned = _cleaned(name, value)
        if warned:
            cleaned = {**cleaned, name: replaced}
            warnings += warned
    return cleaned, warnings


def _cleaned(name: str, value: str) -> tuple[str, tuple[str, ...]]:
    """`value` without lone surrogates, and a warning saying how many were replaced."""
    cleaned, count = replace_lone_surrogates(value)
    if not count:
        return cleaned, ()
    return cleaned, (
        f"input {name!r} contained {count} lone surrogate(s) (invalid UTF-16); "
        "each was replaced with U+FFFD",
    )


def url_problem(url: str) -> str | None:
    """What `url` lacks to be an absolute http(s) URL without control characters, or None."""
    control = _CONTROL_CHARACTER.search(url)
    if control is not None:
        return f"without control characters (U+{ord(control.group()):04X} at {control.start()})"
    if url != url.strip():
        return f"without spaces at either end (got {describe(url)})"
    try:
        parts = urlsplit(url)
        _ = parts.port  # a port that is not a number, or out of range, raises
    except ValueError:  # e.g. an unclosed IPv6 bracket
        parts = None
    if parts is None or parts.scheme.lower() not in URL_SCHEMES or not parts.hostname:
        return f"an absolute http or https URL (got {describe(url)})"
    if any(character.isspace() or character in NOT_IN_HOSTS for character in parts.hostname):
        # urlsplit takes any host; a search page's link to this one would go nowhere.
        return (
            "a URL whose host has no spaces or other characters a host cannot hold "
            f"(got {describe(url)})"
        )
    return None


def replace_lone_surrogates(text: str) -> tuple[str, int]:
    """`text` with every lone surrogate replaced by U+FFFD, and how many there were."""
    if _LONE_SURROGATE.search(text) is None:
        return text, 0
    return _LONE_SURROGATE.subn(REPLACEMENT_CHARACTER, text)


__all__ = [
    "KNOWN_INPUTS",
    "InputErrors",
    "RecordInputs",
    "read_record_inputs",
    "replace_lone_surrogates",
]


def _with_nearest(name: str) -> str:
    """`'maximumPagelength' (did you mean 'maximumPageLength'?)`, or the name alone."""
    near = difflib.get_close_matches(name, KNOWN_INPUTS, n=1, cutoff=0.75) or [
        known for known in KNOWN_INPUTS if known.lower() == name.lower()
    ]
    return f"{name!r} (did you mean {near[0]!r}?)" if near else repr(name)
