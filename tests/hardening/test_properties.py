"""Property tests: the invariants hold for generated documents and limits."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunking import ChunkOptions, Limits, SplitMode, Unit, chunk_document
from tests.helpers import chunk_and_audit

if TYPE_CHECKING:
    from chunking.pipeline import FormatName

WORDS = st.sampled_from(
    [
        "cluster", "node", "pool", "v1.2.3", "e.g.", "3.14", "https://example.com/a.b",
        "Dr.", "U.S.", "über", "façade", "クラスター", "集群", "узел", "😀", "x" * 40,
        "<|endoftext|>", "`code`", "**bold**", "[link](https://x.y)", "a|b", "\t",
    ]
)  # fmt: skip
SENTENCE = st.builds(
    lambda words, end: " ".join(words) + end,
    st.lists(WORDS, min_size=1, max_size=25),
    st.sampled_from([".", "!", "?", "。", "", "...", ":"]),
)
PARAGRAPH = st.lists(SENTENCE, min_size=1, max_size=8).map(" ".join)
HEADING = st.builds(
    lambda depth, text, setext, given: (
        f"{text}{given}\n{'=' if depth == 1 else '-'}" * 3
        if setext and depth <= 2
        else f"{'#' * depth} {text}{given}"
    ),
    st.integers(1, 6),
    SENTENCE,
    st.booleans(),
    # Ids written in the heading (Pandoc/kramdown attributes, MDX comments), or none.
    st.sampled_from(["", "", " {#given-id}", " {/*given-id*/}", " {: #i .c}"]),
)
RAW_HTML_HEADING = st.builds(
    lambda depth, attributes, text: f"<h{depth}{attributes}>{text}</h{depth}>",
    st.integers(1, 6),
    st.sampled_from(["", ' id="raw-id"']),
    SENTENCE,
)
TABLE = st.builds(
    lambda rows: "| Key | Value |\n| --- | --- |\n" + "\n".join(f"| {a} | {b} |" for a, b in rows),
    st.lists(st.tuples(SENTENCE, SENTENCE), min_size=1, max_size=30),
)
CODE = st.builds(
    lambda info, lines, closed: f"```{info}\n" + "\n".join(lines) + ("\n```" if closed else ""),
    st.sampled_from(["", "python", "bash title=x"]),
    st.lists(SENTENCE, min_size=1, max_size=40),
    st.booleans(),
)
LIST = st.lists(SENTENCE, min_size=1, max_size=10).map(
    lambda items: "\n".join(f"- {i}" for i in items)
)
FRONT_MATTER = st.builds(lambda t: f"---\ntitle: {t}\n# comment: not a heading\n---", WORDS)
BLOCK = st.one_of(
    PARAGRAPH,
    HEADING,
    HEADING,
    RAW_HTML_HEADING,
    TABLE,
    CODE,
    LIST,
    st.just("> [!NOTE]\n> Note it."),
)
MARKDOWN = st.builds(
    lambda front, blocks, newline: (
        ((front + "\n") if front else "") + "\n\n".join(blocks).replace("\n", newline)
    ),
    st.one_of(st.none(), FRONT_MATTER),
    st.lists(BLOCK, min_size=0, max_size=25),
    st.sampled_from(["\n", "\n", "\r\n"]),
)


@st.composite
def limits(draw: st.DrawFn) -> Limits:
    unit = draw(st.sampled_from(Unit))
    low, high = (300, 1500) if unit is Unit.CHARACTERS else (64, 400)
    maximum = draw(st.integers(low, high))
    overlap = draw(st.integers(0, (maximum - 1) // 2))
    pages = draw(st.sampled_from([0, 0, 0, 1, 3]))
    return Limits(unit, maximum, overlap, pages)


PROFILE = settings(
    # PROPERTY_EXAMPLES=2000 for a long local run; CI keeps the suite fast.
    max_examples=int(os.environ.get("PROPERTY_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@PROFILE
@given(MARKDOWN, limits(), st.sampled_from(SplitMode), st.booleans())
def test_invariants_hold_on_generated_markdown(
    text: str, lim: Limits, mode: SplitMode, prefix: bool
) -> None:
    opts = ChunkOptions(limits=lim, mode=mode, title_prefix=prefix)
    document, audit = chunk_and_audit(text, opts, file_name="generated.md")
    assert not audit.violations, audit.examples
    if lim.maximum_pages_to_take:
        assert len(document.chunks) <= lim.maximum_pages_to_take


@PROFILE
@given(st.text(max_size=3000), limits(), st.sampled_from(["text", "markdown", "auto"]))
def test_invariants_hold_on_arbitrary_text(text: str, lim: Limits, format: FormatName) -> None:
    document, audit = chunk_and_audit(text, ChunkOptions(limits=lim), format=format)
    assert not audit.violations, audit.examples
    if not text.strip():
        assert document.chunks == ()


@PROFILE
@given(MARKDOWN, limits())
def test_output_is_deterministic(text: str, lim: Limits) -> None:
    opts = ChunkOptions(limits=lim)
    assert chunk_document(text, options=opts) == chunk_document(text, options=opts)


@PROFILE
@given(MARKDOWN, limits())
def test_overlap_is_a_tail_of_the_previous_chunk_within_the_limit(text: str, lim: Limits) -> None:
    opts = ChunkOptions(limits=lim, title_prefix=False)
    document = chunk_document(text, options=opts)
    for previous, chunk in zip(document.chunks, document.chunks[1:], strict=False):
        assert chunk.start > previous.start
        if chunk.start < previous.end:
            overlap = document.source[chunk.start : previous.end].strip()
            sizer_unit = lim.page_overlap_length
            assert overlap
            assert len(overlap) <= sizer_unit * 16 + 1
            assert not document.source[chunk.start - 1].isalnum() or chunk.start == 0


@PROFILE
@given(
    MARKDOWN,
    limits(),
    st.booleans(),
    st.sampled_from([None, 0.0, 0.1, 0.35]),
)
def test_invariants_hold_with_every_embedding_option(
    text: str, lim: Limits, plain: bool, fill: float | None
) -> None:
    opts = ChunkOptions(limits=lim, strip_markup=plain, section_fill=fill)
    document, audit = chunk_and_audit(text, opts, file_name="generated.md")
    assert not audit.violations, audit.examples
    for chunk in document.chunks:
        assert chunk.content == document.source[chunk.start : chunk.end]


def test_a_raw_html_heading_before_a_table_at_a_tight_limit_cuts_no_row() -> None:
    text = (
        "cluster.\n=cluster.\n=cluster.\n=\n\ncluster.\n\n"
        "<h1>façade [link](https://x.y) cluster.</h1>\n\n| Key | Value |\n| --- | --- |\n"
        "| cluster v1.2.3 e.g. e.g. cluster. | cluster cluster cluster cluster v1.2.3 3.14. |"
        "\n\n> [!NOTE]\n> Note it."
    )
    options = ChunkOptions(limits=Limits(Unit.TOKENS, 76, 0), mode=SplitMode.PAGES)
    _, audit = chunk_and_audit(text, options, file_name="generated.md")
    assert not audit.violations, audit.examples
