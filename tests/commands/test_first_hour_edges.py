"""The smaller edges a newcomer meets (issue 39, item 9): a readable /api/health, a
"did you mean" for a misspelled flag or record input, a missing questions file called one."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import httpx
import pytest

from skills.skill.settings import Settings
from tests.processes import run_python

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

    from tests.conftest import LiveServers


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return run_python(*args, env={"EMBEDDING_PROVIDER": "none"})


@pytest.mark.integration
def test_health_is_indented_when_asked_for_pretty(live_servers: LiveServers) -> None:
    url = live_servers.start(Settings())
    plain = httpx.get(f"{url}/api/health", timeout=30)
    pretty = httpx.get(f"{url}/api/health?pretty", timeout=30)
    assert pretty.status_code == plain.status_code == 200
    assert "\n" not in plain.text
    assert pretty.text.startswith('{\n  "status": "')
    assert json.loads(pretty.text)["configuration"] == plain.json()["configuration"]


@pytest.mark.parametrize(
    ("command", "given", "meant"),
    [
        ("chunking", "--maxx", "--max"),
        ("chunking", "--overlpa=3", "--overlap"),
        ("chunking.report", "--stratgy=words", "--strategy"),
        ("skills", "--sumary", "--summary"),
        # Every other command too, a subcommand's flags included (fails before: argparse's
        # usage and no hint).
        ("evaluation", "--quikc", "--quick"),
        ("infra.deploy apply", "--dry-rn", "--dry-run"),
        ("infra.replay", "--recrusive", "--recursive"),
    ],
)
def test_a_misspelled_flag_gets_the_nearest_one(command: str, given: str, meant: str) -> None:
    output = ["-o", "-"] if command == "chunking.report" else []
    if command == "evaluation":
        output = ["samples/eval/questions.jsonl"]
    done = _run("-m", *command.split(), given, "samples/concepts-network.md", *output)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert f"did you mean {meant}?" in line


def test_a_misspelled_record_input_gets_the_nearest_one() -> None:
    done = _run("-m", "skills", "--compact", "-i", "maximumPagelength=300",
                "samples/concepts-network.md")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (value,) = json.loads(done.stdout)["values"]
    (warning,) = value["warnings"]
    assert "'maximumPagelength' (did you mean 'maximumPageLength'?)" in warning["message"]


def test_a_missing_questions_file_is_called_missing(tmp_path: Path) -> None:
    done = _run("-m", "evaluation", "samples/eval/docs", str(tmp_path / "questions.jsonl"))
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.endswith("questions.jsonl: no such questions file")
    assert "bad line" not in line
