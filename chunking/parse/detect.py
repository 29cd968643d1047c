"""Choosing a format from a content type, a file name or the text itself."""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chunking.model import Format

_CONTENT_TYPES: dict[str, Format] = {
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "text/html": "html",
    "application/xhtml+xml": "html",
    "text/plain": "text",
}
_EXTENSIONS: dict[str, Format] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".mkd": "markdown",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".txt": "text",
    ".text": "text",
}
TEXT_SUFFIXES = frozenset(_EXTENSIONS)
"""File name suffixes of the formats read here (a folder's files are chosen by them)."""
SNIFF_CHARACTERS = 4096
"""Only the start of a document is looked at to guess its format."""

_HTML_START = re.compile(
    r"\A(?:\ufeff)?\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.I | re.S
)
_HTML_TAG = re.compile(
    r"</?(?:p|div|h[1-6]|ul|ol|li|table|pre|section|article|span|a)\b[^>]*>", re.I
)
_MARKDOWN_SIGNAL = re.compile(
    r"^(?:#{1,6}[ \t]|```|~~~|---\s*$|\s*[-*+][ \t]|\s*\d+[.)][ \t]|>|\|.*\|)"
    r"|\[[^\]\n]+\]\([^)\n]+\)",
    re.M,
)
_BOM = "\ufeff"
HTML_TAG_DENSITY = 3
"""At least this many common block or link tags near the start marks a fragment as HTML."""


def detect_format(
    text: str, *, content_type: str | None = None, file_name: str | None = None
) -> Format:
    """The format of a document: content type first, then file name, then the text."""
    if content_type:
        mime = content_type.split(";", 1)[0].strip().lower()
        if mime in _CONTENT_TYPES:
            return _CONTENT_TYPES[mime]
    if file_name:
        suffix = PurePath(file_name.split("?", 1)[0]).suffix.lower()
        if suffix in _EXTENSIONS:
            return _EXTENSIONS[suffix]
    # A byte order mark would keep `^` from matching a heading on the first line.
    head = text[:SNIFF_CHARACTERS].removeprefix(_BOM)
    if _HTML_START.match(head) or len(_HTML_TAG.findall(head)) >= HTML_TAG_DENSITY:
        return "html"
    if _MARKDOWN_SIGNAL.search(head):
        return "markdown"
    return "text"
