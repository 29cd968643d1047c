"""`--quick`'s sample: fixed, bounded in questions and in the text to embed."""

from __future__ import annotations

from evaluation.documents import EvalDocument
from evaluation.questions import Question
from evaluation.quick import quick_sample


def _set(
    documents: int, size: int, per_document: int
) -> tuple[list[Question], dict[str, EvalDocument]]:
    docs = {
        f"d{n}.md": EvalDocument(f"d{n}.md", "x" * size, "markdown", "x" * size)
        for n in range(documents)
    }
    questions = [
        Question(n * per_document + k + 1, f"q{n}-{k}", f"d{n}.md", 0, 1)
        for n in range(documents)
        for k in range(per_document)
    ]
    return questions, docs


def test_the_sample_is_the_same_every_run_and_bounded() -> None:
    questions, documents = _set(documents=20, size=10_000, per_document=5)
    first = quick_sample(questions, documents, most=12, characters=35_000)
    second = quick_sample(questions, documents, most=12, characters=35_000)
    assert first == second
    kept, chosen = first
    assert len(kept) <= 12
    assert sum(len(d.source) for d in chosen.values()) <= 35_000
    assert {q.document for q in kept} == set(chosen)
    assert [q.line for q in kept] == sorted(q.line for q in kept)


def test_one_document_larger_than_the_budget_is_still_taken() -> None:
    questions, documents = _set(documents=2, size=90_000, per_document=3)
    kept, chosen = quick_sample(questions, documents, characters=50_000)
    assert len(chosen) == 1
    assert len(kept) == 3
