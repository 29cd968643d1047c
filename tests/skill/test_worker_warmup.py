"""The workers' forkserver warm-up loads what a worker's first record would otherwise
import (issue 40: a worker's first record no slower than its hundredth by more than a
start-up)."""

from __future__ import annotations

from chunking.measure.token_spans import NUMPY_INDEX_CHARACTERS
from chunking.parse.markdown.blocks import NUMPY_LINES_CHARACTERS
from skills.skill import worker_warmup
from tests.processes import run_python

WARMED = """
import sys
import skills.skill.worker_warmup
print(" ".join(sorted(name for name in ("numpy", "tiktoken") if name in sys.modules)))
"""


def test_the_warm_up_holds_a_text_long_enough_for_numpy() -> None:
    longest = max(len(sample["text"]) for sample in worker_warmup._SAMPLES)
    assert longest > max(NUMPY_LINES_CHARACTERS, NUMPY_INDEX_CHARACTERS)


def test_a_warm_forkserver_has_loaded_what_long_pages_and_tokens_need() -> None:
    # Before, numpy was imported by each worker on its first page over 4,096 characters:
    # bench.first_record measured a replacement worker's first record at 0.14-0.17 s
    # wall against 0.005 s for its hundredth.
    done = run_python("-c", WARMED, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["numpy", "tiktoken"]
