"""Turn one record's `data` and the settings into chunking arguments, or per-record errors.

Precedence for every parameter: record input > app setting > built-in default.
"""

from __future__ import annotations

import difflib
import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from chunking import ChunkOptions, Limits, OptionError
from chunking.options import ParameterNames, clipped_repr
from chunking.plan.strategies import PARAMETER_TYPES, strategy_conflicts
from skills.parameters import (
    FORMATS,
    MARKDOWN_HEADER_DEPTHS,
    PARAMETERS,
    RECORD_INPUTS,
    STRATEGIES,
    given_parameters,
    read_strategy_parameters,
)
from skills.skill.file_data import INPUT_FILE_DATA, FileDataError, read_file_data
from skills.values import (
    describe,
    huge_numbers,
    parse_choice,
    parse_integer,
    parse_number,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    from chunking import FormatName
    from skills.parameters import Parameter
    from skills.skill.settings import Settings

T = TypeVar("T")

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
LENGTH_INPUTS: Mapping[str, int] = {INPUT_MAXIMUM_PAGE_LENGTH: 0, INPUT_PAGE_OVERLAP_LENGTH: 1}
"""The inputs whose default is the unit's (`Settings.length_defaults`), by position."""

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
    enrichments), and so does "" for the optional string inputs.
    """
    if not isinstance(data, dict):
        return InputErrors(
            (f"data must be a JSON object with a 'text' input (got {describe(data)})",)
        )
    huge = _huge_number_errors(data)
    if huge:
        return InputErrors(huge)
    reader = _Reader(data)
    text, file_data = data.get(INPUT_TEXT), data.get(INPUT_FILE_DATA)
    reader.errors.extend(_text_problems(data, text, file_data))
    title = reader.string(INPUT_TITLE)
    content_type = reader.string(INPUT_CONTENT_TYPE)
    file_name = reader.string(INPUT_FILE_NAME)
    url = _read_url(reader)
    file_format = _read_format(reader, settings)
    if file_data is not None and text is None and not reader.errors:
        text = _read_file_text(reader, file_data, file_name, content_type)

    values = _read_option_rows(reader, settings)
    strategy, own_parameters = _read_strategy(reader, settings)
    header_depth = reader.choice(
        INPUT_MARKDOWN_HEADER_DEPTH, MARKDOWN_HEADER_DEPTHS, settings.markdown_header_depth
    )

    unknown = sorted(name for name in data if name not in KNOWN_INPUTS)
    if unknown:
        reader.warnings.append(
            f"ignored unknown input(s) {', '.join(map(_with_nearest, unknown))}; "
            f"known inputs are {', '.join(KNOWN_INPUTS)}"
        )

    options: ChunkOptions | None = None
    if not reader.errors:
        try:
            options = _chunk_options(values, settings, strategy, own_parameters)
        except OptionError as error:
            reader.errors.append(str(error))
    if reader.errors or options is None or not isinstance(text, str):
        return InputErrors(tuple(reader.errors))
    return RecordInputs(
        text=reader.clean(INPUT_TEXT, text),
        options=options,
        format=file_format,
        title=title,
        file_name=file_name,
        content_type=content_type,
        url=url,
        warnings=tuple(reader.warnings),
        markdown_header_depth=header_depth,
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
) -> ChunkOptions:
    """The options of a record: its option rows' values by path (`limits.unit`), its
    strategy, and what only the app settings set; raises OptionError."""
    limits = {
        path.removeprefix("limits."): value
        for path, value in values.items()
        if path.startswith("limits.")
    }
    return ChunkOptions(
        limits=Limits(**limits),
        **{path: value for path, value in values.items() if "." not in path},
        title_prefix=settings.title_prefix,
        section_fill=settings.section_packing.fill,
        strip_markup=settings.strip_markup,
        strategy=strategy,
        parameters=own_parameters,
        max_chunks=settings.max_chunks_per_record,
    )


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


def _read_option_rows(reader: _Reader, settings: Settings) -> dict[str, Any]:
    """The value of each of `OPTION_ROWS` by its `ChunkOptions` path (`limits.unit`): the
    record's input, else the app setting. The lengths' defaults follow the unit read; a
    record's `language` (or the Split skill's `languageCode`) comes before
    `defaultLanguageCode`."""
    values: dict[str, Any] = {}
    for row in OPTION_ROWS:
        default = getattr(settings, str(row.attribute))
        if row.name in LENGTH_INPUTS:
            default = settings.length_defaults(values["limits.unit"])[LENGTH_INPUTS[row.name]]
        if row.name == INPUT_DEFAULT_LANGUAGE_CODE:
            spoken = reader.string(INPUT_LANGUAGE) or reader.string(INPUT_LANGUAGE_CODE)
            values[str(row.option)] = spoken or reader.read(row, default)
            continue
        values[str(row.option)] = reader.read(row, default)
    return values


def _read_strategy(reader: _Reader, settings: Settings) -> tuple[str, Any]:
    """`strategy` and its own parameters (None: it has none), read from its inputs over
    the app settings'. An input of another strategy is an error naming it and the
    strategy it belongs to."""
    strategy = reader.choice(INPUT_STRATEGY, STRATEGIES, settings.strategy)
    given = given_parameters(reader.data)
    reader.errors.extend(strategy_conflicts(strategy, given, RECORD_INPUT_NAMES))
    own = settings.parameters_of(strategy)
    if strategy in PARAMETER_TYPES:
        try:
            own = read_strategy_parameters(strategy, own, reader.read)
        except OptionError as error:
            reader.errors.append(str(error))
    return strategy, own


def _read_file_text(
    reader: _Reader, file_data: object, file_name: str | None, content_type: str | None
) -> str | None:
    """The text of `file_data`, its decoding warnings noted; None after an error."""
    decoded = read_file_data(file_data, file_name=file_name, content_type=content_type)
    if isinstance(decoded, FileDataError):
        reader.errors.append(decoded.message)
        return None
    reader.warnings.extend(f"input {INPUT_FILE_DATA!r}: {warning}" for warning in decoded.warnings)
    return decoded.text


def _read_format(reader: _Reader, settings: Settings) -> FormatName:
    """`format`, or the app setting; an unknown name falls back to text with a warning."""
    name = reader.string(INPUT_FORMAT)
    if name is None:
        return settings.format
    known = parse_choice(name, FORMAT_ALIASES)
    if known is None:
        reader.warnings.append(
            f"input 'format' {clipped_repr(name)} is not one of {', '.join(FORMATS)}; "
            "chunked as text"
        )
        return "text"
    return known


def _read_url(reader: _Reader) -> str | None:
    """`url`, if it is one a chunk may link to; anything else is an error naming why."""
    url = reader.string(INPUT_URL)
    if url is None:
        return None
    problem = url_problem(url)
    if problem is not None:
        reader.errors.append(f"input {INPUT_URL!r} must be {problem}")
        return None
    return url


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


class _Reader:
    """Reads typed inputs out of one record's data, collecting errors and warnings."""

    __slots__ = ("data", "errors", "warnings")

    def __init__(self, data: Mapping[str, object]) -> None:
        self.data = data
        self.errors: list[str] = []
        self.warnings: list[str] = []

    def clean(self, name: str, value: str) -> str:
        """`value` without lone surrogates; a warning says how many were replaced."""
        cleaned, count = replace_lone_surrogates(value)
        if count:
            self.warnings.append(
                f"input {name!r} contained {count} lone surrogate(s) (invalid UTF-16); "
                "each was replaced with U+FFFD"
            )
        return cleaned

    def string(self, name: str) -> str | None:
        """An optional string input; null and "" mean absent."""
        value = self.data.get(name)
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            self.errors.append(f"input {name!r} must be a string (got {describe(value)})")
            return None
        return self.clean(name, value)

    def integer(self, name: str, default: int) -> int:
        """An optional integer input: a JSON number or a numeric string such as "512"."""
        value = self.data.get(name)
        if value is None:
            return default
        number = parse_integer(value)
        if number is None:
            self.errors.append(
                f"input {name!r} must be an integer, as a JSON number or a numeric string "
                f'such as "512" (got {describe(value)})'
            )
            return default
        return number

    def number(self, name: str, default: float) -> float:
        """An optional number input: a JSON number or a numeric string such as "95"."""
        value = self.data.get(name)
        if value is None:
            return default
        number = parse_number(value)
        if number is None:
            self.errors.append(
                f"input {name!r} must be a number, as a JSON number or a numeric string "
                f'such as "95" (got {describe(value)})'
            )
            return default
        return number

    def read(self, row: Parameter, default: Any) -> Any:
        """An optional input of `row`'s kind (string, integer, number or choice)."""
        if row.kind == "string":
            return self.string(row.name) or default
        if row.kind == "integer":
            return self.integer(row.name, default)
        if row.kind == "number":
            return self.number(row.name, default)
        return self.choice(row.name, row.choices, default)

    def choice(self, name: str, choices: Mapping[str, T], default: T) -> T:
        """An optional input from a closed set, matched ignoring case."""
        value = self.data.get(name)
        if value is None or value == "":
            return default
        chosen = parse_choice(value, choices) if isinstance(value, str) else None
        if chosen is None:
            self.errors.append(
                f"input {name!r} must be one of {', '.join(choices)} (got {describe(value)})"
            )
            return default
        return chosen


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
