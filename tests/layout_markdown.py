"""Build Layout-style markdown (Document Layout / Content Understanding output) from a document.

Page markers go in every ~3,000 characters at line boundaries, in the middle of
paragraphs where one runs there, each page with a header and a footer; two figures and a
table split across a page break with its header row repeated are put in on the way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hypothesis import strategies as st

PAGE_CHARACTERS = 3000
HEADER = "Contoso Ltd. — Quarterly Engineering Report"
FOOTER = "Contoso Ltd. — Confidential — Page {n} of {total}"
"""Furniture text that must never reach a chunk's embedded text."""
FURNITURE_WORDS = ("Contoso Ltd.", "Quarterly Engineering Report", "Confidential —")

LayoutParagraphs = list[list[tuple[str, str, bool]]]
"""Paragraphs of lines `(words, end punctuation, page break after the line)`."""
_WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"])
_LINE = st.lists(_WORDS, min_size=1, max_size=12).map(" ".join)
_PARAGRAPH = st.lists(
    st.tuples(_LINE, st.sampled_from(["", ".", ","]), st.booleans()), min_size=1, max_size=6
)
LAYOUT_PARAGRAPHS = st.lists(_PARAGRAPH, min_size=1, max_size=8)
"""Where page markers may fall: after any line of any paragraph (the property tests of
markdown and HTML pages draw from this)."""

_PLAIN = re.compile(r"[A-Za-z(\"']")
WRAP = 100
"""Layout keeps a paragraph's visual lines: long lines are wrapped at about this width."""
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)
_SENTENCE_END = re.compile(r"[.!?:;][\"')\]*_`]*\s*$")
_TABLE_HEAD = "<tr><th>Region</th><th>Capacity</th><th>Notes</th></tr>"


@dataclass(frozen=True, slots=True)
class LayoutDocument:
    """The built text and what the test must know about it."""

    text: str
    page_starts: tuple[int, ...]
    """Offset where each page begins (page n at index n - 1), the first 0."""
    markers: tuple[tuple[int, int], ...]
    """Spans of the marker lines (without their line breaks)."""
    sentence_gaps: tuple[tuple[int, int], ...]
    """(end of the text before, start of the text after) of each page break that
    interrupts a sentence: no chunk may end in [low, high]."""

    @property
    def pages(self) -> int:
        return len(self.page_starts)


def _figure(number: int) -> list[str]:
    return [
        "<figure>",
        f"<figcaption>Figure {number} Requests per second by month</figcaption>",
        "",
        "Values",
        "300",
        "200",
        "100",
        "",
        "Jan Feb Mar Apr May Jun Months",
        "",
        "The chart shows requests rising steadily from January to June.",
        "",
        "</figure>",
        "",
    ]


def _table(rows: range) -> list[str]:
    return [
        "<table>",
        _TABLE_HEAD,
        *(f"<tr><td>region-{i}</td><td>{i * 10} units</td><td>row {i}</td></tr>" for i in rows),
        "</table>",
    ]


def build(source: str, minimum_pages: int = 30) -> LayoutDocument:
    """`source` (repeated until long enough) as Layout markdown of at least `minimum_pages`."""
    body = _wrapped(_FRONT_MATTER.sub("", source.lstrip("\ufeff")).splitlines())
    lines: list[str] = []
    while sum(len(line) + 1 for line in lines) < PAGE_CHARACTERS * (minimum_pages + 6):
        lines.extend(body)
        lines.append("")
    total = len(lines)
    out: list[str] = [f'<!-- PageHeader="{HEADER}" -->', ""]
    since = 0
    page = 1
    in_fence = False
    figures = 0
    table_done = False
    kinds: list[str] = []  # per page break: "sentence" or "" (as the builder split it)

    def page_break(mid_sentence: bool) -> None:
        nonlocal page
        out.append(f'<!-- PageFooter="{FOOTER.format(n=page, total="{total}")}" -->')
        out.append(f'<!-- PageNumber="{page}" -->')
        out.append("<!-- PageBreak -->")
        out.append(f'<!-- PageHeader="{HEADER}" -->')
        kinds.append("sentence" if mid_sentence else "")
        page += 1

    for index, line in enumerate(lines):
        following = lines[index + 1] if index + 1 < total else ""
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        out.append(line)
        since += len(line) + 1
        plain = not in_fence and bool(_PLAIN.match(line))
        if since < PAGE_CHARACTERS or not plain:
            continue
        if following.strip() and not _PLAIN.match(following):
            continue  # the next line is a list, table or fence: not a paragraph's middle
        if not table_done and page > 3 and not following.strip():
            out.extend(["", *_table(range(1, 4)), ""])
            page_break(mid_sentence=False)
            out.extend(["", *_table(range(4, 7)), ""])
            table_done = True
        elif figures < 2 and page > 5 + 7 * figures and not following.strip():
            out.extend(["", *_figure(figures + 1)])
            figures += 1
            page_break(mid_sentence=False)
            out.append("")
        else:
            page_break(mid_sentence=bool(following.strip()) and not _SENTENCE_END.search(line))
        since = 0
    out.append(f'<!-- PageFooter="{FOOTER.format(n=page, total="{total}")}" -->')
    out.append(f'<!-- PageNumber="{page}" -->')
    text = "\n".join(out).replace(" of {total}", f" of {page}") + "\n"
    return index_layout(text, kinds)


def _wrapped(lines: list[str]) -> list[str]:
    """Paragraph lines (outside fences) wrapped at word boundaries near `WRAP`."""
    out: list[str] = []
    in_fence = False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        if in_fence or not _PLAIN.match(line) or len(line) <= WRAP:
            out.append(line)
            continue
        rest = line
        while len(rest) > WRAP and (cut := rest.rfind(" ", 0, WRAP)) > 0:
            out.append(rest[:cut])
            rest = rest[cut + 1 :]
        out.append(rest)
    return out


_MARKER_LINE = re.compile(r"^<!-- (?:PageBreak|Page(?:Header|Footer|Number)=\"[^\"]*\") -->$", re.M)


def index_layout(text: str, kinds: list[str]) -> LayoutDocument:
    """What a test must know about `text`; `kinds` says which breaks interrupt a sentence."""
    markers = tuple((m.start(), m.end()) for m in _MARKER_LINE.finditer(text))
    starts = [0]
    gaps: list[tuple[int, int]] = []
    breaks = [m for m in _MARKER_LINE.finditer(text) if "PageBreak" in m.group(0)]
    for match, kind in zip(breaks, kinds, strict=True):
        starts.append(match.end() + 1)
        if kind:
            low = match.start()
            while text[low - 1].isspace() or _in(markers, low - 1):
                low -= 1
            high = match.end()
            while text[high].isspace() or _in(markers, high):
                high += 1
            gaps.append((low, high))
    return LayoutDocument(text, tuple(starts), markers, tuple(gaps))


def _in(spans: tuple[tuple[int, int], ...], position: int) -> bool:
    return any(low <= position < high for low, high in spans)
