"""`python -m chunking --strategy binary`: the app's scorers from the environment (issue 16)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from testing.rerank_stub import RerankStub
from tests.paths import ROOT

if TYPE_CHECKING:
    from pathlib import Path

CATS = " ".join(f"The cat number {n} purrs on the warm mat." for n in range(12))
SHIPS = " ".join(f"A ship number {n} sails across the cold sea." for n in range(12))


def _run(path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("RERANK", "CROSS"))}
    return subprocess.run(
        [sys.executable, "-m", "chunking", *args, str(path)],
        cwd=ROOT,
        env={**environment, **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.fixture
def document(tmp_path: Path) -> Path:
    path = tmp_path / "topics.txt"
    path.write_text(f"{CATS} {SHIPS}\n", encoding="utf-8")
    return path


@pytest.mark.integration
def test_the_rerank_scorer_comes_from_the_app_settings(document: Path) -> None:
    with RerankStub(api_key="k") as stub:
        result = _run(
            document,
            *("--strategy", "binary", "--binary-scorer", "rerank", "--binary-candidates", "64"),
            *("--unit", "characters", "--max", "700", "--overlap", "0", "--no-title-prefix"),
            EMBEDDING_PROVIDER="none",
            RERANK_ENDPOINT=stub.endpoint,
            RERANK_API_KEY="k",
        )
        assert result.returncode == 0, result.stderr
        assert stub.requests
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["content"].split()[1] for r in records] == ["cat", "ship"]


def test_no_embedding_provider_is_an_error_that_says_so(document: Path) -> None:
    result = _run(
        document, "--strategy", "binary", "--unit", "characters", "--max", "700",
        EMBEDDING_PROVIDER="none",
    )  # fmt: skip
    assert result.returncode == 1
    assert "no embedding provider is configured (EMBEDDING_PROVIDER is none)" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "env", "named"),
    [
        (("--strategy", "binary", "--binary-candidates", "0"), {}, "binaryCandidates must be"),
        (("--binary-scorer", "rerank"), {}, "--binary-scorer only apply to strategy 'binary'"),
        (("--strategy", "binary"), {"RERANK_ENDPOINT": "ftp://x"}, "RERANK_ENDPOINT must start"),
    ],
)
def test_options_and_settings_that_do_not_fit_exit_2_naming_them(
    document: Path, args: tuple[str, ...], env: dict[str, str], named: str
) -> None:
    result = _run(document, *args, **env)
    assert result.returncode == 2
    assert named in result.stderr
