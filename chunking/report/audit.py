"""Checking a chunked document against the invariants the chunker promises.

Used by the tests and by `bench/corpus_audit.py`, which reports the figures over
the whole corpus.  Every check recomputes from the source; nothing is trusted.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from chunking.contextualize.prefix import ELLIPSIS
from chunking.model import Outline, RegionKind
from chunking.options import Unit
from chunking.outline.plain_outline import PlainOutline, plain_outline
from chunking.outline.sections import SectionTree
from chunking.parse.titles import resolve_title

PATH_DEBRIS = re.compile(
    r"\{\s*(?:[#.:]|/\*)[^{}]*\}"
    r"|¶"
    r"|\[\s*edit(?:\s+source)?\s*\]"
    r"|\s#+\s*$"
    r"|\blink to this heading\b",
    re.IGNORECASE,
)
"""Markup left in a heading name: an attribute list or MDX id comment (`{#id}`,
`{: .class}`, `{/*id*/}`), a Sphinx `¶`, a MediaWiki `[edit]`, a trailing ` #`
(a permalink glyph or closing ATX marks), Sphinx's hidden `Link to this heading`.
Braces alone are not debris: `OID Fanout (ID: {O, I, D, F})` is a real title."""


def flag_path_debris(audit: Audit, name: str, document: ChunkedDocument) -> None:
    """Flag each chunk whose heading path holds markup debris (see `PATH_DEBRIS`).

    A heuristic about real pages, not an invariant: a generated heading may well be
    `a #`, so the corpus audit runs it and `audit_document` does not.
    """
    for chunk in document.chunks:
        debris = next((entry for entry in chunk.headings if PATH_DEBRIS.search(entry)), None)
        if debris is not None:
            where = f"{name} chunk {chunk.ordinal} [{chunk.start}:{chunk.end}]"
            audit.flag("heading_path_debris", f"{where}: {debris!r}")


if TYPE_CHECKING:
    from chunking.measure.sizing import Sizer
    from chunking.model import Chunk, ChunkedDocument, Region
    from chunking.options import ChunkOptions


@dataclass(slots=True)
class Audit:
    """Counts of checks and violations over one or more documents."""

    documents: int = 0
    chunks: int = 0
    violations: Counter[str] = field(default_factory=Counter)
    allowed: Counter[str] = field(default_factory=Counter)
    """Cuts inside a row or line that are allowed because that row or line alone is too big."""
    examples: dict[str, str] = field(default_factory=dict)
    fill: list[float] = field(default_factory=list)
    """Size of each chunk as a share of the limit."""

    def flag(self, kind: str, example: str) -> None:
        """Record one violation, keeping the first example of each kind."""
        self.violations[kind] += 1
        self.examples.setdefault(kind, example)

    def merge(self, other: Audit) -> None:
        """Add another audit's counts to this one."""
        self.documents += other.documents
        self.chunks += other.chunks
        self.violations.update(other.violations)
        self.allowed.update(other.allowed)
        for kind, example in other.examples.items():
            self.examples.setdefault(kind, example)
        self.fill += other.fill


def audit_document(
    name: str,
    outline: Outline,
    document: ChunkedDocument,
    options: ChunkOptions,
    sizer: Sizer,
    *,
    title: str | None = None,
) -> Audit:
    """Check one chunked document; `outline` is the parse the chunker used."""
    audit = Audit(documents=1, chunks=len(document.chunks))
    source = document.source
    maximum = options.limits.maximum_page_length
    _, hidden = resolve_title(outline, given=title)
    # Paths and embedded text are those of the text the chunker planned on: the plain
    # text when markup is left out (its spans mapped back to the source are `content`).
    planned, plain = outline, None
    if options.strip_markup and outline.format == "markdown":
        plain = plain_outline(outline)
        planned = plain.outline
    tree = SectionTree.build(planned, hidden)
    previous_start = -1
    for chunk in document.chunks:
        where = f"{name} chunk {chunk.ordinal} [{chunk.start}:{chunk.end}]"
        audit.fill.append(chunk.size / maximum)
        exact = sizer.size(chunk.text)
        if exact > maximum or chunk.size != exact:
            audit.flag("oversize", f"{where}: size {exact} > {maximum}")
        if chunk.content != source[chunk.start : chunk.end]:
            audit.flag("content_not_slice", where)
        start, end = chunk.start, chunk.end
        if plain is not None:
            start, end = plain.plain_span(start, end)
        embedded = planned.source[start:end]
        if not chunk.text.endswith(embedded):
            audit.flag("text_not_ending_in_content", where)
        if chunk.start <= previous_start:
            audit.flag("starts_not_increasing", where)
        previous_start = chunk.start
        chain = tree.chain_of_chunk(planned.source, start, end)
        names = tree.names(chain)
        if chunk.headings != names:
            audit.flag("wrong_heading_path", f"{where}: {chunk.headings} != {names}")
        _check_common_parent(audit, tree, chain, start, end, where)
        prefix = chunk.text[: len(chunk.text) - len(embedded)]
        if options.title_prefix and names and names[-1] not in prefix and ELLIPSIS not in prefix:
            audit.flag("path_missing_from_text", f"{where}: {names[-1]!r}")
        for position, side in ((chunk.start, "start"), (chunk.end, "end")):
            _check_region_cut(audit, outline, sizer, maximum, position, f"{where} {side}")
        _check_reader_text(audit, outline, chunk, embedded, where)
        if options.limits.unit is Unit.CHARACTERS:
            _check_reader_size(audit, sizer, maximum, chunk, embedded, where)
    _check_headings(audit, name, outline)
    if not options.limits.maximum_pages_to_take:
        _check_coverage(audit, name, outline, document, plain)
    return audit


def _check_common_parent(
    audit: Audit, tree: SectionTree, chain: list[int], start: int, end: int, where: str
) -> None:
    """Every heading a chunk holds is under its path, or one of the path's own headings.

    A heading beside the path (an empty sibling section packed with the next one)
    means the path names less than the chunk holds.
    """
    first = bisect.bisect_left(tree.starts, start)
    last = bisect.bisect_left(tree.starts, end)
    for index in range(first, last):
        own = tree.chain_at(tree.starts[index])
        common = min(len(own), len(chain))
        if own[:common] != chain[:common]:
            audit.flag("path_not_common_parent", f"{where}: {tree.headings[index].text!r}")
            return


def _check_region_cut(
    audit: Audit, outline: Outline, sizer: Sizer, maximum: int, position: int, where: str
) -> None:
    """A cut inside a table row or a code line is a violation unless the line is too big."""
    source = outline.source
    for region in outline.regions:
        if not region.start < position < region.end:
            continue
        line_start = max(source.rfind("\n", 0, position), source.rfind("\r", 0, position)) + 1
        ends = [
            end for end in (source.find("\n", position), source.find("\r", position)) if end >= 0
        ]
        line_end = min(ends, default=len(source))
        at_line_edge = source[line_start:position].strip() == "" or (
            source[position:line_end].strip() == ""
        )
        if at_line_edge:
            continue
        kind = "cut_inside_table_row" if region.kind is RegionKind.TABLE else "cut_inside_code_line"
        if sizer.size(source[line_start:line_end]) > maximum // 2:
            audit.allowed[kind] += 1
        else:
            audit.flag(kind, where)


def _region_holding(outline: Outline, position: int) -> Region | None:
    return next((r for r in outline.regions if r.start <= position < r.end), None)


def _fence_of(lead: str) -> str:
    """The fence characters of a code block's fence line ('' for no fence)."""
    marks = lead.lstrip(" \t>")
    fence = marks[: len(marks) - len(marks.lstrip(marks[:1]))]
    return fence if fence[:1] in ("`", "~") and fence else ""


def _check_reader_text(
    audit: Audit, outline: Outline, chunk: Chunk, embedded: str, where: str
) -> None:
    """The reader text is the embedded text's prefix, then a continuation's header rows or
    fence line as the source has them, the content, and the closing fence of a chunk
    that ends inside a fenced code block; nothing else."""
    source = outline.source
    reader = chunk.reader_text
    if chunk.text != chunk.prefix + embedded:
        audit.flag("reader_prefix_not_text_prefix", where)
    region = _region_holding(outline, chunk.start)
    lead = ""
    if region is not None and region.lead and chunk.start >= region.lead_end:
        lead = source[region.start : region.lead_end]
        if chunk.opening is None or not chunk.opening.text.startswith(lead):
            audit.flag("continuation_without_its_lead", f"{where}: {lead[:60]!r}")
    elif chunk.opening is not None:
        audit.flag("lead_repeated_outside_a_continuation", where)
    opening = "" if chunk.opening is None else chunk.opening.text
    if opening[len(lead) :].strip():
        audit.flag("opening_not_lead_and_indentation", f"{where}: {opening[:60]!r}")
    if not reader.startswith(chunk.prefix + opening + chunk.content):
        audit.flag("reader_text_not_prefix_lead_content", where)
    closing = reader[len(chunk.prefix) + len(opening) + len(chunk.content) :]
    region = _region_holding(outline, chunk.end - 1)
    fence = _fence_of(region.lead) if region and region.kind is RegionKind.CODE else ""
    inside = bool(fence) and region is not None and region.lead_end - 1 <= chunk.end
    if inside and region is not None:
        # It holds the code block's end when the block's last line is its closing fence
        # and the chunk reaches into that line.
        last = source.rfind("\n", region.lead_end, region.end) + 1
        marks = source[max(last, region.lead_end) : region.end].lstrip(" \t>").rstrip()
        closed = last >= region.lead_end and len(marks) >= len(fence)
        closed = closed and marks == fence[0] * len(marks)
        inside = not (closed and chunk.end > last)
    if inside:
        marks = closing.lstrip("\n").lstrip(" \t>").rstrip()
        if not (
            closing.startswith("\n")
            and "\n" not in closing[1:]
            and len(marks) >= len(fence)
            and marks == fence[0] * len(marks)
        ):
            audit.flag("code_end_without_closing_fence", f"{where}: {closing[:60]!r}")
    elif closing:
        audit.flag("closing_fence_outside_code", f"{where}: {closing[:60]!r}")


def _check_reader_size(
    audit: Audit, sizer: Sizer, maximum: int, chunk: Chunk, embedded: str, where: str
) -> None:
    """The reader text is within the limit but for what it repeats (header rows, fence
    lines) and the markup the embedded text leaves out of the content; exact in
    characters, where sizes add up."""
    opening = "" if chunk.opening is None else chunk.opening.text
    closing = "" if chunk.closing is None else "\n" + chunk.closing.text
    repeated = sizer.size(opening) + sizer.size(closing)
    left_out = sizer.size(chunk.content) - sizer.size(embedded)
    size = sizer.size(chunk.reader_text)
    if size > maximum + repeated + left_out:
        audit.flag("reader_text_over_its_bound", f"{where}: {size} > {maximum} + {repeated}")


def _check_headings(audit: Audit, name: str, outline: Outline) -> None:
    code = [r for r in outline.regions if r.kind is RegionKind.CODE]
    for heading in outline.headings:
        if heading.start < outline.body_start:
            audit.flag("heading_in_front_matter", f"{name}: {heading.text!r}")
        if any(r.start <= heading.start < r.end for r in code):
            audit.flag("heading_in_code", f"{name}: {heading.text!r}")


def _check_coverage(
    audit: Audit,
    name: str,
    outline: Outline,
    document: ChunkedDocument,
    plain: PlainOutline | None,
) -> None:
    """No text lost between chunks; markup left out of the embedded text is no text."""
    source = document.source

    def shown(low: int, high: int) -> str:
        if plain is None:
            return source[low:high]
        # The gap as the whole document's plain text shows it: a gap alone may hold
        # half of a link, which alone would read as text.
        return plain.outline.source[plain.plain.plain_end(low) : plain.plain.plain_start(high)]

    covered_to = outline.body_start
    for chunk in document.chunks:
        gap = shown(covered_to, chunk.start) if chunk.start > covered_to else ""
        if gap.strip():
            audit.flag("lost_text", f"{name}: {gap.strip()[:60]!r}")
        covered_to = max(covered_to, chunk.end)
    tail = (
        shown(covered_to, outline.content_end).strip() if covered_to < outline.content_end else ""
    )
    if tail:
        audit.flag("lost_text", f"{name}: tail {tail[:60]!r}")
