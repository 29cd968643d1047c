"""`python -m chunking` on a markdown file loads only what the document needs (issue 40):
every CLI call, Function cold start and worker start pays for each package it imports,
so the packages other formats, other units and rare inputs need stay unloaded.

An invariant on the real command, read from `-X importtime` (which names every module
the process imported), not a timing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from tests.paths import ROOT

if TYPE_CHECKING:
    from pathlib import Path

MARKDOWN = """# Install the agent

Run the [installer](https://example.com/setup.exe "Setup") as **administrator**, then
check `agent --version`.

## Troubleshooting

<!-- a comment -->
| Error | Fix |
| --- | --- |
| 5 | Run it again |
"""

NOT_FOR_MARKDOWN = ("bs4", "lxml", "markdown_it", "yaml")
"""HTML's parsers and encoding detection, the fallback parser, front matter's YAML."""
NOT_FOR_CHARACTERS = ("tiktoken",)
NOT_FOR_A_SHORT_TEXT = ("numpy",)
"""The token index's arrays: a text counted directly never builds one."""


def _imported(path: Path, unit: str) -> set[str]:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "chunking", "--unit", unit, str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert '"content"' in result.stdout
    # Lines read `import time: self | cumulative | <indent>module`.
    return {
        line.rsplit("|", 1)[1].strip().split(".", 1)[0]
        for line in result.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }


@pytest.fixture(scope="module")
def markdown_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("start-up") / "install.md"
    path.write_text(MARKDOWN, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def characters_imports(markdown_file: Path) -> set[str]:
    return _imported(markdown_file, "characters")


@pytest.fixture(scope="module")
def tokens_imports(markdown_file: Path) -> set[str]:
    return _imported(markdown_file, "azureOpenAITokens")


def test_the_check_sees_what_the_command_imports(characters_imports: set[str]) -> None:
    # Without these the command could not have chunked markdown: the reading is sound.
    assert {"chunking", "pyromark", "json"} <= characters_imports


@pytest.mark.parametrize("package", NOT_FOR_MARKDOWN + NOT_FOR_CHARACTERS)
def test_markdown_in_characters_leaves_unloaded(characters_imports: set[str], package: str) -> None:
    assert package not in characters_imports


@pytest.mark.parametrize("package", NOT_FOR_MARKDOWN)
def test_markdown_in_tokens_leaves_unloaded(tokens_imports: set[str], package: str) -> None:
    assert "tiktoken" in tokens_imports
    assert package not in tokens_imports


@pytest.mark.parametrize("package", NOT_FOR_A_SHORT_TEXT)
def test_a_short_markdown_text_leaves_unloaded(
    characters_imports: set[str], tokens_imports: set[str], package: str
) -> None:
    assert package not in characters_imports
    assert package not in tokens_imports
