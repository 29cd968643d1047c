"""Floors: the parsing and tokenizing work any chunker of these formats has to do.

Each floor is timed over the same corpus as the chunkers, so the report can
say how far our chunker is above the cost of just reading the structure, or
of counting the tokens once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from chunking.measure.encodings import load_encoding, stock_encoding
from chunking.outline.plain_outline import plain_outline
from chunking.parse.html.render import parse_html
from chunking.parse.markdown.outline import parse_markdown
from chunking.parse.markdown.pulldown_parser import PARSER_OPTIONS

if TYPE_CHECKING:
    from collections.abc import Callable

    from markdown_it import MarkdownIt

    from bench.peers import Kind


@dataclass(frozen=True, slots=True)
class Floor:
    """A lower bound on the work of chunking one kind of document."""

    name: str
    kind: Kind
    build: Callable[[str], Callable[[str], object]]
    """Builds the timed function for the benchmark's encoding (parsers and encodings
    load here, untimed)."""
    prepare: Callable[[str], str] | None = None
    """Turns a document into the timed function's input, untimed (None: as is)."""
    block_parse: bool = False
    """The third-party parse the goals of issue 6 compared our time with."""
    outline: bool = False
    """Our own outline parse, which issue 19's characters goal compares our time with."""


def _markdown_it(inline: bool) -> MarkdownIt:
    """markdown-it-py configured as chunking/markdown_it_parser.py configures it."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    md = MarkdownIt("commonmark").enable("table").use(front_matter_plugin)
    if not inline:
        md.disable("inline")
    return md


def _full_parse(_encoder: str) -> Callable[[str], object]:
    return _markdown_it(inline=True).parse


def _block_parse(_encoder: str) -> Callable[[str], object]:
    return _markdown_it(inline=False).parse


def _pulldown_events(_encoder: str) -> Callable[[str], object]:
    import pyromark

    def parse(text: str) -> object:
        # The iterator is lazy: the parse happens as its events are drawn.
        for _ in pyromark.events_with_range(text, options=PARSER_OPTIONS):
            pass
        return None

    return parse


def _our_markdown_outline(_encoder: str) -> Callable[[str], object]:
    return parse_markdown


def _our_planning_input(encoder: str) -> Callable[[str], object]:
    """What every chunk plan of ours needs before it cuts: the outline, its embedded
    text, and that text's tokens (the splitter's token index)."""

    encode = load_encoding(encoder).encode_ordinary

    def prepare(text: str) -> object:
        return encode(plain_outline(parse_markdown(text)).outline.source)

    return prepare


def _tiktoken_pass(encoder: str) -> Callable[[str], object]:
    return stock_encoding(encoder).encode_ordinary


def _our_tokenizer_pass(encoder: str) -> Callable[[str], object]:
    return load_encoding(encoder).encode_ordinary


def _lxml_alone(_encoder: str) -> Callable[[str], object]:
    import lxml.html  # type: ignore[import-untyped]

    parse: Callable[[str], object] = lxml.html.document_fromstring
    return parse


def _soup_parse(_encoder: str) -> Callable[[str], object]:
    from bs4 import BeautifulSoup

    return lambda html: BeautifulSoup(html, "lxml")


def _our_html_outline(_encoder: str) -> Callable[[str], object]:
    return parse_html


def _html_rendering(html: str) -> str:
    return parse_html(html).source


FLOORS: tuple[Floor, ...] = (
    Floor("markdown-it-py full parse", "markdown", _full_parse),
    Floor(
        "markdown-it-py block parse (`inline` rule off)",
        "markdown",
        _block_parse,
        block_parse=True,
    ),
    Floor("pulldown-cmark events with ranges (pyromark), drawn", "markdown", _pulldown_events),
    Floor(
        "our outline: chunking.parse.markdown.outline.parse_markdown",
        "markdown",
        _our_markdown_outline,
        outline=True,
    ),
    Floor(
        "our outline, its embedded text (plain_outline) and one token pass of it",
        "markdown",
        _our_planning_input,
    ),
    Floor("tiktoken, one pass (encode_ordinary)", "markdown", _tiktoken_pass),
    Floor(
        "the same with our equivalent pattern (chunking.measure.encodings)",
        "markdown",
        _our_tokenizer_pass,
    ),
    Floor("lxml.html alone", "html", _lxml_alone),
    Floor("BeautifulSoup(lxml) parse", "html", _soup_parse, block_parse=True),
    Floor(
        "our outline: chunking.parse.html.render.parse_html",
        "html",
        _our_html_outline,
        outline=True,
    ),
    Floor(
        "tiktoken, one pass over our text rendering",
        "html",
        _tiktoken_pass,
        prepare=_html_rendering,
    ),
    Floor(
        "the same with our equivalent pattern",
        "html",
        _our_tokenizer_pass,
        prepare=_html_rendering,
    ),
)
"""Measured in this order, after the chunkers of the same kind."""
