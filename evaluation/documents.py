"""The documents of an evaluation: a folder of markdown, HTML and text files."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from chunking.cli.files import read_limited
from chunking.pipeline import parse

if TYPE_CHECKING:
    from pathlib import Path

    from chunking.model import Format

SUFFIX_FORMATS: dict[str, Format] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".html": "html",
    ".htm": "html",
    ".txt": "text",
    ".text": "text",
}
"""The formats the evaluation reads, by file suffix (the skill's `format` input)."""
NOT_DOCUMENTS = frozenset({"SOURCES.md", "README.md", "LICENSE.md"})
"""Provenance notes kept next to documents, never evaluated."""


class DocumentError(ValueError):
    """The documents folder cannot be used; the message says why."""


@dataclass(frozen=True, slots=True)
class EvalDocument:
    """One document, as the chunker sees it."""

    name: str
    """Path relative to the folder, with `/`: what a question's `document` names."""
    text: str
    """The file as read (UTF-8)."""
    format: Format
    source: str
    """The text chunk offsets point into: the file itself, or the HTML rendering."""


def load_documents(folder: Path) -> dict[str, EvalDocument]:
    """Every document under `folder`, by name, parsed once to get its source text."""
    if not folder.is_dir():
        raise DocumentError(f"{folder} is not a folder of documents")
    documents: dict[str, EvalDocument] = {}
    for path in sorted(folder.rglob("*")):
        format = SUFFIX_FORMATS.get(path.suffix.lower())
        if format is None or path.is_dir() or path.name in NOT_DOCUMENTS:
            continue
        try:
            # As read_text reads it (universal newlines), but never a FIFO, a device or
            # more than the skill takes (chunking.cli.files).
            text = read_limited(path).decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
        except UnicodeDecodeError as error:
            raise DocumentError(f"{path} is not UTF-8 text ({error.reason})") from error
        except OSError as error:
            raise DocumentError(f"cannot read {path}: {error.strerror}") from error
        name = path.relative_to(folder).as_posix()
        source = parse(text, format).source
        documents[name] = EvalDocument(name, text, format, source)
    if not documents:
        raise DocumentError(
            f"no documents in {folder} (looked for {', '.join(sorted(SUFFIX_FORMATS))})"
        )
    return documents
