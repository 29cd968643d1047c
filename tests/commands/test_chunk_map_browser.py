"""The chunk map in a real browser: headless Chromium parses the page into the DOM the
HTML tests expect, and scripts/screenshots.sh paints both views into non-blank PNGs.

Skipped where no Chromium is installed (Debian: apt-get install chromium); the page is
still checked by parsing in tests/commands/test_chunk_map.py.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from typing import TYPE_CHECKING

import pytest

from skills.commands.chunk_map import Annotations, map_document, render_chunk_map
from testing.openai_stub import OpenAIStub
from tests.chunk_map_checks import check_page
from tests.evaluation.test_evaluation_run import DIMENSIONS, KEY, small_set
from tests.helpers import options
from tests.paths import ROOT

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["small_set"]  # the fixture, shared with the run tests

SCRIPT = ROOT / "scripts" / "screenshots.sh"
CHROMIUM = os.environ.get("CHROMIUM") or next(
    (
        found
        for name in ("chromium", "chromium-browser", "google-chrome")
        if (found := shutil.which(name))
    ),
    None,
)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (apt-get install chromium)"
)
BROWSER_SECONDS = 120
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MIN_DISTINCT_ROWS = 100
"""A blank or single-colour page has a handful of distinct pixel rows; a map has hundreds."""
DOCUMENT = (
    "# Limits\r\n\r\n"
    + " ".join(f"Sentence {i} explains one limit." for i in range(40))
    + "\r\n\r\n| item | limit |\r\n| --- | --- |\r\n"
    + "".join(f"| item {i} | {i} units |\r\n" for i in range(30))
    + "\r\nA last line with </script><script>document.body.remove()</script> in it.\r\n"
)
"""CRLF line endings (a parser turns a raw CR into LF), overlaps, a table, a script tag."""


def _distinct_rows(png: bytes) -> int:
    """Distinct (filtered) scanlines of a PNG: enough to tell a painted page from a blank."""
    assert png.startswith(PNG_SIGNATURE)
    offset, data, width, channels = len(PNG_SIGNATURE), b"", 0, 0
    while offset < len(png):
        (length,) = struct.unpack(">I", png[offset : offset + 4])
        kind = png[offset + 4 : offset + 8]
        body = png[offset + 8 : offset + 8 + length]
        if kind == b"IHDR":
            width = struct.unpack(">I", body[:4])[0]
            channels = {2: 3, 6: 4}[body[9]]
        elif kind == b"IDAT":
            data += body
        offset += 12 + length
    raw = zlib.decompress(data)
    stride = 1 + width * channels
    return len({raw[i : i + stride] for i in range(0, len(raw), stride)})


@needs_chromium
def test_chromium_builds_the_dom_the_page_promises(tmp_path: Path) -> None:
    chunk_map = map_document(DOCUMENT, options=options(300, 100), name="limits.md")
    start = DOCUMENT.index("| item 3 |")
    page = tmp_path / "map.html"
    page.write_text(
        render_chunk_map(chunk_map, Annotations(heading="q", mark=(start, start + 40))),
        encoding="utf-8",
    )
    # Bytes, not text: text mode would turn the DOM's CRs into LFs on the way in.
    done = subprocess.run(
        [
            CHROMIUM or "",
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        check=False,
        timeout=BROWSER_SECONDS,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout.decode("utf-8")
    assert "\r" in chunk_map.document.source
    # The DOM as Chromium built it: every character once (CRs included), every chunk's
    # card with its prefix and size, and no element the document's text smuggled in.
    soup = check_page(dom, chunk_map)
    assert len(soup.select("main aside.card")) == len(chunk_map.document.chunks) > 2
    assert soup.select("main span.seg.ov")
    assert len(soup.find_all("script")) == 1
    assert soup.select_one("main") is not None  # the document's </script> removed nothing


@needs_chromium
@pytest.mark.integration
def test_the_screenshot_script_paints_both_views(
    small_set: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs, questions = small_set
    evaluation = tmp_path / "eval"
    with OpenAIStub(dimensions=DIMENSIONS, api_key=KEY) as stub:
        environment = {
            "AZURE_OPENAI_ENDPOINT": stub.azure_endpoint,
            "AZURE_OPENAI_API_KEY": KEY,
            "AZURE_OPENAI_EMBEDDING_DEPLOYMENT": "embedding",
            "EMBEDDING_DIMENSIONS": str(DIMENSIONS),
        }
        command = [
            sys.executable, "-m", "evaluation", str(docs), str(questions), "--max", "64",
            "--overlap", "0", "--embedding", "azure_openai", "--baselines", "split-skill",
            "--cache", str(tmp_path / "cache"), "--out", str(evaluation), "--quiet",
        ]  # fmt: skip
        done = subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, check=False, timeout=240,
            env={**os.environ, **environment, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    shots = tmp_path / "shots"
    done = subprocess.run(
        [str(SCRIPT), str(shots), str(evaluation)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=4 * BROWSER_SECONDS,
        env={**os.environ, "PYTHON": sys.executable, "CHROMIUM": CHROMIUM or ""},
    )
    assert done.returncode == 0, done.stderr
    names = ["concepts-network", "concepts-network-96", "eval-report", "eval-question"]
    assert done.stdout.split() == [str(shots / f"{name}.png") for name in names]
    for name in names:
        png = (shots / f"{name}.png").read_bytes()
        assert _distinct_rows(png) > MIN_DISTINCT_ROWS, name
    # Three questions, none cut: the script shows the first.
    assert "maps/q1.html#mark" in (shots / "eval-question.frame.html").read_text(encoding="utf-8")
    assert json.loads((evaluation / "results.json").read_text(encoding="utf-8"))["questions"] == 3


def test_a_blank_png_has_few_distinct_rows(tmp_path: Path) -> None:
    """The check the screenshot test relies on, on a blank image (no browser needed)."""
    width, height = 64, 200
    rows = b"".join(b"\x00" + b"\xff\xff\xff" * width for _ in range(height))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    blank = (
        PNG_SIGNATURE
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )
    assert _distinct_rows(blank) == 1
