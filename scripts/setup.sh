#!/usr/bin/env bash
# Create .venv (Python 3.11+) and install what is asked for:
#   scripts/setup.sh        the app's runtime and the offline model, to try the skill (./run.sh)
#   scripts/setup.sh --dev  that and the developer tools, PySpark, checkov and, as root with
#                           apt-get, Java and Chromium for the tests that need them (./test.sh)
# Each says what it installs before it starts; nothing is installed twice (stamp files).
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
dev=0
if [[ ${1:-} == --dev ]]; then dev=1; fi
pip_install() {
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "$@"
}
digest() { cat "$@" | sha256sum | cut -d' ' -f1; }

if [[ ! -x .venv/bin/python ]]; then
  "$python" -m venv .venv
fi
runtime_stamp=.venv/.runtime-stamp
runtime_wanted=$(digest requirements.txt requirements-local.txt)
dev_stamp=.venv/.requirements-stamp
dev_wanted=$(digest requirements.txt requirements-local.txt requirements-dev.txt requirements-spark.txt)
stamped() { [[ -f $1 && $(cat "$1") == "$2" ]]; }

if ((dev == 0)); then
  # The developer install holds everything the runtime one does.
  if ! stamped "$runtime_stamp" "$runtime_wanted" && ! stamped "$dev_stamp" "$dev_wanted"; then
    echo "setup: installing the skill's runtime and its offline embedding model into .venv" \
      "(requirements.txt, requirements-local.txt: about 370 MB installed, a minute or more)." \
      "./test.sh installs the developer tools." >&2
    # --no-compile: Python compiles the few modules a run imports when it imports them;
    # compiling all ~370 MB up front is a third of the install's CPU time.
    pip_install --no-compile -r requirements.txt -r requirements-local.txt
    echo "$runtime_wanted" > "$runtime_stamp"
  fi
  exit 0
fi

# Debian packages some tests need (Java for PySpark's local mode, Chromium for the chunk
# map's browser tests): installed when missing and possible (root with apt-get), and said
# so first; without them those tests skip and say why.
debian_package() {  # command package why
  if ! command -v "$1" >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [[ $(id -u) == 0 ]]; then
    echo "setup: apt-get install $2 ($3)" >&2
    (apt-get install -y -qq "$2" >/dev/null 2>&1 \
      || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "$2" >/dev/null 2>&1; }) \
      || echo "setup: could not install $2; the tests that need $1 will skip" >&2
  fi
}
debian_package java openjdk-17-jre-headless "Java for PySpark's tests"
debian_package chromium chromium "the chunk map's browser tests"
if ! stamped "$dev_stamp" "$dev_wanted"; then
  echo "setup: installing the developer tools into .venv (requirements-dev.txt:" \
    "ruff, mypy, pytest, hypothesis, onnx; requirements-spark.txt: PySpark, pandas, pyarrow;" \
    "~1.3 GB, several minutes cold)" >&2
  pip_install --upgrade pip
  pip_install -r requirements-dev.txt -r requirements-local.txt
  # PySpark for skills.search.spark (tests/search/test_spark.py); Java comes from the machine.
  pip_install -r requirements-spark.txt
  echo "$dev_wanted" > "$dev_stamp"
fi
# Azurite, the Azure Storage emulator the embedding cache's tests run against: the npm
# package pinned in testing/azurite/package-lock.json, installed into that folder (never
# globally) when node and npm are here; without them those tests skip and say why.
azurite_stamp=testing/azurite/node_modules/.setup-stamp
azurite_wanted=$(digest testing/azurite/package-lock.json)
if command -v npm >/dev/null 2>&1 && ! stamped "$azurite_stamp" "$azurite_wanted"; then
  echo "setup: installing Azurite into testing/azurite (npm ci: ~360 MB, a minute)" >&2
  (cd testing/azurite && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null) \
    && echo "$azurite_wanted" > "$azurite_stamp" \
    || echo "setup: npm ci in testing/azurite failed; the embedding cache's Azurite tests will skip" >&2
fi
# checkov (tests/infra/test_infra_bicep.py) gets its own virtualenv: it pins packaging<24,
# which pytest 9 in .venv cannot share.
tools_stamp=.venv-tools/.requirements-stamp
tools_wanted=$(digest requirements-checkov.txt)
if ! stamped "$tools_stamp" "$tools_wanted"; then
  echo "setup: installing checkov into .venv-tools (~290 MB, a minute or two)" >&2
  if [[ ! -x .venv-tools/bin/python ]]; then
    "$python" -m venv .venv-tools
  fi
  .venv-tools/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-checkov.txt
  echo "$tools_wanted" > "$tools_stamp"
fi
