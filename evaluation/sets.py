"""Several question sets, several models: a sweep per set and model, and the sets pooled.

A default is good only if it holds on question sets written by other people and under
more than one embedding model; one set, written by the hands that tuned the chunker,
decides nothing alone. Pooling concatenates the questions of every set (each question
weighs the same), so the pooled intervals are over all questions at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from evaluation.documents import load_documents
from evaluation.metrics import Interval, bootstrap_mean, paired_difference
from evaluation.questions import load_questions
from evaluation.run import ALL_METRICS, COMPARED

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    import numpy.typing as npt

    from evaluation.documents import EvalDocument
    from evaluation.questions import Question
    from evaluation.run import SettingResult, Sweep

QUESTIONS_FILE = "questions.jsonl"
DOCS_FOLDER = "docs"
BREAKDOWN_METRICS = ("complete@5", "complete@2000tok")
"""The metrics broken down by kind of question, language and format."""


@dataclass(frozen=True, slots=True)
class QuestionSet:
    """One set: its documents and its questions."""

    name: str
    documents: dict[str, EvalDocument]
    questions: list[Question]


def set_paths(folder: Path) -> tuple[Path, Path]:
    """A set folder's `docs/` and `questions.jsonl` (the layout of shared/qa/<set>)."""
    return folder / DOCS_FOLDER, folder / QUESTIONS_FILE


def set_name(docs: Path, questions: Path) -> str:
    """A short name: the set folder's (`conditionalqa`), or the question file's stem."""
    if docs.name == DOCS_FOLDER and questions.name == QUESTIONS_FILE:
        return docs.parent.resolve().name
    if questions.stem != "questions":
        return questions.stem
    return questions.resolve().parent.name


def load_set(docs: Path, questions: Path, name: str | None = None) -> QuestionSet:
    """The documents and questions; DocumentError or QuestionFileError say what is wrong."""
    documents = load_documents(docs)
    return QuestionSet(
        name or set_name(docs, questions), documents, load_questions(questions, documents)
    )


def unique_names(sets: Sequence[QuestionSet]) -> list[QuestionSet]:
    """The sets, a number added to a name that repeats."""
    seen: dict[str, int] = {}
    named: list[QuestionSet] = []
    for item in sets:
        count = seen.get(item.name, 0)
        seen[item.name] = count + 1
        name = item.name if count == 0 else f"{item.name}-{count + 1}"
        named.append(QuestionSet(name, item.documents, item.questions))
    return named


@dataclass(frozen=True, slots=True)
class PooledRow:
    """One row (setting and retrieval mode) over the questions of every set."""

    label: str
    chunker: str
    retrieval: str
    questions: int
    per_question: dict[str, npt.NDArray[np.float64]]
    means: dict[str, Interval]
    differences: dict[str, Interval] | None
    """Paired differences against the pooled Split-skill row at the same limits and mode."""
    truncated_share: float
    """Share of embedded texts longer than the model's window, over every set."""


def _key(result: SettingResult) -> tuple[object, ...]:
    s = result.setting
    return (s.unit, s.maximum, s.overlap, s.mode, result.retrieval, result.passages)


def pool(sweeps: Sequence[Sweep]) -> list[PooledRow]:
    """Rows present in every sweep, their per-question values concatenated."""
    if not sweeps:
        return []
    labels = [r.label for r in sweeps[0].results]
    by_label = [{r.label: r for r in sweep.results} for sweep in sweeps]
    rows: list[PooledRow] = []
    baselines: dict[tuple[object, ...], dict[str, npt.NDArray[np.float64]]] = {}
    pooled: list[tuple[SettingResult, dict[str, npt.NDArray[np.float64]], float]] = []
    for label in labels:
        members = [table.get(label) for table in by_label]
        present = [m for m in members if m is not None]
        if len(present) != len(sweeps):
            continue
        values = {
            name: np.concatenate([m.per_question[name] for m in present]) for name in ALL_METRICS
        }
        chunks = sum(m.cost.chunks for m in present)
        truncated = sum(m.truncated_share * m.cost.chunks for m in present) / max(chunks, 1)
        pooled.append((present[0], values, truncated))
        if present[0].setting.chunker == "split-skill":
            baselines[_key(present[0])] = values
    for first, values, truncated in pooled:
        baseline = baselines.get(_key(first)) if first.setting.chunker != "split-skill" else None
        rows.append(
            PooledRow(
                label=first.label,
                chunker=first.setting.chunker,
                retrieval=first.retrieval,
                questions=len(values["complete@5"]),
                per_question=values,
                means={name: bootstrap_mean(v) for name, v in values.items()},
                differences=(
                    {name: paired_difference(values[name], baseline[name]) for name in COMPARED}
                    if baseline is not None
                    else None
                ),
                truncated_share=truncated,
            )
        )
    return rows


def breakdowns(
    result: SettingResult, questions: Sequence[Question], documents: dict[str, EvalDocument]
) -> dict[str, dict[str, tuple[float, int]]]:
    """Per metric: mean and count per kind of question, language and document format."""
    found: dict[str, dict[str, tuple[float, int]]] = {}
    for metric in BREAKDOWN_METRICS:
        groups: dict[str, list[float]] = {}
        for question, value in zip(questions, result.per_question[metric], strict=True):
            keys = (
                f"kind:{question.kind or 'unlabelled'}",
                f"language:{question.language or 'unlabelled'}",
                f"format:{documents[question.document].format}",
            )
            for key in keys:
                groups.setdefault(key, []).append(float(value))
        found[metric] = {k: (sum(v) / len(v), len(v)) for k, v in sorted(groups.items())}
    return found
