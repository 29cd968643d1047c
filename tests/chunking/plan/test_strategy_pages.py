"""The `pages` strategy: the Text Split skill's pages as a strategy of the skill (issue 38,
item 1), so one index can hold both cuts of the same documents."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking import ChunkOptions, Limits, OptionError, SplitMode, Unit
from chunking.api import chunk_options, chunk_text
from chunking.measure.sizing import make_sizer
from chunking.pipeline import chunk_document
from chunking.plan.pages import split_pages
from chunking.plan.strategies import SCORED_STRATEGIES, STRATEGY_NAMES, STRATEGY_PARAMETERS
from skills.commands.cli import Parser, add_chunk_arguments
from skills.commands.cli import chunk_options as command_line_options
from skills.parameters import BY_NAME
from skills.skill.record_inputs import InputErrors, RecordInputs, read_record_inputs
from skills.skill.settings import Settings
from tests.helpers import chunk_and_audit
from tests.paths import ROOT
from tests.strategies import MARKDOWN, limits

NETWORK = ROOT / "samples" / "concepts-network.md"
STRUCTURE_BLIND = frozenset({"cut_inside_table_row", "cut_inside_code_line"})
"""What the Split skill's pages do and the structure-aware strategies do not."""


def pages(limits: Limits, **options: object) -> ChunkOptions:
    return ChunkOptions(limits=limits, strategy="pages", **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "limits",
    [
        Limits(Unit.CHARACTERS, 300, 0),
        Limits(Unit.CHARACTERS, 300, 60),
        Limits(Unit.TOKENS, 64, 16),
    ],
)
def test_without_a_prefix_the_pages_are_the_split_skills(limits: Limits) -> None:
    """No title or heading in front: the chunks are exactly the evaluation's emulation
    of the Split skill's `pages` (the same function)."""
    text = NETWORK.read_text(encoding="utf-8")
    document = chunk_document(text, options=pages(limits, title_prefix=False), format="text")
    expected = split_pages(text, make_sizer(limits.unit, "cl100k_base"), limits)
    assert len(expected) > 3
    assert [(c.start, c.end) for c in document.chunks] == [(p.start, p.end) for p in expected]
    assert not document.warnings


def test_pages_make_room_for_the_prefix_and_fit_the_limit() -> None:
    text = NETWORK.read_text(encoding="utf-8")
    limits = Limits(Unit.CHARACTERS, 400, 50)
    document, audit = chunk_and_audit(text, pages(limits))
    without = chunk_document(text, options=pages(limits, title_prefix=False))
    assert all(chunk.size <= 400 for chunk in document.chunks)
    assert all(chunk.text.startswith("Concepts - Networking") for chunk in document.chunks)
    # Room for the prefix: more, smaller pages than without one, and not each page
    # cut in two (a page of the whole limit plus a prefix would be over it).
    assert len(without.chunks) < len(document.chunks) < 2 * len(without.chunks)
    assert set(audit.violations) <= STRUCTURE_BLIND, audit.examples


@settings(max_examples=40, deadline=None)
@given(text=MARKDOWN, chosen=limits())
def test_pages_keep_every_invariant_but_whole_rows(text: str, chosen: Limits) -> None:
    """Spans of the source, in order, covering the body, each within the limit with its
    prefix: every invariant of the audit but rows and code lines kept whole (the Split
    skill cuts them, and so do its pages)."""
    _, audit = chunk_and_audit(text, pages(chosen))
    assert set(audit.violations) <= STRUCTURE_BLIND, audit.examples


def test_pages_and_structure_share_an_index_with_different_ids() -> None:
    text = NETWORK.read_text(encoding="utf-8")
    ours = chunk_text(text, max_length=256, strategy="structure", format="markdown")
    theirs = chunk_text(text, max_length=256, strategy="pages", format="markdown")
    assert {c.id for c in ours.chunks}.isdisjoint({c.id for c in theirs.chunks})
    assert [(c.start, c.end) for c in ours.chunks] != [(c.start, c.end) for c in theirs.chunks]


def test_the_declaration_reaches_every_surface() -> None:
    """One declaration and one registry line: the names, the table, the command line, the
    skill's record inputs and the API all take `pages`, and it has no parameters of its
    own (so none of another strategy's)."""
    assert "pages" in STRATEGY_NAMES
    assert "pages" not in SCORED_STRATEGIES
    assert "pages" not in STRATEGY_PARAMETERS
    row = BY_NAME["strategy"]
    assert "pages" in row.choices
    assert "`pages`: the Text Split skill's pages" in row.meaning
    assert row.flag is not None
    assert "pages: the Text Split skill's pages" in row.flag.help

    parser = Parser(prog="test")
    add_chunk_arguments(parser)
    parsed = parser.parse_args(["--strategy", "pages", "--overlap", "10"])
    assert command_line_options(parsed).strategy == "pages"
    refused = parser.parse_args(["--strategy", "pages", "--words-per-chunk", "10"])
    with pytest.raises(OptionError, match="only apply to strategy 'words'"):
        command_line_options(refused)

    inputs = read_record_inputs({"text": "x", "strategy": "Pages"}, Settings())
    assert isinstance(inputs, RecordInputs)
    assert inputs.options.strategy == "pages"
    assert chunk_options(strategy="pages").strategy == "pages"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"wordsPerChunk": 10}, "input(s) 'wordsPerChunk' only apply to strategy 'words'"),
        ({"textSplitMode": "sentences"}, "textSplitMode sentences does not apply to strategy"),
    ],
)
def test_a_record_asking_pages_for_what_they_do_not_do_is_refused(
    data: dict[str, object], message: str
) -> None:
    inputs = read_record_inputs({"text": "x", "strategy": "pages", **data}, Settings())
    assert isinstance(inputs, InputErrors)
    assert any(message in error for error in inputs.messages), inputs.messages


def test_the_api_names_the_registered_strategies() -> None:
    with pytest.raises(OptionError, match="pages") as refused:
        chunk_options(strategy="page")
    assert "structure, words, semantic, binary, pages" in str(refused.value)


@given(st.sampled_from(STRATEGY_NAMES))
def test_every_registered_strategy_is_a_choice_of_the_skill(name: str) -> None:
    inputs = read_record_inputs({"text": "x", "strategy": name}, Settings())
    assert isinstance(inputs, RecordInputs)
    assert inputs.options.strategy == name
    assert inputs.options.mode is SplitMode.PAGES
