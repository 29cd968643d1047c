"""`python -m evaluation --quick` picks its lengths by the skill's one rule: what the local
model that embeds reads whole, else the skill's defaults (issue 39, item 3)."""

from __future__ import annotations

import pytest

from evaluation.__main__ import quick_lengths


@pytest.mark.parametrize(
    ("argv", "lengths", "words"),
    [
        (["--embedding", "e5"], (384, 48), "multilingual-e5-small reads 512 word pieces"),
        (["--embedding=minilm"], (192, 24), "all-MiniLM-L6-v2 reads 256 word pieces"),
        (["--embedding", "e5,minilm"], (192, 24), "all-MiniLM-L6-v2"),
        (["--embedding", "azure_openai"], (512, 64), "the skill's defaults"),
    ],
)
def test_the_quick_grid_follows_the_model_that_embeds(
    argv: list[str], lengths: tuple[int, int], words: str
) -> None:
    length, overlap, why = quick_lengths(["docs", "questions.jsonl", "--quick", *argv])
    assert (length, overlap) == lengths
    assert words in why
