"""Shared helpers for the chunking tests: chunk with options and audit the result."""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from chunking import (
    ChunkedDocument,
    ChunkOptions,
    Limits,
    SectionPacking,
    SplitMode,
    Unit,
    chunk_document,
)
from chunking.measure.sizing import make_sizer
from chunking.outline.plain_outline import plain_outline
from chunking.pipeline import FormatName, parse
from chunking.plan.sentences import sentencex_ends
from chunking.report.audit import Audit, audit_document
from tests.paths import ROOT

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from types import FrameType

    from chunking.model import Chunk
    from chunking.plan.scoring import Scoring


def options(
    maximum: int = 300,
    overlap: int = 0,
    *,
    unit: Unit = Unit.CHARACTERS,
    pages: int = 0,
    mode: SplitMode = SplitMode.PAGES,
    title_prefix: bool = True,
    packing: SectionPacking = SectionPacking.APART,
) -> ChunkOptions:
    """Chunk options with short argument names."""
    return ChunkOptions(
        limits=Limits(unit, maximum, overlap, pages),
        mode=mode,
        title_prefix=title_prefix,
        section_fill=packing.fill,
    )


def chunk_and_audit(
    text: str,
    opts: ChunkOptions,
    *,
    format: FormatName = "markdown",
    title: str | None = None,
    file_name: str | None = None,
    scoring: Scoring | None = None,
) -> tuple[ChunkedDocument, Audit]:
    """Chunk a document and check every invariant of the result (`scoring` for a
    strategy that embeds or scores)."""
    document = chunk_document(
        text, options=opts, format=format, title=title, file_name=file_name, scoring=scoring
    )
    outline = parse(text, format, file_name=file_name)
    sizer = make_sizer(opts.limits.unit, opts.encoder_model_name)
    audit = audit_document("doc", outline, document, opts, sizer, title=title)
    return document, audit


def edges_inside_lines(text: str, chunks: Sequence[Chunk], low: int = 0) -> list[int]:
    """Chunk starts and ends from `low` on that fall inside a line of `text` (with
    non-whitespace on both sides): a table row or code line cut there would be cut."""
    inside = []
    for chunk in chunks:
        for edge in (chunk.start, chunk.end):
            line_start = text.rfind("\n", 0, edge) + 1
            line_end = text.find("\n", edge)
            if edge >= low and text[line_start:edge].strip() and text[edge:line_end].strip():
                inside.append(edge)
    return inside


def embedded_content(text: str, format: FormatName, start: int, end: int) -> str:
    """The part of a chunk's embedded text that stands for `source[start:end]` (markdown
    markup noise left out, as the default `strip_markup` does)."""
    outline = parse(text, format)
    if outline.format != "markdown":
        return outline.source[start:end]
    planned = plain_outline(outline)
    low, high = planned.plain_span(start, end)
    return planned.outline.source[low:high]


@dataclass
class CountingSegmenter:
    """sentencex, noting how long each text it is given is and how it ends."""

    calls: list[int] = field(default_factory=list)
    last_characters: list[str] = field(default_factory=list)

    def __call__(self, language: str, text: str) -> list[int]:
        self.calls.append(len(text))
        self.last_characters.append(text[-1:])
        return sentencex_ends(language, text)


@contextlib.contextmanager
def python_lines_in(prefix: str) -> Iterator[list[int]]:
    """Counts the Python lines run in files whose path begins with `prefix`
    (sys.settrace), in the one-item list it yields: work a test can compare."""
    lines = [0]

    def local(frame: FrameType, event: str, argument: Any) -> Callable[..., Any]:
        if event == "line":
            lines[0] += 1
        return local

    def trace(frame: FrameType, event: str, argument: Any) -> Callable[..., Any] | None:
        return local if frame.f_code.co_filename.startswith(prefix) else None

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        yield lines
    finally:
        sys.settrace(previous)


def paths_and_anchors(text: str, limit: int = 300) -> list[tuple[tuple[str, ...], str | None]]:
    """Each chunk's heading path and anchor for markdown `text`, at `limit` characters.

    Asserts that every chunk is a slice of the source.
    """
    document = chunk_document(
        text,
        options=ChunkOptions(
            limits=Limits(Unit.CHARACTERS, limit, 0), section_fill=SECTION_PER_CHUNK
        ),
        format="markdown",
    )
    for chunk in document.chunks:
        assert chunk.content == document.source[chunk.start : chunk.end]
    return [(chunk.headings, chunk.anchor) for chunk in document.chunks]


SECTION_PER_CHUNK = 0.0
"""The section fill at which every heading begins a chunk, so a test about heading paths
sees every section's path (the default, 0.75, packs a few of these short sections into
one chunk under their common parent, and makes a small document one chunk). It was 0.25
until cuts the text picks: past a fill above 0 the strongest heading in reach ends a
chunk, not the first, so only 0 keeps each section apart whatever its size."""


COMMAND_SECONDS = 120
"""A bound on each command a test runs (one that blocks fails the test, it does not hang it)."""


def run_module(
    module: str, *args: str, address_space: int | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m module args` from the project's root, without CHUNK_ app settings and with
    no embedding provider; with `address_space`, the process may map at most that many
    bytes (a command that reads without bound fails with a MemoryError, it does not take
    the machine)."""

    def cap() -> None:
        if address_space is not None:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    env = {k: v for k, v in os.environ.items() if not k.startswith("CHUNK_")}
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        env={**env, "EMBEDDING_PROVIDER": "none"},
        capture_output=True,
        text=True,
        check=False,
        timeout=COMMAND_SECONDS,
        preexec_fn=cap,
    )
