"""A skill response as a few lines a person reads: per document, its chunks and warnings."""

from __future__ import annotations

import statistics
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

SHOWN_CHUNKS = 8
"""Chunk lines per document; the rest are counted, so two documents fit a screen."""
HEADING_WIDTH = 60
"""Characters of a heading path shown; longer paths keep their end (the nearest heading)."""
HEADING_SEPARATOR = " › "
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""Format characters that reorder what a terminal shows after them (Trojan Source)."""


@dataclass(frozen=True, slots=True)
class AnsweredFile:
    """One file's answer record and how long the skill took to answer it."""

    record: Mapping[str, object]
    """The response record (`recordId`, `data`, `errors`, `warnings`)."""
    seconds: float
    """Wall time of the skill call that answered it (chunking and embedding)."""


def summary_lines(answered: Sequence[AnsweredFile], unit: str, settings: str) -> list[str]:
    """Per document: chunk count, size range, time, the first chunks' heading paths, then
    errors and warnings in full; `unit` names the sizes, `settings` is shown once on top."""
    lines = [settings]
    for item in answered:
        lines.append("")
        lines.extend(_document_lines(item, unit))
    return lines


def _document_lines(item: AnsweredFile, unit: str) -> list[str]:
    record = item.record
    name = printable(str(record.get("recordId")))
    data = record.get("data")
    chunks = data.get("chunks") if isinstance(data, dict) else None
    chunks = chunks if isinstance(chunks, list) else []
    sizes = [int(chunk["size"]) for chunk in chunks if isinstance(chunk, dict)]
    spread = (
        f", {min(sizes)}-{max(sizes)} {unit} (median {statistics.median(sizes):g})" if sizes else ""
    )
    embedded = sum(1 for chunk in chunks if isinstance(chunk, dict) and "embedding" in chunk)
    vectors = f", {embedded} embedded" if embedded else ", not embedded"
    lines = [f"{name}: {len(chunks)} chunk(s){spread}{vectors}, {item.seconds:.1f} s"]
    for chunk in chunks[:SHOWN_CHUNKS]:
        if isinstance(chunk, dict):
            lines.append(f"  {chunk['ordinal']:>3}  {chunk['size']:>5}  {_path(chunk)}")
    if len(chunks) > SHOWN_CHUNKS:
        lines.append(f"  ... {len(chunks) - SHOWN_CHUNKS} more chunk(s)")
    for kind in ("errors", "warnings"):
        for entry in _messages(record.get(kind)):
            lines.append(f"  {kind[:-1]}: {printable(entry)}")
    return lines


def _path(chunk: Mapping[str, object]) -> str:
    """The chunk's heading path (its title when it has none); a long one keeps its first
    and last headings."""
    headings = chunk.get("headings")
    parts = [printable(str(h)) for h in headings] if isinstance(headings, list) else []
    title = printable(str(chunk.get("title") or "no heading"))
    path = HEADING_SEPARATOR.join(parts) or f"({title})"
    if len(path) > HEADING_WIDTH and len(parts) > 1:
        middle = ["…"] if len(parts) > 2 else []
        path = HEADING_SEPARATOR.join([_clip(parts[0], HEADING_WIDTH // 3), *middle, parts[-1]])
    return _clip(path, HEADING_WIDTH)


def printable(text: str) -> str:
    """`text` with every control character (C0, DEL, C1: a heading holding ESC ] 0 ; ...
    BEL would retitle the terminal, ESC [ 2 J clear it) and bidirectional override shown
    as an escape (`\\x1b`, `\\u202e`) instead of sent to the terminal."""
    if text.isprintable():
        return text
    return "".join(
        (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
        if unicodedata.category(c) == "Cc" or c in BIDI_CONTROLS
        else c
        for c in text
    )


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _messages(entries: object) -> list[str]:
    if not isinstance(entries, list):
        return []
    return [str(e.get("message")) if isinstance(e, dict) else str(e) for e in entries]
