"""Issue 26 item 1: markup stripping reads each character a bounded number of times,
whatever openers never close, and finds exactly what the one regex of before found.

Work is counted, never timed: `MarkupScan.scanned` (characters each C search read)
and Python lines run in `chunking/parse/markdown/plain_markup.py`.  Before, the regex read from each
opener to the end of the text: `[` x 40,000 took 33.5 s, and a run of 1,000
backticks 78 s (inline code backtracked through every split of the run).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.parse.markdown.plain_markup import MarkupScan
from chunking.parse.markdown.plain_text import _MARKUP_START, plain_markdown
from tests.helpers import python_lines_in
from tests.paths import FIXTURES, ROOT

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from chunking.parse.markdown.plain_markup import Markup

ONE_REGEX = re.compile(
    r"""
    `(?P<code>(`*)(?:(?!`\2).)+?`\2)
    | \\(?P<escape>[#>|`~+\-*_=.)<])
    | <(?P<comment>!--.*?-->)
    | \[(?P<include>!INCLUDE\s*\[[^\]]*\]\([^)]*\)\])
    | \[!(?P<alert>NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]
    | :::image\b[^\n]*?alt-text="(?P<alt>[^"]*)"[^\n]*?:::
    | !\[(?P<image>[^\]]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)
    | \[(?P<link>[^\]]+)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)
    | \[(?P<reference>[^\]]+)\]\[[^\]]*\]
    | <(?P<tag>/?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>\n]*)?/?>)
    | \*(?P<bold>\*) | _(?P<underscores>_)
    """,
    re.VERBOSE | re.MULTILINE | re.DOTALL,
)
"""The definition: `embedded_text`'s one regex before issue 26, quadratic (or worse)
where an opener never closes, kept here as what the scan must find."""

PIECES = (
    *("`", "``", "```", "````", "``a`", "\\`", "\\#", "\\"),
    *("[", "]", "](", "][", "![", "[a]", "[r]", "(x)", '(x "t")', "(", ")", '"'),
    *("[!INCLUDE [t](p)]", "[!INCLUDE", "[!NOTE]", "<!--", "-->", "<a b>", "<", ">"),
    *(":::image", 'alt-text="', '":::', ":::", "**", "__", "a", "b c", " ", "\n", "\n\n"),
)
"""Fragments of every markup, its openers and closers apart, to be put together."""
SCAN_SOURCE = str(ROOT / "chunking" / "parse" / "markdown" / "plain_markup.py")
LINEAR = 2.3
"""The most a count may grow when the input doubles (quadratic work grows fourfold)."""
SCANNED_PER_CHARACTER = 5
"""Each character is read by the regex once and by a few closer searches at most."""
SIZE = 20_000


def _found(matches: Any) -> list[tuple[str | None, tuple[int, int], tuple[int, int]]]:
    return [(m.lastgroup, m.span(), m.span(m.lastgroup)) for m in matches]


def _scan(source: str, start: int = 0, end: int | None = None) -> list[Markup]:
    return list(MarkupScan(source, start, len(source) if end is None else end).matches())


@settings(max_examples=3000, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES), max_size=30),
    st.integers(0, 200),
    st.integers(0, 200),
)
def test_scan_finds_what_the_one_regex_found(pieces: list[str], low: int, high: int) -> None:
    source = "".join(pieces)
    start, end = sorted((min(low, len(source)), min(high, len(source))))
    assert _found(_scan(source, start, end)) == _found(ONE_REGEX.finditer(source, start, end))
    assert _found(_scan(source)) == _found(ONE_REGEX.finditer(source))


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30))
def test_every_markup_begins_at_a_character_the_prose_shortcut_looks_for(
    pieces: list[str],
) -> None:
    # `_Pieces.prose` keeps a range without one of these characters as it is, unscanned.
    source = "".join(pieces)
    for match in [*_scan(source), *ONE_REGEX.finditer(source)]:
        assert _MARKUP_START.match(source, match.start()), match
    assert all(_MARKUP_START.match(source, at) for at in _colons(source))


def _colons(source: str) -> list[int]:
    return [found.start() for found in re.finditer(":::", source)]


@pytest.mark.parametrize("path", sorted(FIXTURES.rglob("*.md")), ids=lambda path: path.name)
def test_scan_finds_what_the_one_regex_found_in_fixtures(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    assert _found(_scan(source)) == _found(ONE_REGEX.finditer(source))


def _interval_prose(n: int) -> str:
    return ("Notes: the value lies in [0, 1) for every sample taken. " * (n // 56 + 1))[:n]


def _log_excerpt(n: int) -> str:
    return ("2024-01-01 [INFO worker started\n" * (n // 32 + 1))[:n]


HOSTILE: dict[str, Callable[[int], str]] = {
    "a run of `[`": lambda n: "[" * n,
    "a run of `![`": lambda n: "![" * (n // 2),
    "prose of `[0, 1)`": _interval_prose,
    "log lines of `[INFO`": _log_excerpt,
    "a run of `<!--`": lambda n: "<!--" * (n // 4),
    "a run of `[!INCLUDE [`": lambda n: "[!INCLUDE [" * (n // 11),
    "`:::image` on one line": lambda n: ":::image " * (n // 9),
    "`:::image` with alt texts, no closer": lambda n: (
        ":::image " * (n // 40) + 'alt-text="x" ' * (n // 26)
    ),
    "`[` then one `][` and a long label": lambda n: "[" * (n // 2) + "][" + "a" * (n // 2),
    "`[` then one `](` and a long destination": lambda n: "[" * (n // 2) + "](" + "a" * (n // 2),
    "a run of backticks": lambda n: "`" * n,
    "backtick runs of two and one": lambda n: "``a`" * (n // 4),
    "a long run of backticks, then code": lambda n: "`" * (n // 2) + "`a` " * (n // 8),
    "code, then a run of backticks that never closes": lambda n: (
        "`a` " * (n // 8) + "``" * (n // 4)
    ),
}


def _work(source: str) -> tuple[int, int]:
    """Characters read by the scan's searches, and Python lines it ran."""
    scan = MarkupScan(source, 0, len(source))
    with python_lines_in(SCAN_SOURCE) as lines:
        for _ in scan.matches():
            pass
    return scan.scanned, lines[0]


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_markup_work_grows_linearly_with_openers_that_never_close(name: str) -> None:
    build = HOSTILE[name]
    small, large = build(SIZE), build(2 * SIZE)
    scanned_small, lines_small = _work(small)
    scanned_large, lines_large = _work(large)
    assert scanned_large <= LINEAR * scanned_small, (scanned_small, scanned_large)
    assert lines_large <= LINEAR * lines_small, (lines_small, lines_large)
    assert scanned_large <= SCANNED_PER_CHARACTER * len(large)


@pytest.mark.parametrize("name", ["a run of `[`", "prose of `[0, 1)`", "a run of backticks"])
def test_hostile_markup_keeps_its_text(name: str) -> None:
    # Nothing closes, so nothing is markup: the embedded text is the text.
    source = HOSTILE[name](2_000)
    assert plain_markdown(source, 0, len(source), ()) == source
