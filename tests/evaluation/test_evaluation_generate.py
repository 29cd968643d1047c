"""Generated questions, without a server: sections, the sampling plan, the quote check
and the request loop, with a scripted model and a fake clock."""

from __future__ import annotations

import itertools
import json
import re
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.chat import ChatError, ChatRequestFailed, ChatSettingsError, load_chat_settings
from evaluation.documents import EvalDocument, load_documents
from evaluation.generate import (
    MAX_SECTION_CHARACTERS,
    MIN_QUOTE_CHARACTERS,
    GeneratedQuestion,
    Rejection,
    Request,
    Section,
    _Ledger,
    generate,
    plan,
    read_reply,
    review,
    sections_of,
    write_questions,
)
from evaluation.questions import load_questions
from evaluation.quotes import normal_form, normalize, occurrences
from testing.chat_stub import SECTION
from tests.paths import ROOT

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

SAMPLE_DOCS = ROOT / "samples" / "eval" / "docs"
GUIDE = """# Backup guide

Backups run every night at two o'clock. They keep thirty copies of every disk, and the
oldest copy is deleted first.

## Restore

To restore a file, open the console and pick the copy you want. Restores take about ten
minutes for a **small disk**. Large disks take longer, up to an hour.

## Limits

| item | limit |
| --- | --- |
| copies | 30 |
| disk size | 4 TB |

Backups run every night at two o'clock.
"""
PAGE = """<html><head><title>Quotas</title></head><body><h1>Quotas</h1>
<p>Each project may hold <b>five hundred</b> gigabytes of backups before older copies
are pruned by the nightly job.</p></body></html>"""


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, EvalDocument]:
    folder = tmp_path_factory.mktemp("docs")
    (folder / "guide.md").write_text(GUIDE, encoding="utf-8")
    (folder / "page.html").write_text(PAGE, encoding="utf-8")
    return load_documents(folder)


def section_named(documents: dict[str, EvalDocument], name: str, last: str) -> Section:
    return next(s for s in sections_of(documents[name]) if s.path and s.path[-1] == last)


def check(
    documents: dict[str, EvalDocument],
    section: Section,
    item: Mapping[str, object],
    kept: _Ledger | None = None,
) -> GeneratedQuestion | Rejection:
    document = documents[section.document]
    return review(item, section, document, normalize(document.source), kept or _Ledger())


def test_sections_are_each_headings_own_text_with_its_path(
    documents: dict[str, EvalDocument],
) -> None:
    sections = sections_of(documents["guide.md"])
    assert [s.path for s in sections] == [
        ("Backup guide",),
        ("Backup guide", "Restore"),
        ("Backup guide", "Limits"),
    ]
    source = documents["guide.md"].source
    assert source[sections[1].start : sections[1].heading_end] == "## Restore"
    assert source[sections[1].start : sections[1].end].rstrip().endswith("up to an hour.")
    assert [s.end for s in sections[:-1]] == [s.start for s in sections[1:]]
    html = sections_of(documents["page.html"])
    assert [s.path for s in html] == [("Quotas",)]


def test_long_sections_are_shown_in_windows_cut_at_line_breaks() -> None:
    text = "".join(f"Line {n} of a long plain text manual without headings.\n" for n in range(900))
    document = EvalDocument("manual.txt", text, "text", text)
    sections = sections_of(document)
    assert len(sections) > 1
    assert sections[0].start == 0
    assert sections[-1].end == len(text)
    for before, after in itertools.pairwise(sections):
        assert before.end == after.start
        assert text[before.end] == "\n"
    assert all(s.end - s.start <= MAX_SECTION_CHARACTERS for s in sections)


def test_a_good_quote_becomes_the_exact_source_span_despite_line_breaks_and_markup(
    documents: dict[str, EvalDocument],
) -> None:
    restore = section_named(documents, "guide.md", "Restore")
    # The model reflowed the line break and dropped the bold markers.
    quote = "Restores take about ten minutes for a small disk."
    kept = check(documents, restore, {"question": "How long is a restore?", "quote": quote})
    assert isinstance(kept, GeneratedQuestion)
    assert kept.answer == "Restores take about ten\nminutes for a **small disk**."
    assert GUIDE[kept.start : kept.end] == kept.answer
    assert kept.section == ("Backup guide", "Restore")
    assert kept.kind == ""
    html = section_named(documents, "page.html", "Quotas")
    quote = "Each project may hold five hundred gigabytes of backups"
    kept = check(documents, html, {"question": "Quota?", "quote": quote, "kind": "Fact"})
    assert isinstance(kept, GeneratedQuestion)
    assert kept.answer == quote
    assert kept.kind == "fact"


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        ({"question": " ", "quote": "To restore a file, open the console"}, "EMPTY_QUESTION"),
        ({"question": "q?"}, "SHORT_QUOTE"),
        ({"question": "q?", "quote": "open the console"}, "SHORT_QUOTE"),
        ({"question": "q?", "quote": "To restore a file, open the terminal"}, "INVENTED"),
        ({"question": "q?", "quote": "They keep thirty copies of every disk"}, "OUTSIDE"),
        ({"question": "q?", "quote": "Backups run every night at two o'clock."}, "AMBIGUOUS"),
        (
            {"question": "Is it true that to restore a file, open the console?",
             "quote": "To restore a file, open the console"},
            "TRIVIAL",
        ),
    ],
)  # fmt: skip
def test_bad_quotes_are_rejected_for_their_reason(
    documents: dict[str, EvalDocument], item: Mapping[str, object], reason: str
) -> None:
    section = section_named(documents, "guide.md", "Restore")
    if reason == "AMBIGUOUS":
        section = section_named(documents, "guide.md", "Limits")
    assert check(documents, section, item) is Rejection[reason]


def test_the_heading_alone_is_not_an_answer(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(
        "# A heading long enough to pass as a quote\n\n" + "Body text of the section. " * 5,
        encoding="utf-8",
    )
    documents = load_documents(tmp_path)
    (section,) = sections_of(documents["a.md"])
    item = {"question": "q?", "quote": "A heading long enough to pass as a quote"}
    assert check(documents, section, item) is Rejection.HEADING


def test_repeats_of_a_kept_span_or_question_are_duplicates(
    documents: dict[str, EvalDocument],
) -> None:
    restore = section_named(documents, "guide.md", "Restore")
    kept = _Ledger()
    first = {
        "question": "How long is a restore?",
        "quote": "Large disks take longer, up to an hour.",
    }
    verdict = check(documents, restore, first, kept)
    assert isinstance(verdict, GeneratedQuestion)
    assert check(documents, restore, first, kept) == verdict  # review only reads `kept`
    kept.add(verdict)
    again = {"question": "And big disks?", "quote": "Large disks take longer,  up to an hour."}
    assert check(documents, restore, again, kept) is Rejection.DUPLICATE
    same = {"question": "how long is a  restore?", "quote": "To restore a file, open the console"}
    assert check(documents, restore, same, kept) is Rejection.DUPLICATE


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_any_kept_quote_is_a_span_of_its_section_equal_to_the_quote(data: st.DataObject) -> None:
    """Quotes cut from a section (whitespace reflowed, markup dropped) or made up: what is
    kept is always inside its section and says what the quote says; a section's passage
    that occurs once, outside its heading, is always kept."""
    document = EvalDocument("guide.md", GUIDE, "markdown", GUIDE)
    section = data.draw(st.sampled_from(sections_of(document)))
    if data.draw(st.booleans()):
        start = data.draw(st.integers(section.start, section.end - 1))
        end = data.draw(st.integers(start + 1, section.end))
        quote = GUIDE[start:end]
        quote = re.sub(r"\s+", lambda _: data.draw(st.sampled_from([" ", "\n", "  "])), quote)
        if data.draw(st.booleans()):
            quote = quote.replace("*", "")
        cut = True
    else:
        quote = data.draw(st.text(alphabet="Backups run ev*ryn\n|', ", max_size=60))
        cut = False
    normal = normalize(GUIDE)
    verdict = review({"question": "?", "quote": quote}, section, document, normal, _Ledger())
    wanted = normal_form(quote)
    if isinstance(verdict, GeneratedQuestion):
        assert section.start <= verdict.start < verdict.end <= section.end
        assert verdict.answer == GUIDE[verdict.start : verdict.end]
        assert normal_form(verdict.answer) == wanted
        assert verdict.end > section.heading_end
    if cut and wanted:
        found = occurrences(normal, quote)
        assert found  # a passage of the document is always found
        keep = (
            len(wanted) >= MIN_QUOTE_CHARACTERS
            and len(found) == 1
            and found[0][1] > section.heading_end
        )
        assert isinstance(verdict, GeneratedQuestion) == keep, verdict


def test_replies_are_read_from_json_or_a_fenced_json_block() -> None:
    items = [{"question": "q", "quote": "x"}, "not an object"]
    assert read_reply(json.dumps({"questions": items})) == [items[0], {}]
    fenced = "```json\n" + json.dumps({"questions": items[:1]}) + "\n```"
    assert read_reply(fenced) == items[:1]
    for bad in (None, "", "Sure! Here are questions:", "[]", '{"questions": "none"}', "{"):
        assert read_reply(bad) is None


def test_the_plan_spreads_over_documents_and_is_the_same_for_the_same_seed() -> None:
    documents = load_documents(SAMPLE_DOCS)
    per_document = {name: sections_of(document) for name, document in documents.items()}
    order = plan(per_document, seed=7)
    assert order == plan(per_document, seed=7)
    assert order != plan(per_document, seed=8)
    every = [s for name in sorted(per_document) for s in per_document[name]]
    assert sorted(order, key=every.index) == every  # each section exactly once
    # The first round takes one section of every document.
    assert len({s.document for s in order[: len(documents)]}) == len(documents)


class ScriptedModel:
    """Answers each request with `reply(section text, count)`; raises what it returns."""

    description = "the scripted model"

    def __init__(self, reply: Callable[[str, int], str | Exception]) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    def complete(self, system: str, user: str, timeout: float) -> str | None:
        self.prompts.append(user)
        found = SECTION.search(user)
        assert found is not None
        count = int(re.search(r"Write (\d+) question", user).group(1))  # type: ignore[union-attr]
        answer = self.reply(found.group(1), count)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def close(self) -> None:
        """Nothing to close."""


def honest(text: str, count: int) -> str:
    lines = [line.strip() for line in text.splitlines() if len(line.strip()) >= 40]
    lines = [line for line in lines if line[0].isalnum()]
    # One more than asked: the surplus is counted, not kept.
    items = [{"question": f"Question {n} about {line[:12]}?", "quote": line}
             for n, line in enumerate(lines[: count + 1])]  # fmt: skip
    return json.dumps({"questions": items})


def test_the_loop_stops_at_the_number_asked_for_and_counts_the_surplus() -> None:
    documents = load_documents(SAMPLE_DOCS)
    model = ScriptedModel(honest)
    outcome = generate(documents, model, Request(questions=5, per_section=2, seed=1))
    assert len(outcome.questions) == 5
    assert outcome.requests == len(model.prompts)
    assert outcome.rejected[Rejection.EXTRA] >= 1
    assert "Write 2 questions." in model.prompts[0]
    assert outcome.stopped is None
    again = generate(documents, ScriptedModel(honest), Request(questions=5, per_section=2, seed=1))
    assert again.questions == outcome.questions
    assert "in the language the section is written in" in model.prompts[0]


def test_a_language_is_asked_for_when_given(documents: dict[str, EvalDocument]) -> None:
    model = ScriptedModel(honest)
    generate(documents, model, Request(questions=1, language="German"))
    assert "Write the questions in German" in model.prompts[0]


def test_failures_in_a_row_end_the_run_and_a_filtered_section_does_not_count() -> None:
    documents = load_documents(SAMPLE_DOCS)
    answers: list[str | Exception] = [
        ChatRequestFailed("filtered", filtered=True),
        ChatRequestFailed("busy"),
        ChatRequestFailed("busy"),
        ChatRequestFailed("busy"),
    ]
    model = ScriptedModel(lambda text, count: answers.pop(0) if answers else honest(text, count))
    outcome = generate(documents, model, Request(questions=3))
    assert outcome.questions == []
    assert outcome.rejected == {Rejection.FILTERED: 1, Rejection.FAILED: 3}
    assert outcome.stopped is not None
    assert "3 requests in a row failed" in outcome.stopped


def test_a_service_that_cannot_be_used_ends_the_run_and_keeps_what_was_kept() -> None:
    documents = load_documents(SAMPLE_DOCS)
    answers: list[Exception] = [ChatError("credentials refused")]
    model = ScriptedModel(lambda text, count: honest(text, count) if model.prompts[1:] == []
                          else answers.pop(0))  # fmt: skip
    outcome = generate(documents, model, Request(questions=10, per_section=1))
    assert len(outcome.questions) == 1
    assert outcome.failure == "credentials refused"


def test_no_request_is_sent_after_the_deadline() -> None:
    documents = load_documents(SAMPLE_DOCS)
    now = [0.0]

    def slow(text: str, count: int) -> str:
        now[0] += 40.0
        return honest(text, count)

    model = ScriptedModel(slow)
    request = Request(questions=50, per_section=1, deadline_seconds=100.0)
    outcome = generate(documents, model, request, clock=lambda: now[0])
    assert outcome.requests == 3  # sent at 0, 40 and 80 s
    assert outcome.stopped == "the deadline (100 s) passed"


def test_a_generated_file_loads_as_the_evaluation_question_file(tmp_path: Path) -> None:
    documents = load_documents(SAMPLE_DOCS)
    outcome = generate(documents, ScriptedModel(honest), Request(questions=20, seed=3))
    path = tmp_path / "q.jsonl"
    write_questions(path, outcome.questions)
    loaded = load_questions(path, documents)
    assert [(q.document, q.start, q.end) for q in loaded] == [
        (q.document, q.start, q.end) for q in outcome.questions
    ]
    assert {q.document.rsplit(".", 1)[1] for q in outcome.questions} >= {"md", "html"}


@pytest.mark.parametrize(
    ("source", "quote", "answer"),
    [
        ("See the [upgrade guide](https://x.test/a_(b)) before you start the upgrade.",
         "See the upgrade guide before you start the upgrade.",
         "See the [upgrade guide](https://x.test/a_(b)) before you start the upgrade."),
        ("Read the [manual][man] and then the ![logo](l.png) caption text here.",
         "the manual and then the logo caption text",
         "the [manual][man] and then the ![logo](l.png) caption text"),
        ("Run `git gc --aggressive` on   a **large**\nrepository only.",
         "Run git gc --aggressive on a large repository only.",
         "Run `git gc --aggressive` on   a **large**\nrepository only."),
        ("Options in [brackets] stay text: git hook run [--ignore-missing] name.",
         "git hook run [--ignore-missing] name",
         "git hook run [--ignore-missing] name"),
    ],
)  # fmt: skip
def test_quotes_match_across_markup_and_map_back_to_the_source(
    source: str, quote: str, answer: str
) -> None:
    (span,) = occurrences(normalize(source), quote)
    assert source[span[0] : span[1]] == answer
    # The model's quote with its markup kept matches the same span.
    (same,) = occurrences(normalize(source), answer)
    assert same == span
    assert occurrences(normalize(source), quote + " Then more.") == []


def test_the_chat_provider_follows_what_is_configured() -> None:
    azure = {"AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com", "AZURE_OPENAI_API_KEY": "k"}
    server = {"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"}
    chosen = load_chat_settings({**azure, "AZURE_OPENAI_CHAT_DEPLOYMENT": "chat"})
    assert (chosen.provider, chosen.model) == ("azure_openai", "chat")
    assert "k" not in repr(chosen)
    # An endpoint kept for the embeddings does not hide a configured chat server.
    chosen = load_chat_settings({**azure, **server}, model="llama")
    assert (chosen.provider, chosen.model) == ("openai", "llama")
    assert load_chat_settings({**azure, **server}, deployment="chat").provider == "azure_openai"
    with pytest.raises(ChatSettingsError, match="set AZURE_OPENAI_CHAT_DEPLOYMENT"):
        load_chat_settings(azure)
    with pytest.raises(ChatSettingsError, match="OPENAI_BASE_URL must start with https://"):
        load_chat_settings({"OPENAI_BASE_URL": "ftp://x"}, model="m")
    with pytest.raises(ChatSettingsError, match="--deployment must be a deployment name"):
        load_chat_settings(azure, deployment="a/b")
