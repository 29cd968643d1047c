#!/usr/bin/env bash
# Compile the markdown hot path with mypyc, in place: a C extension beside each module
# listed below, which Python then imports instead of the .py file. The .py files stay the
# source of truth; without a build (a fresh clone, no C compiler) they run as before.
#
#   scripts/build_compiled.sh           build (about 1 minute of CPU), for the Python that runs it
#   scripts/build_compiled.sh --clean   remove the build: the pure-Python modules run again
#
# PYTHON=/path/to/python picks the interpreter (default .venv/bin/python); the extensions
# only load in that CPython version on that platform (the Function app: Linux x86-64,
# CPython 3.11, docs/guide/deploy.md). A build records the hash of every chunking/ source
# in build/mypyc-sources.sha256: the test suite fails on a build older than the sources
# (tests/project/test_compiled_build.py), since a stale extension would run instead of an
# edited .py file.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-.venv/bin/python}
stamp=build/mypyc-sources.sha256
modules=(
  chunking/parse/markdown/pulldown_parser.py
  chunking/parse/markdown/outline.py
  chunking/parse/markdown/plain_markup.py
  chunking/parse/markdown/plain_text.py
  chunking/parse/markdown/blocks.py
  chunking/parse/markdown/docfx.py
  chunking/parse/markdown/mdx.py
  chunking/parse/markdown/pages.py
  chunking/outline/plain_outline.py
  chunking/outline/sections.py
  chunking/plan/walk.py
  chunking/plan/sentences.py
  chunking/plan/next_match.py
  chunking/plan/structure.py
  chunking/plan/core.py
  chunking/measure/token_spans.py
  chunking/offsets.py
  chunking/contextualize/prefix.py
  chunking/contextualize/continuations.py
  chunking/pipeline.py
)

clean() {
  find chunking -name '*.so' -delete
  rm -f ./*__mypyc.*.so "$stamp"
  rm -rf build/temp.* build/lib.* build/__native* build/chunking build/ops.txt build/setup.py
}

if [[ ${1:-} == --clean ]]; then
  clean
  echo "compiled build removed: chunking/ runs from its .py files"
  exit 0
fi
if (($#)); then
  echo "usage: scripts/build_compiled.sh [--clean]" >&2
  exit 2
fi
if ! "$python" -c "import mypyc" 2>/dev/null; then
  echo "no mypyc in $python (it comes with mypy: pip install -r requirements-dev.txt); nothing built" >&2
  exit 1
fi
# The compiler setuptools will call: $CC, or the one this Python was built with.
compiler=${CC:-$("$python" -c "import sysconfig; print((sysconfig.get_config_var('CC') or 'cc').split()[0])")}
if ! command -v "$compiler" >/dev/null; then
  echo "no C compiler ($compiler); nothing built, the pure-Python modules run as before" >&2
  exit 1
fi
# A half-written build must not shadow the sources: start from none, and remove what a
# failed compile left.
clean
mkdir -p build
if ! "$python" -m mypyc "${modules[@]}" >build/mypyc.log 2>&1; then
  clean
  echo "mypyc failed (build/mypyc.log has its output); nothing built, the pure-Python modules run as before" >&2
  exit 1
fi
find chunking -name '*.py' -print0 | sort -z | xargs -0 sha256sum >"$stamp"
echo "compiled ${#modules[@]} modules in place ($(find chunking -name '*.so' | wc -l) extensions); scripts/build_compiled.sh --clean removes them"
