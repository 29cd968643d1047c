"""Planning stops at the chunk cap (MAX_CHUNKS_PER_RECORD) for every strategy, not only
`words` (issue 35, item 6).

Reproduction: a 60-million-character record at 300/149 built 588,234 chunks in 41 s and
~0.8 GB in its worker before it was refused for having more than 20,000. The tests count
work (Python lines run building chunks), never time.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING

import httpx
import pytest

from chunking import chunk_document
from chunking.options import SplitMode, TooManyChunks
from skills.skill.settings import Settings
from tests.helpers import options, python_lines_in
from tests.paths import ROOT

if TYPE_CHECKING:
    from tests.conftest import LiveServers

CAP = 20
SECTIONS = "".join(f"## Part {n}\n\nWords of part {n} in a sentence.\n\n" for n in range(2_000))
"""2,000 small sections: 400 chunks of 300 characters or more, twenty times the cap."""
PER_CHUNK = str(ROOT / "chunking" / "contextualize" / "prefix.py")
"""Where each planned chunk's prefix and embedded text are built: work per chunk (the
planning document itself is built once, whatever the cap)."""


@pytest.mark.integration
def test_a_record_past_the_cap_is_refused_once_planning_passes_it(
    live_servers: LiveServers,
) -> None:
    """Over HTTP: the error says "more than" (planning stopped past the cap), where it
    counted every chunk before ("makes 2,000 chunks")."""
    url = live_servers.start(Settings(max_chunks_per_record=CAP, chunk_workers=0))
    body = {"values": [{"recordId": "r", "data": {"text": SECTIONS}}]}
    answer = httpx.post(f"{url}/api/chunk", content=json.dumps(body), timeout=60.0)
    (record,) = answer.json()["values"]
    (error,) = record["errors"]
    assert error["message"].startswith(f"not chunked: the text makes more than {CAP} chunks")
    assert "MAX_CHUNKS_PER_RECORD" in error["message"]


@pytest.mark.parametrize("mode", list(SplitMode))
def test_the_structure_walk_stops_planning_past_the_cap(mode: SplitMode) -> None:
    whole = options(300, mode=mode)
    capped = replace(whole, max_chunks=CAP)
    with python_lines_in(PER_CHUNK) as full_work:
        assert len(chunk_document(SECTIONS, options=whole, format="markdown").chunks) > 10 * CAP
    with python_lines_in(PER_CHUNK) as capped_work, pytest.raises(TooManyChunks):
        chunk_document(SECTIONS, options=capped, format="markdown")
    # Planning stopped past the cap: a small part of the whole document's chunks' work
    # (measured: 504 lines against 9,221, 492 against 46,009 by sentences).
    assert capped_work[0] * 5 < full_work[0]
