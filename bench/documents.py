"""Corpus documents for the benchmarks: read verbatim, picked the same way every run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bench.peers import Kind

DEFAULT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
"""../shared/corpus next to the project (the developers' and CI's layout)."""
SUFFIXES: dict[Kind, frozenset[str]] = {
    "markdown": frozenset({".md", ".markdown"}),
    "html": frozenset({".html", ".htm"}),
}
BYTES_PER_MB = 1_000_000
NOT_DOCUMENTS = frozenset({"SOURCES.md", "README.md"})
"""Provenance and licence notes next to the documents, not corpus documents."""


@dataclass(frozen=True, slots=True)
class Document:
    """One corpus file."""

    name: str
    """Path relative to the corpus root."""
    text: str
    """The file decoded as UTF-8, line endings untouched."""
    size: int
    """Bytes in the file (MB/s figures count these)."""


def load_corpus(root: Path, kind: Kind, limit: int | None = None) -> list[Document]:
    """The `kind` documents under `root`, sorted; `limit` of them spread evenly if given."""
    paths = sorted(
        path
        for path in root.rglob("*")
        if path.suffix.lower() in SUFFIXES[kind]
        and path.name not in NOT_DOCUMENTS
        and path.is_file()
    )
    if limit is not None and limit < len(paths):
        # Evenly spaced, so a small sample still spans every subfolder.
        paths = [paths[index * len(paths) // limit] for index in range(limit)]
    documents = []
    for path in paths:
        data = path.read_bytes()
        documents.append(
            Document(path.relative_to(root).as_posix(), data.decode("utf-8", "replace"), len(data))
        )
    return documents


def megabytes(documents: list[Document]) -> float:
    """Total size in MB (10^6 bytes)."""
    return sum(document.size for document in documents) / BYTES_PER_MB
