"""The `title` of YAML front matter, and a warning when the YAML cannot be read.

Most front matter is a flat list of `key: value` lines.  Those are read here
directly, with YAML's own rules for what a one-line value means; anything else
(lists, nesting, multi-line or escaped values, anything a YAML constructor could
refuse) goes to PyYAML.  The two agree on every front matter the direct reading
accepts (the tests hold them to it): it only saves the cost of libyaml's events
and PyYAML's Python-level constructor, half the time front matter took (about 5% of
the markdown parse before).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import yaml

_ENTRY = re.compile(r"([A-Za-z_][\w.\-]*):(?: +(.*?))? *")
"""A top-level `key: value` line (ASCII key, value on the same line)."""

_PLAIN_STARTS_ELSEWHERE = frozenset("-?:,[]{}#&*!|>%@`=<")
"""First characters that may make a plain value something else: indicators,
and `=` and `<<` (YAML's value and merge keys, which the safe constructor
refuses as values)."""


_STR = "tag:yaml.org,2002:str"


@functools.cache
def _resolver() -> yaml.resolver.Resolver:
    # PyYAML is loaded on first need: a document without front matter never needs it.
    import yaml  # noqa: PLC0415

    return yaml.resolver.Resolver()


class _NeedsYaml(Exception):
    """The front matter is more than flat one-line entries."""


def front_matter_title(content: str) -> tuple[str | None, str | None]:
    """The front matter's `title` (stripped, if a non-blank string) and a
    warning when its YAML cannot be read."""
    try:
        return _as_title(_flat_title(content)), None
    except _NeedsYaml:
        return _yaml_title(content)


def _as_title(value: object) -> str | None:
    """A title is a non-blank string, stripped."""
    return value.strip() if isinstance(value, str) and value.strip() else None


def _flat_title(content: str) -> str | None:
    """The `title` of flat front matter if YAML would build a string (else None).

    Raises `_NeedsYaml` for any line that is not blank, a comment, or a
    one-line entry whose value YAML reads without possible error.
    """
    title: str | None = None
    for raw_line in content.split("\n"):
        line = raw_line.removesuffix("\r")
        if not line.isprintable():  # tabs, control characters, odd line breaks
            raise _NeedsYaml
        if not line.strip() or line.startswith("#"):
            continue
        entry = _ENTRY.fullmatch(line)
        if entry is None:
            raise _NeedsYaml
        value = _value(entry.group(2) or "")
        if entry.group(1) == "title":
            # Only the title's type matters (a repeated key: YAML keeps the last).
            title = value if not isinstance(value, _Plain) else value.resolved()
    return title


class _Plain(str):
    """A plain (unquoted) one-line value, whose type YAML infers."""

    __slots__ = ()

    def resolved(self) -> str | None:
        """The value as text if YAML reads it as a string (not a number, boolean
        or null), else None."""
        import yaml  # noqa: PLC0415

        tag = _resolver().resolve(yaml.ScalarNode, str(self), (True, False))  # type: ignore[no-untyped-call]
        return str(self) if tag == _STR else None


def _value(text: str) -> str | None:
    """A one-line value: quoted text as a string, plain text as `_Plain`.

    Raises `_NeedsYaml` for values YAML might read otherwise or refuse.
    """
    if not text:
        return None
    if text[0] == '"':
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != '"' or '"' in inner or "\\" in inner:
            raise _NeedsYaml
        return inner
    if text[0] == "'":
        inner = text[1:-1]
        if len(text) < 2 or text[-1] != "'" or "'" in inner.replace("''", ""):
            raise _NeedsYaml
        return inner.replace("''", "'")
    if (
        text[0] in _PLAIN_STARTS_ELSEWHERE
        or ": " in text
        or " #" in text
        or text.endswith(":")
        # Dates are constructed by Python, which refuses e.g. 2024-02-30.
        or (text[0].isdigit() and "-" in text)
    ):
        raise _NeedsYaml
    return _Plain(text)


def _yaml_title(content: str) -> tuple[str | None, str | None]:
    import yaml  # noqa: PLC0415

    # libyaml's loader when PyYAML has it: the pure-Python one was a sixth
    # of the whole parse on the corpus.
    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(content, Loader=loader)
    # ValueError: PyYAML builds dates and numbers with Python constructors,
    # which reject values like `2024-02-30`; RecursionError: deeply nested flow
    # collections.
    except (yaml.YAMLError, ValueError, RecursionError) as error:
        # PyYAML's own message quotes the document: only its kind goes to the log.
        import logging  # noqa: PLC0415  # a start-up in characters mode has no other use for it

        logging.getLogger(__name__).debug("front matter not read: %s", type(error).__name__)
        return None, _unreadable(error) + ", so no title was read from it"
    return _as_title(data.get("title") if isinstance(data, dict) else None), None


def _unreadable(error: Exception) -> str:
    """Why the front matter could not be read, in words for the document's author."""
    import yaml  # noqa: PLC0415

    if isinstance(error, yaml.MarkedYAMLError):
        mark = error.problem_mark or error.context_mark
        where = "" if mark is None else f" (at line {mark.line + 1} of the front matter)"
        if isinstance(error, yaml.constructor.ConstructorError):
            # A tag such as !shout or !!python/object, or a list used as a key.
            return f"front matter has a YAML tag or key that is not plain data{where}"
        return f"front matter is not valid YAML{where}"
    if isinstance(error, yaml.reader.ReaderError):
        return f"front matter has a character YAML does not allow (U+{error.character:04X})"
    if isinstance(error, RecursionError):
        return "front matter nests lists or mappings too deeply to be read"
    if isinstance(error, ValueError):
        return (
            "front matter has a value YAML cannot build (such as an impossible date, or a "
            "number with thousands of digits)"
        )
    return "front matter is not valid YAML"


_METADATA_ENTRY = re.compile(r"([A-Za-z][A-Za-z0-9 _\-]{0,39}):[ \t]+(\S[^\n]*?)[ \t]*\r?$")
"""A MultiMarkdown metadata line: `Key: value` (keys may hold spaces: `Base Header Level`)."""
_PANDOC_LINE = re.compile(r"%[ \t]+(\S[^\n]*?)[ \t]*\r?$")
"""A Pandoc title block line: `% title`, then `% author`, `% date`."""
_CONTINUATION = re.compile(r"[ \t]+\S[^\n]*$")


def metadata_block(text: str, start: int) -> tuple[int, str | None] | None:
    """MultiMarkdown metadata or a Pandoc title block at `start`: where the body starts
    (after the blank line that ends it) and its title; None when there is none.

    Only a block that names a title counts (a `Title:` entry, or a Pandoc `%` first line):
    a document may well begin with `Note: ...` or `Status: draft`, which is body text.
    """
    end = text.find("\n\n", start)
    end = len(text) if end < 0 else end
    lines = text[start:end].split("\n")
    if not lines or not lines[0].strip():
        return None
    title: str | None = None
    pandoc = _PANDOC_LINE.match(lines[0])
    if pandoc is not None:
        title = pandoc.group(1)
        entry = _PANDOC_LINE
    else:
        entry = _METADATA_ENTRY
    for number, line in enumerate(lines):
        matched = entry.match(line)
        if matched is None:
            if number == 0 or not _CONTINUATION.match(line):
                return None
            continue
        if entry is _METADATA_ENTRY and matched.group(1).strip().casefold() == "title":
            title = title or matched.group(2)
    if title is None:
        return None
    body = min(end + 2, len(text))
    return body, title.strip() or None
