#!/usr/bin/env bash
# Set up (the runtime and the developer tools) if needed, then lint, type-check and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh --dev
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
exec .venv/bin/python -m pytest "$@"
