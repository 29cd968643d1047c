#!/usr/bin/env bash
# Create .venv (Python 3.11+) and install the app and its development tools.
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
if [[ ! -x .venv/bin/python ]]; then
  "$python" -m venv .venv
fi
stamp=.venv/.requirements-stamp
wanted=$(cat requirements.txt requirements-dev.txt | sha256sum | cut -d' ' -f1)
if [[ ! -f $stamp || $(cat "$stamp") != "$wanted" ]]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
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
