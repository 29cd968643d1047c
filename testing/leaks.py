"""What must never reach an answer: secrets, Python's exception names, tracebacks and messages.

Errors and warnings say what happened and what to do in the skill's own words; the
exception's type and text, and an upstream service's own message, go to the logs only.
"""

from __future__ import annotations

import builtins
import functools
import importlib
import json
import pkgutil
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

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


# --- The one scan of answers and logs (issue 28's done-when) --------------------------

LIBRARY_PHRASES = (
    # zlib and gzip
    "while decompressing data",
    "incorrect header check",
    "incomplete or truncated stream",
    "invalid stored block lengths",
    "invalid distance too far back",
    "Not a gzipped file",
    "Compressed file ended before the end-of-stream marker",
    # json
    "Expecting ',' delimiter",
    "Expecting ':' delimiter",
    "enclosed in double quotes",
    "Invalid control character at",
    "Invalid \\escape",
    "Unterminated string starting at",
    # codecs
    "unknown encoding:",
    "is not a text encoding",
    "unexpected end of data",
    "incomplete multibyte sequence",
    "illegal multibyte sequence",
    "can't encode character",
    # pydantic
    "validation error for",
    "Field required [type=",
    "Input should be a valid",
    "errors.pydantic.dev",
    # httpx, httpcore, aiohttp
    "Server error '",
    "Client error '",
    "developer.mozilla.org",
    "All connection attempts failed",
    "Server disconnected without sending",
    "Cannot connect to host",
    "Connection reset by peer",
    # openai
    "Request timed out.",
    "Error code: ",
    "The api_key client option must be set",
    # azure SDK
    "Operation returned an invalid status",
    "failed to retrieve a token",
    "authentication unavailable",
    "aka.ms/azsdk",
    # azure-storage-blob (the embedding cache's blob store)
    "ErrorCode:",
    "RequestId:",
    "The specified blob does not exist",
    "The specified container does not exist",
    "Connection string is either blank or malformed",
    # sqlite3 (the embedding cache's local store)
    "database or disk is full",
    "file is not a database",
    "database is locked",
    "unable to open database file",
)
"""Words of the messages zlib, gzip, json, codecs, pydantic, httpx, aiohttp, openai and
the Azure SDK raise (tests/hardening/test_honest_scan.py makes each library raise and checks that
its message is caught)."""
OUR_EXCEPTION_WORDS = frozenset[str]()
"""Words of ours that end in Error or Exception (none: messages say "error" in lowercase)."""
EXCEPTION_WORD = re.compile(r"\b\w+(?:Error|Exception)\b")
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|File \"[^\"]*\", line \d+")
URL_USER_INFO = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/?#@\"'<>]+@")
URL_QUERY = re.compile(r"\bhttps?://[^\s?#\"'<>]*\?[^\s\"'<>#]+")
KEY_PARAMETER = re.compile(r"\b(?:api[-_]?key|code|sig|access_token|token)=", re.IGNORECASE)
CONNECTION_STRING = re.compile(
    r"\b(?:AccountKey|SharedAccessSignature|SharedAccessKey|DefaultEndpointsProtocol)=",
    re.IGNORECASE,
)
"""A storage connection string's parts (the embedding cache's EMBEDDING_CACHE_CONNECTION_STRING)."""
SECRETS = (
    "S3cr3t",
    "words-key",
    "sk-canary-0123456789",
    "sk-proj-AbC_123-xyz",
    "sk-caf",
    "openai-secret",
    "azure-secret",
    "rerank-secret",
    "soak-key-9f2c",
    "soak-S3cr3t",
    "Eby8vdM02xNOcqFlqUwJPLlm",
)
"""Keys and passwords the tests and the soak configure that no answer may show. Short or
word-like ones ("k", "test", "the-function-key") would be found in any text, as a
heading's anchor for one: the tests that check a secret stays hidden use these."""


def dishonest(
    text: str, echoed: str | Callable[[], str] = "", secrets: Iterable[str] = SECRETS
) -> list[str]:
    """What in `text` is not the skill's own words: a secret, a URL's user info or query,
    a library's message, an exception's name, a traceback.

    What the caller sent (`echoed`: a document's own text, a recordId) is not a leak;
    pass a function to read it only when something was found.
    """
    found = leaks(text)
    found += [m.group(0) for m in EXCEPTION_WORD.finditer(text)]
    for pattern in (TRACEBACK, URL_USER_INFO, URL_QUERY, KEY_PARAMETER, CONNECTION_STRING):
        found += [m.group(0) for m in pattern.finditer(text)]
    found += [phrase for phrase in (*LIBRARY_PHRASES, *secrets) if phrase in text]
    distinct = [word for word in dict.fromkeys(found) if word not in OUR_EXCEPTION_WORDS]
    if not distinct:
        return []
    sent = echoed() if callable(echoed) else echoed
    return [word for word in distinct if word not in sent]


DOCUMENT_FIELDS = frozenset({"content", "text", "readerText", "textItems"})
"""A chunk's fields that hold the document's own text (a slice, or the title and the
slice, with a continuation's header rows or fence lines copied from the document): the
skill copies them, it does not write them, so the scan of an answer skips them (and a
16-million-character record's answer is scanned in milliseconds)."""


def _strings(value: object, skip: frozenset[str] = frozenset()) -> Iterator[str]:
    """Every string (keys too) in a decoded JSON value, but under the keys in `skip`."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            if key not in skip:
                yield from _strings(item, skip)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, skip)


def readable(body: bytes, skip: frozenset[str] = frozenset()) -> list[str]:
    """A body's text as a reader sees it: JSON's strings decoded (but under the keys in
    `skip`), else the bytes as UTF-8."""
    text = body.decode("utf-8", errors="replace")
    try:
        return list(_strings(json.loads(text), skip))
    except (ValueError, RecursionError):
        return [text]


def sent_text(request: bytes) -> str:
    """What a request holds, raw and decoded: an answer may echo either."""
    return "\n".join([request.decode("utf-8", "replace"), *readable(request)])


def scan_answer(answer: bytes, request: bytes = b"", secrets: Iterable[str] = SECRETS) -> list[str]:
    """`dishonest` on each string of an HTTP answer but the document's own text
    (DOCUMENT_FIELDS); what `request` holds counts as echoed."""
    secrets = tuple(secrets)
    found: dict[str, None] = {}
    sent: list[str] = []

    def echoed() -> str:
        if not sent:
            sent.append(sent_text(request))
        return sent[0]

    for text in readable(answer, DOCUMENT_FIELDS):
        found.update(dict.fromkeys(dishonest(text, echoed, secrets)))
    return list(found)


def log_findings(line: str, sent: str = "", secrets: Iterable[str] = SECRETS) -> list[str]:
    """What a log line may not hold: a secret, a URL's user info or query (what the caller
    sent is not a leak). A bug's exception type and traceback, and a library's message,
    may be logged: they are for the operator (docs/design/hardening.md)."""
    found = [phrase for phrase in secrets if phrase in line]
    for pattern in (URL_USER_INFO, URL_QUERY, KEY_PARAMETER):
        found += [m.group(0) for m in pattern.finditer(line)]
    return [word for word in dict.fromkeys(found) if word not in sent]
