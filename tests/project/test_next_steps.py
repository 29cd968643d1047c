"""Every command the README and getting-started show after `./run.sh` works in the venv
`./run.sh` makes, or refuses in one line that says what to install (issue 39, item 1).

The venv holds exactly what scripts/setup.sh installs (requirements.txt and
requirements-local.txt, resolved over this venv's metadata: tests/project/venvs.py), and
the commands run from a folder that looks like a clone, so no developer tool can hide a
missing runtime dependency. A command added to those pages without a check here fails
`test_every_documented_command_is_checked`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from typing import TYPE_CHECKING

import httpx
import pytest

from tests.paths import ROOT
from tests.project.venvs import make_venv, requirement_lines
from tests.servers import uvicorn_subprocess

if TYPE_CHECKING:
    from pathlib import Path

PAGES = ("README.md", "docs/guide/getting-started.md")
RUNTIME = ("requirements.txt", "requirements-local.txt")
"""What scripts/setup.sh installs for ./run.sh."""
COMMAND = re.compile(r"^(?:\.venv/bin/)?python -m \S+")
INLINE = re.compile(r"`((?:\.venv/bin/)?python -m [^`]+)`")

UVICORN = "python -m uvicorn function_app:api --host 127.0.0.1 --port 7071"
SKILL = "python -m skills README.md -i unit=characters -i maximumPageLength=1000"
CHUNK = "python -m chunking docs/guide/endpoint.md"
MAP = "python -m chunking.report samples/concepts-network.md -o map.html"
DEPLOY_RUN = "python -m infra.deploy run"
REPLAY = "python -m infra.replay samples/"
EVALUATION = (
    "python -m evaluation --sets samples/eval --sets ../shared/qa/conditionalqa "
    "--sets ../shared/qa/tatqa --embedding e5,minilm --retrieval vector,keyword,hybrid "
    "--baselines split-skill --limits 512/51/azureOpenAITokens,2000/500/characters"
)
DOC_SAMPLES = "python -m tests.project.doc_samples"
"""Writes getting-started's sample output: not run here (it rewrites the page); its
command runs in test_first_run.py, which fails when the page drifts from it."""
CHECKED = {UVICORN, SKILL, CHUNK, MAP, DEPLOY_RUN, REPLAY, EVALUATION, DOC_SAMPLES}
"""The documented commands this module runs, or names where they run
(test_every_documented_command_is_checked)."""
REFUSED = {
    DEPLOY_RUN: "not set: AZURE_SEARCH_ENDPOINT",
    EVALUATION: "pip install -r requirements-dev.txt",
}
"""Commands that cannot work after ./run.sh alone, and what their one line says."""


def documented_commands(page: str) -> list[str]:
    """The `python -m` commands of a page's bash blocks (continuations joined, comments cut)
    and of its inline code, each as `python -m ...`."""
    text = (ROOT / page).read_text(encoding="utf-8")
    found: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.DOTALL):
        for raw in block.replace("\\\n", " ").splitlines():
            line = raw.split(" # ", 1)[0].strip()
            if COMMAND.match(line):
                found.append(line)
    found += INLINE.findall(text)
    return [" ".join(command.removeprefix(".venv/bin/").split()) for command in found]


def test_every_documented_command_is_checked() -> None:
    shown = {command for page in PAGES for command in documented_commands(page)}
    assert shown == CHECKED


@pytest.fixture(scope="module")
def run_sh_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The venv ./run.sh makes: its python."""
    lines = [line for name in RUNTIME for line in requirement_lines(ROOT / name)]
    return make_venv(tmp_path_factory.mktemp("run-sh") / ".venv", lines)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder that looks like a clone (links to the project's files), so what a command
    writes (map.html, .eval-cache) lands there."""
    folder = tmp_path_factory.mktemp("clone")
    for entry in ROOT.iterdir():
        if not entry.name.startswith("."):
            (folder / entry.name).symlink_to(entry)
    return folder


def _environment() -> dict[str, str]:
    """This environment without PYTHONPATH and without settings the newcomer has not set."""
    prefixes = ("AZURE_", "EMBEDDING_", "CHUNK_", "OPENAI_", "SKILL_", "PYTHON", "VIRTUAL_ENV")
    return {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}


def _run(python: Path, command: str, cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), *shlex.split(command)[1:]],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env={**_environment(), **extra},
    )


@pytest.mark.integration
@pytest.mark.parametrize("command", sorted(REFUSED))
def test_a_command_that_needs_more_refuses_in_one_line(
    run_sh_venv: Path, clone: Path, command: str
) -> None:
    done = _run(run_sh_venv, command, clone)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert REFUSED[command] in line


@pytest.mark.integration
def test_the_server_answers_the_documented_requests(run_sh_venv: Path, clone: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    body = re.search(r"-d '(\{.*\})'", readme)
    assert body is not None
    environment = _environment()
    with uvicorn_subprocess(environment, python=run_sh_venv, cwd=clone) as (url, _):
        assert httpx.get(f"{url}/api/health", timeout=30).status_code == 200
        answer = httpx.post(f"{url}/api/chunk", content=body.group(1), timeout=120,
                            headers={"content-type": "application/json"})  # fmt: skip
    assert answer.status_code == 200, answer.text
    (value,) = answer.json()["values"]
    assert value["errors"] == []
    assert value["data"]["chunks"][0]["content"].startswith("# T")


@pytest.mark.integration
def test_the_commands_without_a_server_run(run_sh_venv: Path, clone: Path) -> None:
    skill = _run(run_sh_venv, SKILL, clone)
    assert skill.returncode == 0, skill.stderr
    (value,) = json.loads(skill.stdout)["values"]
    assert len(value["data"]["chunks"]) > 1
    assert all(len(chunk["embedding"]) == 384 for chunk in value["data"]["chunks"])

    chunks = _run(run_sh_venv, CHUNK, clone)
    assert chunks.returncode == 0, chunks.stderr
    assert len([json.loads(line) for line in chunks.stdout.splitlines()]) > 1

    chunk_map = _run(run_sh_venv, MAP, clone)
    assert chunk_map.returncode == 0, chunk_map.stderr
    assert (clone / "map.html").read_text(encoding="utf-8").lower().startswith("<!doctype html>")


@pytest.mark.integration
def test_the_replay_runs(run_sh_venv: Path, clone: Path) -> None:
    # Without embeddings: the embedding model already ran in this venv (SKILL above), and a
    # replay of the samples with it costs a minute of two shared cores.
    done = _run(run_sh_venv, REPLAY, clone, EMBEDDING_PROVIDER="none")
    assert done.returncode == 0, done.stderr
    assert "OK: the indexer pipeline would work" in done.stdout
