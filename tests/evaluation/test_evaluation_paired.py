"""`python -m evaluation.paired`: two rows of one run, paired per set and pooled."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from evaluation.paired import POOLED, main, paired_rows, passage_pairs

if TYPE_CHECKING:
    from pathlib import Path

METRICS = ("complete@5",)


def _row(label: str, values: list[float]) -> dict[str, object]:
    return {"label": label, "perQuestion": {"complete@5": values}}


RESULTS = {
    "models": [
        {
            "embeddingModel": "m",
            "sets": {
                "a": {"settings": [_row("ours 512", [0, 1]), _row("ours 512 merged", [1, 1])]},
                "b": {
                    "settings": [_row("ours 512", [0, 0, 1]), _row("ours 512 merged", [0, 1, 1])]
                },
            },
        }
    ]
}


def test_each_passage_row_is_paired_with_the_same_row_as_chunks() -> None:
    labels = ["ours 512", "ours 512 hybrid", "ours 512 hybrid neighbours", "split 512 merged"]
    assert passage_pairs(labels) == [("ours 512 hybrid neighbours", "ours 512 hybrid")]


def test_differences_per_set_and_pooled_over_the_questions_of_every_set() -> None:
    rows = paired_rows(RESULTS, None, METRICS)
    assert [(row.questions_of, row.label, row.base) for row in rows] == [
        ("a", "ours 512 merged", "ours 512"),
        ("b", "ours 512 merged", "ours 512"),
        (POOLED, "ours 512 merged", "ours 512"),
    ]
    assert rows[0].differences["complete@5"].mean == pytest.approx(1 / 2)
    assert rows[2].differences["complete@5"].mean == pytest.approx(2 / 5)


def test_given_pairs_and_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(RESULTS), encoding="utf-8")
    assert main([str(path), "--pair", "ours 512=ours 512 merged", "--metrics", "complete@5"]) == 0
    table = capsys.readouterr().out
    assert "| m | pooled | ours 512 | ours 512 merged | -0.400 [" in table
    assert main([str(path), "--pair", "ours 512"]) == 2
    assert "--pair takes A=B" in capsys.readouterr().err
    assert main([str(path), "--pair", "x=y"]) == 2
    assert "no pair of rows found" in capsys.readouterr().err
