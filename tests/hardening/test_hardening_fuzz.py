"""Fuzzing with a small budget on every test run; `python -m tests.fuzz` is the long run.

The properties live in tests/fuzz.py, the generators in tests/strategies.py. Crashes the
fuzzer found are pinned below as named regression tests.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from tests.fuzz import TARGETS, check_html, check_markdown, check_request, run_target
from tests.hardening_report import FIGURES
from tests.strategies import HTML, MARKDOWN

BUDGET = {"markdown": 60, "html": 60, "endpoint": 80}
"""Examples per target in the default run (seconds, not minutes, in all)."""


@pytest.mark.parametrize("target", TARGETS, ids=lambda target: target.name)
def test_fuzz_target_with_a_small_budget(target: Any) -> None:
    tried = [0]
    run_target(target, BUDGET[target.name], tried)
    FIGURES.add("inputs tried", tried[0])


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(MARKDOWN, HTML)
def test_the_strategies_make_structured_documents(markdown: str, html: str) -> None:
    """The generators are not degenerate: they build the structure the parsers care about."""
    assert isinstance(markdown, str)
    assert html.lower().count("<html>") == 1


def test_the_long_run_command_runs_and_reports() -> None:
    from tests.fuzz import main

    assert main(["--minutes", "0.001", "--target", "endpoint", "--examples", "10"]) == 0


# --- pinned regressions (found while fuzzing the endpoint) ------------------------------


def test_regression_json_nested_deeper_than_the_recursion_limit_is_a_400() -> None:
    """A body nesting arrays 100,000 deep made json raise RecursionError: a 500, not a 400."""
    check_request(b'{"values": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")


def test_regression_markdown_and_html_examples_stay_valid() -> None:
    """Smallest documents of each shape the strategies build, checked without hypothesis."""
    from chunking import Limits, SplitMode, Unit

    check_markdown(
        "> - ```\n>   x\r\n| a |\n", Limits(Unit.CHARACTERS, 300, 0), SplitMode.PAGES, True
    )
    check_html("<table><tr><td><h1>x</h1></table><li>y", Limits(Unit.TOKENS, 64, 0))


def test_regression_the_audit_knows_cr_line_endings() -> None:
    from chunking import Limits, Unit
    from chunking.options import ChunkOptions
    from tests.helpers import chunk_and_audit

    opts = ChunkOptions(limits=Limits(Unit.CHARACTERS, 300, 0), title_prefix=False)
    text = "---\rtitle: 0\r---\r    code line"
    document, audit = chunk_and_audit(text, opts, format="markdown")
    assert [chunk.content for chunk in document.chunks] == ["code line"]
    assert not audit.violations, audit.examples


def test_regression_sentences_mode_treats_cr_like_lf() -> None:
    from chunking import ChunkOptions, Limits, SplitMode, Unit, chunk_document

    opts = ChunkOptions(
        limits=Limits(Unit.CHARACTERS, 300, 0), mode=SplitMode.SENTENCES, title_prefix=False
    )
    lf = "0.\n\n- 0...\n\n  1. 0."
    spans = {
        newline: [
            (chunk.start, chunk.end)
            for chunk in chunk_document(
                lf.replace("\n", newline), options=opts, format="markdown"
            ).chunks
        ]
        for newline in ("\n", "\r")
    }
    assert spans["\n"] == [(0, 2), (4, 10), (14, 19)]
    assert spans["\r"] == spans["\n"]


def test_regression_pages_mode_treats_cr_like_lf() -> None:
    from chunking import ChunkOptions, Limits, Unit, chunk_document

    lf = (
        "0 über.\n\n- # 000000 `über`. #\n\n10) 0.\n\n    > 0.\n    >\n"
        "    > `über` **0** `über`.\n    >\n    > `über` `über` `über` `über`.\n    > ===\n\n"
        "    10) 0.\n\n        > über.\n        >\n        > 0. 0 **0000**. 000000 0 0 "
        "[0](http://example.invalid/1) über. 000000000000 **000000000** "
        "[00](http://example.invalid/2)."
    )
    # Planned on the raw text (301 characters): markup left out, it fits one chunk.
    opts = ChunkOptions(
        limits=Limits(Unit.CHARACTERS, 300, 0), title_prefix=False, strip_markup=False
    )
    spans = {
        newline: [
            (chunk.start, chunk.end)
            for chunk in chunk_document(
                lf.replace("\n", newline), options=opts, format="markdown"
            ).chunks
        ]
        for newline in ("\n", "\r")
    }
    assert spans["\n"] == [(0, 242), (243, 301)]
    assert spans["\r"] == spans["\n"]
