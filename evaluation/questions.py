"""The question file: JSONL, one question with its reference answer span per line."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chunking.cli.files import read_limited
from evaluation.reader_text import reader_occurrences

if TYPE_CHECKING:
    from pathlib import Path

    from evaluation.documents import EvalDocument


class QuestionFileError(ValueError):
    """The question file has bad lines; `problems` lists every one, with its line number."""

    def __init__(self, path: Path, problems: list[str], *, unreadable: str = "") -> None:
        shown = "\n".join(f"  {problem}" for problem in problems)
        super().__init__(
            f"cannot read {path}: {unreadable}"
            if unreadable
            else f"{path}: {len(problems)} bad line(s), nothing was evaluated:\n{shown}"
        )
        self.problems = problems


@dataclass(frozen=True, slots=True)
class Question:
    """One question and where its answer is."""

    line: int
    """1-based line in the question file."""
    question: str
    document: str
    """The document's name in the documents folder."""
    start: int
    """Code-point offset of the reference answer in the document's source."""
    end: int
    kind: str = ""
    """Optional label (fact, table, procedure, ...) for per-kind breakdowns."""
    language: str = ""
    """Optional language tag (`en`, `de`, ...) for per-language breakdowns."""


def load_questions(path: Path, documents: dict[str, EvalDocument]) -> list[Question]:
    """Read and check every line; raise `QuestionFileError` naming all bad lines at once."""
    problems: list[str] = []
    questions: list[Question] = []
    try:
        lines = read_limited(path).decode("utf-8").splitlines()
    except FileNotFoundError as error:
        raise QuestionFileError(path, [], unreadable="no such questions file") from error
    except OSError as error:
        raise QuestionFileError(path, [], unreadable=str(error.strerror)) from error
    except UnicodeDecodeError as error:
        raise QuestionFileError(path, [], unreadable=f"not UTF-8 text ({error.reason})") from error
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        result = _parse_line(number, line, documents)
        if isinstance(result, str):
            problems.append(f"line {number}: {result}")
        else:
            questions.append(result)
    if not questions and not problems:
        problems.append("the file holds no questions")
    if problems:
        raise QuestionFileError(path, problems)
    return questions


def _parse_line(number: int, line: str, documents: dict[str, EvalDocument]) -> Question | str:
    try:
        item = json.loads(line)
    except json.JSONDecodeError as error:
        return f"not JSON ({error.msg} at column {error.colno})"
    if not isinstance(item, dict):
        return "must be a JSON object with question, document and answer (or start/end)"
    question, name = item.get("question"), item.get("document")
    if not isinstance(question, str) or not question.strip():
        return "'question' must be a non-empty string"
    if not isinstance(name, str) or name not in documents:
        return f"'document' must name a file in the documents folder (got {name!r})"
    document = documents[name]
    answer = item.get("answer")
    if answer is not None and (not isinstance(answer, str) or not answer.strip()):
        return "'answer' must be a non-empty string"
    kind = item.get("kind", "")
    if not isinstance(kind, str):
        return "'kind' must be a string"
    language = item.get("language", "")
    if not isinstance(language, str):
        return "'language' must be a string"
    span = _reference_span(item, answer, document)
    if isinstance(span, str):
        return span
    return Question(number, question, name, span[0], span[1], kind, language)


def _reference_span(
    item: dict[str, object], answer: str | None, document: EvalDocument
) -> tuple[int, int] | str:
    """Where the reference is in the source: the offsets, or the one place `answer` occurs."""
    source = document.source
    start, end = item.get("start"), item.get("end")
    if start is None and end is None:
        if answer is None:
            return "give the reference as 'answer' (text of the document) or 'start'/'end'"
        found = _occurrences(source, answer)
        if found:
            spans = [(offset, offset + len(answer)) for offset in found]
        else:
            # Not verbatim: copied as a reader sees the page (evaluation.reader_text).
            spans = reader_occurrences(source, answer)
        if not spans:
            where = "the rendered text of " if document.format == "html" else ""
            return f"'answer' does not occur in {where}{document.name}"
        if len(spans) > 1:
            return (
                f"'answer' occurs {len(spans)} times in {document.name} (at offsets "
                f"{', '.join(str(start) for start, _ in spans[:5])}); make it longer or give "
                "'start'/'end'"
            )
        return spans[0]
    if not (isinstance(start, int) and isinstance(end, int)) or isinstance(start, bool):
        return "'start' and 'end' must both be integers (code-point offsets)"
    if not 0 <= start < end <= len(source):
        return f"'start'/'end' must satisfy 0 <= start < end <= {len(source)} (got {start}, {end})"
    if answer is None:
        if document.format == "html":
            return "for HTML documents give 'answer' too, so the span can be located"
        return start, end
    if source[start:end] == answer:
        return start, end
    if document.format != "html":
        return f"'answer' is not the text at start/end ({source[start:end][:60]!r})"
    # Offsets into a rendering drift when the renderer changes; the answer text does not.
    found = _occurrences(source, answer)
    if not found:
        return f"'answer' does not occur in the rendered text of {document.name}"
    nearest = min(found, key=lambda offset: abs(offset - start))
    return nearest, nearest + len(answer)


def _occurrences(source: str, answer: str) -> list[int]:
    found: list[int] = []
    position = source.find(answer)
    while position >= 0:
        found.append(position)
        position = source.find(answer, position + 1)
    return found
