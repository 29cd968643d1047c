#!/usr/bin/env bash
# Set everything up, then run the skill's whole pipeline on the sample documents
# (or on the files given) exactly as the endpoint would, and print the response.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
if (($#)); then
  exec .venv/bin/python -m skills "$@"
fi
exec .venv/bin/python -m skills samples/concepts-network.md samples/git-stash.html
