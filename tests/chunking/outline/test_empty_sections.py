"""Sections that are only a heading: a chunk holding several has their common parent's path."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from chunking import ChunkOptions, Limits, Unit, chunk_document
from chunking.options import SECTIONS_APART_FILL


def _characters(maximum: int, *, packed: bool = False, overlap: int = 0) -> ChunkOptions:
    return ChunkOptions(
        limits=Limits(
            unit=Unit.CHARACTERS, maximum_page_length=maximum, page_overlap_length=overlap
        ),
        section_fill=None if packed else SECTIONS_APART_FILL,
    )


def test_issue_14_item_10_empty_sections_pack_under_their_common_parent() -> None:
    """The issue's example: `# A` / `## B` / `# C` with text only under C."""
    document = chunk_document("# A\n\n## B\n\n# C\n\nText under C.", options=_characters(400))
    [chunk] = document.chunks
    assert chunk.headings == ()
    # The empty sections' headings stay in the chunk's text.
    assert chunk.text == "# A\n\n## B\n\n# C\n\nText under C."


def test_headings_that_enclose_the_content_are_still_its_path() -> None:
    document = chunk_document(
        "---\ntitle: T\n---\n# A\n\n## B\n\nText under B.", options=_characters(400)
    )
    [chunk] = document.chunks
    assert chunk.headings == ("A", "B")
    assert chunk.text.startswith("T › A › B\n\n# A")


def test_an_empty_sibling_before_the_content_lifts_the_path_to_the_parent() -> None:
    text = "---\ntitle: T\n---\n# A\n\n## B\n\n## C\n\nText under C."
    [chunk] = chunk_document(text, options=_characters(400)).chunks
    assert chunk.headings == ("A",)
    assert chunk.text.startswith("T › A\n\n# A\n\n## B\n\n## C")


def test_packed_sections_with_an_empty_one_between_take_the_common_parent() -> None:
    text = "---\ntitle: T\n---\n# A\n\nText under A.\n\n## B\n\n# C\n\nText under C."
    [chunk] = chunk_document(text, options=_characters(400, packed=True)).chunks
    assert chunk.headings == ()
    assert "## B" in chunk.text


def test_a_heading_alone_at_the_end_is_its_own_path() -> None:
    text = "---\ntitle: T\n---\n# A\n\nText under A.\n\n# B\n"
    document = chunk_document(text, options=_characters(400, packed=True))
    assert [c.headings for c in document.chunks] == [("A",), ("B",)]


def test_a_chunk_of_one_section_keeps_its_path() -> None:
    under_d = "Text under D. " * 30
    text = f"---\ntitle: T\n---\n# A\n\n## B\n\n# C\n\nText under C.\n\n## D\n\n{under_d}"
    document = chunk_document(text, options=_characters(300))
    assert [c.headings for c in document.chunks][:2] == [(), ("C", "D")]


def test_a_shorter_path_frees_room_and_no_chunk_is_over() -> None:
    heading = " ".join(["Long heading"] * 8)
    text = f"# {heading} one\n\n## {heading} two\n\n# {heading} three\n\n" + "Words here. " * 60
    options = _characters(300)
    document = chunk_document(text, options=options, title="T")
    assert all(c.size <= 300 for c in document.chunks)
    assert document.chunks[0].headings == ()


@dataclass(frozen=True, slots=True)
class _Item:
    """A heading line or a paragraph of the generated document, with its section chain."""

    start: int
    end: int
    chain: tuple[str, ...]
    heading: bool


TREES = st.tuples(
    st.booleans(),
    st.lists(
        st.tuples(st.integers(1, 4), st.integers(0, 3), st.integers(1, 80)), min_size=1, max_size=14
    ),
)
"""A preface or not, then headings: (depth, paragraphs under it (0: an empty section), words)."""


def _build(preface: bool, entries: list[tuple[int, int, int]]) -> tuple[str, list[_Item]]:
    parts = ["---\ntitle: Generated\n---\n"]
    items: list[_Item] = []
    position = len(parts[0])
    stack: list[tuple[int, str]] = []

    def add(piece: str, chain: tuple[str, ...], heading: bool) -> None:
        nonlocal position
        items.append(_Item(position, position + len(piece), chain, heading))
        parts.append(piece + "\n\n")
        position += len(piece) + 2

    if preface:
        add("Preface words before any heading.", (), heading=False)
    for index, (depth, paragraphs, words) in enumerate(entries):
        name = f"Section {index}"
        while stack and stack[-1][0] >= depth:
            stack.pop()
        stack.append((depth, name))
        chain = tuple(n for _, n in stack)
        add(f"{'#' * depth} {name}", chain, heading=True)
        for paragraph in range(paragraphs):
            add(" ".join(f"w{index}x{paragraph}y{k}." for k in range(words)), chain, heading=False)
    return "".join(parts), items


def _expected_path(items: list[_Item], start: int, end: int) -> tuple[str, ...]:
    """The common parent of what [start, end) holds, computed from the generated tree.

    Headings before the first paragraph that enclose it are glued to it (they are
    its path, not a reason to shorten it); every other item must be under the path.
    """
    held = [item for item in items if item.start < end and item.end > start]
    body = [item for item in held if not item.heading]
    anchor = body[0] if body else held[-1]
    chains = [
        item.chain
        for item in held
        if not (item.start < anchor.start and anchor.chain[: len(item.chain)] == item.chain)
    ]
    path = chains[0]
    for chain in chains[1:]:
        common = 0
        while common < min(len(path), len(chain)) and path[common] == chain[common]:
            common += 1
        path = path[:common]
    return path


@settings(max_examples=300, deadline=None)
@given(TREES, st.integers(300, 900), st.booleans(), st.sampled_from([0, 40]))
def test_every_path_is_the_common_parent_of_what_the_chunk_holds(
    tree: tuple[bool, list[tuple[int, int, int]]], maximum: int, packed: bool, overlap: int
) -> None:
    text, items = _build(*tree)
    document = chunk_document(
        text, options=_characters(maximum, packed=packed, overlap=overlap), format="markdown"
    )
    first_heading = next(item.start for item in items if item.heading)
    for chunk in document.chunks:
        assert chunk.size <= maximum
        assert chunk.headings == _expected_path(items, chunk.start, chunk.end), chunk
        if chunk.end <= first_heading:
            assert chunk.headings == ()
