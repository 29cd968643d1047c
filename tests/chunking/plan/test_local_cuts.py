"""Cuts stay put under edits (issue 36 item 4), and the rest of a document that fits in a
chunk is one chunk (issue 37 item 2)."""

from __future__ import annotations

import random

from bench.edits import changed_positions, floor_chunks, new_texts
from chunking.options import ChunkOptions, Limits, Unit
from chunking.pipeline import chunk_document
from skills.commands.chunk_map import map_document, render_chunk_map
from skills.parameters import PARAMETERS
from tests.paths import ROOT

WORDS = [
    "cluster",
    "node",
    "pool",
    "upgrade",
    "version",
    "network",
    "policy",
    "identity",
    "role",
    "scope",
    "secret",
    "registry",
    "image",
    "region",
    "zone",
    "quota",
    "limit",
    "metric",
    "alert",
    "log",
    "query",
    "workspace",
    "agent",
    "service",
    "endpoint",
    "gateway",
    "subnet",
    "address",
    "route",
    "table",
    "rule",
    "storage",
    "account",
    "key",
]
TOKENS_512 = ChunkOptions(limits=Limits(Unit.TOKENS, 512, 51))
CHARACTERS_2000 = ChunkOptions(limits=Limits(Unit.CHARACTERS, 2000, 500))


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 16))]
    return " ".join(words).capitalize() + "."


def _paragraph(rng: random.Random, sentences: int = 4) -> str:
    return " ".join(_sentence(rng) for _ in range(sentences))


def _new_texts(before: str, after: str, options: ChunkOptions) -> tuple[int, int]:
    """Chunks of `after` whose embedded text `before` did not have, and the floor: those
    that hold a changed line or sit under a new heading path (`bench.edits`)."""
    old = chunk_document(before, options=options, format="markdown")
    new = chunk_document(after, options=options, format="markdown")
    fresh = new_texts([chunk.text for chunk in old.chunks], [chunk.text for chunk in new.chunks])
    return fresh, floor_chunks(old, new, changed_positions(old.source, new.source))


def _excess(before: str, afters: list[str], options: ChunkOptions) -> int:
    """Chunks embedded again beyond the floor, added up over the edits."""
    total = 0
    for after in afters:
        fresh, floor = _new_texts(before, after, options)
        assert floor >= 1
        total += fresh - floor
    return total


def test_lines_added_to_a_long_script_move_few_chunks_past_the_ones_that_hold_them() -> None:
    """Issue 36 (azure-aks-docs/0082): a script of a few hundred lines is cut by lines at
    the limit; where the furthest line that fits was taken, a line added near its top
    moved every cut after it (45 chunks beyond the floor over these ten edits at 512
    tokens). A cut the text picks comes back after a chunk or two."""
    rng = random.Random(3)
    lines = [
        f'    {rng.choice(WORDS)}_{n}="$({rng.choice(WORDS)} {rng.choice(WORDS)} --{n})"'
        for n in range(400)
    ]
    before = "# Setup\n\nRun the script:\n\n```bash\n" + "\n".join(lines) + "\n```\n\nDone.\n"
    afters = [
        before.replace(lines[i], lines[i] + f'\n    extra_{i}="$(check {i})"', 1)
        for i in range(10, 390, 38)
    ]
    for options in (TOKENS_512, CHARACTERS_2000):
        assert _excess(before, afters, options) <= 2 * len(afters)


def test_sentences_added_to_a_long_section_move_few_chunks_past_the_ones_that_hold_them() -> None:
    """The same for prose: 45 chunks beyond the floor over these ten edits at 2000
    characters before cuts were picked by the text."""
    rng = random.Random(11)
    paragraphs = [_paragraph(rng) for _ in range(60)]
    before = "# Guide\n\n## Overview\n\n" + "\n\n".join(paragraphs) + "\n"
    afters = [
        before.replace(paragraphs[i], paragraphs[i] + " " + _paragraph(random.Random(i), 2), 1)
        for i in range(2, 58, 6)
    ]
    for options in (TOKENS_512, CHARACTERS_2000):
        assert _excess(before, afters, options) <= 2 * len(afters)


def test_a_small_document_with_two_sections_is_one_chunk() -> None:
    """Issue 37 item 2: a 312-token document with two sections gave two chunks at
    `--max 8000` (241 + 71 tokens): three quarters of the rest of the document, not of
    the room, was enough for its second heading to end the first chunk."""
    rng = random.Random(5)
    text = (
        "# Help\n\n## Use\n\n"
        + "\n\n".join(_paragraph(rng) for _ in range(4))
        + "\n\n## Limits\n\n"
        + _paragraph(rng, 3)
        + "\n"
    )
    for maximum in (512, 8000):
        options = ChunkOptions(limits=Limits(Unit.TOKENS, maximum, 0))
        document = chunk_document(text, options=options, format="markdown")
        assert len(document.chunks) == 1, [c.size for c in document.chunks]


def test_the_sections_that_end_a_document_and_fit_in_one_chunk_are_one_chunk() -> None:
    rng = random.Random(9)
    long_sections = "\n\n".join(
        f"## Part {n}\n\n" + "\n\n".join(_paragraph(rng) for _ in range(6)) for n in range(4)
    )
    tail = "\n\n".join(f"## Note {n}\n\n{_paragraph(rng, 2)}" for n in range(3))
    text = f"# Guide\n\n{long_sections}\n\n{tail}\n"
    document = chunk_document(text, options=TOKENS_512, format="markdown")
    last = document.chunks[-1]
    assert all(f"## Note {n}" in last.content for n in range(3)), [c.size for c in document.chunks]


def test_the_settings_the_command_help_and_the_chunk_map_state_the_same_rule() -> None:
    """Issue 37 item 2: code, docs, the chunk map's legend and the CLI's help say the same."""
    rule = "the rest of a document that fits in one chunk is one chunk"
    row = next(p for p in PARAMETERS if p.name == "sections")
    assert row.flag is not None
    assert rule in row.meaning
    assert rule in row.flag.help
    page = render_chunk_map(
        map_document("# Help\n\n## Use\n\nWords.\n", options=TOKENS_512, name="doc.md")
    )
    assert rule in page
    for page_path in ("docs/design/chunking-rules.md", "docs/guide/settings.md"):
        words = " ".join((ROOT / page_path).read_text(encoding="utf-8").lower().split())
        assert rule in words, page_path


def test_at_a_fill_of_0_every_heading_begins_a_chunk_even_where_the_document_fits() -> None:
    """The first attempt (reverted in ef1a4cb) chose the strongest heading past the fill
    and joined the rest of a document that fits, also at a fill of 0, where every heading
    had begun a chunk: 24 headings of the corpus ended inside chunks, and docfx tab and
    zone paths merged. At 0 no heading is skipped and nothing is joined."""
    rng = random.Random(5)
    text = (
        "# Help\n\n## Use\n\n"
        + _paragraph(rng)
        + "\n\n### Flags\n\n"
        + _paragraph(rng)
        + "\n\n## Limits\n\n"
        + _paragraph(rng, 3)
        + "\n"
    )
    options = ChunkOptions(limits=Limits(Unit.TOKENS, 8000, 0), section_fill=0.0)
    document = chunk_document(text, options=options, format="markdown")
    assert [chunk.content.splitlines()[0] for chunk in document.chunks] == [
        "# Help",
        "### Flags",
        "## Limits",
    ]
    page = render_chunk_map(map_document(text, options=options, name="doc.md"))
    assert "every heading begins a chunk" in page
