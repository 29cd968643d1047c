#!/usr/bin/env bash
# Set up if needed, then lint, type-check and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
exec .venv/bin/python -m pytest "$@"
