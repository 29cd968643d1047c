"""The evaluation's baseline chunker: LangChain's markdown header splitter, then its
recursive splitter, at the same limits as ours (bench.peers runs it among the peers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from chunking.measure.encodings import stock_encoding
from chunking.options import DEFAULT_ENCODER, Limits, Unit

if TYPE_CHECKING:
    from pathlib import Path

ChunkTexts = Callable[[str], list[str]]
"""One document in, the texts of its chunks out."""
MARKDOWN_HEADINGS = [("#" * depth, f"h{depth}") for depth in range(1, 7)]


def length_function(limits: Limits, encoder: str) -> Callable[[str], int]:
    """Size in the limit's unit: tokens of `encoder`, or characters."""
    if limits.unit is Unit.CHARACTERS:
        return len
    encode = stock_encoding(encoder).encode_ordinary
    return lambda text: len(encode(text))


def langchain_recursive(limits: Limits, encoder: str) -> Any:
    """LangChain's recursive splitter at `limits`, counting as `length_function` does."""
    from langchain_text_splitters import (  # noqa: PLC0415  (optional: requirements-bench.txt)
        RecursiveCharacterTextSplitter,
    )

    return RecursiveCharacterTextSplitter(
        chunk_size=limits.maximum_page_length,
        chunk_overlap=limits.page_overlap_length,
        length_function=length_function(limits, encoder),
    )


def langchain_markdown(
    limits: Limits, _root: Path | None = None, encoder: str = DEFAULT_ENCODER
) -> ChunkTexts:
    """LangChain's header splitter, then its recursive splitter (also the evaluation's baseline)."""
    from langchain_text_splitters import (  # noqa: PLC0415  (optional: requirements-bench.txt)
        MarkdownHeaderTextSplitter,
    )

    headers = MarkdownHeaderTextSplitter(headers_to_split_on=MARKDOWN_HEADINGS)
    recursive = langchain_recursive(limits, encoder)

    def chunk(text: str) -> list[str]:
        return [doc.page_content for doc in recursive.split_documents(headers.split_text(text))]

    return chunk
