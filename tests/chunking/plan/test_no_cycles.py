"""Chunking a document leaves no reference cycles: reference counting frees each
document's outline, plan and walk as soon as its chunks are made.

A cycle (the walk holding its own bound methods) kept every document's objects alive
until the collector found them: 40,000 objects of a third of the markdown corpus per
pass, and the collector's passes over them (issue 40).
"""

from __future__ import annotations

import gc

import pytest

from chunking.options import ChunkOptions, Limits, Unit
from chunking.pipeline import chunk_document
from tests.paths import FIXTURES

MARKDOWN = sorted((FIXTURES / "markdown").glob("*.md"))


@pytest.mark.parametrize(
    "limits",
    [Limits(Unit.CHARACTERS, 2000, 500), Limits(Unit.TOKENS, 512, 64)],
    ids=["characters", "tokens"],
)
def test_structure_chunking_leaves_no_cyclic_garbage(limits: Limits) -> None:
    assert MARKDOWN
    options = ChunkOptions(limits=limits)
    # Once before: first calls load modules and fill caches, which may hold cycles.
    for path in MARKDOWN:
        chunk_document(path.read_text(encoding="utf-8"), options=options, format="markdown")
    gc.collect()
    gc.disable()
    try:
        for path in MARKDOWN:
            text = path.read_text(encoding="utf-8")
            chunked = chunk_document(text, options=options, format="markdown")
            assert chunked.chunks
            del chunked
        unreachable = gc.collect()
    finally:
        gc.enable()
    assert unreachable == 0
