"""Hypothesis strategies for hostile documents and skill requests.

Shared by tests/hardening/test_hardening_fuzz.py (a small budget in every test run) and
tests/fuzz.py (the long run). The markdown and HTML strategies build *structured*
documents, nested containers included, out of pieces chosen to hit parser edge cases:
unclosed fences, header-less and ragged tables, raw HTML, entities, CR/CRLF line
endings, right-to-left and combining characters, emoji sequences, NUL bytes.
"""

from __future__ import annotations

import json
import string

from hypothesis import strategies as st

from chunking import Limits, Unit
from skills.skill.record_inputs import KNOWN_INPUTS

ODD_TEXT = st.sampled_from(
    [
        "über", "façade", "クラスター", "集群", "узел", "שלום", "مرحبا", "\u202eevil\u202c",
        "a\u0301\u0301\u0301", "👩‍👩‍👧‍👦", "🏳️‍🌈", "🇩🇪", "\u200b", "\ufeff", "\x00", "\x0c",
        "\u2028", "\x85", "&amp;", "&#0;", "&#xD800;", "&nbsp;", "&bogus;", "\\", "\\*",
        "<|endoftext|>", "e.g.", "v1.2.3", "3.14", "Dr.", "https://example.com/a?b=c#d",
    ]
)  # fmt: skip
WORD = st.one_of(
    st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=12),
    ODD_TEXT,
    st.text(min_size=1, max_size=6).filter(lambda text: not (set(text) & set("\r\n"))),
)
INLINE = st.one_of(
    WORD,
    WORD.map(lambda word: f"**{word}**"),
    WORD.map(lambda word: f"_{word}_"),
    WORD.map(lambda word: f"`{word}`"),
    WORD.map(lambda word: f"[{word}](http://example.invalid/{len(word)})"),
    WORD.map(lambda word: f"![{word}](http://example.invalid/i.png)"),
    WORD.map(lambda word: f"<span>{word}</span>"),
    st.sampled_from(["<br>", "<!-- c -->", "*", "_", "[", "]", "`", "|", "#", ">", "<", "&"]),
)
SENTENCE = st.builds(
    lambda words, end: " ".join(words) + end,
    st.lists(INLINE, min_size=1, max_size=20),
    st.sampled_from([".", "!", "?", "。", "", "...", ":"]),
)
PARAGRAPH = st.lists(SENTENCE, min_size=1, max_size=6).map(" ".join)
HEADING_WORDS = st.lists(
    st.from_regex(r"[A-Za-z0-9éß]{1,8}", fullmatch=True), min_size=1, max_size=4
)
"""A heading's words, free of markup."""
ANCHOR_ID = st.from_regex(r"[a-z][a-z0-9_-]{0,15}", fullmatch=True)
"""An id a heading may set."""


def headings_of(given: st.SearchStrategy[object]) -> st.SearchStrategy[list[tuple[object, ...]]]:
    """One to six (depth, words, *given) headings."""
    return st.lists(st.tuples(st.integers(1, 6), HEADING_WORDS, given), min_size=1, max_size=6)


HEADING_ID = st.sampled_from(["", "", "", " {#given-id}", " {/*given-id*/}", " {: #i .c}", " {.c}"])
"""Heading ids written in the heading (Pandoc/kramdown attributes, MDX comments), or none."""
ATX_HEADING = st.builds(
    lambda depth, text, given, closing: (
        f"{'#' * depth} {text}{given}{' ' + '#' * depth if closing else ''}"
    ),
    st.integers(1, 7),  # 7 is not a heading: a paragraph that starts with #######
    SENTENCE,
    HEADING_ID,
    st.booleans(),
)
RAW_HTML_HEADING = st.builds(
    lambda depth, attributes, text: f"<h{depth}{attributes}>{text}</h{depth}>",
    st.integers(1, 6),
    st.sampled_from(["", ' id="raw-id"', " class=x", " id=''"]),
    SENTENCE,
)
SETEXT_HEADING = st.builds(
    lambda text, underline: f"{text}\n{underline}", SENTENCE, st.sampled_from(["===", "---", "="])
)
FENCE = st.builds(
    lambda marker, info, lines, closed: (
        f"{marker}{info}\n" + "\n".join(lines) + (f"\n{marker}" if closed else "")
    ),
    st.sampled_from(["```", "~~~", "````"]),
    st.sampled_from(["", "python", "bash title=x", "{.weird}"]),
    st.lists(SENTENCE, min_size=0, max_size=30),
    st.booleans(),
)
INDENTED_CODE = st.lists(SENTENCE, min_size=1, max_size=5).map(
    lambda lines: "\n".join(f"    {line}" for line in lines)
)
TABLE = st.builds(
    lambda header, columns, rows, ragged: (
        (f"| {' | '.join(['Key'] * columns)} |\n|{'---|' * columns}\n" if header else "")
        + "\n".join(
            "| " + " | ".join(row[: (len(row) if ragged else columns)]) + " |" for row in rows
        )
    ),
    st.booleans(),
    st.integers(1, 5),
    st.lists(st.lists(SENTENCE, min_size=1, max_size=7), min_size=1, max_size=20),
    st.booleans(),
)
HTML_BLOCK = st.builds(
    lambda tag, body: f"<{tag}>\n{body}\n</{tag}>",
    st.sampled_from(["div", "details", "table", "pre", "script", "style"]),
    PARAGRAPH,
)
LEAF = st.one_of(
    PARAGRAPH,
    ATX_HEADING,
    ATX_HEADING,
    SETEXT_HEADING,
    RAW_HTML_HEADING,
    FENCE,
    INDENTED_CODE,
    TABLE,
    HTML_BLOCK,
    st.sampled_from(["---", "***", "> [!NOTE]\n> Note it.", "[ref]: http://example.invalid/r"]),
)


def _quote(blocks: list[str]) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in "\n\n".join(blocks).split("\n"))


def _list_item(marker: str, blocks: list[str]) -> str:
    pad = " " * len(marker)
    lines = "\n\n".join(blocks).split("\n")
    return "\n".join(
        [f"{marker}{lines[0]}"] + [f"{pad}{line}" if line else "" for line in lines[1:]]
    )


BLOCK = st.recursive(
    LEAF,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3).map(_quote),
        st.builds(
            _list_item,
            st.sampled_from(["- ", "* ", "1. ", "10) "]),
            st.lists(inner, min_size=1, max_size=3),
        ),
    ),
    max_leaves=12,
)
FRONT_MATTER = st.builds(lambda title: f"---\ntitle: {title}\n# not a heading\n---", WORD)
MARKDOWN = st.builds(
    lambda front, blocks, newline: (
        ((front + "\n") if front else "") + "\n\n".join(blocks)
    ).replace("\n", newline),
    st.one_of(st.none(), FRONT_MATTER),
    st.lists(BLOCK, min_size=0, max_size=15),
    st.sampled_from(["\n", "\n", "\r\n", "\r"]),
)
"""Structured markdown: front matter, headings, nested quotes and lists, code, tables, HTML."""

HTML_TAGS = st.sampled_from(
    [
        "div", "p", "h1", "h2", "h3", "h4", "h6", "ul", "ol", "li", "table", "tr", "td", "th",
        "thead", "tbody", "pre", "code", "blockquote", "section", "article", "main", "nav",
        "aside", "header", "footer", "span", "b", "a", "dl", "dt", "dd", "details", "summary",
        "figure", "figcaption", "template", "script", "style", "noscript", "svg", "math",
    ]
)  # fmt: skip
HTML_ATTRIBUTES = st.lists(
    st.sampled_from(
        [
            'id="x"', 'id="top"', 'class="nav"', 'class="content"', 'role="navigation"',
            'role="presentation"', "hidden", 'style="display:none"', 'href="http://example.invalid/"',
            'src="http://example.invalid/i.png"', 'aria-hidden="true"', 'name="a"', 'id=""',
        ]
    ),
    max_size=3,
).map(lambda attributes: "".join(f" {attribute}" for attribute in attributes))  # fmt: skip
HTML_TEXT = st.one_of(
    SENTENCE.map(lambda text: text.replace("<", "&lt;")),
    st.sampled_from(["<br>", "<hr>", "<img alt=i src=http://example.invalid/i>", "<!-- c -->"]),
    st.sampled_from(["</div>", "</td>", "</li>", "<p>", "<td>", "<![CDATA[x]]>", "&#0;", "\x00"]),
)
HTML_NODE = st.recursive(
    HTML_TEXT,
    lambda inner: st.builds(
        lambda tag, attributes, children, closed: (
            f"<{tag}{attributes}>" + "".join(children) + (f"</{tag}>" if closed else "")
        ),
        HTML_TAGS,
        HTML_ATTRIBUTES,
        st.lists(inner, max_size=5),
        st.sampled_from([True, True, True, False]),
    ),
    max_leaves=30,
)
HTML = st.builds(
    lambda doctype, title, nodes, newline: (
        doctype
        + f"<html><head><title>{title}</title></head><body>"
        + "".join(nodes)
        + "</body></html>"
    ).replace("\n", newline),
    st.sampled_from(
        ["", "<!DOCTYPE html>", '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>']
    ),
    WORD,
    st.lists(HTML_NODE, max_size=12),
    st.sampled_from(["\n", "\r\n", "\r"]),
)
"""Structured HTML: nested elements, boilerplate and hidden parts, stray and missing end tags."""


@st.composite
def limits(draw: st.DrawFn) -> Limits:
    """Valid chunk limits in either unit, small enough that documents get split."""
    unit = draw(st.sampled_from(Unit))
    low, high = (300, 1500) if unit is Unit.CHARACTERS else (64, 400)
    maximum = draw(st.integers(low, high))
    overlap = draw(st.integers(0, (maximum - 1) // 2))
    pages = draw(st.sampled_from([0, 0, 0, 1, 3]))
    return Limits(unit, maximum, overlap, pages)


JSON_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
JSON_VALUE = st.recursive(
    JSON_SCALAR,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)
INPUT_VALUES: dict[str, st.SearchStrategy[object]] = {
    "maximumPageLength": st.one_of(
        st.integers(-10, 60_000), st.sampled_from(["512", " 300 ", "x"])
    ),
    "pageOverlapLength": st.one_of(st.integers(-5, 3_000), st.sampled_from(["0", "64"])),
    "maximumPagesToTake": st.integers(-2, 5),
    "unit": st.sampled_from(["characters", "azureOpenAITokens", "CHARACTERS", "bytes", ""]),
    "textSplitMode": st.sampled_from(["pages", "sentences", "words", None]),
    "format": st.sampled_from(["auto", "markdown", "html", "text", "md", "pdf", ""]),
    "encoderModelName": st.sampled_from(["cl100k_base", "o200k_base", "gpt2", ""]),
    "language": st.sampled_from(["en", "de", "ja", "zz", "", None]),
    "strategy": st.sampled_from(["structure", "words", "Words", "semantic", "", None]),
    "wordsPerChunk": st.one_of(st.integers(-2, 300), st.sampled_from(["10", "x"])),
    "wordOverlap": st.integers(-1, 60),
}
"""Plausible and implausible values for the inputs whose handling matters most."""
TEXT = st.one_of(
    MARKDOWN,
    HTML,
    st.text(max_size=400),
    st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=4).map(
        lambda surrogates: f"# S\n\nx{surrogates}y"
    ),
    JSON_SCALAR,
)


@st.composite
def record_data(draw: st.DrawFn) -> object:
    """A record's `data`: mostly an object with a document and some inputs, sometimes junk."""
    if draw(st.integers(0, 9)) == 0:
        return draw(JSON_VALUE)
    data: dict[str, object] = {"text": draw(TEXT)}
    for name in draw(st.lists(st.sampled_from(sorted(INPUT_VALUES)), max_size=4, unique=True)):
        data[name] = draw(INPUT_VALUES[name])
    if draw(st.booleans()):
        data[draw(st.sampled_from([*KNOWN_INPUTS, "other"]))] = draw(JSON_VALUE)
    return data


@st.composite
def request_values(draw: st.DrawFn) -> list[dict[str, object]]:
    """A well-formed `values` array (unique string recordIds) of arbitrary records."""
    ids = draw(st.lists(st.text(min_size=1, max_size=8), max_size=6, unique=True))
    return [{"recordId": record_id, "data": draw(record_data())} for record_id in ids]


REQUEST_BODY = st.one_of(
    request_values().map(lambda values: json.dumps({"values": values}).encode("utf-8")),
    JSON_VALUE.map(lambda value: json.dumps(value).encode("utf-8")),
    st.binary(max_size=200),
)
"""A request body: well-formed batches mostly, plus arbitrary JSON and arbitrary bytes."""
