"""A skill response as a few lines a person reads: per document, its chunks and warnings."""

from __future__ import annotations

import re
import statistics
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

SHOWN_CHUNKS = 8
"""Chunk lines per document; the rest are counted, so two documents fit a screen."""
HEADING_WIDTH = 64
"""Characters of a heading path shown; longer paths keep their end (the nearest headings)."""
HEADING_SEPARATOR = " › "
_ATX = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
"""A markdown ATX heading line (CommonMark's rule: up to three spaces, closing #s cut)."""
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
    """The chunk's heading path, then the first heading its content starts with when that
    is a deeper one and how many more sections it holds, so two chunks under one heading
    tell apart, or `(continued)` when it goes on with a section an earlier chunk began; a
    long path keeps its end (the nearest headings). A chunk before any
    heading shows `(before the first heading; title ...)`."""
    headings = chunk.get("headings")
    parts = [printable(str(h)) for h in headings] if isinstance(headings, list) else []
    content = chunk.get("content")
    content = content if isinstance(content, str) else ""
    inside = [printable(h) for h in _content_headings(content)]
    if inside and parts and inside[0] == parts[-1]:
        inside = inside[1:]  # the chunk starts at its own path's last heading
        more = len(inside)
    else:
        more = max(len(inside) - 1, 0)
        parts += inside[:1]
    suffix = f" (+{more} more section{'s' if more > 1 else ''})" if more else ""
    first = next((line for line in content.splitlines() if line.strip()), "")
    if parts and content and not _ATX.match(first):
        suffix = " (continued)" + suffix  # the rest of a section a chunk before began
    if not parts:
        title = printable(str(chunk.get("title") or ""))
        return _clip(f"(before the first heading; title {title})" if title else "(no heading)",
                     HEADING_WIDTH)  # fmt: skip
    return _keep_end(parts, HEADING_WIDTH - len(suffix)) + suffix


def _content_headings(content: str) -> list[str]:
    """The markdown headings of a chunk's content, outside code fences."""
    found: list[str] = []
    fence = ""
    for line in content.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")):
            marker = stripped[:3]
            fence = "" if fence == marker else fence or marker
            continue
        match = _ATX.match(line)
        if match and not fence:
            found.append(match.group(1).strip())
    return found


def _keep_end(parts: Sequence[str], width: int) -> str:
    """`parts` joined, or `… › ` and as many of the last ones as fit in `width`."""
    path = HEADING_SEPARATOR.join(parts)
    if len(path) <= width:
        return path
    kept: list[str] = []
    for part in reversed(parts):
        if len(HEADING_SEPARATOR.join(["…", part, *kept])) > width:
            break
        kept.insert(0, part)
    if not kept:
        return "…" + parts[-1][-(width - 1) :]
    return HEADING_SEPARATOR.join(["…", *kept])


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
