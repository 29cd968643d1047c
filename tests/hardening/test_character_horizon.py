"""Issue 26 item 3: the character horizon is a code-point position, and the chunks of
astral-heavy text are those of the loose horizon it replaced.

`CharacterSpans.horizon` returned its limit, a UTF-16 total, which callers use as a
position: each astral character before a chunk pushed its search one further, and
chunking emoji turned quadratic (the work is counted in test_linear_work.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from chunking import ChunkOptions, Limits, Unit
from chunking.contextualize.prefix import Contextualizer
from chunking.measure.sizing import CharacterSizer, CharacterSpans
from chunking.outline.sections import SectionTree
from chunking.parse.titles import resolve_title
from chunking.pipeline import parse
from chunking.plan.core import PlanInputs
from chunking.plan.scoring import Scoring
from chunking.plan.walk import StructureWalk


class _LooseSpans(CharacterSpans):
    """The horizon before issue 26: the limit itself, a UTF-16 total."""

    def horizon(self, limit: int) -> int:
        return limit


@dataclass(frozen=True, slots=True)
class _LooseSizer(CharacterSizer):
    def spans(self, source: str, begin: int = 0, end: int | None = None) -> CharacterSpans:
        return _LooseSpans(source)


def _spans(text: str, options: ChunkOptions, sizer: CharacterSizer) -> list[tuple[int, int]]:
    outline = parse(text, "markdown")
    title, title_heading = resolve_title(outline, given=None)
    context = Contextualizer.for_options(sizer, title, options)
    tree = SectionTree.build(outline, title_heading)
    splitter = StructureWalk(PlanInputs(outline, tree, sizer, context, options, Scoring()))
    return [(span.start, span.end) for span in splitter.spans()]


PIECES = (
    *("\U0001f600", "\U0001f468\u200d\U0001f469\u200d\U0001f467", "\U00020000", "\U0001d400"),
    *("a", "bc", " ", ". ", "\n", "\n\n", "# ", "中", "。"),
)
"""Emoji (one, and a family joined by ZWJ), CJK Extension B, a math letter, and the
boundaries a splitter looks for between them."""


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES), min_size=100, max_size=1500),
    st.integers(300, 400),
    st.integers(0, 100),
)
def test_astral_text_chunks_as_with_the_loose_horizon(
    pieces: list[str], maximum: int, overlap: int
) -> None:
    text = "".join(pieces)
    options = ChunkOptions(limits=Limits(Unit.CHARACTERS, maximum, overlap), title_prefix=False)
    assert _spans(text, options, CharacterSizer()) == _spans(text, options, _LooseSizer())


@given(st.text(max_size=60), st.integers(0, 120))
def test_horizon_is_the_last_position_within_the_limit(text: str, limit: int) -> None:
    spans = CharacterSpans(text)
    horizon = spans.horizon(limit)
    assert spans.total(horizon) <= limit < spans.total(horizon + 1)
