"""Read loosely typed values (JSON inputs, app-setting strings, flags) into ints, choices and flags.

`read_value` is the one reader of a parameter's value on every surface: a record input,
an app setting and a command-line flag are read by the same rule for each kind (what an
integer is, a choice matched ignoring case, the bounds), and the surfaces' messages
differ only in what their `Source` says: how it names the parameter and shows the value
given. A value that cannot be used is a `Problem`, returned, never raised; each surface
collects them at its edge.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

from chunking.options import clipped_repr

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from chunking.options import ParameterNames
    from chunking.plan.declaration import Kind, Parameter

T = TypeVar("T")

_INTEGER_STRING = re.compile(r"[+-]?[0-9]{1,18}")
"""A decimal integer as text; 18 digits keep `int()` far from Python's digit limit."""

SHOWN_SCHEMES = frozenset({"https", "http"})
"""The only schemes a shown URL keeps; anything else is not shown at all."""
_HOST = re.compile(r"[a-z0-9.\-_]+|\[[0-9a-f:.]+\]")
"""A host name or a bracketed IPv6 address: nothing else of a URL is ever shown."""
URL_NOT_SHOWN = "(not a valid URL; not shown)"
"""What stands for a URL that has no scheme and host to show."""

_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})


@dataclass(frozen=True, slots=True)
class HugeNumber:
    """A JSON integer with more digits than Python reads (`sys.get_int_max_str_digits()`),
    kept as a marker so that only the record that uses it fails, not the whole batch."""

    digits: int
    """How many digits it has (its sign not counted)."""

    def __repr__(self) -> str:
        return f"<{self.digits} digits>"


def read_json_integer(text: str) -> int | HugeNumber:
    """`json.loads`'s `parse_int`: the integer, or a HugeNumber past Python's digit limit."""
    digits = len(text) - text.startswith("-")
    limit = sys.get_int_max_str_digits()  # 0: no limit
    if limit and digits > limit:
        return HugeNumber(digits)
    return int(text)


def huge_numbers(value: object) -> list[HugeNumber]:
    """Every HugeNumber in a decoded JSON value, however deep."""
    found: list[HugeNumber] = []
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, HugeNumber):
            found.append(item)
        elif isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return found


def json_type_name(value: object) -> str:
    """The JSON name of a decoded value's type, for messages a person reads."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float | HugeNumber):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def describe(value: object) -> str:
    """A short rendering of a value for an error message: its JSON type and a clipped repr."""
    if value is None:
        return "null"
    return f"{json_type_name(value)} {clipped_repr(value)}"


def shown_url(url: str) -> str:
    """The part of a URL setting any answer or log line may show: scheme, host and port.

    User info, path, query and fragment are dropped: they can hold a password, a key
    (`?api-key=`) or an internal route. A value that does not parse as an http(s) URL
    with a plain host is not shown at all.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return URL_NOT_SHOWN
    scheme, host = parts.scheme.lower(), parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if scheme not in SHOWN_SCHEMES or not _HOST.fullmatch(host):
        return URL_NOT_SHOWN
    return f"{scheme}://{host}" if port is None else f"{scheme}://{host}:{port}"


def parse_integer(value: object) -> int | None:
    """An int from a JSON number or a numeric string ("512"), else None.

    A skillset passes constants as literal inputs (`"source": "=512"`); the indexer
    resolves them to 512, but hand-written requests and app settings send "512".
    Booleans are not numbers, and a float must have an integral value.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str):
        stripped = value.strip()
        if _INTEGER_STRING.fullmatch(stripped):
            return int(stripped)
    return None


def parse_number(value: object) -> float | None:
    """A finite float from a JSON number or a numeric string, else None (booleans excluded)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def parse_choice(value: str, choices: Mapping[str, T]) -> T | None:
    """The choice whose name equals `value` ignoring case and surrounding space, else None."""
    wanted = value.strip().casefold()
    for name, choice in choices.items():
        if name.casefold() == wanted:
            return choice
    return None


def parse_flag(value: str) -> bool | None:
    """True/false from an app-setting string (true/false, 1/0, yes/no, on/off), else None."""
    wanted = value.strip().casefold()
    if wanted in _TRUE:
        return True
    if wanted in _FALSE:
        return False
    return None


@dataclass(frozen=True, slots=True)
class Problem:
    """Why a value given for a parameter cannot be used."""

    name: str
    """The parameter, as the surface that gave it names it (`input 'unit'`, `CHUNK_UNIT`,
    `option --unit`)."""
    message: str
    """The whole line a person reads, naming the parameter and what it takes."""


@dataclass(frozen=True, slots=True)
class Source:
    """Where values come from: all that tells the surfaces' messages apart."""

    names: ParameterNames
    """How the surface names a parameter (`input 'unit'`; a noun of "" names it alone)."""
    show: Callable[[object], str]
    """How a value given is shown after "got" (a record's: its JSON type and repr)."""
    forms: Mapping[Kind, str]
    """By kind, what a value may look like there, said after what it must be (a record's
    integer: `, as a JSON number or a numeric string such as "512"`)."""

    def name(self, parameter: str) -> str:
        """`parameter` (a record input name) as this surface names it."""
        spelled = self.names.spell(parameter)
        return f"{self.names.noun} {spelled}" if self.names.noun else spelled


def read_value(row: Parameter, given: object, source: Source) -> object:
    """`given`, the value `source` holds for `row`, read as the row's kind says: the
    value; None when nothing is given (null, and "" for a string or a choice); or a
    `Problem` naming the parameter as `source` names it and saying what it takes."""
    if given is None or (given == "" and row.kind in _BLANK_IS_ABSENT):
        return None
    read = _READERS[row.kind](row, given)
    if not isinstance(read, _Refused):
        return read
    name = source.name(row.name)
    if read.number is not None:
        return Problem(name, f"{name} must be {read.wanted} (got {read.number})")
    wanted = read.wanted + source.forms.get(row.kind, "")
    return Problem(name, f"{name} must be {wanted} (got {source.show(given)})")


_BLANK_IS_ABSENT = frozenset({"string", "choice"})
"""Kinds for which "" gives nothing: an indexer sends it for an empty enrichment."""


@dataclass(frozen=True, slots=True)
class _Refused:
    """What a kind's reader says of a value it refuses."""

    wanted: str
    """What the parameter takes (`an integer of at least 1`)."""
    number: int | None = None
    """The number read, when it is one but out of bounds (shown as read)."""


def _string(row: Parameter, given: object) -> object:
    return given if isinstance(given, str) else _Refused("a string")


def _integer(row: Parameter, given: object) -> object:
    number = parse_integer(given)
    low, high = row.minimum, row.maximum
    if number is None or (low is not None and number < low):
        return _Refused("an integer" if low is None else f"an integer of at least {low}")
    if high is not None and number > high:
        return _Refused(f"at most {high:g}", number)
    return number


def _number(row: Parameter, given: object) -> object:
    number = parse_number(given)
    return _Refused("a number") if number is None else number


def _seconds(row: Parameter, given: object) -> object:
    high = row.maximum or 0
    number = parse_number(given)
    if number is None or not 0 < number <= high:
        return _Refused(f"a number of seconds above 0 and at most {high:g}")
    return number


def _choice(row: Parameter, given: object) -> object:
    chosen = parse_choice(given, row.choices) if isinstance(given, str) else None
    return _Refused(f"one of {', '.join(row.choices)}") if chosen is None else chosen


def _switch(row: Parameter, given: object) -> object:
    value = parse_flag(given) if isinstance(given, str) else given
    return value if isinstance(value, bool) else _Refused("true or false")


_READERS: Mapping[Kind, Callable[[Parameter, object], object]] = {
    "string": _string,
    "integer": _integer,
    "number": _number,
    "seconds": _seconds,
    "choice": _choice,
    "switch": _switch,
}
"""The reader of each kind (a `file` is read by `skills.skill.file_data`): the value,
or what the kind takes."""
