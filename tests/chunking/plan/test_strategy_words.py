"""The `words` strategy: fixed word windows with overlap (issue 16, item 1)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking import ChunkOptions, Limits, OptionError, SplitMode, Unit, WordScope, WordWindows
from chunking.pipeline import chunk_document
from chunking.plan.strategies import STRATEGIES, STRATEGY_NAMES
from chunking.plan.words import words_of
from evaluation.chunkers import chunk_all
from evaluation.documents import load_documents
from evaluation.metrics import score_question
from evaluation.questions import load_questions
from evaluation.settings import Setting
from tests.helpers import chunk_and_audit, edges_inside_lines
from tests.paths import ROOT
from tests.strategies import MARKDOWN, limits

SAMPLES = ROOT / "samples" / "eval"
LESSON = SAMPLES / "return-policy"
SPANISH, GERMAN = "politica-de-devoluciones.txt", "rueckgaberecht.txt"


def words_options(
    size: int,
    overlap: int,
    limits: Limits | None = None,
    scope: WordScope = WordScope.SECTION,
) -> ChunkOptions:
    return ChunkOptions(
        limits=limits or Limits(), strategy="words", parameters=WordWindows(size, overlap, scope)
    )


def test_the_registry_holds_every_strategy_the_options_name() -> None:
    assert tuple(STRATEGIES) == STRATEGY_NAMES
    assert STRATEGY_NAMES == ("structure", "words", "semantic", "binary", "pages")


@pytest.mark.parametrize(
    ("document", "words", "counts"),
    [(SPANISH, 50, [5, 6, 6, 7, 8]), (GERMAN, 51, [6, 6, 7, 7, 8])],
)
def test_the_lesson_counts_windows_of_ten_words(
    document: str, words: int, counts: list[int]
) -> None:
    """The lesson's exact check: 10-word windows, overlap 0 to 4."""
    text = (LESSON / document).read_text(encoding="utf-8")
    assert len(text.split()) == len(words_of(text)) == words
    found = []
    for overlap in range(5):
        chunks = chunk_document(text, options=words_options(10, overlap), file_name=document)
        found.append(len(chunks.chunks))
        step = 10 - overlap
        spans = [(c.start, c.end) for c in chunks.chunks]
        word_spans = words_of(text)
        # Each window starts `step` words after the previous; the last ends at the last word.
        starts = [word_spans[i][0] for i in range(0, len(spans) * step, step)]
        assert [s for s, _ in spans] == starts
        assert spans[-1][1] == word_spans[-1][1]
        assert all(len(text[s:e].split()) <= 10 for s, e in spans)
    assert found == counts


@pytest.mark.parametrize("document", [SPANISH, GERMAN])
def test_only_overlap_2_and_4_keep_the_answer_sentence_whole(document: str) -> None:
    """The lesson's point, by the evaluation's answer-complete check."""
    documents = load_documents(LESSON)
    questions = load_questions(SAMPLES / "return-policy.jsonl", documents)
    questions = [q for q in questions if q.document == document]
    assert len(questions) == 1
    complete = {}
    for overlap in range(5):
        setting = Setting(
            "ours", Unit.TOKENS, 512, 64, "64", strategy="words", words_per_chunk=10,
            word_overlap=overlap,
        )  # fmt: skip
        run = chunk_all(setting, [documents[document]])
        # complete@1 of a ranking of one chunk: whether that chunk holds the whole answer.
        scores = [score_question(questions[0], [chunk]).values for chunk in run.chunks]
        complete[overlap] = sum(int(score["complete@1"]) for score in scores)
    assert complete == {0: 0, 1: 0, 2: 1, 3: 0, 4: 1}


def test_chinese_and_japanese_count_a_word_per_character() -> None:
    text = "退货政策。三十天内可以退货。 Korean 한국어 문장"
    found = [text[s:e] for s, e in words_of(text)]
    assert found[:6] == ["退", "货", "政", "策。", "三", "十"]
    assert found[-3:] == ["Korean", "한국어", "문장"]
    chunks = chunk_document(text, options=words_options(4, 1), format="text").chunks
    assert [c.content for c in chunks][:2] == ["退货政策。", "策。三十天"]


def test_windows_stay_in_their_section_unless_asked() -> None:
    text = "# Title\n\n" + "one two three four five\n\n## Next\n\nsix seven eight nine ten\n"
    section = chunk_document(text, options=words_options(8, 0), format="markdown").chunks
    assert [c.content for c in section] == [
        "# Title\n\none two three four five",
        "## Next\n\nsix seven eight nine ten",
    ]
    whole = chunk_document(
        text, options=words_options(8, 0, scope=WordScope.DOCUMENT), format="markdown"
    ).chunks
    assert [len(c.content.split()) for c in whole] == [8, 6]


def test_a_heading_alone_goes_with_the_section_after_it() -> None:
    text = "# A\n\n## B\n\nsome words here\n"
    chunks = chunk_document(text, options=words_options(10, 2), format="markdown").chunks
    assert [(c.content, c.headings) for c in chunks] == [("# A\n\n## B\n\nsome words here", ("B",))]


def test_table_rows_and_code_lines_stay_whole() -> None:
    rows = "".join(f"| cell {i} a b | other {i} c d |\n" for i in range(12))
    code = "".join(f"call({i}, two, three)\n" for i in range(12))
    text = f"# T\n\nIntro text.\n\n| h1 | h2 |\n|----|----|\n{rows}\n```python\n{code}```\n"
    document, audit = chunk_and_audit(text, words_options(7, 2), file_name="t.md")
    assert not audit.violations, audit.examples
    assert edges_inside_lines(text, document.chunks) == []
    continued = [c for c in document.chunks if c.content.startswith("| cell")]
    assert continued
    assert all("| h1 | h2 |" not in c.text and c.text.endswith(c.content) for c in continued)


def test_a_window_over_the_limit_is_cut_at_words_with_a_warning() -> None:
    text = " ".join(f"word{i:03d}" for i in range(400))
    limits = Limits(Unit.CHARACTERS, 300, 0)
    document, audit = chunk_and_audit(text, words_options(100, 10, limits), format="text")
    assert not audit.violations, audit.examples
    assert all(c.size <= 300 for c in document.chunks)
    assert all(re.fullmatch(r"word\d{3}( word\d{3})*", c.content) for c in document.chunks)
    said = "word window(s) of 100 words were over maximumPageLength"
    assert any(said in warning for warning in document.warnings)


def test_one_giant_word_is_cut_at_characters() -> None:
    text = "x" * 5000
    document, audit = chunk_and_audit(
        text, words_options(10, 0, Limits(Unit.CHARACTERS, 300, 0)), format="text"
    )
    assert not audit.violations, audit.examples
    assert "".join(c.content for c in document.chunks) == text


def test_ids_of_the_default_strategy_do_not_change_and_words_ids_follow_the_windows() -> None:
    text = "one two three four five six seven eight nine ten eleven twelve"
    a = chunk_document(text, options=words_options(6, 0), format="text").chunks
    b = chunk_document(text, options=words_options(6, 1), format="text").chunks
    assert (a[0].start, a[0].end) == (b[0].start, b[0].end)
    assert a[0].id != b[0].id


def test_word_parameters_are_validated_by_name() -> None:
    with pytest.raises(OptionError, match="wordOverlap must be at least 0 and less than half"):
        WordWindows(10, 10)
    with pytest.raises(OptionError, match="wordsPerChunk must be at least 1"):
        WordWindows(0, 0)
    with pytest.raises(OptionError, match="textSplitMode sentences does not apply to strategy"):
        ChunkOptions(strategy="words", mode=SplitMode.SENTENCES)


@settings(max_examples=60, deadline=None)
@given(
    MARKDOWN,
    limits(),
    st.integers(1, 80),
    st.integers(0, 79),
    st.sampled_from(WordScope),
)
def test_word_windows_keep_every_invariant(
    text: str, chosen: Limits, size: int, overlap: int, scope: WordScope
) -> None:
    options = words_options(size, min(overlap, (size - 1) // 2), chosen, scope)
    document, audit = chunk_and_audit(text, options)
    assert not audit.violations, audit.examples
    again = chunk_document(text, options=options, format="markdown")
    assert again == document


def test_the_window_after_one_cut_in_pieces_starts_past_the_last_piece() -> None:
    """Regression (corpus audit, 558 chunks at 512 tokens): the window after a window cut
    to fit started inside it, before its last piece, so starts did not increase."""
    text = " ".join(f"{i:02d}" + "w" * 37 for i in range(30))  # 40-character words
    options = words_options(10, 4, Limits(Unit.CHARACTERS, 300, 0))
    document, audit = chunk_and_audit(text, options, format="text")
    assert not audit.violations, audit.examples
    starts = [c.start for c in document.chunks]
    assert starts == sorted(set(starts))
