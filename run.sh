#!/usr/bin/env bash
# Try the skill: install its runtime and the offline embedding model (not the developer
# tools: ./test.sh installs those), then chunk and embed the sample documents (or the files
# given) exactly as the endpoint would, and print a summary per document. The whole
# response goes to output/response.json; `./run.sh --json [FILE ...]` prints it instead.
# Options of `python -m skills` may come first, e.g. ./run.sh -i unit=characters page.html
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
json=0
if [[ ${1:-} == --json ]]; then
  json=1
  shift
fi
args=("$@")
if ((${#args[@]} == 0)); then
  args=(samples/concepts-network.md samples/git-stash.html)
fi
if ((json)); then
  exec .venv/bin/python -m skills "${args[@]}"
fi
mkdir -p output
# A refused run writes no response: an earlier one left in place would look like this one's.
rm -f output/response.json
status=0
.venv/bin/python -m skills --summary --output output/response.json "${args[@]}" || status=$?
if [[ -f output/response.json ]]; then
  echo
  echo "The whole response (chunks, offsets, vectors): output/response.json; ./run.sh --json prints it."
fi
exit "$status"
