"""`python -m evaluation generate DOCS --questions N`: questions for users who have none.

A chat model reads one section at a time and answers with questions and, for each, the
passage of the section that answers it, copied exactly. Every quote is looked up in the
document (whitespace and inline markup aside): an invented quote, one from another
section, a heading, a passage that occurs twice, a question that gives its own answer
away, a repeat: each is rejected and counted. What is left is written as the
evaluation's question file, with the quote's offsets as the reference span.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chunking.cli.pipes import OneLineParser
from chunking.outline.sections import SectionTree
from chunking.pipeline import parse
from evaluation.chat import (
    CHAT_PROVIDERS,
    DEFAULT_MAX_RETRIES,
    ChatError,
    ChatRequestFailed,
    ChatSettingsError,
    build_chat_model,
    load_chat_settings,
)
from evaluation.documents import DocumentError, load_documents
from evaluation.quotes import NormalText, normal_form, normalize, occurrences

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from evaluation.chat import ChatModel
    from evaluation.documents import EvalDocument

USAGE_ERROR = 2
NOTHING_GENERATED = 1
MIN_QUOTE_CHARACTERS = 20
"""Shorter quotes (after normalizing) are too small to tell a complete answer from a hit."""
MIN_SECTION_CHARACTERS = 80
"""Sections with less text than this besides their heading have nothing to ask about."""
MAX_SECTION_CHARACTERS = 12_000
"""Longer sections are shown in windows cut at line breaks: what the model sees is
bounded, and a quote must come from what it saw."""
DEFAULT_PER_SECTION = 2
"""Two questions per section: a hundred questions come from fifty sections, spread over
the documents, in fifty requests."""
DEFAULT_DEADLINE_SECONDS = 1800.0
"""Half an hour: a few hundred questions at a few seconds per request."""
REQUEST_TIMEOUT_SECONDS = 120.0
"""One attempt's timeout; a long section on a busy deployment can take a minute."""
MAX_FAILED_IN_A_ROW = 3
"""Requests that fail one after another (after the client's retries) before giving up."""
KINDS = frozenset({"fact", "procedure", "table", "definition", "command"})
"""The `kind` labels the model may give; anything else is left out."""
_FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*)\n\s*```\s*$", re.DOTALL)
"""A JSON object wrapped in a code fence, as models without a JSON mode often send."""

SYSTEM_PROMPT = """\
You write test questions for a search system over documentation. You are given one \
section of a document. Write questions a reader might really ask whose answer is in \
the section, and for each question copy the passage of the section that answers it.

Rules:
- The quote is copied from the section exactly, character for character: whole \
sentences, a list item, a table row or a command, long enough to hold the whole answer. \
Do not paraphrase, shorten, translate or correct it, and do not quote the heading.
- Ask the way someone who has not read the section would: do not repeat the quote's \
wording in the question.
- Each question has a different answer.
- kind is one of: fact, procedure, table, definition, command.

Answer with a JSON object only, no other text:
{"questions": [{"question": "...", "quote": "...", "kind": "fact"}]}"""


class Rejection(Enum):
    """Why a question the model wrote was not kept (or a reply not read)."""

    UNREADABLE = "reply was not the JSON asked for"
    EMPTY_QUESTION = "empty question"
    SHORT_QUOTE = f"quote missing or under {MIN_QUOTE_CHARACTERS} characters"
    INVENTED = "quote not in the document (invented)"
    OUTSIDE = "quote from another section"
    HEADING = "quote is the heading"
    AMBIGUOUS = "quote occurs more than once in the document"
    TRIVIAL = "question contains its quote"
    DUPLICATE = "duplicate question or answer"
    EXTRA = "more questions than asked for"
    FAILED = "request failed"
    FILTERED = "refused by the service's content filter"


@dataclass(frozen=True, slots=True)
class Section:
    """A heading's own text (up to the next heading of any depth), or the text before the
    first heading: what one request shows the model."""

    document: str
    start: int
    end: int
    """Past the last character shown to the model."""
    heading_end: int
    """Where the heading line ends (`start` for the text before any heading)."""
    path: tuple[str, ...]
    """The heading path, title first."""


@dataclass(frozen=True, slots=True)
class GeneratedQuestion:
    """A kept question: its reference is a span of the document's source."""

    question: str
    document: str
    """The document's name in the folder."""
    start: int
    """Code-point offset of the quote's first character in the document's source."""
    end: int
    answer: str
    """`source[start:end]`: the passage as the document has it, not as the model quoted it."""
    kind: str
    """One of `KINDS`, or '' when the model gave none of them."""
    section: tuple[str, ...]
    """The heading path of the section it was asked about (for reading the file)."""

    def line(self) -> str:
        """The question file's JSON line (`load_questions` reads it)."""
        item: dict[str, Any] = {
            "question": self.question,
            "document": self.document,
            "answer": self.answer,
            "start": self.start,
            "end": self.end,
        }
        if self.kind:
            item["kind"] = self.kind
        item["section"] = " > ".join(self.section)
        return json.dumps(item, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class Request:
    """What to ask for, and how."""

    questions: int
    """How many questions to keep in all."""
    per_section: int = DEFAULT_PER_SECTION
    """Questions asked of one section (fewer for the last, to keep exactly `questions`)."""
    seed: int = 0
    """Picks the order of the documents and of each one's sections."""
    language: str | None = None
    """None: each question in its section's language."""
    deadline_seconds: float = DEFAULT_DEADLINE_SECONDS
    """No request is sent after this many seconds (one in flight may still finish)."""


@dataclass(slots=True)
class Outcome:
    """What a run kept, and what it rejected and why."""

    questions: list[GeneratedQuestion] = field(default_factory=list)
    rejected: Counter[Rejection] = field(default_factory=Counter)
    requests: int = 0
    """Requests sent (the client's retries of one count once)."""
    sections: int = 0
    """Sections eligible for questions, over all documents."""
    stopped: str | None = None
    """Why the run ended before it had all the questions asked for."""
    failure: str | None = None
    """Why the service could not be used any more (credentials, no server), if it could not."""


def sections_of(document: EvalDocument) -> list[Section]:
    """The document's sections with enough text to ask about, in document order."""
    outline = parse(document.text, document.format)
    tree = SectionTree.build(outline)
    source, end = outline.source, outline.content_end
    headings = outline.headings
    bounds: list[tuple[int, int, int, tuple[str, ...]]] = []
    first = headings[0].start if headings else end
    if first > outline.body_start:
        bounds.append((outline.body_start, outline.body_start, first, ()))
    for index, heading in enumerate(headings):
        stop = headings[index + 1].start if index + 1 < len(headings) else end
        path = tree.names(tree.chain_at(heading.start))
        bounds.append((heading.start, min(heading.end, stop), max(stop, heading.start), path))
    sections: list[Section] = []
    for start, heading_end, stop, path in bounds:
        if len(normal_form(source[heading_end:stop])) < MIN_SECTION_CHARACTERS:
            continue
        sections.extend(
            Section(document.name, first, last, heading, path)
            for first, heading, last in _windows(source, start, heading_end, stop)
        )
    return sections


def _windows(source: str, start: int, heading_end: int, stop: int) -> list[tuple[int, int, int]]:
    """(start, heading end, end) of each window of a section, cut at line breaks: a long
    section (a whole plain-text manual) is shown a window at a time."""
    windows: list[tuple[int, int, int]] = []
    while stop - start > MAX_SECTION_CHARACTERS:
        cut = source.rfind("\n", heading_end + 1, start + MAX_SECTION_CHARACTERS)
        shown = cut if cut > heading_end else start + MAX_SECTION_CHARACTERS
        windows.append((start, heading_end, shown))
        start = heading_end = shown
    windows.append((start, heading_end, stop))
    return windows


def plan(per_document: dict[str, list[Section]], seed: int) -> list[Section]:
    """Every section once, spread over the documents: a shuffled round over the documents,
    each taking its next section in a shuffled order. Same seed, same order."""
    chooser = random.Random(seed)
    names = sorted(per_document)
    chooser.shuffle(names)
    queues: list[list[Section]] = []
    for name in names:
        sections = list(per_document[name])
        chooser.shuffle(sections)
        queues.append(sections)
    order: list[Section] = []
    for depth in range(max((len(q) for q in queues), default=0)):
        order.extend(queue[depth] for queue in queues if depth < len(queue))
    return order


def user_prompt(section: Section, source: str, count: int, language: str | None) -> str:
    """One section, with where it is and how many questions to write."""
    where = " > ".join(section.path) or "(before the first heading)"
    tongue = (
        f"Write the questions in {language}; quotes stay exactly as the section has them."
        if language
        else "Write each question in the language the section is written in."
    )
    plural = "question" if count == 1 else "questions"
    return (
        f"Document: {section.document}\nSection: {where}\n"
        f"Write {count} {plural}. {tongue}\n\n"
        f"<section>\n{source[section.start : section.end]}\n</section>"
    )


def read_reply(text: str | None) -> list[dict[str, object]] | None:
    """The reply's question objects, or None when it is not the JSON asked for."""
    if text is None:
        return None
    fenced = _FENCE.match(text)
    try:
        data = json.loads(fenced.group(1) if fenced else text)
    except json.JSONDecodeError:
        return None
    items = data.get("questions") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return None
    return [item if isinstance(item, dict) else {} for item in items]


@dataclass(slots=True)
class _Ledger:
    """What has been kept so far, to find repeats."""

    spans: set[tuple[str, int, int]] = field(default_factory=set)
    questions: set[str] = field(default_factory=set)

    def holds(self, question: GeneratedQuestion) -> bool:
        """Whether its span or its question (normalized, any case) was kept already."""
        span = (question.document, question.start, question.end)
        return span in self.spans or _asked(question.question) in self.questions

    def add(self, question: GeneratedQuestion) -> None:
        """Remember a kept question."""
        self.spans.add((question.document, question.start, question.end))
        self.questions.add(_asked(question.question))


def _asked(question: str) -> str:
    return normal_form(question).casefold()


def review(
    item: Mapping[str, object],
    section: Section,
    document: EvalDocument,
    normal: NormalText,
    kept: _Ledger,
) -> GeneratedQuestion | Rejection:
    """Keep one question the model wrote, or say why not (`kept` is only read)."""
    question, quote, kind = item.get("question"), item.get("quote"), item.get("kind")
    if not isinstance(question, str) or not question.strip():
        return Rejection.EMPTY_QUESTION
    if not isinstance(quote, str) or len(normal_form(quote)) < MIN_QUOTE_CHARACTERS:
        return Rejection.SHORT_QUOTE
    found = occurrences(normal, quote)
    if not found:
        return Rejection.INVENTED
    inside = [(s, e) for s, e in found if section.start <= s and e <= section.end]
    if not inside:
        return Rejection.OUTSIDE
    if len(found) > 1:
        return Rejection.AMBIGUOUS
    start, end = inside[0]
    if end <= section.heading_end:
        return Rejection.HEADING
    if normal_form(quote).casefold() in _asked(question):
        return Rejection.TRIVIAL
    label = kind.strip().lower() if isinstance(kind, str) else ""
    candidate = GeneratedQuestion(
        question.strip(),
        document.name,
        start,
        end,
        document.source[start:end],
        label if label in KINDS else "",
        section.path,
    )
    return Rejection.DUPLICATE if kept.holds(candidate) else candidate


def generate(
    documents: dict[str, EvalDocument],
    model: ChatModel,
    request: Request,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> Outcome:
    """Ask section by section until `request.questions` are kept, the sections run out,
    the deadline passes or the service keeps failing."""
    per_document = {name: sections_of(doc) for name, doc in documents.items()}
    order = plan(per_document, request.seed)
    outcome = Outcome(sections=len(order))
    normals: dict[str, NormalText] = {}
    kept = _Ledger()
    deadline = clock() + request.deadline_seconds
    failed_in_a_row = 0
    for section in order:
        wanted = min(request.per_section, request.questions - len(outcome.questions))
        if wanted <= 0:
            break
        remaining = deadline - clock()
        if remaining <= 0:
            outcome.stopped = f"the deadline ({request.deadline_seconds:g} s) passed"
            break
        document = documents[section.document]
        prompt = user_prompt(section, document.source, wanted, request.language)
        outcome.requests += 1
        try:
            reply = model.complete(SYSTEM_PROMPT, prompt, min(REQUEST_TIMEOUT_SECONDS, remaining))
        except ChatError as error:
            outcome.failure = str(error)
            outcome.stopped = "the chat service could not be used"
            break
        except ChatRequestFailed as failure:
            outcome.rejected[Rejection.FILTERED if failure.filtered else Rejection.FAILED] += 1
            failed_in_a_row = 0 if failure.filtered else failed_in_a_row + 1
            if failed_in_a_row >= MAX_FAILED_IN_A_ROW:
                outcome.stopped = f"{failed_in_a_row} requests in a row failed ({failure})"
                break
            continue
        failed_in_a_row = 0
        items = read_reply(reply)
        if items is None:
            outcome.rejected[Rejection.UNREADABLE] += 1
            continue
        if document.name not in normals:
            normals[document.name] = normalize(document.source)
        taken = 0
        for item in items:
            if taken == wanted:
                outcome.rejected[Rejection.EXTRA] += 1
                continue
            verdict = review(item, section, document, normals[document.name], kept)
            if isinstance(verdict, Rejection):
                outcome.rejected[verdict] += 1
            else:
                kept.add(verdict)
                outcome.questions.append(verdict)
                taken += 1
    else:
        if len(outcome.questions) < request.questions:
            outcome.stopped = f"every one of the {len(order)} sections was asked"
    return outcome


def summary(outcome: Outcome, request: Request, description: str) -> list[str]:
    """The lines printed at the end of a run."""
    rejected = sum(outcome.rejected.values())
    lines = [
        f"{len(outcome.questions)} of {request.questions} questions kept, {rejected} "
        f"rejected, from {outcome.requests} requests to {description} "
        f"({outcome.sections} sections to choose from)"
    ]
    lines += [
        f"  {count:>4} {reason.value}"
        for reason, count in sorted(outcome.rejected.items(), key=lambda pair: -pair[1])
    ]
    if outcome.stopped is not None and len(outcome.questions) < request.questions:
        lines.append(f"stopped early: {outcome.stopped}")
    return lines


def build_parser() -> argparse.ArgumentParser:
    """The `generate` command line."""
    parser = OneLineParser(
        prog="python -m evaluation generate",
        description="Ask a chat model for questions about DOCS whose answers are quoted "
        "passages, check every quote against the document, and write the question file.",
    )
    parser.add_argument("docs", type=Path, help="folder of .md, .html and .txt documents")
    parser.add_argument("--questions", type=int, required=True, help="how many to keep in all")
    parser.add_argument(
        "--per-section",
        type=int,
        default=DEFAULT_PER_SECTION,
        help="questions asked of each section (sections are spread over the documents)",
    )
    parser.add_argument("--seed", type=int, default=0, help="which sections, in which order")
    parser.add_argument(
        "--language", default=None, help="language of the questions (default: the section's)"
    )
    parser.add_argument(
        "--out", type=Path, default=Path("questions.jsonl"), help="the question file to write"
    )
    parser.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    parser.add_argument("--provider", choices=CHAT_PROVIDERS, default=None)
    parser.add_argument("--deployment", default=None, help="Azure OpenAI chat deployment")
    parser.add_argument("--model", default=None, help="model name (OpenAI-compatible servers)")
    parser.add_argument(
        "--max-retries",
        type=int,
        default=DEFAULT_MAX_RETRIES,
        help="the openai client's retries of a request after a 429, a 5xx or a timeout",
    )
    parser.add_argument(
        "--deadline",
        type=float,
        default=DEFAULT_DEADLINE_SECONDS,
        help="seconds after which no new request is sent",
    )
    return parser


def _usage_problem(arguments: argparse.Namespace) -> str | None:
    if arguments.questions < 1:
        return f"--questions must be at least 1 (got {arguments.questions})"
    if arguments.per_section < 1:
        return f"--per-section must be at least 1 (got {arguments.per_section})"
    if arguments.max_retries < 0:
        return f"--max-retries must not be negative (got {arguments.max_retries})"
    if arguments.deadline <= 0:
        return f"--deadline must be a positive number of seconds (got {arguments.deadline:g})"
    if arguments.out.exists() and not arguments.force:
        return f"{arguments.out} exists; pass --force to overwrite it or choose another --out"
    return None


def write_questions(path: Path, questions: Iterable[GeneratedQuestion]) -> None:
    """The question file, one JSON line per question."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(q.line() + "\n" for q in questions), encoding="utf-8")


def main(argv: Sequence[str]) -> int:
    """Generate, print the summary, write the file; exit 1 if nothing could be kept."""
    arguments = build_parser().parse_args(list(argv))
    problem = _usage_problem(arguments)
    try:
        if problem is not None:
            raise ChatSettingsError(problem)
        documents = load_documents(arguments.docs)
        settings = load_chat_settings(
            os.environ,
            provider=arguments.provider,
            deployment=arguments.deployment,
            model=arguments.model,
            max_retries=arguments.max_retries,
        )
    except (DocumentError, ChatSettingsError) as error:
        print(f"python -m evaluation generate: {error}", file=sys.stderr)
        return USAGE_ERROR
    request = Request(
        arguments.questions,
        arguments.per_section,
        arguments.seed,
        arguments.language,
        arguments.deadline,
    )
    model = build_chat_model(settings)
    try:
        outcome = generate(documents, model, request)
    finally:
        model.close()
    for line in summary(outcome, request, model.description):
        print(line, file=sys.stderr)
    if outcome.failure is not None:
        print(f"python -m evaluation generate: {outcome.failure}", file=sys.stderr)
    if not outcome.questions:
        print(
            "python -m evaluation generate: no usable question was generated, so nothing "
            f"was written (see the reasons above; {model.description})",
            file=sys.stderr,
        )
        return NOTHING_GENERATED
    write_questions(arguments.out, outcome.questions)
    print(f"Wrote {len(outcome.questions)} questions to {arguments.out}.")
    return NOTHING_GENERATED if outcome.failure is not None else 0
