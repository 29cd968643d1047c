"""Smoke test of the speed benchmark: it runs and prints its tables (no time is asserted)."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

from bench.documents import load_corpus
from bench.peers import Peer
from bench.scale import shapes
from bench.speed import LIMITS, OURS, time_peer
from evaluation.baseline import length_function
from tests.paths import FIXTURES, ROOT

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

PROJECT = ROOT
QUICK_RUN = (
    sys.executable,
    "-m",
    "bench.speed",
    "--quick",
    "--files",
    "3",
    "--no-peers",
    "--rounds",
    "2",
)


def test_quick_run_prints_our_row_floors_and_ratios() -> None:
    result = subprocess.run(
        [*QUICK_RUN, "--corpus", str(FIXTURES)],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=True,
    )
    out = result.stdout
    assert out.count("| chunker | MB/s | chunks |") == 2, out
    assert "time ÷ ours |" in out
    assert out.count(f"| {OURS} |") == 2
    assert "| markdown-it-py block parse (`inline` rule off) |" in out
    assert "| BeautifulSoup(lxml) parse |" in out
    assert out.count("| floor | MB/s | our time ÷ floor |") == 2
    assert "## Goals (issue 19)" in out
    assert "| our outline, its embedded text (plain_outline) and one token pass of it |" in out
    assert "3 files" in out


def test_start_up_run_prints_both_units_and_what_they_load() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bench.speed", "--start-up", "--rounds", "1"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=True,
    )
    rows = [line for line in result.stdout.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| unit | CPU seconds (best of 1) | without our bytecode cached |")
    units = [row.split("|")[1].strip() for row in rows[2:]]
    assert units == ["characters", "azureOpenAITokens"]
    # Tokens mode loads tiktoken; the report names it (and not bs4, which markdown skips).
    assert "tiktoken" in rows[3]
    assert "bs4" not in result.stdout


def test_first_record_benchmark_prints_each_place_per_unit(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from bench import first_record

    assert first_record.main(["--corpus", str(FIXTURES), "--rounds", "1", "--records", "3"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    places = [tuple(cell.strip() for cell in row.split("|")[1:3]) for row in rows[2:]]
    assert places == [
        (unit, place)
        for unit in ("characters", "azureOpenAITokens")
        for place in ("fresh process, CPU", "new worker pool, wall", "replacement worker, wall")
    ]


def test_first_record_benchmark_without_markdown_says_so_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench import first_record

    assert first_record.main(["--corpus", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"python -m bench.first_record: no markdown file under {tmp_path}\n"
    )


def _missing_peer(*_args: object) -> object:
    raise ImportError("No module named 'not_a_chunker'")


def test_a_peer_that_cannot_be_imported_is_reported_unavailable() -> None:
    peer = Peer("missing", "markdown", structure_aware=True, build=_missing_peer)  # type: ignore[arg-type]
    documents = load_corpus(FIXTURES, "markdown", limit=1)
    timing = time_peer(peer, LIMITS["tokens"], FIXTURES, documents)
    assert timing.seconds is None
    assert timing.unavailable == "ImportError: No module named 'not_a_chunker'"


def test_endpoint_benchmark_runs_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    """A 2-second run: real uvicorn server, stub embedding service, no failed record."""
    from bench import endpoint

    # The fixtures, not ../shared/corpus: the test runs wherever the clone is.
    status = endpoint.main(
        ["--seconds", "2", "--parallelism", "2", "--records", "3", "--corpus", str(FIXTURES)]
    )
    printed = capsys.readouterr().out
    assert status == 0, printed
    assert "| records answered / failed |" in printed
    assert "| quota used |" in printed
    assert "no log lines" not in printed


def test_soak_runs_and_answers_every_record(capsys: pytest.CaptureFixture[str]) -> None:
    """A short soak runs and answers every record it sends. Its latency and health goals
    depend on how busy the machine is, so they are `bench.soak`'s report, not asserted."""
    from bench import endpoint

    endpoint.main(
        ["--soak", "--seconds", "4", "--clients", "3", "--deadline", "5", "--corpus", str(FIXTURES)]
    )
    printed = capsys.readouterr().out
    assert "| records sent / answered |" in printed
    assert "records sent = records answered: met" in printed, printed
    assert "| tiny requests p50 / p99 |" in printed


def test_worker_overhead_benchmark_prints_its_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    from bench import workers

    assert workers.main(["--corpus", str(FIXTURES), "--rounds", "1", "--batch", "2"]) == 0
    printed = capsys.readouterr().out
    assert "worker overhead: at most" in printed
    assert "1 record(s) per request" in printed


def test_rounds_keep_each_chunkers_fastest_time_and_first_chunks() -> None:
    from bench.speed import Timing, _keep_faster

    best = Timing("x", seconds=2.0, wall_seconds=2.1, chunks=["a"])
    _keep_faster(best, Timing("x", seconds=1.5, wall_seconds=1.6, chunks=["b"]))
    _keep_faster(best, Timing("x", seconds=1.8, wall_seconds=1.7))
    _keep_faster(best, Timing("x", unavailable="gone"))
    assert (best.seconds, best.wall_seconds, best.chunks) == (1.5, 1.6, ["a"])


def test_shapes_table_runs_every_row_at_tiny_sizes(tmp_path: Path) -> None:
    """Every input shape of issue 13, at 2 K and 4 K characters, each in a fresh process."""
    realworld = tmp_path / "realworld"
    realworld.mkdir()
    (realworld / "zh-page.md").write_text(
        "# 标题\n\n这是一个句子。这是另一个句子！\n" * 20, encoding="utf-8"
    )
    (realworld / "ja-page.md").write_text(
        "# 見出し\n\nこれは文です。次の文？\n" * 20, encoding="utf-8"
    )
    result = subprocess.run(
        [
            sys.executable, "-m", "bench.scale", "--shapes-only", "--shape-sizes", "2000,4000",
            "--repeat", "1", "--corpus", str(FIXTURES), "--realworld", str(realworld),
        ],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=True,
    )  # fmt: skip
    out = result.stdout
    assert "| shape | s / M chars at 2 K | s / M chars at 4 K | worst ÷ 2 K |" in out, out
    rows = [row for row in shapes(FIXTURES, realworld) if not isinstance(row, str)]
    assert len(rows) >= 13
    for row in rows:
        line = next(line for line in out.splitlines() if line.startswith(f"| {row.name} |"))
        assert line.endswith(("| met |", "| MISSED |")), line


def test_library_benchmark_prints_throughput_per_core(capsys: pytest.CaptureFixture[str]) -> None:
    from bench import library

    corpus = FIXTURES
    assert library.main(["--corpus", str(corpus), "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith(("| markdown", "| html"))]
    assert len(rows) == 2
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert int(cells[1]) > 0
        assert float(cells[2]) > 0
        assert float(cells[5]) > 0


def test_encoder_option_counts_ours_peers_and_floors_with_that_encoding() -> None:
    """Issue 17, item 4: `--encoder o200k_base` sizes chunks for GPT-4o, and the peers
    count with tiktoken's own o200k_base."""
    result = subprocess.run(
        [*QUICK_RUN, "--corpus", str(FIXTURES), "--encoder", "o200k_base", "--only", "markdown"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "tokens of o200k_base" in result.stdout
    assert result.stdout.count(f"| {OURS} |") == 1
    # o200k keeps a word's contraction in one token; cl100k splits it off.
    assert length_function(LIMITS["tokens"], "o200k_base")("it's") == 1
    assert length_function(LIMITS["tokens"], "cl100k_base")("it's") == 2


def test_goals_judge_each_peer_by_issue_19s_ratios() -> None:
    from bench.floors import FLOORS
    from bench.peers import PEERS
    from bench.speed import CorpusReport, Timing, goals

    def peer(prefix: str, kind: str, seconds: float) -> Timing:
        found = next(p for p in PEERS if p.name.startswith(prefix) and p.kind == kind)
        return Timing(found.name, seconds, peer=found)

    outline = next(f for f in FLOORS if f.kind == "markdown" and f.outline)
    markdown = CorpusReport(
        "markdown",
        3,
        1.0,
        Timing("ours", 1.0),
        [peer("LangChain", "markdown", 1.9), peer("Chonkie", "markdown", 1.1)],
        [Timing(outline.name, 0.4)],
    )
    html = CorpusReport("html", 3, 1.0, Timing("ours", 1.0), [peer("Chonkie", "html", 3.2)], [])
    tokens = "\n".join(goals([markdown, html], LIMITS["tokens"]))
    assert "1.90× (goal ≥ 2.0×): MISSED" in tokens
    assert "1.10× (goal ≥ 1.0×): met" in tokens
    assert "3.20× (goal ≥ 3.0×): met" in tokens
    characters = "\n".join(goals([markdown], LIMITS["characters"]))
    assert "our outline parse = 2.50× (goal ≤ 2.0×): MISSED" in characters
    assert "LangChain" in characters
    assert "ahead of every structure-aware peer): met" in characters
    assert "Chonkie" in characters
    assert "1.10× (reported)" in characters
