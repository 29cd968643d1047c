"""The chunk map page: every character of the source shown once, every chunk once with
its prefix and size, overlaps and table/code continuations marked, nothing injected."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunking import Unit
from chunking.model import RegionKind
from skills.commands.chunk_map import Annotations, map_document, render_chunk_map, segments
from tests.chunk_map_checks import check_page, parse_page
from tests.helpers import options
from tests.paths import ROOT
from tests.strategies import HTML, MARKDOWN

SAMPLE = ROOT / "samples" / "concepts-network.md"
TABLE_AND_CODE = (
    "# Limits\n\nThe limits of the service, row by row.\n\n"
    "| item | limit | note |\n| --- | --- | --- |\n"
    + "".join(f"| item {i} | {i * 10} units | note number {i} |\n" for i in range(40))
    + "\n## Script\n\n```bash\n"
    + "".join(f"echo line {i} of the setup script\n" for i in range(60))
    + "```\n"
)
HOSTILE = (
    "---\ntitle: </title><script>alert('title')</script>\n---\n"
    "# Heading </script><script>alert(1)</script>\n\n"
    'Text with <img src=x onerror="alert(2)"> and </script><b onclick=alert(3)>bold</b>.\n\n'
    "<!-- </style><style>body{display:none}</style> -->\n\n"
    "Entities stay text: &amp;lt;script&gt; &#60;img&#62; \"quotes\" 'apostrophes'.\n"
)

PAGE_ELEMENTS = {
    "html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "p", "b", "i",
    "ul", "li", "span", "section", "a", "main", "div", "aside", "br", "details", "summary",
    "pre", "script",
}  # fmt: skip
"""Every element the page itself writes: a document's markup never adds one."""


def _map(text: str, maximum: int = 300, overlap: int = 0, **kwargs: object) -> str:
    chunk_map = map_document(
        text,
        options=options(maximum, overlap),
        name="doc.md",
        **kwargs,  # type: ignore[arg-type]
    )
    page = render_chunk_map(chunk_map)
    check_page(page, chunk_map)
    return page


@pytest.mark.parametrize(
    ("unit", "maximum", "overlap"),
    [(Unit.TOKENS, 512, 64), (Unit.TOKENS, 96, 12), (Unit.CHARACTERS, 600, 150)],
)
def test_the_sample_is_shown_once_with_every_chunk(unit: Unit, maximum: int, overlap: int) -> None:
    opts = options(maximum, overlap, unit=unit)
    chunk_map = map_document(
        SAMPLE.read_text(encoding="utf-8"), options=opts, name=SAMPLE.name, file_name=SAMPLE.name
    )
    soup = check_page(render_chunk_map(chunk_map), chunk_map)
    assert len(chunk_map.document.chunks) > 1
    front_matter = soup.select("main span.seg")[0]
    assert "out" in (front_matter.get("class") or [])  # metadata is in no chunk
    assert front_matter.get_text().startswith("---\ntitle:")


def test_overlaps_are_striped_segments_of_both_chunks() -> None:
    text = "# Notes\n\n" + " ".join(f"Sentence number {i} says a little." for i in range(80))
    chunk_map = map_document(text, options=options(300, 100), name="notes.md")
    soup = check_page(render_chunk_map(chunk_map), chunk_map)
    shared = soup.select("main span.seg.ov")
    assert shared
    for piece in shared:
        ordinals = str(piece["data-chunks"]).split()
        assert len(ordinals) == 2
        assert "repeating-linear-gradient" in str(piece["style"])
    card = soup.select_one('aside.card[data-chunk="1"]')
    assert card is not None
    assert "overlaps chunk 0 by" in card.get_text()


def test_table_and_code_continuations_are_marked_and_start_with_their_own_row() -> None:
    chunk_map = map_document(TABLE_AND_CODE, options=options(400), name="limits.md")
    soup = check_page(render_chunk_map(chunk_map), chunk_map)
    cards = soup.select("aside.card")
    tables = [c for c in cards if "continues a table, from a row" in c.get_text()]
    code = [c for c in cards if "continues a code block, from a line" in c.get_text()]
    assert tables
    assert code
    # Nothing is repeated in front of a continuation: its embedded text is the prefix
    # and its own rows or lines.
    assert not soup.select(".lead")
    for card in chunk_map.cards:
        if card.continues is not None:
            embedded = card.chunk.text[len(card.prefix) :]
            assert embedded.startswith(("| item ", "echo line")), embedded[:40]
            assert card.chunk.content.startswith(("| item ", "echo line"))
    # The chunk that opens a region does not continue it (it may continue another).
    chunks = chunk_map.document.chunks
    table_opener = next(c for c in chunks if "| item | limit |" in c.content)
    code_opener = next(c for c in chunks if "```bash" in c.content)
    assert "continues a table" not in cards[table_opener.ordinal].get_text()
    assert "continues a code block" not in cards[code_opener.ordinal].get_text()
    assert soup.select("main span.seg.table")
    assert soup.select("main span.seg.code")


def test_continuation_cards_show_the_reader_text_with_its_header_and_fences() -> None:
    """Issue 37, item 1: the card says what the reader text repeats and shows it."""
    chunk_map = map_document(TABLE_AND_CODE, options=options(400), name="limits.md")
    soup = check_page(render_chunk_map(chunk_map), chunk_map)
    cards = soup.select("aside.card")
    header = "| item | limit | note |\n| --- | --- | --- |\n"
    for card, html in zip(chunk_map.cards, cards, strict=True):
        reader = html.select_one("pre.reader")
        assert reader is not None
        assert reader.get_text() == card.chunk.reader_text
        text = html.get_text()
        if card.continues is RegionKind.TABLE:
            assert "the reader text repeats its header rows" in text
            assert reader.get_text().startswith("Limits\n\n" + header)
        if card.continues is RegionKind.CODE:
            assert "the reader text reopens its fence" in text
            assert reader.get_text().startswith("Limits › Script\n\n```bash\necho line")
        ends_inside = (
            "echo line 59" not in card.chunk.content
            and "```bash" in (TABLE_AND_CODE[: card.chunk.end])
        )
        assert ("the reader text closes its fence" in text) == ends_inside
        # Code cut short is closed; the last chunk of code holds its own closing fence.
        holds_code = "echo line" in card.chunk.content
        assert reader.get_text().endswith("\n```") == holds_code


def test_warnings_are_shown() -> None:
    heading = "# " + " ".join(f"word{i}" for i in range(200))
    chunk_map = map_document(heading + "\n\nBody text.\n", options=options(300), name="w.md")
    soup = check_page(render_chunk_map(chunk_map), chunk_map)
    assert chunk_map.document.warnings
    shown = [li.get_text() for li in soup.select("ul.warnings li")]
    assert shown == list(chunk_map.document.warnings)


@pytest.mark.parametrize("format", ["markdown", "text"])
def test_a_hostile_document_injects_nothing(format: str) -> None:
    chunk_map = map_document(
        HOSTILE,
        options=options(300),
        name='<img src=x onerror="alert(4)">.md',
        format=format,  # type: ignore[arg-type]
        title="</script><script>alert(5)</script>",
    )
    annotations = Annotations(
        heading="<script>alert(6)</script>",
        notes=('<img src=x onerror="alert(7)">',),
        mark=(10, 40),
        badges=((0, "<b>rank 1</b>"),),
        back=('javascript:alert(8)" onclick="alert(9)', "<i>back</i>"),
    )
    page = render_chunk_map(chunk_map, annotations)
    soup = check_page(page, chunk_map)
    scripts = soup.find_all("script")
    assert len(scripts) == 1
    assert "alert" not in scripts[0].get_text()
    assert soup.find_all("img") == []
    assert {e.name for e in soup.find_all(True)} <= PAGE_ELEMENTS
    assert all(e.get_text() not in {"rank 1", "back"} for e in soup.find_all(["b", "i"]))
    assert not [a for a in soup.find_all("a") if "javascript" in str(a.get("href"))]
    for element in soup.find_all(True):
        assert not any(name.startswith("on") for name in element.attrs), element.name
    assert len(soup.find_all("style")) == 1
    assert soup.title is not None
    assert soup.title.get_text() == 'Chunk map: <img src=x onerror="alert(4)">.md'


@pytest.mark.parametrize("text", ["", "   \n\n  ", "\r\n# T\r\n\r\nLine one.\rLine two.\r\n"])
def test_edge_documents(text: str) -> None:
    page = _map(text)
    assert "&#13;" in page or "\r" not in text


def test_a_marked_span_gets_its_own_segments_and_an_anchor() -> None:
    text = "# Guide\n\nBackups run every night at two o'clock. They keep thirty copies.\n"
    chunk_map = map_document(text, options=options(300), name="guide.md")
    start = text.index("every night")
    end = text.index(" They")
    page = render_chunk_map(
        chunk_map, Annotations(heading="when?", mark=(start, end), emphasis=(0,))
    )
    soup = check_page(page, chunk_map)
    marked = soup.select("main span.seg.mark")
    assert "".join(p.get_text() for p in marked) == text[start:end]
    assert marked[0].get("id") == "mark"
    assert len(soup.select("#mark")) == 1
    assert soup.select_one('aside.card.em[data-chunk="0"]') is not None
    assert [s.start for s in segments(chunk_map, (start, end))].count(start) == 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.one_of(MARKDOWN, HTML),
    maximum=st.integers(300, 900),
    overlap=st.integers(0, 149),
)
def test_any_document_is_shown_once(text: str, maximum: int, overlap: int) -> None:
    chunk_map = map_document(text, options=options(maximum, overlap), name="doc")
    check_page(render_chunk_map(chunk_map), chunk_map)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "chunking.report", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_the_command_writes_the_page(tmp_path: Path) -> None:
    out = tmp_path / "map.html"
    done = _cli(
        "samples/concepts-network.md", "--unit", "characters", "--max", "800", "-o", str(out)
    )
    assert done.returncode == 0, done.stderr
    assert "chunks of samples/concepts-network.md" in done.stderr
    page = out.read_text(encoding="utf-8")
    soup = parse_page(page)
    assert "".join(s.get_text() for s in soup.select("main span.seg")) == SAMPLE.read_text(
        encoding="utf-8"
    )
    assert "maximumPageLength 800 characters" in soup.select_one(".settings").get_text()  # type: ignore[union-attr]
    # Self-contained: nothing is fetched.
    assert not soup.select("link, img, iframe, object, embed, [src]")
    assert not [a for a in soup.find_all("a") if str(a.get("href", "")).startswith("http")]
    assert "url(" not in "".join(s.get_text() for s in soup.find_all("style"))


def test_the_command_reads_stdin_and_writes_stdout() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "chunking.report", "-", "-o", "-", "--format", "text"],
        cwd=ROOT,
        input="Hello. " * 50,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("<!DOCTYPE html>")


def test_an_undeclared_latin1_file_is_read_as_windows_1252(tmp_path: Path) -> None:
    """Issue 17, item 5: files are decoded as the skill decodes `file_data` (before, bytes
    that were not UTF-8 went back out as they came in)."""
    document = tmp_path / "latin1.txt"
    document.write_bytes(b"# Caf\xe9\n\nA line with a Latin-1 \xe9 in it.\n")
    for output in (str(tmp_path / "map.html"), "-"):
        done = subprocess.run(
            [sys.executable, "-m", "chunking.report", str(document), "-o", output],
            cwd=ROOT,
            capture_output=True,
            check=False,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        page = done.stdout if output == "-" else Path(output).read_bytes()
        # The text, the embedded text and the reader text.
        assert page.count("Latin-1 é in it".encode()) == 3
        assert "Café".encode() in page
        assert b"read as cp1252" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["samples/concepts-network.md"], "the following arguments are required: -o"),
        (["samples/concepts-network.md", "-o", "-", "--max", "10"], "maximumPageLength"),
        (["no/such/file.md", "-o", "-"], "cannot read no/such/file.md"),
        (["samples/concepts-network.md", "-o", "no/such/dir/map.html"], "cannot write"),
    ],
)
def test_bad_use_exits_2_with_one_line(args: list[str], message: str) -> None:
    done = _cli(*args)
    assert done.returncode == 2
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stdout == ""
