"""`python -m evaluation generate` against a chat stub on 127.0.0.1 through the real openai
client: scripted good and bad answers are counted, the file is the evaluation's."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import pytest

from evaluation.__main__ import main
from evaluation.chat import build_chat_model, load_chat_settings
from evaluation.documents import load_documents
from evaluation.generate import Request, generate
from evaluation.questions import load_questions
from testing.chat_stub import ChatStub, asked_count, shown_section
from testing.leaks import leaks
from testing.openai_stub import OpenAIStub, Reply
from tests.paths import ROOT

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration

SAMPLE_DOCS = ROOT / "samples" / "eval" / "docs"
KEY = "chat-key"
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

Snapshots are kept apart from backups and are not counted in these limits.
"""
PAGE = """<html><head><title>Quotas</title></head><body><h1>Quotas</h1>
<p>Each project may hold <b>five hundred</b> gigabytes of backups before older copies
are pruned by the nightly job.</p></body></html>"""
ENVIRONMENT = (
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_CHAT_DEPLOYMENT",
    "AZURE_OPENAI_API_VERSION",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_CHAT_MODEL",
)


def questions(*items: dict[str, str]) -> str:
    return json.dumps({"questions": list(items)})


def scripted(body: dict[str, Any]) -> str:
    """A model that is right, wrong and unreadable, by section."""
    text = shown_section(body)
    if text.startswith("# Backup guide"):
        return questions(
            # Line break reflowed to a space: still the passage.
            {"question": "How many copies are kept?", "kind": "fact",
             "quote": "They keep thirty copies of every disk, and the oldest copy is deleted"},
            {"question": "When is the weekly backup?",
             "quote": "A full backup runs every Sunday at midnight."},  # invented
        )  # fmt: skip
    if text.startswith("## Restore"):
        return questions(
            {"question": "Do snapshots count?",  # the Limits section's text
             "quote": "Snapshots are kept apart from backups"},
            {"question": "Do restores take about ten minutes for a small disk?",
             "quote": "Restores take about ten minutes for a small disk"},  # trivial
        )  # fmt: skip
    if text.startswith("## Limits"):
        return '{"questions": [{"question": "How big can a disk be?", "quote": '  # cut off
    return questions(
        {"question": "How much backup space does a project get?", "kind": "table",
         "quote": "Each project may hold five hundred gigabytes of backups"},
        {"question": "How much backup space does a project get?",  # the same question again
         "quote": "are pruned by the nightly job."},
    )  # fmt: skip


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "guide.md").write_text(GUIDE, encoding="utf-8")
    (folder / "page.html").write_text(PAGE, encoding="utf-8")
    return folder


@pytest.fixture
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def use_openai(monkeypatch: pytest.MonkeyPatch, stub: ChatStub) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def test_good_quotes_are_kept_and_every_bad_one_is_rejected_and_counted(
    docs: Path,
    tmp_path: Path,
    clean_environment: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "generated.jsonl"
    with ChatStub(api_key=KEY, responder=scripted) as stub:
        use_openai(clean_environment, stub)
        stub.say(Reply(status=429, retry_after_ms=5))  # then the retry succeeds
        arguments = ["generate", str(docs), "--questions", "10", "--model", "small-chat"]
        assert main([*arguments, "--out", str(out)]) == 0
        statuses = stub.statuses
        bodies = stub.requests
    captured = capsys.readouterr()
    assert statuses[:2] == [429, 200]
    assert statuses.count(200) == 4  # four sections, each asked once
    assert all(body["model"] == "small-chat" for body in bodies)
    assert all(body["response_format"] == {"type": "json_object"} for body in bodies)
    assert all(asked_count(body) == 2 for body in bodies)
    report = captured.err
    assert "2 of 10 questions kept, 5 rejected, from 4 requests" in report
    for count, reason in [
        (1, "quote not in the document (invented)"),
        (1, "quote from another section"),
        (1, "question contains its quote"),
        (1, "reply was not the JSON asked for"),
        (1, "duplicate question or answer"),
    ]:
        assert re.search(rf"^ +{count} {re.escape(reason)}$", report, re.MULTILINE), reason
    assert "stopped early: every one of the 4 sections was asked" in report
    assert f"Wrote 2 questions to {out}." in captured.out
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    lines = sorted(written, key=lambda line: str(line["document"]))
    assert lines == [
        {
            "question": "How many copies are kept?",
            "document": "guide.md",
            "answer": "They keep thirty copies of every disk, and the\noldest copy is deleted",
            "start": GUIDE.index("They keep"),
            "end": GUIDE.index(" first."),
            "kind": "fact",
            "section": "Backup guide",
        },
        {
            "question": "How much backup space does a project get?",
            "document": "page.html",
            "answer": "Each project may hold five hundred gigabytes of backups",
            "start": lines[1]["start"],
            "end": lines[1]["start"] + 55,
            "kind": "table",
            "section": "Quotas",
        },
    ]
    documents = load_documents(docs)
    loaded = load_questions(out, documents)
    assert [documents[q.document].source[q.start : q.end] for q in loaded] == [
        line["answer"] for line in written
    ]


def test_a_model_that_only_invents_quotes_writes_nothing_and_exits_1(
    docs: Path,
    tmp_path: Path,
    clean_environment: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "generated.jsonl"
    invented = questions({"question": "What is the meaning of it all?",
                          "quote": "The answer is forty-two, as everybody knows."})  # fmt: skip
    with ChatStub(responder=lambda body: invented) as stub:
        use_openai(clean_environment, stub)
        code = main(["generate", str(docs), "--questions", "3", "--per-section", "1",
                     "--model", "m", "--out", str(out)])  # fmt: skip
    error = capsys.readouterr().err
    assert code == 1
    assert not out.exists()
    assert "0 of 3 questions kept, 4 rejected" in error
    assert "4 quote not in the document (invented)" in error
    assert "no usable question was generated, so nothing was written" in error


def test_azure_deployment_with_a_key_and_a_server_without_json_mode(
    docs: Path,
    tmp_path: Path,
    clean_environment: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "generated.jsonl"
    with ChatStub(api_key=KEY, json_mode=False) as stub:
        for name, value in {
            "AZURE_OPENAI_ENDPOINT": stub.azure_endpoint,
            "AZURE_OPENAI_API_KEY": KEY,
            "AZURE_OPENAI_CHAT_DEPLOYMENT": "chat",
        }.items():
            clean_environment.setenv(name, value)
        code = main(["generate", str(docs), "--questions", "2", "--out", str(out)])
        exchanges = stub.exchanges
    assert code == 0, capsys.readouterr().err
    assert {e.path for e in exchanges} == {"/openai/deployments/chat/chat/completions"}
    assert all(e.query["api-version"] == ["2024-10-21"] for e in exchanges)
    # The server refused response_format once; after that the client stopped sending it.
    assert [e.status for e in exchanges][:2] == [400, 200]
    assert "response_format" in exchanges[0].body
    assert all("response_format" not in e.body for e in exchanges[1:])
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2


def test_refused_credentials_and_an_unreachable_server_are_said_plainly(
    docs: Path,
    tmp_path: Path,
    clean_environment: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "generated.jsonl"
    with ChatStub(api_key="another key") as stub:
        clean_environment.setenv("AZURE_OPENAI_ENDPOINT", stub.azure_endpoint)
        clean_environment.setenv("AZURE_OPENAI_API_KEY", KEY)
        arguments = ["generate", str(docs), "--questions", "2", "--deployment", "chat"]
        assert main([*arguments, "--out", str(out)]) == 1
        assert stub.statuses == [401]  # not retried
        port = stub.port
    error = capsys.readouterr().err
    assert (
        "the chat service refused the credentials (HTTP 401); check AZURE_OPENAI_API_KEY" in error
    )
    clean_environment.setenv("AZURE_OPENAI_ENDPOINT", f"http://127.0.0.1:{port}")
    clean_environment.setenv("AZURE_OPENAI_CHAT_DEPLOYMENT", "chat")
    arguments = ["generate", str(docs), "--questions", "2", "--max-retries", "0"]
    assert main([*arguments, "--out", str(out)]) == 1
    unreachable = capsys.readouterr().err
    assert f"cannot reach the chat service at http://127.0.0.1:{port}" in unreachable
    assert not out.exists()
    for message in (error, unreachable):
        assert leaks(message, echoed=str(docs)) == []


def test_a_service_that_keeps_failing_is_given_up_on_after_three_requests(
    docs: Path,
    tmp_path: Path,
    clean_environment: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with ChatStub() as stub:
        use_openai(clean_environment, stub)
        stub.default = Reply(status=503, retry_after_ms=1)
        code = main(["generate", str(docs), "--questions", "2", "--model", "m",
                     "--out", str(tmp_path / "q.jsonl")])  # fmt: skip
        statuses = stub.statuses
    error = capsys.readouterr().err
    assert code == 1
    assert statuses == [503] * 15  # three requests, each tried five times by the client
    assert "3 request failed" in error
    assert "3 requests in a row failed (the chat service kept failing (HTTP 503)" in error


def test_settings_and_options_are_checked_before_anything_is_sent(
    docs: Path,
    tmp_path: Path,
    clean_environment: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["generate", str(docs), "--questions", "2"]) == 2
    error = capsys.readouterr().err
    assert "no chat model configured" in error
    assert "AZURE_OPENAI_CHAT_DEPLOYMENT" in error
    clean_environment.setenv("AZURE_OPENAI_ENDPOINT", "https://example.openai.azure.com")
    assert main(["generate", str(docs), "--questions", "2", "--provider", "azure_openai"]) == 2
    assert "set AZURE_OPENAI_CHAT_DEPLOYMENT or --deployment" in capsys.readouterr().err
    existing = tmp_path / "mine.jsonl"
    existing.write_text("hand-written\n", encoding="utf-8")
    arguments = ["generate", str(docs), "--questions", "2", "--deployment", "chat"]
    assert main([*arguments, "--out", str(existing)]) == 2
    assert "exists; pass --force" in capsys.readouterr().err
    assert existing.read_text(encoding="utf-8") == "hand-written\n"
    assert main([*arguments, "--questions", "0"]) == 2
    assert "--questions must be at least 1" in capsys.readouterr().err


def test_generated_questions_run_through_the_evaluation_end_to_end(
    tmp_path: Path,
    clean_environment: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The sample documents, an honest model, then `python -m evaluation DOCS QUESTIONS`
    with the stub's deterministic embeddings."""
    out = tmp_path / "generated.jsonl"
    with ChatStub() as chat:
        use_openai(clean_environment, chat)
        arguments = ["generate", str(SAMPLE_DOCS), "--questions", "12", "--seed", "5"]
        assert main([*arguments, "--model", "m", "--out", str(out)]) == 0
    assert "12 of 12 questions kept" in capsys.readouterr().err
    documents = load_documents(SAMPLE_DOCS)
    loaded = load_questions(out, documents)
    assert len(loaded) == 12
    assert len({q.document for q in loaded}) >= 6  # spread over the documents
    dimensions = 16
    with OpenAIStub(dimensions=dimensions) as embeddings:
        clean_environment.setenv("OPENAI_BASE_URL", embeddings.base_url)
        clean_environment.setenv("EMBEDDING_DIMENSIONS", str(dimensions))
        clean_environment.setenv("EMBEDDING_MODEL", "text-embedding-3-small")
        code = main([
            str(SAMPLE_DOCS), str(out), "--max", "512", "--overlap", "0",
            "--baselines", "none", "--embedding", "openai",
            "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "results"), "--quiet",
        ])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    results = json.loads((tmp_path / "results" / "results.json").read_text(encoding="utf-8"))
    (setting,) = results["settings"]
    assert len(setting["perQuestion"]["complete@5"]) == 12


class StaticCredential:
    """A credential that hands out a fixed token."""

    def __init__(self) -> None:
        self.scopes: list[tuple[str, ...]] = []

    def get_token(self, *scopes: str, **options: object) -> object:
        from azure.core.credentials import AccessToken

        self.scopes.append(scopes)
        return AccessToken(KEY, int(time.time()) + 3600)


class NoCredential:
    """A credential as azure-identity's fails when nobody is signed in."""

    def get_token(self, *scopes: str, **options: object) -> object:
        from azure.core.exceptions import ClientAuthenticationError

        raise ClientAuthenticationError("DefaultAzureCredential failed to retrieve a token")


def test_without_a_key_azure_openai_is_called_with_an_entra_id_token(docs: Path) -> None:
    documents = load_documents(docs)
    with ChatStub(api_key=KEY) as stub:
        settings = load_chat_settings(
            {"AZURE_OPENAI_ENDPOINT": stub.azure_endpoint}, deployment="chat"
        )
        assert settings.provider == "azure_openai"
        assert settings.description.endswith("(Microsoft Entra ID)")
        credential = StaticCredential()
        model = build_chat_model(settings, credential)
        try:
            outcome = generate(documents, model, Request(questions=1))
        finally:
            model.close()
        assert stub.exchanges[0].headers["authorization"] == f"Bearer {KEY}"
    assert len(outcome.questions) == 1
    assert credential.scopes[0] == ("https://cognitiveservices.azure.com/.default",)
    with ChatStub() as stub:
        settings = load_chat_settings(
            {"AZURE_OPENAI_ENDPOINT": stub.azure_endpoint}, deployment="chat"
        )
        model = build_chat_model(settings, NoCredential())
        try:
            outcome = generate(documents, model, Request(questions=1))
        finally:
            model.close()
        assert stub.exchanges == []
    assert outcome.questions == []
    assert outcome.failure is not None
    assert outcome.failure.startswith("no Microsoft Entra ID token for Azure OpenAI")
    assert leaks(outcome.failure) == []


def test_the_real_command_line_dispatches_generate(docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "generated.jsonl"
    with ChatStub() as stub:
        environment = {name: value for name, value in os.environ.items()
                       if name not in ENVIRONMENT}  # fmt: skip
        environment |= {"PYTHONPATH": str(ROOT), "OPENAI_BASE_URL": stub.base_url}
        done = subprocess.run(
            [sys.executable, "-m", "evaluation", "generate", str(docs), "--questions", "2",
             "--model", "m", "--out", str(out)],
            cwd=ROOT, env=environment, capture_output=True, text=True, check=False, timeout=60,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "2 of 2 questions kept" in done.stderr
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2
