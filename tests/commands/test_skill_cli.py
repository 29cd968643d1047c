"""`python -m skills FILE ...`: files through the endpoint's own request path."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from skills.__main__ import main
from tests.conftest import GUIDE, HTML_PAGE
from tests.paths import ROOT

if TYPE_CHECKING:
    from pathlib import Path

PROJECT = ROOT


@pytest.fixture
def files(tmp_path: Path) -> list[Path]:
    guide = tmp_path / "guide.md"
    guide.write_text(GUIDE.format(n=1), encoding="utf-8")
    page = tmp_path / "page.html"
    page.write_text(HTML_PAGE.format(n=2), encoding="utf-8")
    broken = tmp_path / "latin1.txt"
    broken.write_bytes("Caf\xe9 au lait.".encode("latin-1"))
    empty = tmp_path / "empty.md"
    empty.write_text("", encoding="utf-8")
    return [guide, page, broken, empty]


def test_prints_one_answer_per_file(files: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    status = main([*map(str, files), "-i", "unit=characters", "-i", "maximumPageLength=300"])
    values = json.loads(capsys.readouterr().out)["values"]
    assert status == 0
    assert [value["recordId"] for value in values] == [str(path) for path in files]
    guide, page, broken, empty = values
    assert all(chunk["size"] <= 300 for chunk in guide["data"]["chunks"])
    assert guide["data"]["chunks"][0]["title"] == "Install guide 1"
    assert page["data"]["chunks"][0]["title"] == "Page 2"
    # Not UTF-8: sent as file_data, decoded by the skill as an indexer's raw file is.
    assert broken["data"]["chunks"][0]["content"] == "Caf\xe9 au lait."
    assert "read as cp1252" in broken["warnings"][0]["message"]
    assert empty["data"] == {
        "chunks": [],
        "textItems": [],
        "offsets": [],
        "lengths": [],
        "ordinalPositions": [],
    }


def test_record_errors_set_the_exit_status(
    files: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(files[0]), "-i", "unit=pages", "--compact"]) == 1
    (line,) = capsys.readouterr().out.splitlines()
    assert "'unit' must be one of characters, azureOpenAITokens" in line


def test_request_mode_prints_the_skill_request(
    files: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(files[0]), "--request", "-i", "url=https://x.test/guide"]) == 0
    request = json.loads(capsys.readouterr().out)
    assert request == {
        "values": [
            {
                "recordId": str(files[0]),
                "data": {
                    "text": GUIDE.format(n=1),
                    "fileName": "guide.md",
                    "url": "https://x.test/guide",
                },
            }
        ]
    }


def test_a_missing_file_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "nope.md")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_runs_as_a_module(files: list[Path]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "skills", str(files[0]), "--compact"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    (value,) = json.loads(done.stdout)["values"]
    assert value["data"]["chunks"]


def test_strategy_words_through_the_request_path(capsys: pytest.CaptureFixture[str]) -> None:
    lesson = PROJECT / "samples" / "eval" / "return-policy" / "rueckgaberecht.txt"
    inputs = ["-i", "strategy=words", "-i", "wordsPerChunk=10", "-i", "wordOverlap=2"]
    assert main([str(lesson), *inputs]) == 0
    (value,) = json.loads(capsys.readouterr().out)["values"]
    assert len(value["data"]["chunks"]) == 7
