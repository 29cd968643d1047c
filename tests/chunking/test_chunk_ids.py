"""Chunk ids hash a canonical form of what decides cuts (`chunking.options.chunk_ids`), with the
ids they always had; an option joins the form only when it is listed there."""

from __future__ import annotations

import dataclasses

import pytest

from chunking import ChunkOptions, Limits, Unit, chunk_document
from chunking.options.chunk_ids import (
    CUT_FIELDS,
    LIMITS_FIELDS,
    NOT_CUTTING,
    STRATEGY_FIELDS,
    SWITCH_FIELDS,
    cut_identity,
)
from chunking.plan.binary_params import BinarySplit
from chunking.plan.semantic_params import SemanticBreaks
from chunking.plan.strategies import PARAMETER_TYPES
from chunking.plan.words_params import WordScope, WordWindows

TEXT = "# Title\n\nOne paragraph here. Two sentences.\n\n## Part\n\nMore text in a part.\n"
TOKENS = (
    "ChunkOptions(limits=Limits(unit=<Unit.TOKENS: 'azureOpenAITokens'>, "
    "maximum_page_length=512, page_overlap_length=64, maximum_pages_to_take=0), "
    "mode=<SplitMode.PAGES: 'pages'>, encoder_model_name='cl100k_base', language='en', "
    "title_prefix=True, section_fill=0.75, strip_markup=True, heading_separator=' › ', "
    "prefix_separator='\\n\\n', strategy="
)
IDS_BEFORE = {
    "default": (ChunkOptions(), ["52244944c70dc6c60d85f94390623b22"]),
    "characters": (
        ChunkOptions(
            limits=Limits(Unit.CHARACTERS, 2000, 500), section_fill=None, title_prefix=False
        ),
        ["839b8373f38782562b8df89ade78424d"],
    ),
    "words": (
        ChunkOptions(strategy="words", parameters=WordWindows(6, 1, WordScope.DOCUMENT)),
        [
            "db562a68f7aabf2f16971edb4d37ec6c",
            "bef62517252e3340e25740787b4b3c3b",
            "55740a1dc46c30ca7991eda042f02c0f",
        ],
    ),
    "capped": (ChunkOptions(max_chunks=3), ["52244944c70dc6c60d85f94390623b22"]),
}
"""Ids of `TEXT` as `repr(options)` made them before the canonical form (commit df39364)."""


@pytest.mark.parametrize("name", sorted(IDS_BEFORE))
def test_ids_are_the_ids_repr_made(name: str) -> None:
    options, ids = IDS_BEFORE[name]
    assert [c.id for c in chunk_document(TEXT, options=options, format="markdown").chunks] == ids


def test_the_form_of_the_scored_strategies_is_the_one_repr_made() -> None:
    semantic = ChunkOptions(strategy="semantic", parameters=SemanticBreaks(90.0, 1, 0.5))
    binary = ChunkOptions(strategy="binary", parameters=BinarySplit("rerank", 8))
    assert cut_identity(semantic) == (
        f"{TOKENS}'semantic')SemanticBreaks(percentile=90.0, window=1, min_fill=0.5)"
    )
    assert cut_identity(binary) == f"{TOKENS}'binary')BinarySplit(scorer='rerank', candidates=8)"


def test_every_option_is_declared_as_deciding_cuts_or_not() -> None:
    declared = [*CUT_FIELDS, "parameters", *SWITCH_FIELDS, *NOT_CUTTING]
    assert len(declared) == len(set(declared))
    assert {f.name for f in dataclasses.fields(ChunkOptions)} == set(declared)
    defaults = ChunkOptions()
    assert {name: getattr(defaults, name) for name in SWITCH_FIELDS} == SWITCH_FIELDS
    assert tuple(f.name for f in dataclasses.fields(Limits)) == LIMITS_FIELDS
    for strategy, (label, names) in STRATEGY_FIELDS.items():
        parameters = PARAMETER_TYPES[strategy]
        assert parameters.__name__ == label
        assert tuple(f.name for f in dataclasses.fields(parameters)) == names, strategy


def test_an_option_that_decides_no_cut_changes_no_id() -> None:
    wider = dataclasses.make_dataclass(
        "ChunkOptions",
        [("display_name", str, dataclasses.field(default="shown nowhere"))],
        bases=(ChunkOptions,),
        frozen=True,
        slots=True,
    )
    for options, ids in IDS_BEFORE.values():
        widened = wider(**{f.name: getattr(options, f.name) for f in dataclasses.fields(options)})
        assert cut_identity(widened) == cut_identity(options)
        chunks = chunk_document(TEXT, options=widened, format="markdown").chunks
        assert [c.id for c in chunks] == ids
