"""Other chunkers, each wrapped as `text -> chunk texts` at the same limits as ours.

Every peer is built from the packages in requirements-bench.txt; a peer whose
package is missing or fails to build is reported unavailable, never fatal.
Token-counting peers count with the benchmark's encoding (cl100k_base unless
`--encoder` says otherwise) exactly as `tiktoken.get_encoding` builds it
(`chunking.measure.encodings.stock_encoding`: the shipped file, tiktoken's own
pre-tokenizer pattern, no download), as they run for their users; ours uses an
equivalent, faster pattern, which is our work and not theirs.
semantic-text-splitter's Rust core carries its own copies of cl100k_base and
o200k_base (tiktoken-rs, compiled in); its counts agree with ours.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from chunking.measure.encodings import stock_encoding
from chunking.options import DEFAULT_ENCODER, Limits, Unit
from evaluation.baseline import (
    ChunkTexts,
    langchain_markdown,
    langchain_recursive,
)

if TYPE_CHECKING:
    from collections.abc import Callable

Kind = Literal["markdown", "html"]

SEMANTIC_TEXT_SPLITTER_MODELS = {"cl100k_base": "gpt-4", "o200k_base": "gpt-4o"}
"""semantic-text-splitter names tiktoken encodings by model (another encoding: unavailable)."""
HTML_HEADINGS = [(f"h{depth}", f"h{depth}") for depth in range(1, 7)]
NON_TEXT_TAGS = ["script", "style", "noscript", "template"]
"""Dropped before `get_text()`: their contents are code, not page text."""
CHONKIE_RECIPE = Path("_recipes") / "chonkie_markdown_en.json"
"""Chonkie's markdown recipe, vendored in the corpus (from_recipe needs the HF hub)."""


@dataclass(frozen=True, slots=True)
class Peer:
    """A chunker to compare against, and how to build it for given limits."""

    name: str
    """How the report names it."""
    kind: Kind
    """The corpus it runs on."""
    structure_aware: bool
    """Whether it cuts by headings (the goals compare us with these)."""
    build: Callable[[Limits, Path, str], ChunkTexts]
    """Builds the chunker for the limits; gets the corpus root for vendored data, and the
    tiktoken encoding to count tokens with.

    Raises (ImportError or anything else) when the peer cannot run here.
    """


def _langchain_html_section(
    limits: Limits, _root: Path, encoder: str = DEFAULT_ENCODER
) -> ChunkTexts:
    from langchain_text_splitters import HTMLSectionSplitter

    sections = HTMLSectionSplitter(headers_to_split_on=HTML_HEADINGS)
    recursive = langchain_recursive(limits, encoder)

    def chunk(text: str) -> list[str]:
        return [doc.page_content for doc in recursive.split_documents(sections.split_text(text))]

    return chunk


def _langchain_html_header(
    limits: Limits, _root: Path, encoder: str = DEFAULT_ENCODER
) -> ChunkTexts:
    from langchain_text_splitters import HTMLHeaderTextSplitter

    headers = HTMLHeaderTextSplitter(headers_to_split_on=HTML_HEADINGS)
    recursive = langchain_recursive(limits, encoder)

    def chunk(text: str) -> list[str]:
        return [doc.page_content for doc in recursive.split_documents(headers.split_text(text))]

    return chunk


def _soup_text(html: str) -> str:
    """The page text as a user would get it: BeautifulSoup(lxml), scripts/styles dropped."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "lxml")
    for element in soup(NON_TEXT_TAGS):
        element.decompose()
    return soup.get_text("\n")


def _semantic_splitter(limits: Limits, markdown: bool, encoder: str) -> Any:
    import semantic_text_splitter as sts

    splitter_type = sts.MarkdownSplitter if markdown else sts.TextSplitter
    capacity = limits.maximum_page_length
    overlap = limits.page_overlap_length
    if limits.unit is Unit.CHARACTERS:
        return splitter_type(capacity, overlap=overlap)
    return splitter_type.from_tiktoken_model(
        SEMANTIC_TEXT_SPLITTER_MODELS[encoder], capacity, overlap=overlap
    )


def _semantic_markdown(limits: Limits, _root: Path, encoder: str = DEFAULT_ENCODER) -> ChunkTexts:
    splitter = _semantic_splitter(limits, markdown=True, encoder=encoder)

    def chunk(text: str) -> list[str]:
        return list(splitter.chunks(text))

    return chunk


def _semantic_html(limits: Limits, _root: Path, encoder: str = DEFAULT_ENCODER) -> ChunkTexts:
    splitter = _semantic_splitter(limits, markdown=False, encoder=encoder)

    def chunk(text: str) -> list[str]:
        return list(splitter.chunks(_soup_text(text)))

    return chunk


def _chonkie(limits: Limits, rules: Any, encoder: str) -> Any:
    from chonkie import RecursiveChunker

    tokenizer: Any = "character" if limits.unit is Unit.CHARACTERS else stock_encoding(encoder)
    if rules is None:
        return RecursiveChunker(tokenizer=tokenizer, chunk_size=limits.maximum_page_length)
    return RecursiveChunker(tokenizer=tokenizer, chunk_size=limits.maximum_page_length, rules=rules)


def _chonkie_markdown(limits: Limits, root: Path, encoder: str = DEFAULT_ENCODER) -> ChunkTexts:
    from chonkie import RecursiveRules

    recipe = json.loads((root / CHONKIE_RECIPE).read_text(encoding="utf-8"))
    chunker = _chonkie(
        limits, RecursiveRules.from_dict(recipe["recipe"]["recursive_rules"]), encoder
    )

    def chunk(text: str) -> list[str]:
        return [piece.text for piece in chunker.chunk(text)]

    return chunk


def _chonkie_html(limits: Limits, _root: Path, encoder: str = DEFAULT_ENCODER) -> ChunkTexts:
    # Plain text after BeautifulSoup: Chonkie's default (text) rules.
    chunker = _chonkie(limits, rules=None, encoder=encoder)

    def chunk(text: str) -> list[str]:
        return [piece.text for piece in chunker.chunk(_soup_text(text))]

    return chunk


def _llama_sentence_splitter(limits: Limits, encoder: str) -> Any:
    from llama_index.core.node_parser import SentenceSplitter

    tokenizer: Callable[[str], Any] = (
        list if limits.unit is Unit.CHARACTERS else stock_encoding(encoder).encode_ordinary
    )
    return SentenceSplitter(
        chunk_size=limits.maximum_page_length,
        chunk_overlap=limits.page_overlap_length,
        tokenizer=tokenizer,
    )


def _llama(limits: Limits, parser: Any, encoder: str) -> ChunkTexts:
    from llama_index.core import Document

    splitter = _llama_sentence_splitter(limits, encoder)

    def chunk(text: str) -> list[str]:
        return [node.get_content() for node in splitter(parser([Document(text=text)]))]

    return chunk


def _llama_markdown(limits: Limits, _root: Path, encoder: str = DEFAULT_ENCODER) -> ChunkTexts:
    from llama_index.core.node_parser import MarkdownNodeParser

    return _llama(limits, MarkdownNodeParser(), encoder)


def _llama_html(limits: Limits, _root: Path, encoder: str = DEFAULT_ENCODER) -> ChunkTexts:
    from llama_index.core.node_parser import HTMLNodeParser

    return _llama(limits, HTMLNodeParser(), encoder)


PEERS: tuple[Peer, ...] = (
    Peer(
        "LangChain MarkdownHeaderTextSplitter → RecursiveCharacterTextSplitter",
        "markdown",
        structure_aware=True,
        build=langchain_markdown,
    ),
    Peer(
        "semantic-text-splitter MarkdownSplitter",
        "markdown",
        structure_aware=True,
        build=_semantic_markdown,
    ),
    Peer(
        "Chonkie RecursiveChunker (markdown recipe, no overlap)",
        "markdown",
        structure_aware=False,
        build=_chonkie_markdown,
    ),
    Peer(
        "LlamaIndex MarkdownNodeParser → SentenceSplitter",
        "markdown",
        structure_aware=True,
        build=_llama_markdown,
    ),
    Peer(
        "LangChain HTMLSectionSplitter → RecursiveCharacterTextSplitter",
        "html",
        structure_aware=True,
        build=_langchain_html_section,
    ),
    Peer(
        "LangChain HTMLHeaderTextSplitter → RecursiveCharacterTextSplitter",
        "html",
        structure_aware=True,
        build=_langchain_html_header,
    ),
    Peer(
        "semantic-text-splitter TextSplitter on BeautifulSoup text",
        "html",
        structure_aware=False,
        build=_semantic_html,
    ),
    Peer(
        "Chonkie RecursiveChunker on BeautifulSoup text (no overlap)",
        "html",
        structure_aware=False,
        build=_chonkie_html,
    ),
    Peer(
        "LlamaIndex HTMLNodeParser → SentenceSplitter",
        "html",
        structure_aware=True,
        build=_llama_html,
    ),
)
"""The peers of issue 6, in the order the report lists them."""
