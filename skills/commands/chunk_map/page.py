"""The chunk map as one self-contained HTML page: inline CSS, no fetches, readable
without scripts (a few lines of inline script only add hover highlighting)."""

from __future__ import annotations

import html
import re
import statistics
from typing import TYPE_CHECKING

from chunking.model import RegionKind
from chunking.options import SectionPacking, Unit
from skills.commands.chunk_map.build import Annotations, segments

if TYPE_CHECKING:
    from chunking.options import ChunkOptions
    from skills.commands.chunk_map.build import ChunkCard, ChunkMap, Segment

PALETTE = ("#cfe3fb", "#fde2c4", "#d5f0d0", "#f7d4e4", "#e4dafa", "#fbf3b8")
"""Pastel band colours; neighbouring chunks never share one (chunk i gets i mod 6)."""
STRIPE = 5
"""Width in pixels of each colour's stripe in an overlap."""
REGION_NAMES = {RegionKind.TABLE: "table", RegionKind.CODE: "code block"}
ROW_NAMES = {RegionKind.TABLE: "row", RegionKind.CODE: "line"}
REPEATED_NAMES = {
    RegionKind.TABLE: "repeats its header rows",
    RegionKind.CODE: "reopens its fence",
}
"""What a continuation's reader text does for it."""

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 0; color: #222; background: #fff; }
header, .banner { padding: .8em 2em; }
header { background: #f3f5f8; border-bottom: 1px solid #dde; }
h1 { font-size: 1.3em; margin: .2em 0; }
.banner { background: #fff6e0; border-bottom: 1px solid #ecd9a6; position: sticky; top: 0;
  z-index: 1; max-height: 40vh; overflow: auto; }
.banner h2 { font-size: 1.1em; margin: .2em 0; }
.warnings li { color: #8a4b00; }
.key span { padding: 0 .4em; margin-right: .6em; border-radius: 3px; }
main { padding: 1em 2em; }
.text { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 13px; line-height: 1.55; white-space: pre-wrap; overflow-wrap: anywhere; }
.seg.out { color: #888; background: repeating-linear-gradient(90deg, #f4f4f4 0 2px, #fff 2px 4px); }
.seg.ov { box-shadow: inset 0 -3px 0 #555; }
.seg.code, .seg.table { color: #123c69; }
.seg.mark { outline: 2px solid #d00; outline-offset: 0; text-decoration: underline #d00 2px; }
#mark { scroll-margin-top: 45vh; }
.seg.em { font-weight: 700; }
.seg[data-begins]::before { content: "\\25B8" attr(data-begins); font: 700 11px system-ui;
  color: #fff; background: #445; border-radius: 3px; padding: 0 3px; margin-right: 2px; }
.seg[data-ends]::after { content: "\\25C2" attr(data-ends); font: 700 11px system-ui;
  color: #445; border: 1px solid #445; border-radius: 3px; padding: 0 2px; margin-left: 2px; }
.card { display: block; white-space: normal; font: 12px/1.4 system-ui, sans-serif;
  border: 1px solid #99a; border-left: 6px solid #99a; border-radius: 4px;
  margin: .7em 0 .3em; padding: .3em .6em; background: #fafbfc; max-width: 72em; }
.card.em { border-color: #d00; box-shadow: 0 0 0 2px #f6c0c0; }
.card .prefix { font-family: ui-monospace, monospace; white-space: pre-wrap;
  background: #eef; padding: 0 .3em; }
.card .badge { background: #d00; color: #fff; border-radius: 3px; padding: 0 .4em;
  margin-left: .4em; font-weight: 700; }
.card .cont { color: #123c69; font-weight: 600; }
.card pre { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 20em; overflow: auto;
  background: #fff; border: 1px solid #ddd; padding: .4em; margin: .3em 0; }
.card summary { cursor: pointer; color: #445; }
.hl { filter: brightness(0.85) saturate(1.6); }
"""
_SCRIPT = """
document.addEventListener('mouseover', function (event) {
  document.querySelectorAll('.hl').forEach(function (e) { e.classList.remove('hl'); });
  var item = event.target.closest && event.target.closest('[data-chunks],[data-chunk]');
  if (!item) return;
  var ids = (item.getAttribute('data-chunks') || item.getAttribute('data-chunk')).split(' ');
  ids.forEach(function (id) {
    if (!id) return;
    document.querySelectorAll('[data-chunks~="' + id + '"],[data-chunk="' + id + '"]')
      .forEach(function (e) { e.classList.add('hl'); });
  });
});
"""


_SCHEME = re.compile(r"\s*[a-z][a-z0-9+.-]*:", re.IGNORECASE)
"""A link with a scheme (`javascript:`, `data:`) is never written: the map links only to
pages beside it."""


def _text(value: str) -> str:
    """Escaped for HTML text or attributes; CR as a reference, since a parser would turn
    a raw CR into LF and the page must show the source character for character."""
    return html.escape(value, quote=True).replace("\r", "&#13;")


def render_chunk_map(chunk_map: ChunkMap, annotations: Annotations | None = None) -> str:
    """The page: a header, the source with each chunk's span as a coloured band (overlaps
    striped and underlined), a card before each chunk, and the annotations' banner."""
    notes = annotations or Annotations()
    document = chunk_map.document
    pieces = segments(chunk_map, notes.mark)
    begins = {card.chunk.start: card for card in chunk_map.cards}
    last_segment: dict[int, int] = {}
    for index, piece in enumerate(pieces):
        for ordinal in piece.chunks:
            last_segment[ordinal] = index
    ends: dict[int, list[int]] = {}
    for ordinal, index in last_segment.items():
        ends.setdefault(index, []).append(ordinal)
    badges: dict[int, list[str]] = {}
    for ordinal, label in notes.badges:
        badges.setdefault(ordinal, []).append(label)
    emphasis = set(notes.emphasis)
    marked_once = False
    body: list[str] = []
    for index, piece in enumerate(pieces):
        card = begins.get(piece.start) if piece.chunks else None
        if card is not None:
            body.append(_card_html(chunk_map, card, badges, emphasis))
        anchor = ""
        if piece.marked and not marked_once:
            anchor, marked_once = ' id="mark"', True
        body.append(
            _segment_html(
                document.source, piece, card, sorted(ends.get(index, ())), emphasis, anchor
            )
        )
    return _page(chunk_map, notes, "".join(body))


def _segment_html(
    source: str,
    piece: Segment,
    card: ChunkCard | None,
    ends: list[int],
    emphasis: set[int],
    anchor: str,
) -> str:
    classes = ["seg"]
    style = ""
    if not piece.chunks:
        classes.append("out")
    elif len(piece.chunks) == 1:
        style = f"background:{PALETTE[piece.chunks[0] % len(PALETTE)]}"
    else:
        classes.append("ov")
        stripes = ",".join(
            f"{PALETTE[o % len(PALETTE)]} {i * STRIPE}px {(i + 1) * STRIPE}px"
            for i, o in enumerate(piece.chunks)
        )
        style = f"background:repeating-linear-gradient(135deg,{stripes})"
    if piece.region is not None:
        classes.append(piece.region.value)
    if piece.marked:
        classes.append("mark")
    if emphasis.intersection(piece.chunks):
        classes.append("em")
    attributes = [
        f'class="{" ".join(classes)}"',
        f'data-chunks="{" ".join(map(str, piece.chunks))}"',
        f'data-start="{piece.start}" data-end="{piece.end}"',
    ]
    if style:
        attributes.append(f'style="{style}"')
    if card is not None:
        attributes.append(f'data-begins="{card.chunk.ordinal}"')
    if ends:
        attributes.append(f'data-ends="{" ".join(map(str, ends))}"')
    text = _text(source[piece.start : piece.end])
    return f"<span{anchor} {' '.join(attributes)}>{text}</span>"


def _card_html(
    chunk_map: ChunkMap, card: ChunkCard, badges: dict[int, list[str]], emphasis: set[int]
) -> str:
    chunk = card.chunk
    limits = chunk_map.options.limits
    unit = "tokens" if limits.unit is Unit.TOKENS else "characters"
    ordinal = chunk.ordinal
    colour = PALETTE[ordinal % len(PALETTE)]
    parts = [
        f"<b>chunk {ordinal}</b>",
        *(f'<span class="badge">{_text(label)}</span>' for label in badges.get(ordinal, ())),
        f' · <span class="size">{chunk.size}</span> of {limits.maximum_page_length} {unit}',
        f" · source {chunk.start}–{chunk.end}",
    ]
    if chunk.anchor:
        parts.append(f" · anchor #{_text(chunk.anchor)}")
    previous = chunk_map.document.chunks[ordinal - 1] if ordinal else None
    if previous is not None and previous.end > chunk.start:
        shared = previous.end - chunk.start
        parts.append(f" · overlaps chunk {ordinal - 1} by {shared} characters")
    prefix = (
        f'<span class="prefix">{_text(card.prefix.rstrip())}</span>'
        if card.prefix
        else '<span class="prefix none"></span><i>no prefix</i>'
    )
    parts.append(f"<br>embedded prefix: {prefix}")
    if card.continues is not None:
        repeated = f"; the reader text {REPEATED_NAMES[card.continues]}" if chunk.opening else ""
        parts.append(
            f'<br><span class="cont">continues a {REGION_NAMES[card.continues]}</span>, '
            f"from a {ROW_NAMES[card.continues]}{repeated}"
        )
    if chunk.closing is not None:
        parts.append(
            '<br><span class="cont">ends inside a code block</span>; '
            "the reader text closes its fence"
        )
    reader = chunk.reader_text
    parts.append(
        f"<details><summary>embedded text ({len(chunk.text)} characters)</summary>"
        f"<pre>{_text(chunk.text)}</pre></details>"
        f"<details><summary>reader text ({len(reader)} characters: what to hand a model)"
        f'</summary><pre class="reader">{_text(reader)}</pre></details>'
    )
    classes = "card em" if ordinal in emphasis else "card"
    return (
        f'<aside class="{classes}" id="chunk-{ordinal}" data-chunk="{ordinal}" '
        f'data-size="{chunk.size}" style="border-left-color:{colour}">{"".join(parts)}</aside>'
    )


def settings_line(options: ChunkOptions) -> str:
    """The options a map was made with, in the skill's input names, on one line."""
    limits = options.limits
    packing = SectionPacking.APART if options.section_fill is not None else SectionPacking.PACKED
    unit = limits.unit.value
    if limits.unit is Unit.TOKENS:
        unit = f"{unit} ({options.encoder_model_name})"
    return (
        f"strategy {options.strategy}, maximumPageLength {limits.maximum_page_length} {unit}, "
        f"pageOverlapLength {limits.page_overlap_length}, textSplitMode {options.mode.value}, "
        f"sections {packing.value}, title prefix {'on' if options.title_prefix else 'off'}, "
        f"markup {'left out of' if options.strip_markup else 'kept in'} the embedded text"
    )


def _sections_rule(options: ChunkOptions) -> str:
    """How the chunks met headings, as `--sections` and CHUNK_SECTIONS say it."""
    if options.section_fill is None:
        return "Sections packed: small sections are packed up to the limit."
    if options.section_fill == 0:
        return "Sections apart: every heading begins a chunk."
    return (
        f"Sections apart: a heading ends a chunk once it holds {options.section_fill:.0%} of "
        "its room, and the rest of a document that fits in one chunk is one chunk."
    )


def _summary(chunk_map: ChunkMap) -> str:
    document = chunk_map.document
    chunks = document.chunks
    covered = 0
    shared = 0
    for piece in segments(chunk_map):
        if piece.chunks:
            covered += piece.end - piece.start
        if len(piece.chunks) > 1:
            shared += piece.end - piece.start
    sizes = [c.size for c in chunks]
    spread = (
        f"sizes {min(sizes)}–{max(sizes)} (median {statistics.median(sizes):g})" if sizes else ""
    )
    tables = sum(1 for c in chunk_map.cards if c.continues is RegionKind.TABLE)
    code = sum(1 for c in chunk_map.cards if c.continues is RegionKind.CODE)
    return (
        f"{document.format}, {len(document.source):,} characters, {len(chunks)} chunks, "
        f"{spread}; {len(document.source) - covered:,} characters in no chunk, "
        f"{shared:,} in an overlap; {tables} table and {code} code continuation(s)"
    )


def _page(chunk_map: ChunkMap, notes: Annotations, body: str) -> str:
    document = chunk_map.document
    warnings = "".join(f"<li>{_text(w)}</li>" for w in document.warnings)
    banner = ""
    if notes.heading or notes.notes or notes.back:
        lines = "".join(f"<li>{_text(line)}</li>" for line in notes.notes)
        back = (
            f'<p><a href="{_text(notes.back[0])}">{_text(notes.back[1])}</a></p>'
            if notes.back and not _SCHEME.match(notes.back[0])
            else ""
        )
        jump = '<p><a href="#mark">jump to the marked span</a></p>' if notes.mark else ""
        banner = (
            f'<section class="banner">{back}<h2>{_text(notes.heading)}</h2>'
            f"<ul>{lines}</ul>{jump}</section>"
        )
    key = (
        '<p class="key">'
        f'<span style="background:{PALETTE[0]}">one chunk</span>'
        f'<span style="background:{PALETTE[1]}">the next chunk</span>'
        f'<span class="seg ov" style="background:repeating-linear-gradient(135deg,{PALETTE[0]} 0 '
        f'{STRIPE}px,{PALETTE[1]} {STRIPE}px {2 * STRIPE}px)">overlap (striped, underlined)</span>'
        '<span class="seg out">in no chunk</span>'
        '<span style="color:#123c69">table or code</span>'
        "▸N chunk N begins, ◂N chunk N ends</p>"
        f'<p class="rule">{_text(_sections_rule(chunk_map.options))}</p>'
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Chunk map: {_text(chunk_map.name)}</title>
<style>{_STYLE}</style></head><body>
<header><h1>Chunk map: {_text(chunk_map.name)}</h1>
<p>Title: <b>{_text(document.title)}</b></p>
<p class="settings">{_text(settings_line(chunk_map.options))}</p>
<p class="summary">{_text(_summary(chunk_map))}</p>
{f'<ul class="warnings">{warnings}</ul>' if warnings else "<p>No warnings.</p>"}
{key}</header>
{banner}
<main><div class="text">{body}</div></main>
<script>{_SCRIPT}</script>
</body></html>
"""
