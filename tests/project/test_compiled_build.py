"""The mypyc build of the hot path (`scripts/build_compiled.sh`, issue 40) changes nothing
but speed: with a build in place, its chunks equal the pure-Python modules' on real
documents, and a build older than the sources fails here instead of running stale code.

Without a build (a fresh clone, this suite's default) the pure modules run and the
build's checks skip; `bench.pure_python`, which the comparison needs, is checked either way.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from tests.paths import FIXTURES, ROOT, SHARED

if TYPE_CHECKING:
    from pathlib import Path

CHUNKING = ROOT / "chunking"
STAMP = ROOT / "build" / "mypyc-sources.sha256"
HOT_MODULES = ("chunking.plan.walk", "chunking.parse.markdown.outline", "chunking.pipeline")


def _compiled() -> list[Path]:
    return sorted(CHUNKING.rglob("*.so"))


needs_build = pytest.mark.skipif(
    not _compiled(), reason="no compiled build (scripts/build_compiled.sh)"
)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=900, check=False
    )


def _loaded_from(prelude: str) -> list[str]:
    imports = "; ".join(f"import {name}" for name in HOT_MODULES)
    files = ", ".join(f"{name}.__file__" for name in HOT_MODULES)
    done = _run("-c", f"{prelude}; {imports}; import numpy, pyromark; print({files})")
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_pure_python_loads_every_chunking_module_from_its_source() -> None:
    files = _loaded_from("import bench.pure_python as p; p.sources_only()")
    assert files
    assert all(name.endswith(".py") for name in files), files


def test_pure_python_refuses_a_missing_module_in_one_line() -> None:
    done = _run("-m", "bench.pure_python")
    assert done.returncode == 2
    assert done.stderr.startswith("usage: python -m bench.pure_python MODULE")


def test_build_script_refuses_an_unknown_argument() -> None:
    done = subprocess.run(
        [str(ROOT / "scripts" / "build_compiled.sh"), "--bogus"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == "usage: scripts/build_compiled.sh [--clean]"


def test_build_script_without_a_c_compiler_builds_nothing_and_says_why() -> None:
    before = _compiled()
    done = subprocess.run(
        [str(ROOT / "scripts" / "build_compiled.sh")],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "CC": "/nonexistent/cc"},
    )
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "no C compiler (/nonexistent/cc); nothing built, the pure-Python modules run as before"
    )
    assert _compiled() == before


@needs_build
def test_compiled_build_is_as_new_as_the_sources() -> None:
    assert STAMP.is_file(), "a compiled build without its stamp: rerun scripts/build_compiled.sh"
    recorded = {}
    for line in STAMP.read_text().splitlines():
        digest, path = line.split(maxsplit=1)
        recorded[path] = digest
    current = {
        str(path.relative_to(ROOT)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(CHUNKING.rglob("*.py"))
    }
    changed = sorted(set(recorded.items()) ^ set(current.items()))
    assert not changed, (
        f"chunking/ changed since the compiled build ({changed[0][0]}, ...): rerun "
        "scripts/build_compiled.sh, or remove the build with scripts/build_compiled.sh --clean"
    )


@needs_build
def test_compiled_modules_are_the_ones_imported() -> None:
    assert all(name.endswith(".so") for name in _loaded_from("pass"))


@needs_build
def test_compiled_build_chunks_like_the_pure_modules(tmp_path: Path) -> None:
    corpus = SHARED / "corpus"
    if (corpus / "md").is_dir() and (corpus / "html").is_dir():
        # Every 12th file: 66 markdown and 23 HTML documents of the real corpus.
        markdown, html = sorted(corpus.glob("md/**/*.md")), sorted(corpus.glob("html/**/*.html"))
        files = markdown[::12] + html[::12]
    else:
        files = sorted(FIXTURES.glob("markdown/**/*.md")) + sorted(FIXTURES.glob("html/**/*.html"))
    documents = tmp_path / "documents"
    for number, path in enumerate(files):
        (documents / f"{number:04d}").mkdir(parents=True)
        (documents / f"{number:04d}" / path.name).symlink_to(path)
    hashes = tmp_path / "pure.json"
    pure = _run("-m", "bench.pure_python", "bench.identical", str(documents), "--save", str(hashes))
    assert pure.returncode == 0, pure.stderr
    compiled = _run("-m", "bench.identical", str(documents), "--check", str(hashes))
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    assert compiled.stdout.splitlines()[-1] == "12 of 12 identical"
