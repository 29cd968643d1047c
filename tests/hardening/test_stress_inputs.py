"""Pathological documents: each finishes, in linear time, with every chunk within the limit.

No wall-time assertions: a quadratic regression shows up as a test that runs for
minutes and trips pytest-timeout, not as a flaky threshold.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from chunking import ChunkOptions, Limits, Unit
from tests.helpers import chunk_and_audit

if TYPE_CHECKING:
    from chunking.pipeline import FormatName

CASES: dict[str, tuple[str, FormatName]] = {
    "one 300 KB line without spaces": ("x" * 300_000, "text"),
    "one 300 KB paragraph of words, no sentence end": ("word " * 60_000, "text"),
    "30,000-cell table": (
        "| a | b | c |\n|---|---|---|\n" + "| 1 | 2 | 3 |\n" * 10_000,
        "markdown",
    ),
    "5,000 headings": ("".join(f"## H{i}\n\ntext {i}.\n\n" for i in range(5_000)), "markdown"),
    "10,000 nested blockquotes": (">" * 10_000 + " deep", "markdown"),
    "1,000 nested list levels": ("".join("  " * i + "- item\n" for i in range(1_000)), "markdown"),
    "HTML nested 20,000 deep": ("<div>" * 20_000 + "deep" + "</div>" * 20_000, "html"),
    "binary garbage": (bytes(range(256)).decode("latin-1") * 500, "auto"),
    "CR line endings": ("# A\r\rpara one.\r\r## B\r\rpara two.\r" * 300, "markdown"),
    "unclosed fence": ("# T\n\n```python\n" + "x = 1\n" * 3_000, "markdown"),
}


@pytest.mark.parametrize("unit", [Unit.TOKENS, Unit.CHARACTERS], ids=lambda u: u.value)
@pytest.mark.parametrize("name", sorted(CASES))
def test_pathological_document_is_chunked_within_the_limit(name: str, unit: Unit) -> None:
    text, format = CASES[name]
    limits = Limits(unit, 512, 64) if unit is Unit.TOKENS else Limits(unit, 2000, 500)
    document, audit = chunk_and_audit(text, ChunkOptions(limits=limits), format=format)
    assert document.chunks
    assert not audit.violations, audit.examples


def test_a_long_run_of_words_fills_chunks_near_the_limit() -> None:
    """Word pieces are measured as ' word' so token counts add up (regression)."""
    document, _ = chunk_and_audit("word " * 20_000, ChunkOptions(), format="text")
    sizes = [c.size for c in document.chunks[:-1]]
    assert min(sizes) > 0.9 * 512
