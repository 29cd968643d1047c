"""Snapshot tests on real documents: a compact summary per chunk, plus every invariant.

The snapshots are syrupy's (`__snapshots__/` beside this file). After an intended change:
`./test.sh tests/chunking/test_snapshots.py --snapshot-update`, then review `git diff` like code;
syrupy's summary names every snapshot written, and fails on snapshots no test uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from syrupy.extensions.json import JSONSnapshotExtension

from chunking import ChunkOptions, Limits, Unit
from tests.helpers import chunk_and_audit

if TYPE_CHECKING:
    from pathlib import Path

    from syrupy.assertion import SnapshotAssertion
from tests.paths import FIXTURES

SETTINGS = {
    "tokens512": Limits(Unit.TOKENS, 512, 64),
    "chars2000": Limits(Unit.CHARACTERS, 2000, 500),
    "chars300": Limits(Unit.CHARACTERS, 300, 0),
}
EDGE = 40
"""Characters kept from each end of a chunk in the summary."""

DOCUMENTS = sorted(
    p for p in FIXTURES.rglob("*") if p.suffix in {".md", ".html"} and p.name != "SOURCES.md"
)


def _summary(path: Path, limits: Limits) -> list[dict[str, object]]:
    with path.open(encoding="utf-8", newline="") as handle:
        text = handle.read()
    document, audit = chunk_and_audit(
        text, ChunkOptions(limits=limits), format="auto", file_name=path.name
    )
    assert not audit.violations, audit.examples
    return [
        {
            "span": [c.start, c.end],
            "size": c.size,
            "headings": list(c.headings),
            "anchor": c.anchor,
            "head": c.content[:EDGE],
            "tail": c.content[-EDGE:],
        }
        for c in document.chunks
    ]


@pytest.mark.parametrize("setting", sorted(SETTINGS))
@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: p.name)
def test_snapshot(path: Path, setting: str, snapshot: SnapshotAssertion) -> None:
    summary = _summary(path, SETTINGS[setting])
    assert summary == snapshot(extension_class=JSONSnapshotExtension)


def test_fixtures_are_present() -> None:
    assert len([p for p in DOCUMENTS if p.suffix == ".md"]) >= 5
