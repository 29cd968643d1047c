#!/usr/bin/env bash
# Screenshots of the chunk map and of the evaluation's per-question view, taken with
# headless Chromium (issue 15): open the PNGs and look at them.
#
#   scripts/screenshots.sh [OUT_DIR] [EVAL_DIR]
#
# OUT_DIR (default: screenshots/) gets, each page next to its PNG:
#   concepts-network.html/.png     python -m chunking.report samples/concepts-network.md
#   concepts-network-96.html/.png  the same at --max 96 --overlap 12, framed at its first table
#                                  continuation: overlaps, repeated header rows
#   eval-report.png                the evaluation's report.html at one question's row
#   eval-question.png              that question's chunk map, at the reference
# EVAL_DIR is a `python -m evaluation --out` folder; without one the evaluation runs on
# samples/eval into OUT_DIR/eval, with embeddings from EVAL_CACHE (default .eval-cache).
# The question shown is QUESTION=N (its line), else the first one whose top 5 cut the answer.
# Chromium is CHROMIUM, else chromium, chromium-browser or google-chrome on PATH
# (Debian: apt-get install chromium). Python is PYTHON, else .venv/bin/python.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$(mkdir -p "${1:-screenshots}" && cd "${1:-screenshots}" && pwd)"
eval_dir="${2:-}"
python="${PYTHON:-$root/.venv/bin/python}"
[[ -x $python ]] || python=python3
chromium="${CHROMIUM:-}"
if [[ -z $chromium ]]; then
  for candidate in chromium chromium-browser google-chrome; do
    if command -v "$candidate" >/dev/null; then chromium="$candidate"; break; fi
  done
fi
if [[ -z $chromium ]]; then
  echo "screenshots.sh: no Chromium found (apt-get install chromium, or set CHROMIUM)" >&2
  exit 2
fi
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"

shoot() {  # shoot PNG URL: a 1280x2000 screenshot of URL
  "$chromium" --headless --disable-gpu --no-sandbox --hide-scrollbars \
    --window-size=1280,2000 --screenshot="$1" "$2" >>"$out/chromium.log" 2>&1
  [[ -s $1 ]] || { echo "screenshots.sh: Chromium wrote no $1 (see $out/chromium.log)" >&2; exit 1; }
  echo "$1"
}

framed() {  # framed NAME URL#FRAGMENT: headless --screenshot paints a blank page for a
  # URL with a fragment, so a page beside the PNG frames it, scrolled to the fragment.
  printf '<!DOCTYPE html><html><body style="margin:0"><iframe src="%s" style="width:100%%;height:2000px;border:0"></iframe></body></html>\n' \
    "$2" >"$out/$1.frame.html"
  shoot "$out/$1.png" "file://$out/$1.frame.html"
}

cd "$root"
"$python" -m chunking.report samples/concepts-network.md -o "$out/concepts-network.html"
shoot "$out/concepts-network.png" "file://$out/concepts-network.html"
"$python" -m chunking.report samples/concepts-network.md --max 96 --overlap 12 -o "$out/concepts-network-96.html"
continuation=$("$python" - "$out/concepts-network-96.html" <<'PY'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
card = re.search(r'<aside class="card[^"]*" id="(chunk-\d+)"(?:(?!<aside).)*?continues a', page, re.S)
print(card.group(1) if card else "chunk-0")
PY
)
framed concepts-network-96 "file://$out/concepts-network-96.html#$continuation"

if [[ -z $eval_dir ]]; then
  eval_dir="$out/eval"
  "$python" -m evaluation samples/eval/docs samples/eval/questions.jsonl --out "$eval_dir" \
    --cache "${EVAL_CACHE:-.eval-cache}" --quiet >"$out/evaluation.log"
fi
eval_dir="$(cd "$eval_dir" && pwd)"
question="${QUESTION:-}"
if [[ -z $question ]]; then
  cut=$(grep -l "Hit, but cut" "$eval_dir"/maps/q*.html | sort -V | head -1 || true)
  question=$(basename "${cut:-q1.html}" .html)
  question="${question#q}"
fi
framed eval-report "file://$eval_dir/report.html#q$question"
framed eval-question "file://$eval_dir/maps/q$question.html#mark"
