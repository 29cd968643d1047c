"""Issue 13's reproductions: chunking work grows linearly with the input, whatever its shape.

No wall-clock assertions (see test_stress_inputs.py): each test counts work that
does not depend on the machine.  Python lines executed in `chunking/` catch a
quadratic loop in our code; characters handed to the sentence segmenter and
characters scanned for the next word end catch the quadratic work that happens
inside C and Rust calls (line breaks come from one table per document).
Doubling a linear input doubles each count (a little less: fixed costs); a
quadratic one quadruples it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from chunking import ChunkOptions, Limits, SplitMode, Unit, chunk_document
from chunking.contextualize.prefix import Contextualizer
from chunking.measure.sizing import make_sizer
from chunking.outline.sections import SectionTree
from chunking.parse.titles import resolve_title
from chunking.pipeline import parse
from chunking.plan.core import PlanInputs
from chunking.plan.scoring import Scoring
from chunking.plan.sentences import WINDOW_CHARACTERS
from chunking.plan.walk import StructureWalk
from tests.helpers import CountingSegmenter, python_lines_in
from tests.paths import ROOT

if TYPE_CHECKING:
    from collections.abc import Callable

    from chunking.model import Span
    from chunking.pipeline import FormatName

CHUNKING = str(ROOT / "chunking")
LINEAR = 2.3
"""The most any count may grow when the input doubles: linear work doubles, plus a
little for bisections and rounding; quadratic work grows about fourfold."""
SCANNED_PER_CHARACTER = 3
"""Word-end searches read each character about once, at most this often."""
SEGMENTED_PER_CHARACTER = 2
"""Sentence windows overlap by a margin and a sentence: under twice the text in all."""


@dataclass(frozen=True)
class Work:
    """What chunking one document took."""

    spans: list[Span]
    python_lines: int
    """Lines executed in `chunking/` (sys.settrace)."""
    segmented: int
    """Characters passed to sentencex."""
    scanned: int
    """Characters searched for the next word end."""


def _splitter(
    text: str, options: ChunkOptions, format: FormatName, segment: CountingSegmenter
) -> StructureWalk:
    """The splitter `chunk_document` builds, with the segmenter given."""
    sizer = make_sizer(options.limits.unit, options.encoder_model_name)
    outline = parse(text, format)
    title, title_heading = resolve_title(outline, given=None)
    context = Contextualizer.for_options(sizer, title, options)
    tree = SectionTree.build(outline, title_heading)
    inputs = PlanInputs(outline, tree, sizer, context, options, Scoring())
    return StructureWalk(inputs, segment=segment)


def measure(text: str, options: ChunkOptions, format: FormatName = "text") -> Work:
    """Chunk `text` (parsing included) and count the work."""
    segment = CountingSegmenter()
    with python_lines_in(CHUNKING) as lines:
        splitter = _splitter(text, options, format, segment)
        spans = splitter.spans()
    scanned = splitter.next_word_end.scanned
    return Work(spans, lines[0], sum(segment.calls), scanned)


def _dotted_number(characters: int) -> str:
    return ".".join(str(n) for n in range(1, characters))[:characters]


def _base64_line(characters: int) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    return "".join(alphabet[(n * 37 + n // 64) % 64] for n in range(characters))


TOKENS = ChunkOptions()
CHARACTERS_300 = ChunkOptions(limits=Limits(Unit.CHARACTERS, 300, 0))
"""For `.`: cl100k packs a run of them 64 to a token, so a 512-token chunk is 32,000."""
CJK_300 = ChunkOptions(limits=Limits(Unit.CHARACTERS, 300, 0), language="zh")
SHAPES: dict[str, tuple[Callable[[int], str], ChunkOptions, FormatName]] = {
    "CJK sentences in one block, 300 characters": (
        lambda n: "这是一个句子。" * (n // 7),
        CJK_300,
        "text",
    ),
    "English in one block, sentences mode": (
        lambda n: "The quick brown fox jumps over the lazy dog. " * (n // 45),
        ChunkOptions(mode=SplitMode.SENTENCES),
        "text",
    ),
    "a run of `.`": (lambda n: "." * n, CHARACTERS_300, "text"),
    "`1.2.3...` one number": (_dotted_number, TOKENS, "text"),
    "`e.g. ` over and over": (lambda n: "e.g. " * (n // 5), TOKENS, "text"),
    "a run of `。`": (lambda n: "。" * n, ChunkOptions(language="zh"), "text"),
    "one line without spaces": (_base64_line, TOKENS, "text"),
    "a heading per line": (lambda n: "# h\n" * (n // 4), TOKENS, "markdown"),
    # Found by the soak: 2 MB took 23 s and 8 MB 367 s before the line/word searches
    # were remembered (every chunk scanned the rest of the line again).
    "words on one line, 300 characters": (lambda n: "word " * (n // 5), CHARACTERS_300, "text"),
    # Issue 26: astral characters count two UTF-16 units, and the character horizon was
    # a UTF-16 total used as a code-point position, so every chunk looked further ahead.
    "a run of emoji, 300 characters": (lambda n: "\U0001f600" * (n // 2), CHARACTERS_300, "text"),
    "family emoji between words, 300 characters": (
        lambda n: "a\U0001f468\u200d\U0001f469\u200d\U0001f467b " * (n // 11),
        CHARACTERS_300,
        "text",
    ),
}
SIZE = 16_000
"""Characters of the smaller document of each pair: big enough for every quadratic
term to dominate a count (the heading one fourfold at 8,000), small enough to trace."""


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_work_grows_linearly_with_the_input(name: str) -> None:
    build, options, format = SHAPES[name]
    measure(build(SIZE // 8), options, format)  # loads parsers, encodings, caches
    small = measure(build(SIZE), options, format)
    large = measure(build(2 * SIZE), options, format)
    assert large.spans, name
    assert large.python_lines <= LINEAR * small.python_lines, (name, small, large)
    assert large.segmented <= SEGMENTED_PER_CHARACTER * 2 * SIZE, name
    assert large.scanned <= SCANNED_PER_CHARACTER * 2 * SIZE, name


def test_the_counting_seam_does_not_change_the_chunks() -> None:
    text = "这是一个句子。" * 5_000
    spans = measure(text, CJK_300).spans
    document = chunk_document(text, options=CJK_300, format="text")
    assert [(s.start, s.end, s.text) for s in spans] == [
        (c.start, c.end, c.text) for c in document.chunks
    ]


def test_cjk_block_is_segmented_in_windows_through_the_pipeline() -> None:
    """The issue's reproduction: `{"text": "这是一个句子。" * 43000, "language": "zh"}`
    with the default options; one sentencex call over the whole block took 12 s."""
    text = "这是一个句子。" * 43_000
    segment = CountingSegmenter()
    spans = _splitter(text, ChunkOptions(language="zh"), "text", segment).spans()
    assert spans[-1].end == len(text)
    assert max(segment.calls) <= WINDOW_CHARACTERS
    assert sum(segment.calls) <= SEGMENTED_PER_CHARACTER * len(text)


@pytest.mark.parametrize("options", [ChunkOptions(), CJK_300], ids=["tokens", "characters"])
def test_one_page_to_take_segments_a_bounded_prefix(options: ChunkOptions) -> None:
    """`maximumPagesToTake=1` on 200,000 CJK characters took 19 s: the whole block
    was segmented for its first chunk.  Now the first windows are."""
    limits = options.limits
    pages = ChunkOptions(
        limits=Limits(limits.unit, limits.maximum_page_length, limits.page_overlap_length, 1),
        language="zh",
    )
    text = "这是一个句子。" * 30_000
    segment = CountingSegmenter()
    spans = _splitter(text, pages, "text", segment).spans()
    assert len(spans) == 1
    assert sum(segment.calls) <= 2 * WINDOW_CHARACTERS
