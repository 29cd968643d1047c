"""`python -m chunking`: JSON lines with the promised keys; bad options exit 2 with one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from chunking.cli.pipes import EXIT_BROKEN_PIPE
from tests.helpers import embedded_content
from tests.paths import ROOT

if TYPE_CHECKING:
    from pathlib import Path

KEYS = {"source", "ordinal", "content", "text", "start", "end", "headings", "title", "size"}


def _run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chunking", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_readme_is_chunked_into_json_lines_with_the_promised_keys() -> None:
    result = _run("README.md")
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert records
    source = (ROOT / "README.md").read_text(encoding="utf-8")
    for ordinal, record in enumerate(records):
        assert record.keys() >= KEYS
        assert record["ordinal"] == ordinal
        assert record["source"] == "README.md"
        assert record["content"] == source[record["start"] : record["end"]]
        assert record["size"] <= 512
        embedded = embedded_content(source, "markdown", record["start"], record["end"])
        assert record["text"].endswith(embedded)
    assert any("](" in r["content"] and "](" not in r["text"] for r in records)
    assert records[0]["title"] == "Structure-aware chunking skill for Azure AI Search"


def test_keep_markup_embeds_the_content_as_written() -> None:
    result = _run("README.md", "--keep-markup")
    assert result.returncode == 0, result.stderr
    for line in result.stdout.splitlines():
        record = json.loads(line)
        assert record["text"].endswith(record["content"])


def test_stdin_is_read_when_no_file_is_given() -> None:
    result = _run("--format", "text", "--unit", "characters", "--max", "300", stdin="Hello. " * 100)
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(records) >= 2
    assert {r["source"] for r in records} == {"-"}
    assert all(r["size"] <= 300 for r in records)


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("--max", "10", "README.md"), "maximumPageLength"),
        (("--unit", "characters", "--max", "1000", "--overlap", "600", "README.md"), "pageOverlap"),
        (("--pages", "-1", "README.md"), "maximumPagesToTake"),
        (("--format", "pdf", "README.md"), "--format"),
        (("--encoder", "gpt2", "README.md"), "encoderModelName"),
        (("no-such-file.md",), "cannot read"),
    ],
)
def test_bad_options_exit_2_with_one_line(args: tuple[str, ...], named: str) -> None:
    result = _run(*args)
    assert result.returncode == 2
    assert named in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""


@pytest.mark.parametrize("module", ["chunking", "skills"])
def test_a_reader_that_goes_away_ends_the_command_quietly(module: str, tmp_path: Path) -> None:
    """Issue 14, item 13: `python -m chunking FILE | head` ended in a BrokenPipeError
    traceback."""
    document = tmp_path / "long.md"
    document.write_text(
        "".join(f"# Part {n}\n\n{'Some words here. ' * 60}\n\n" for n in range(600))
    )
    command = [sys.executable, "-m", module, str(document)]
    if module == "skills":
        command.append("--compact")
    env = {**os.environ, "EMBEDDING_PROVIDER": "none", "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None
    assert process.stdout.read(100)  # like `head -c 100`: read a little, then go away
    process.stdout.close()
    _, errors = process.communicate(timeout=120)
    assert b"Traceback" not in errors, errors.decode()
    assert b"BrokenPipeError" not in errors
    assert process.returncode == EXIT_BROKEN_PIPE


LESSON_SPANISH = ROOT / "samples" / "eval" / "return-policy" / "politica-de-devoluciones.txt"


def test_strategy_words_cuts_the_lesson_in_word_windows() -> None:
    result = _run(
        "--strategy", "words", "--words-per-chunk", "10", "--word-overlap", "4", str(LESSON_SPANISH)
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(records) == 8
    assert all(len(r["content"].split()) <= 10 for r in records)


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("--words-per-chunk", "10"), "option(s) --words-per-chunk only apply to strategy 'words'"),
        (("--strategy", "words", "--words-per-chunk", "10", "--word-overlap", "10"), "wordOverlap"),
        (("--strategy", "words", "--mode", "sentences"), "textSplitMode sentences"),
        (("--strategy", "sliding"), "--strategy"),
    ],
)
def test_words_options_that_do_not_fit_exit_2_with_one_line(
    args: tuple[str, ...], named: str
) -> None:
    result = _run(*args, str(LESSON_SPANISH))
    assert result.returncode == 2
    assert named in result.stderr


@pytest.mark.parametrize(
    ("codec", "label", "body"),
    [
        ("cp1252", "windows-1252", "Résumé – naïve café, 5 € “net”."),
        ("shift_jis", "Shift_JIS", "日本語のページです。これは文です。"),
    ],
)
def test_a_page_in_its_declared_encoding_chunks_as_its_text(
    codec: str, label: str, body: str, tmp_path: Path
) -> None:
    """Issue 17, item 5: the CLI reads files as the skill reads `file_data`."""
    page = (
        f'<html><head><meta http-equiv="Content-Type" content="text/html; charset={label}">'
        f"<title>T</title></head><body><h1>{body[:6]}</h1><p>{body}</p></body></html>"
    )
    (tmp_path / "page.html").write_bytes(page.encode(codec))
    (tmp_path / "utf8.html").write_text(page, encoding="utf-8")
    encoded = _run(str(tmp_path / "page.html"))
    plain = _run(str(tmp_path / "utf8.html"))
    assert encoded.returncode == 0, encoded.stderr
    contents = [json.loads(line)["content"] for line in encoded.stdout.splitlines()]
    assert contents == [json.loads(line)["content"] for line in plain.stdout.splitlines()]
    assert any(body in content for content in contents)


def test_a_pdf_exits_2_pointing_to_document_layout(tmp_path: Path) -> None:
    (tmp_path / "report.pdf").write_bytes(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    result = _run(str(tmp_path / "report.pdf"))
    assert result.returncode == 2
    assert "looks like a PDF" in result.stderr
    assert "Document Layout skill (outputFormat: markdown)" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_every_line_and_warning_arrives_though_the_command_skips_teardown(tmp_path: Path) -> None:
    # Issue 40: `python -m chunking` ends with os._exit after flushing, so nothing buffered
    # may be left behind: many chunks into a pipe, and a warning on stderr after them.
    long = tmp_path / "long.md"
    long.write_text(
        "".join(f"# Part {n}\n\n{'Words and more words. ' * 200}\n\n" for n in range(60)),
        encoding="utf-8",
    )
    empty = tmp_path / "empty.md"
    empty.write_text("\n", encoding="utf-8")
    result = _run("--unit", "characters", "--max", "500", "--overlap", "0", str(long), str(empty))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) > 200
    assert [json.loads(line)["ordinal"] for line in lines] == list(range(len(lines)))
    assert result.stderr == f"{empty}: warning: the file is only whitespace; it has no chunks\n"
