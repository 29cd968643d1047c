"""What must never reach an answer: Python's exception names, tracebacks and messages.

Errors and warnings say what happened and what to do in the skill's own words; the
exception's type and text, and an upstream service's own message, go to the logs only.
"""

from __future__ import annotations

import builtins
import functools
import importlib
import pkgutil
import re

EXCEPTION_MODULES = (
    "builtins",
    "json",
    "ssl",
    "socket",
    "asyncio",
    "concurrent.futures",
    "yaml",
    "openai",
    "httpx2",
    "httpcore2",
    "h11",
    "azure.core.exceptions",
    "azure.identity",
)
"""Modules whose exception classes' names must not appear (yaml's submodules too)."""
ENGLISH_WORDS = frozenset({"Warning"})
"""Exception names that are also words a message may use."""
PYTHON_PHRASES = (
    "Traceback (most recent call last)",
    'File "',
    "sys.set_int_max_str_digits",
    "Exceeds the limit",
    "for integer string conversion",
    "Expecting value",
    "Expecting property name",
    "Unterminated string",
    "Extra data",
    "(char ",
    "codec can't",
    "ordinal not in range",
    "invalid start byte",
    "invalid continuation byte",
    "object has no attribute",
    "NoneType",
    "<unicode string>",
    "could not determine a constructor",
    "while scanning",
    "while parsing",
    "while constructing",
    "found character",
    "found unhashable key",
    "found undefined alias",
    "unacceptable character",
    "day is out of range",
    "_ssl.c",
    "[Errno",
    "[SSL:",
    "Illegal header value",
    "Connection error.",
    "No embedding data received",
)
"""Words of Python's (and its libraries') own messages."""


@functools.cache
def exception_names() -> frozenset[str]:
    """The class names of every exception the skill's libraries define."""
    names: set[str] = set()
    for name in EXCEPTION_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        modules = [module]
        if name == "yaml":
            modules += [
                importlib.import_module(f"yaml.{found.name}")
                for found in pkgutil.iter_modules(module.__path__)
            ]
        for each in modules:
            names.update(
                key
                for key, value in list(vars(each).items())
                if isinstance(value, type) and issubclass(value, BaseException)
            )
    names.update(
        key
        for key, value in vars(builtins).items()
        if isinstance(value, type) and issubclass(value, BaseException)
    )
    # Lowercase names are aliases (socket.error, ssl.error), and words a message may use.
    return frozenset(name for name in names - ENGLISH_WORDS if name[0].isupper())


@functools.cache
def _names_pattern() -> re.Pattern[str]:
    alternatives = "|".join(sorted(map(re.escape, exception_names()), key=len, reverse=True))
    return re.compile(rf"\b(?:{alternatives})\b")


def leaks(text: str, echoed: str = "", upstream: tuple[str, ...] = ()) -> list[str]:
    """What in `text` is Python's or a service's words rather than the skill's.

    `echoed` is what the caller sent (a recordId, a value quoted back): what it holds is
    not a leak. `upstream` are words only an upstream service's message contains.
    """
    found = [match.group(0) for match in _names_pattern().finditer(text)]
    found += [phrase for phrase in (*PYTHON_PHRASES, *upstream) if phrase in text]
    return [word for word in found if word not in echoed]
