"""Snapshot tests on real documents: a compact summary per chunk, plus every invariant.

Regenerate after an intended change with `UPDATE_SNAPSHOTS=1 ./test.sh tests/test_snapshots.py`
and review the diff like code.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from chunking import ChunkOptions, Limits, Unit
from tests.helpers import chunk_and_audit

FIXTURES = Path(__file__).parent / "fixtures"
SNAPSHOTS = Path(__file__).parent / "snapshots"
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
def test_snapshot(path: Path, setting: str) -> None:
    summary = _summary(path, SETTINGS[setting])
    snapshot = SNAPSHOTS / f"{path.stem}.{setting}.json"
    rendered = json.dumps(summary, ensure_ascii=False, indent=1) + "\n"
    if os.environ.get("UPDATE_SNAPSHOTS") == "1" or not snapshot.exists():
        if os.environ.get("CI") and not snapshot.exists():
            pytest.fail(f"missing snapshot {snapshot.name}: run with UPDATE_SNAPSHOTS=1")
        SNAPSHOTS.mkdir(exist_ok=True)
        snapshot.write_text(rendered, encoding="utf-8")
    assert rendered == snapshot.read_text(encoding="utf-8")


def test_fixtures_are_present() -> None:
    assert len([p for p in DOCUMENTS if p.suffix == ".md"]) >= 5
