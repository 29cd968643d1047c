"""`python -m chunking` is as strict as the skill (issue 30, item 4; issue 28, item 3):
what the skill refuses, the command line refuses in the same words, over real processes."""

from __future__ import annotations

import base64
import gzip
import io
import json
import random
import zipfile
from typing import TYPE_CHECKING

import pytest

from skills.skill.chunk_records import chunk_record
from skills.skill.contract import InputRecord
from skills.skill.settings import Settings
from tests.helpers import run_module

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

GUIDE = "# Guide\n\nSome words about the guide. " + "More words follow here. " * 40 + "\n"


def _run(*args: str, module: str = "chunking") -> subprocess.CompletedProcess[str]:
    return run_module(module, *args)


def _skill(data: dict[str, object]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The skill's errors and warnings for one record with `data`."""
    record = chunk_record(InputRecord("1", data), Settings())
    return record.errors, record.warnings


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("guide.md", GUIDE)
    return buffer.getvalue()


NOT_TEXT = {
    "guide.md.gz": gzip.compress(GUIDE.encode()),
    "guide.md": gzip.compress(GUIDE.encode()),  # a gzip file under a text name
    "random.txt": random.Random(30).randbytes(1 << 20),
    "docs.zip": _zip(),
    "scan.png": b"\x89PNG\r\n\x1a\n" + random.Random(4).randbytes(2048),
}


@pytest.mark.parametrize("name", list(NOT_TEXT))
def test_bytes_that_are_not_text_exit_2_with_the_skills_words_on_one_line(
    tmp_path: Path, name: str
) -> None:
    raw = NOT_TEXT[name]
    path = tmp_path / name
    path.write_bytes(raw)
    result = _run(str(path))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    (error,), _ = _skill(
        {"file_data": {"$type": "file", "data": base64.b64encode(raw).decode()}, "fileName": name}
    )
    reason = error.removeprefix("input 'file_data': ")
    assert reason.startswith("the file looks like ")
    assert result.stderr == f"python -m chunking: cannot read {path}: {reason}\n"


def test_a_gzip_file_says_send_it_decompressed(tmp_path: Path) -> None:
    path = tmp_path / "guide.md.gz"
    path.write_bytes(NOT_TEXT["guide.md.gz"])
    result = _run(str(path))
    assert "looks like a gzip file" in result.stderr
    assert "send it decompressed" in result.stderr


@pytest.mark.parametrize("content", ["", " \n\t\n"])
def test_an_empty_file_says_so_as_the_skill_does(tmp_path: Path, content: str) -> None:
    path = tmp_path / "empty.md"
    path.write_text(content, encoding="utf-8")
    result = _run(str(path))
    _, (warning,) = _skill({"text": content})
    assert result.returncode == 0  # the skill warns and answers the record with no chunks
    assert result.stdout == ""
    what = "is empty" if not content else "is only whitespace"
    assert what in warning
    assert result.stderr == f"{path}: warning: the file {what}; it has no chunks\n"


SKILL_NAMES = {
    "--overlap": "'pageOverlapLength'",
    "--word-overlap": "'wordOverlap'",
    "--words-per-chunk": "'wordsPerChunk'",
    "--semantic-window": "'semanticWindow'",
    "--binary-scorer": "'binaryScorer'",
    "option(s) ": "input(s) ",
    "option ": "input ",
}
"""The command line's spelling of a parameter, and the skill's."""


def _as_the_skill_says(message: str) -> str:
    for flag, name in SKILL_NAMES.items():
        message = message.replace(flag, name)
    return message


@pytest.mark.parametrize(
    ("arguments", "inputs"),
    [
        (
            ("--strategy", "words", "--overlap", "10"),
            {"strategy": "words", "pageOverlapLength": 10},
        ),
        (("--words-per-chunk", "10"), {"wordsPerChunk": 10}),
        (
            ("--strategy", "words", "--semantic-window", "2"),
            {"strategy": "words", "semanticWindow": 2},
        ),
        (
            ("--strategy", "semantic", "--binary-scorer", "rerank", "--word-overlap", "3"),
            {"strategy": "semantic", "binaryScorer": "rerank", "wordOverlap": 3},
        ),
        (
            ("--strategy", "words", "--mode", "sentences"),
            {"strategy": "words", "textSplitMode": "sentences"},
        ),
        (
            ("--strategy", "words", "--words-per-chunk", "0"),
            {"strategy": "words", "wordsPerChunk": 0},
        ),
        (
            ("--unit", "characters", "--max", "1000", "--overlap", "500"),
            {"unit": "characters", "maximumPageLength": 1000, "pageOverlapLength": 500},
        ),
    ],
)
def test_what_the_skill_refuses_the_command_line_refuses_in_the_same_words(
    tmp_path: Path, arguments: tuple[str, ...], inputs: dict[str, object]
) -> None:
    path = tmp_path / "guide.md"
    path.write_text(GUIDE, encoding="utf-8")
    result = _run(*arguments, str(path))
    errors, _ = _skill({"text": GUIDE, **inputs})
    assert errors
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    said = _as_the_skill_says(result.stderr)
    for error in errors:
        assert error in said, (error, result.stderr)


def test_a_folder_argument_chunks_the_files_in_it(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text(GUIDE, encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.html").write_text("<h1>Page</h1><p>Text of the page.</p>", "utf-8")
    (tmp_path / "notes.txt").write_text("Plain notes.\n", encoding="utf-8")
    (tmp_path / "image.png").write_bytes(NOT_TEXT["scan.png"])
    result = _run("--unit", "characters", "--max", "1000", "--overlap", "0", str(tmp_path))
    assert result.returncode == 0, result.stderr
    sources = [line.split('"source": ')[1].split(",")[0] for line in result.stdout.splitlines()]
    assert sorted(set(sources)) == sorted(
        f'"{tmp_path / name}"' for name in ("b.md", "notes.txt", "sub/a.html")
    )
    assert "image.png" in result.stderr  # skipped, and said so


def test_python_m_skills_refuses_a_gzip_file_as_the_skill_does(tmp_path: Path) -> None:
    """`python -m skills FILE` sends a file that is not UTF-8 as `file_data`: the record
    fails in the skill's words, never chunks of mojibake."""
    path = tmp_path / "guide.md"
    path.write_bytes(NOT_TEXT["guide.md"])
    result = _run("--compact", str(path), module="skills")
    assert result.returncode == 1  # a record with errors
    (value,) = json.loads(result.stdout)["values"]
    assert value["data"] == {}
    (error,) = value["errors"]
    assert error["message"].startswith("input 'file_data': the file looks like a gzip file")
    assert "send it decompressed" in error["message"]
