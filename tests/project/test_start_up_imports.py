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


ONE_LINE_OURS = frozenset(
    (
        "chunking",
        "chunking.api",
        "chunking.cli",
        "chunking.cli.files",
        "chunking.cli.pipes",
        "chunking.contextualize",
        "chunking.contextualize.continuations",
        "chunking.contextualize.prefix",
        "chunking.measure",
        "chunking.measure.sizing",
        "chunking.model",
        "chunking.offsets",
        "chunking.options",
        "chunking.options.chunk_ids",
        "chunking.options.errors",
        "chunking.outline",
        "chunking.outline.plain_outline",
        "chunking.outline.sections",
        "chunking.parse",
        "chunking.parse.decode",
        "chunking.parse.detect",
        "chunking.parse.front_matter",
        "chunking.parse.gc_pause",
        "chunking.parse.markdown",
        "chunking.parse.markdown.blocks",
        "chunking.parse.markdown.docfx",
        "chunking.parse.markdown.mdx",
        "chunking.parse.markdown.outline",
        "chunking.parse.markdown.pages",
        "chunking.parse.markdown.plain_markup",
        "chunking.parse.markdown.plain_text",
        "chunking.parse.markdown.pulldown_parser",
        "chunking.parse.page_markers",
        "chunking.parse.titles",
        "chunking.pipeline",
        "chunking.plan",
        "chunking.plan.binary",
        "chunking.plan.binary_params",
        "chunking.plan.core",
        "chunking.plan.declaration",
        "chunking.plan.next_match",
        "chunking.plan.pages",
        "chunking.plan.scoring",
        "chunking.plan.semantic",
        "chunking.plan.semantic_params",
        "chunking.plan.sentences",
        "chunking.plan.strategies",
        "chunking.plan.structure",
        "chunking.plan.walk",
        "chunking.plan.words",
        "chunking.plan.words_params",
        "chunking.quick_init",
        "skills",
        "skills.commands",
        "skills.commands.chunk",
        "skills.commands.cli",
        "skills.embedding",
        "skills.embedding.cache_settings",
        "skills.embedding.settings",
        "skills.parameters",
        "skills.skill",
        "skills.skill.settings",
        "skills.values",
    )
)
"""Our modules `python -m chunking` imports for a one-line markdown file in characters
mode (pinned: a new one on this path is a cost every start-up pays; add it here only
with its measured cost)."""
ONE_LINE_OTHERS = frozenset(
    (
        "__future__",
        "_ast",
        "_bisect",
        "_blake2",
        "_bz2",
        "_collections",
        "_compression",
        "_functools",
        "_hashlib",
        "_json",
        "_locale",
        "_lzma",
        "_opcode",
        "_operator",
        "_sre",
        "_typing",
        "_weakrefset",
        "_winapi",
        "argparse",
        "ast",
        "bisect",
        "bz2",
        "collections",
        "collections.abc",
        "contextlib",
        "copy",
        "copyreg",
        "dataclasses",
        "dis",
        "enum",
        "errno",
        "fnmatch",
        "functools",
        "gc",
        "gettext",
        "hashlib",
        "importlib",
        "importlib._abc",
        "importlib.machinery",
        "importlib.util",
        "inspect",
        "ipaddress",
        "itertools",
        "json",
        "json.decoder",
        "json.encoder",
        "json.scanner",
        "keyword",
        "linecache",
        "locale",
        "lzma",
        "math",
        "nt",
        "nt",
        "nt",
        "nt",
        "nt",
        "ntpath",
        "opcode",
        "operator",
        "org",
        "org.python",
        "org.python.core",
        "pathlib",
        "pyromark",
        "pyromark._options",
        "pyromark._pyromark",
        "pyromark._theme",
        "re",
        "re._casefix",
        "re._compiler",
        "re._constants",
        "re._parser",
        "reprlib",
        "runpy",
        "sentencex",
        "sentencex.sentencex",
        "shutil",
        "textwrap",
        "token",
        "tokenize",
        "types",
        "typing",
        "unicodedata",
        "urllib",
        "urllib.parse",
        "warnings",
        "weakref",
        "zlib",
    )
)
"""The other modules it imports (standard library, pyromark, sentencex), beyond what the
interpreter imports for `python -c pass`."""
ONE_LINE_TOKENS = frozenset(
    (
        "_heapq",
        "_queue",
        "_string",
        "atexit",
        "binascii",
        "chunking.measure.encodings",
        "chunking.measure.token_spans",
        "concurrent",
        "concurrent.futures",
        "concurrent.futures._base",
        "concurrent.futures.thread",
        "heapq",
        "logging",
        "pkgutil",
        "queue",
        "string",
        "threading",
        "tiktoken",
        "tiktoken._tiktoken",
        "tiktoken.core",
        "tiktoken.model",
        "tiktoken.registry",
        "tiktoken_ext",
        "traceback",
    )
)
"""What tokens mode adds: tiktoken (with the logging and threads its module imports) and
our encodings and token index."""


def _modules(*arguments: str) -> set[str]:
    """Every module `python -X importtime ARGUMENTS` imports, by its full name."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    # Lines read `import time: self | cumulative | <indent>module`.
    return {
        line.rsplit("|", 1)[1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    } - {"package"}  # the header line's last column


def _command_modules(path: Path, unit: str) -> set[str]:
    """The modules `python -m chunking --unit UNIT PATH` imports, beyond `python -c pass`'s."""
    return _modules("-m", "chunking", "--unit", unit, str(path)) - _modules("-c", "pass")


def _imported(path: Path, unit: str) -> set[str]:
    return {module.split(".", 1)[0] for module in _command_modules(path, unit)}


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


@pytest.fixture(scope="module")
def one_line_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("one-line") / "one-line.md"
    path.write_text("# Hello\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("unit", ["characters", "azureOpenAITokens"])
def test_a_one_line_markdown_file_imports_no_module_more(one_line_file: Path, unit: str) -> None:
    # Issue 40: the modules of `bench.speed --start-up`'s command are pinned, so a start-up
    # cannot grow by an import nobody measured (difflib, html, logging in characters mode,
    # importlib.resources' tempfile and zipfile were dropped from it).
    imported = _command_modules(one_line_file, unit)
    allowed = ONE_LINE_OURS | ONE_LINE_OTHERS
    if unit != "characters":
        allowed |= ONE_LINE_TOKENS
    assert "chunking.parse.markdown.outline" in imported  # the reading is sound
    assert sorted(imported - allowed) == []
