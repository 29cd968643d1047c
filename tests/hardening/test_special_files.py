"""Commands refuse what is not a regular file, and files larger than the skill takes, in
one line, reading no more than the limit plus one byte (issue 35, item 5).

Reproductions: a folder given to `python -m chunking` holding a `*.md` symlink to
/dev/zero grew to the machine's memory (23.7 GB) before the kernel killed it; a FIFO
named `*.md` blocked for ever; a 2 GB sparse `.md` was read whole before being refused on
its first 4 KiB; `python -m skills` and the evaluation ended in MemoryError tracebacks.
The command tests run the real commands in subprocesses with their address space capped
(so a regression fails with a MemoryError, not by taking the machine) and a timeout (so
a FIFO that blocks fails, not hangs).
"""

from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING

import pytest

from chunking.cli.files import MAX_FILE_BYTES, FileRefused, read_limited
from skills.skill.settings import DEFAULT_MAX_REQUEST_BYTES
from tests.helpers import run_module
from tests.paths import ROOT

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

GUIDE = "# Guide\n\nSome words about the guide. " + "More words follow here. " * 40 + "\n"
ADDRESS_SPACE = 3 * 1024**3
"""A cap on each command's address space: far above what it needs, far below what reading
/dev/zero to the end takes."""


def _run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_module(module, *args, address_space=ADDRESS_SPACE)


def _refusal(result: subprocess.CompletedProcess[str], module: str) -> str:
    """The one line a command refused a file with (it exits 2 and prints nothing else)."""
    assert result.returncode == 2, result.stderr[-2_000:]
    assert result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"python -m {module}: cannot read ")
    return line


def _folder(tmp_path: Path, special: str) -> Path:
    """A folder of one good guide and one `bad.md` that is `special`."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "good.md").write_text(GUIDE, encoding="utf-8")
    bad = folder / "bad.md"
    if special == "device":
        bad.symlink_to("/dev/zero")
    elif special == "fifo":
        os.mkfifo(bad)
    else:  # a sparse file one byte over the limit, text at its start
        with bad.open("wb") as handle:
            handle.write(GUIDE.encode())
            handle.truncate(MAX_FILE_BYTES + 1)
    return folder


REFUSALS = {
    "device": "not a regular file (a character device)",
    "fifo": "not a regular file (a FIFO)",
    "huge": f"larger than {MAX_FILE_BYTES:,} bytes, the most the skill takes in one "
    "request; split it into smaller files",
}


COMMANDS = ("chunking", "chunking.report", "skills", "evaluation")


@pytest.mark.parametrize("special", sorted(REFUSALS))
@pytest.mark.parametrize("module", COMMANDS)
def test_every_command_refuses_a_special_or_huge_file_in_one_line(
    tmp_path: Path, special: str, module: str
) -> None:
    folder = _folder(tmp_path, special)
    questions = tmp_path / "questions.jsonl"
    questions.write_text("", encoding="utf-8")
    args = {
        "chunking": [str(folder)],
        "chunking.report": ["-o", str(tmp_path / "map.html"), str(folder / "bad.md")],
        "skills": [str(folder / "good.md"), str(folder / "bad.md")],
        "evaluation": [str(folder), str(questions), "--quiet"],
    }[module]
    line = _refusal(_run(module, *args), module)
    assert "bad.md" in line
    assert line.endswith(REFUSALS[special])


def test_the_evaluation_refuses_a_question_file_that_is_a_device(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "good.md").write_text(GUIDE, encoding="utf-8")
    questions = tmp_path / "questions.jsonl"
    questions.symlink_to("/dev/zero")
    line = _refusal(_run("evaluation", str(folder), str(questions), "--quiet"), "evaluation")
    assert line.endswith(REFUSALS["device"])


def test_at_most_the_limit_and_one_byte_is_read(tmp_path: Path) -> None:
    grown = tmp_path / "grown.md"
    grown.write_bytes(b"x" * 101)
    with pytest.raises(FileRefused) as refused:
        read_limited(grown, limit=100)
    assert str(refused.value.strerror).startswith("larger than 100 bytes")
    assert read_limited(grown, limit=101) == b"x" * 101
    with pytest.raises(FileRefused):
        read_limited(tmp_path, limit=100)  # a folder


def test_the_file_limit_is_the_skills_request_limit() -> None:
    assert MAX_FILE_BYTES == DEFAULT_MAX_REQUEST_BYTES


READERS = ("skills/commands", "skills/__main__.py", "evaluation", "chunking/api.py")
"""Where the commands (and the Python API's chunk_file) read the files they are given."""


def test_every_command_reads_its_files_through_the_one_limited_reader() -> None:
    """No read_text / read_bytes / open(..., "r") beside chunking.cli.files.read_limited."""
    found: list[str] = []
    for reader in READERS:
        base = ROOT / reader
        for path in [base] if base.is_file() else sorted(base.rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call):
                    continue
                name = getattr(node.func, "attr", getattr(node.func, "id", ""))
                mode = next(
                    (arg.value for arg in node.args[1:2] if isinstance(arg, ast.Constant)), "r"
                )
                if name in {"read_text", "read_bytes"} or (
                    name == "open" and "r" in str(mode) and "+" not in str(mode)
                ):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
    assert found == []
