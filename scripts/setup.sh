#!/usr/bin/env bash
# Create .venv (Python 3.11+) and install the app and its development tools.
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
# Debian packages some tests need (Java for PySpark's local mode, Chromium for the chunk
# map's browser tests): installed when missing
# and possible (root with apt-get); without them those tests skip and say why.
debian_package() {  # command package
  if ! command -v "$1" >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [[ $(id -u) == 0 ]]; then
    (apt-get install -y -qq "$2" >/dev/null 2>&1 \
      || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "$2" >/dev/null 2>&1; }) \
      || echo "setup: could not install $2; the tests that need $1 will skip" >&2
  fi
}
debian_package java openjdk-17-jre-headless
debian_package chromium chromium
if [[ ! -x .venv/bin/python ]]; then
  "$python" -m venv .venv
fi
stamp=.venv/.requirements-stamp
wanted=$(cat requirements.txt requirements-dev.txt requirements-spark.txt | sha256sum | cut -d' ' -f1)
if [[ ! -f $stamp || $(cat "$stamp") != "$wanted" ]]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
  # PySpark for skills.spark (tests/test_spark.py); Java comes from the machine.
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-spark.txt
  echo "$wanted" > "$stamp"
fi
# checkov (tests/test_infra_bicep.py) gets its own virtualenv: it pins packaging<24,
# which pytest 9 in .venv cannot share.
tools_stamp=.venv-tools/.requirements-stamp
tools_wanted=$(sha256sum requirements-checkov.txt | cut -d' ' -f1)
if [[ ! -f $tools_stamp || $(cat "$tools_stamp") != "$tools_wanted" ]]; then
  if [[ ! -x .venv-tools/bin/python ]]; then
    "$python" -m venv .venv-tools
  fi
  .venv-tools/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-checkov.txt
  echo "$tools_wanted" > "$tools_stamp"
fi
