"""The evaluation's sweep flags come from the table of parameters (`evaluation.sweeps`)."""

from __future__ import annotations

import pytest

from chunking.options import SECTIONS_APART_FILL, OptionError, SplitMode, Unit
from evaluation.__main__ import build_parser, grid_from
from evaluation.sweeps import BY_FLAG, SWEEPS
from skills.parameters import BY_NAME

NOT_SWEEPS = frozenset(
    {
        "-h", "--help", "--set", "--sets", "--retrieval", "--cross-encoder", "--rules",
        "--baselines", "--embedding", "--cache", "--out", "--price", "--quiet", "--quick",
        "--limits", "--passages",
    }
)  # fmt: skip
"""The evaluation's own flags: what to read, how to retrieve, where to write, the
rule variants (`--rules`), which switch a chunking rule no parameter names,
`--limits`, whose items the `--max`, `--overlap` and `--unit` sweeps read, and
`--passages`, how ranked chunks are handed to the reader."""


def test_every_sweep_flag_is_a_row_of_the_table_of_parameters() -> None:
    flags = {
        name
        for action in build_parser()._actions  # argparse keeps no public list
        for name in action.option_strings
    }
    assert flags - NOT_SWEEPS == set(BY_FLAG)
    for sweep in SWEEPS:
        for row in sweep.parameters:
            assert row is BY_NAME[row.name]
            assert row.option, f"{sweep.flag} sweeps {row.name}, which sets no chunk option"
        first = sweep.parameters[0]
        if sweep.how == "values":
            assert first.flag is not None
            assert sweep.flag == first.flag.name  # spelled as `python -m chunking` spells it
        if sweep.how == "pair":
            assert {row.strategy for row in sweep.parameters} == {sweep.flag.removeprefix("--")}


def test_sweep_flags_keep_their_spellings() -> None:
    assert [sweep.flag for sweep in SWEEPS] == [
        "--max", "--overlap", "--unit", "--mode", "--title-prefix", "--strip-markup",
        "--sections", "--section-fill", "--strategy", "--words", "--semantic",
    ]  # fmt: skip


def test_the_default_grid_is_what_it_was() -> None:
    grid = grid_from(build_parser().parse_args(["--baselines", "none"]))
    assert grid.maximums == (256, 512, 1024)
    assert grid.overlaps == ("0", "12%")
    assert grid.units == (Unit.TOKENS,)
    assert grid.modes == (SplitMode.PAGES,)
    assert grid.title_prefixes == (True,)
    assert grid.strip_markup == (True,)
    assert grid.section_fills == (SECTIONS_APART_FILL,)
    assert grid.strategies == ("structure",)
    assert grid.word_windows == ((200, 40),)
    assert grid.semantic_breaks == ((95.0, 2),)


def test_sweep_flags_read_their_values() -> None:
    arguments = build_parser().parse_args(
        [
            "--baselines", "none", "--max", "300,600", "--overlap", "10%",
            "--unit", "characters,tokens", "--mode", "pages,sentences",
            "--title-prefix", "on,off", "--strip-markup", "OFF", "--sections", "apart,packed",
            "--strategy", "words,binary", "--words", "100/20,50", "--semantic", "90,80/3",
        ]
    )  # fmt: skip
    grid = grid_from(arguments)
    assert grid.maximums == (300, 600)
    assert grid.units == (Unit.CHARACTERS, Unit.TOKENS)
    assert grid.modes == (SplitMode.PAGES, SplitMode.SENTENCES)
    assert grid.title_prefixes == (True, False)
    assert grid.strip_markup == (False,)
    assert grid.section_fills == (SECTIONS_APART_FILL, None)
    assert grid.word_windows == ((100, 20), (50, 0))
    assert grid.semantic_breaks == ((90.0, 2), (80.0, 3))
    fills = grid_from(
        build_parser().parse_args(["--baselines", "none", "--section-fill", "pack,0.5"])
    )
    assert fills.section_fills == (None, 0.5)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("--max 5x", "--max must be integers separated by commas"),
        ("--unit pages", "--unit must be among characters, azureOpenAITokens, tokens"),
        ("--title-prefix maybe", "on/off options take on or off"),
        ("--section-fill 2", "--section-fill items must be pack or a share from 0 to 1"),
        ("--words a/b", "--words items must be wordsPerChunk/wordOverlap such as 200/40"),
        ("--strategy nope", "--strategy must be among structure, words, semantic, binary, pages"),
    ],
)
def test_a_bad_sweep_value_is_named(given: str, message: str) -> None:
    with pytest.raises(OptionError, match=message):
        grid_from(build_parser().parse_args(["--baselines", "none", *given.split()]))
