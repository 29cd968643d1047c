"""The evaluation's report.html in a real browser (headless Chromium, as the chunk map's
browser tests): the settings block under the recommendation wraps at a laptop's width
instead of running off the page (issue 39 item 9)."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

import numpy as np

from chunking.options import Unit
from evaluation.chunkers import EvalChunk
from evaluation.documents import EvalDocument
from evaluation.metrics import bootstrap_mean
from evaluation.questions import Question
from evaluation.report import render_html
from evaluation.run import (
    ALL_METRICS,
    Cost,
    QuestionTrace,
    SettingResult,
    Sweep,
    compare_with_baseline,
    recommend,
)
from evaluation.settings import Setting
from tests.commands.test_chunk_map_browser import BROWSER_SECONDS, CHROMIUM, needs_chromium

if TYPE_CHECKING:
    from pathlib import Path

WIDTH = 800
"""A narrow laptop window, in CSS pixels."""
MEASURE = (
    "<script>const block = document.querySelector('pre');"
    "document.body.dataset.block = [block.scrollWidth, block.clientWidth,"
    " Math.ceil(block.getBoundingClientRect().right), window.innerWidth].join(' ');</script>"
)
"""Writes the settings block's content width, its box width, its right edge and the
window's width into the DOM Chromium dumps."""


SOURCE = "# Backups\n\nBackups run every night at two o'clock.\n"
DOCUMENTS = {"guide.md": EvalDocument("guide.md", SOURCE, "markdown", SOURCE)}
QUESTIONS = [
    Question(line, "when do backups run", "guide.md", SOURCE.index("Backups run"), len(SOURCE) - 1)
    for line in range(1, 41)
]
CHUNK = EvalChunk("guide.md", 0, len(SOURCE), SOURCE)


def _result(setting: Setting, answers: list[float]) -> SettingResult:
    values = np.array(answers)
    per_question = dict.fromkeys(ALL_METRICS, values)
    traces = tuple(
        QuestionTrace(CHUNK, 0 if answer else None, 0 if answer else None, (CHUNK,))
        for answer in answers
    )
    return SettingResult(
        setting=setting,
        per_question=per_question,
        means={name: bootstrap_mean(v) for name, v in per_question.items()},
        cost=Cost(chunks=100, tokens=100_000, storage_bytes=0, price=0.0),
        truncated_share=0.0,
        warnings=(),
        traces=traces,
        chunks=(CHUNK,),
    )


@needs_chromium
def test_the_settings_block_wraps_at_a_laptops_width(tmp_path: Path) -> None:
    ours = _result(Setting("ours", Unit.TOKENS, 512, 64, "64"), [1.0, 1.0, 0.0, 1.0] * 10)
    split = _result(Setting("split-skill", Unit.TOKENS, 512, 64, "64"), [1.0, 0, 0, 0] * 10)
    sweep = Sweep(results=[ours, split])
    sweep.comparisons = compare_with_baseline(sweep.results)
    sweep.recommendation = recommend(sweep.results)
    assert sweep.recommendation is not None
    assert sweep.recommendation.label == ours.label
    page = render_html(sweep, QUESTIONS, DOCUMENTS, "model")
    assert "To index with it" in page
    longest = max(len(line) for line in page.split("<pre>")[1].split("</pre>")[0].splitlines())
    assert longest > WIDTH // 4  # wider than the window at any font size a page uses
    path = tmp_path / "report.html"
    path.write_text(page.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    done = subprocess.run(
        [CHROMIUM or "", "--headless", "--disable-gpu", "--no-sandbox",
         f"--window-size={WIDTH},900", "--dump-dom", path.as_uri()],
        capture_output=True, text=True, check=False, timeout=BROWSER_SECONDS,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    measured = done.stdout.split('data-block="')[1].split('"')[0]
    content, box, right, window = (int(number) for number in measured.split())
    assert content <= box, measured  # no line runs past the block: it wraps
    assert right <= window, measured  # and the block stays inside the window
