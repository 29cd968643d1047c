"""`--limits`: the settings users compare side by side (512/51 tokens and 2000/500
characters) in one run, without the cross combinations `--max`/`--overlap`/`--unit` make."""

from __future__ import annotations

import pytest

from chunking.options import OptionError, Unit
from evaluation.__main__ import build_parser, grid_from


def _settings(*arguments: str) -> list[tuple[str, Unit, int, int]]:
    grid = grid_from(build_parser().parse_args(["--baselines", "split-skill", *arguments]))
    settings, _ = grid.settings()
    return [(s.chunker, s.unit, s.maximum, s.overlap) for s in settings]


def test_limits_run_exactly_the_triples_given_for_ours_and_the_split_skill() -> None:
    settings = _settings("--limits", "512/51/azureOpenAITokens,2000/25%/characters")
    assert settings == [
        ("ours", Unit.TOKENS, 512, 51),
        ("ours", Unit.CHARACTERS, 2000, 500),
        ("split-skill", Unit.TOKENS, 512, 51),
        ("split-skill", Unit.CHARACTERS, 2000, 500),
    ]


def test_max_overlap_and_unit_still_make_their_product_without_limits() -> None:
    settings = _settings("--max", "512,2000", "--overlap", "0", "--unit", "tokens,characters")
    assert len(settings) == 8  # 2 chunkers x 2 units x 2 maximums


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        (("--limits", "512/51/tokens", "--max", "1024"), "--limits replaces --max"),
        (("--limits", "512/51"), "MAX/OVERLAP/UNIT"),
        (("--limits", "512/51/pages"), "--limits item"),
        (("--limits", "big/51/tokens"), "MAX/OVERLAP/UNIT"),
    ],
)
def test_a_limit_that_cannot_be_used_is_refused_in_one_sentence(
    arguments: tuple[str, ...], words: str
) -> None:
    with pytest.raises(OptionError, match=words):
        _settings(*arguments)
