"""Issue 37, item 1: every chunk's reader text is self-contained.

A chunk that continues a table starts, in its reader text, with the title and heading
path and then the table's header and delimiter rows; one that continues a fenced code
block with its fence line; one that ends inside code closes the fence. `content` stays
the exact source span and the embedded `text` stays as it was. The limit is the
embedded text's: the reader text may pass it by what it repeats and by the markup the
embedded text leaves out, never by more (docs/design/chunking-rules.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from chunking import ChunkOptions, Limits, Unit, chunk_document
from chunking.contextualize.prefix import ELLIPSIS
from chunking.measure.sizing import make_sizer
from chunking.model import RegionKind
from chunking.pipeline import parse
from tests.paths import FIXTURES, SHARED

if TYPE_CHECKING:
    from pathlib import Path

    from chunking.model import Chunk, ChunkedDocument, Outline, Region
    from chunking.pipeline import FormatName

CHARACTERS_300 = ChunkOptions(limits=Limits(Unit.CHARACTERS, 300, 0))
SETTINGS = {
    "tokens512": ChunkOptions(limits=Limits(Unit.TOKENS, 512, 64)),
    "chars2000": ChunkOptions(limits=Limits(Unit.CHARACTERS, 2000, 500)),
    "chars300": CHARACTERS_300,
}
"""The snapshot tests' settings (tests/chunking/test_snapshots.py)."""
FIXTURE_FILES = sorted(
    p for p in FIXTURES.rglob("*") if p.suffix in {".md", ".html"} and p.name != "SOURCES.md"
)
CORPUS = SHARED / "corpus"

TABLE = (
    "# Limits\n\nThe service's limits.\n\n## Quotas\n\n"
    "| resource | limit | scope |\n| --- | ---: | --- |\n"
    + "".join(f"| resource {i} | {i * 10} | per region |\n" for i in range(30))
)
CODE = (
    "# Setup\n\n## Script\n\n```bash title=setup.sh\n"
    + "".join(f"echo step {i} of the setup\n" for i in range(40))
    + "```\n\nDone.\n"
)


def _chunks(text: str, options: ChunkOptions = CHARACTERS_300, **kwargs: object) -> list[Chunk]:
    return list(chunk_document(text, options=options, **kwargs).chunks)  # type: ignore[arg-type]


def test_a_table_continuation_hands_the_reader_its_header_rows() -> None:
    """The issue's reproduction: a continuation held rows without the column names."""
    chunks = _chunks(TABLE, format="markdown")
    continuations = [c for c in chunks if c.content.startswith("| resource ")]
    assert len(continuations) >= 2
    header = "| resource | limit | scope |\n| --- | ---: | --- |\n"
    for chunk in continuations:
        assert chunk.reader_text == "Limits › Quotas\n\n" + header + chunk.content
        assert chunk.opening is not None
        assert TABLE[chunk.opening.start : chunk.opening.end] == header
        # content and the embedded text are as they were: nothing repeated in them.
        assert chunk.content == TABLE[chunk.start : chunk.end]
        assert chunk.text == "Limits › Quotas\n\n" + chunk.content
    first = chunks[0]
    assert first.opening is None
    assert first.reader_text == first.text  # nothing to repeat: the reader text is the text


def test_a_code_continuation_hands_the_reader_its_fences() -> None:
    """The issue's reproduction: a continuation of code started without its fence (so it
    rendered as prose), and a chunk cut inside code ended without one."""
    chunks = _chunks(CODE, format="markdown")
    code = [c for c in chunks if "echo step" in c.content]
    assert len(code) >= 3
    for chunk in code:
        reader = chunk.reader_text
        opening = "" if chunk is code[0] else "Setup › Script\n\n"
        assert reader.startswith(opening), reader[:80]
        assert "```bash title=setup.sh\necho step" in reader
        assert reader.count("```") == 2, reader  # opened and closed, once each
        lines = reader.splitlines()
        assert lines[-1] == "```" or (chunk is chunks[-1] and lines[-1] == "Done.")
    middle = code[1]
    assert middle.opening is not None
    assert middle.closing is not None
    assert CODE[middle.closing.start : middle.closing.end] == "```"  # the source's own line
    assert middle.reader_text == (
        "Setup › Script\n\n```bash title=setup.sh\n" + middle.content + "\n```"
    )


@pytest.mark.parametrize(
    ("fence", "closing"),
    [("~~~~", "~~~~"), ("````", "````"), ("```", "")],
    ids=["tilde", "four-backticks", "never-closed"],
)
def test_the_closing_fence_is_the_sources_or_like_the_opening(fence: str, closing: str) -> None:
    text = (
        f"# Code\n\n{fence}python\n"
        + "".join(f"value_{i} = compute({i})\n" for i in range(30))
        + (f"{closing}\n" if closing else "")
    )
    chunks = _chunks(text, format="markdown")
    assert len(chunks) >= 3
    for chunk in chunks[:-1]:
        assert chunk.closing is not None
        assert chunk.reader_text.endswith("\n" + fence)
        # The source's closing line, or (never closed) an empty span at the block's end.
        assert text[chunk.closing.start : chunk.closing.end] == closing
    for chunk in chunks[1:]:
        assert chunk.reader_text.startswith(f"Code\n\n{fence}python\nvalue_")
    last = chunks[-1]
    assert (last.closing is None) == bool(closing)
    assert last.reader_text.endswith(fence)


def test_indented_code_keeps_its_indentation_and_quoted_code_its_markers() -> None:
    listed = (
        "# Steps\n\n1. Run this:\n\n   ```python\n   def main():\n"
        + "".join(f"       call_{i}(argument={i})\n" for i in range(20))
        + "   ```\n"
    )
    chunks = _chunks(listed, format="markdown")
    continuation = next(c for c in chunks if c.content.startswith("call_"))
    # content starts at its first non-space; the reader gets the line's indentation back.
    assert continuation.reader_text.startswith("Steps\n\n   ```python\n       call_")
    assert continuation.reader_text.endswith("\n   ```") or continuation is chunks[-1]
    quoted = "# Q\n\n> ```sh\n" + "".join(f"> echo line {i} here\n" for i in range(30)) + "> ```\n"
    chunks = _chunks(quoted, format="markdown")
    assert len(chunks) >= 3
    middle = chunks[1]
    assert middle.reader_text.startswith("Q\n\n> ```sh\n> echo line")
    assert middle.reader_text.endswith("\n> ```")


def test_html_tables_and_code_are_repeated_as_their_rendering_shows_them() -> None:
    rows = "".join(f"<tr><td>name {i}</td><td>value {i}</td></tr>" for i in range(30))
    lines = "\n".join(f"run --step {i}" for i in range(30))
    html = (
        "<html><head><title>Page</title></head><body><main><h1>Page</h1><h2>Data</h2>"
        f"<table><tr><th>Name</th><th>Value</th></tr>{rows}</table>"
        f"<h2>Commands</h2><pre><code>{lines}</code></pre></main></body></html>"
    )
    document = chunk_document(html, options=CHARACTERS_300, format="html")
    tables = [c for c in document.chunks if c.content.startswith("| name ")]
    code = [c for c in document.chunks if c.content.startswith("run --step")]
    assert tables
    assert code
    for chunk in tables:
        assert chunk.reader_text.startswith("Page › Data\n\n| Name | Value |\n| --- | --- |\n")
    for chunk in code:
        assert chunk.reader_text.startswith("Page › Commands\n\n```\nrun --step")
    for chunk in document.chunks:
        assert chunk.reader_text.count("```") % 2 == 0


def test_the_reader_gets_the_sources_markup_that_the_embedded_text_leaves_out() -> None:
    text = "# Links\n\n" + "".join(
        f"See [page {i}](https://example.com/a/long/path/{i}) for more.\n\n" for i in range(20)
    )
    for chunk in _chunks(text, format="markdown"):
        assert "https://example.com" not in chunk.text
        assert chunk.reader_text == chunk.prefix + chunk.content
        assert "https://example.com" in chunk.reader_text


def test_the_reader_text_follows_the_prefix_settings() -> None:
    """The reader text's head is the embedded text's prefix, so `titlePrefix` and the
    prefix path shape both the same way."""
    off = ChunkOptions(limits=Limits(Unit.CHARACTERS, 300, 0), title_prefix=False)
    for chunk in _chunks(TABLE, off, format="markdown"):
        assert chunk.prefix == ""
        assert not chunk.reader_text.startswith("Limits")
        if chunk.opening is not None:
            assert chunk.reader_text.startswith("| resource | limit | scope |\n")


# -- every continuation of real documents -----------------------------------------------


def _region_at(outline: Outline, position: int) -> Region | None:
    return next((r for r in outline.regions if r.start <= position < r.end), None)


def _fence(region: Region | None) -> str:
    """The fence characters of a fenced code block's opening line ('' if none)."""
    if region is None or region.kind is not RegionKind.CODE:
        return ""
    marks = region.lead.lstrip(" \t>")
    fence = marks[: len(marks) - len(marks.lstrip(marks[:1]))]
    return fence if fence[:1] in ("`", "~") else ""


def _closes(line: str, fence: str) -> bool:
    marks = line.lstrip(" \t>").rstrip()
    return len(marks) >= len(fence) and marks == fence[0] * len(marks)


def _check_document(text: str, format: FormatName, name: str, options: ChunkOptions) -> int:
    """Check each chunk's reader text against the parse; return the continuations."""
    document: ChunkedDocument = chunk_document(text, options=options, format=format, file_name=name)
    outline = parse(text, format, file_name=name)
    assert outline.source == document.source
    sizer = make_sizer(options.limits.unit, options.encoder_model_name)
    maximum = options.limits.maximum_page_length
    continuations = 0
    for chunk in document.chunks:
        where = f"{name} chunk {chunk.ordinal}"
        reader = chunk.reader_text
        assert chunk.text.startswith(chunk.prefix), where
        # The title and the path (shortened with an ellipsis when over a quarter of the limit).
        shortened = ELLIPSIS in chunk.prefix
        assert document.title in chunk.prefix or shortened or not options.title_prefix, where
        if chunk.headings:
            assert chunk.headings[-1] in chunk.prefix or shortened, where
        region = _region_at(outline, chunk.start)
        if region is not None and region.lead and chunk.start >= region.lead_end:
            continuations += 1
            lead = outline.source[region.start : region.lead_end]
            # Title and path, then the header rows or the fence line, then the content.
            assert reader.startswith(chunk.prefix + lead), where
            rest = reader[len(chunk.prefix) + len(lead) :]
            assert rest.lstrip().startswith(chunk.content), where
        else:
            assert reader.startswith(chunk.prefix + chunk.content), where
        end_region = _region_at(outline, chunk.end - 1)
        fence = _fence(end_region)
        if end_region is not None and fence and chunk.end >= end_region.lead_end - 1:
            last = outline.source.rfind("\n", end_region.lead_end, end_region.end) + 1
            if not (_closes(outline.source[last : end_region.end], fence) and chunk.end > last):
                # It ends inside the code: its reader text closes the fence.
                assert _closes(reader.rsplit("\n", 1)[-1], fence), where
        # The limit is the embedded text's: the reader text passes it by what it repeats
        # and the markup the embedded text leaves out, never by more (exact in characters).
        if options.limits.unit is Unit.CHARACTERS:
            repeated = len(reader) - len(chunk.prefix) - len(chunk.content)
            left_out = len(chunk.content) - (len(chunk.text) - len(chunk.prefix))
            assert sizer.size(reader) <= maximum + repeated + left_out, where
            assert repeated == (len(chunk.opening.text) if chunk.opening else 0) + (
                len(chunk.closing.text) + 1 if chunk.closing else 0
            ), where
    return continuations


def _read(path: Path) -> tuple[str, FormatName]:
    with path.open(encoding="utf-8", errors="replace", newline="") as handle:
        return handle.read(), "html" if path.suffix in {".html", ".htm"} else "markdown"


@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_every_continuation_in_the_fixtures_starts_with_its_path_and_header(setting: str) -> None:
    continuations = 0
    for path in FIXTURE_FILES:
        text, format = _read(path)
        continuations += _check_document(text, format, path.name, SETTINGS[setting])
    assert continuations > 0


@pytest.mark.skipif(not CORPUS.is_dir(), reason="no ../shared/corpus")
@pytest.mark.parametrize("kind", ["md", "html"])
def test_every_continuation_in_the_corpus_starts_with_its_path_and_header(kind: str) -> None:
    """The whole shared corpus at 300 characters, where continuations are most common."""
    paths = sorted(
        p
        for p in (CORPUS / kind).rglob("*")
        if p.suffix in {".md", ".markdown", ".html", ".htm"} and p.is_file()
    )
    assert len(paths) > 200
    continuations = sum(_check_document(*_read(p), p.name, CHARACTERS_300) for p in paths)
    assert continuations > 500  # 930 in the html corpus, 12,614 in the markdown one
