"""What an edit costs a re-index when vectors are cached by their text: over real
before/after pairs of documentation files, the chunks of the new version whose embedded
text is not among the old version's, for our chunker and its peers, and the floor.

    python -m bench.edits [EDITS_DIR] [--json FILE]

EDITS_DIR holds `pairs.jsonl` and one folder per pair with `before.md` and `after.md`
(`../shared/edits`, whose README says where they come from). Settings: 512/51 tokens and
2000/500 characters. Chunkers: ours (the default options), the Split skill's `pages` mode
as the evaluation emulates it (`chunking.plan.pages`), LangChain's recursive splitter
when `langchain-text-splitters` is installed (requirements-bench.txt; a line says so when
it is not). The floor: our chunks of the new version that must change whatever the cuts,
those that hold a changed line (or the place a line was deleted from), or sit under a
title or heading path the old version did not have. Figures are pooled over pairs (new
chunks / all chunks of the new versions), with the median share per pair, by kind
(`commit`: one commit; `quarter`: about 90 days apart). Exits 2 when the folder is missing.
"""

from __future__ import annotations

import argparse
import bisect
import difflib
import json
import statistics
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from chunking.measure.sizing import make_sizer
from chunking.options import DEFAULT_ENCODER, ChunkOptions, Limits, Unit
from chunking.pipeline import chunk_document
from chunking.plan.pages import split_pages
from evaluation.baseline import langchain_recursive

if TYPE_CHECKING:
    from chunking.model import ChunkedDocument

DEFAULT_EDITS = Path(__file__).resolve().parents[2] / "shared" / "edits"
SETTINGS: dict[str, Limits] = {
    "512/51 tokens": Limits(Unit.TOKENS, 512, 51),
    "2000/500 characters": Limits(Unit.CHARACTERS, 2000, 500),
}
OURS, SPLIT, LANGCHAIN, FLOOR = "ours", "split-skill", "langchain recursive", "floor"
KINDS = ("commit", "quarter")
MISSING = 2


@dataclass(frozen=True, slots=True)
class EditPair:
    """One real edit: the file before and after, and which kind of pair it is."""

    name: str
    kind: str
    before: str
    after: str


@dataclass(slots=True)
class Tally:
    """New chunks and all chunks of the new versions, and each pair's share."""

    new: int = 0
    total: int = 0
    shares: list[float] = field(default_factory=list)

    def add(self, new: int, total: int) -> None:
        self.new += new
        self.total += total
        self.shares.append(new / total if total else 0.0)

    @property
    def percent(self) -> float:
        return 100 * self.new / self.total if self.total else 0.0

    @property
    def median(self) -> float:
        return 100 * statistics.median(self.shares) if self.shares else 0.0


def load_pairs(root: Path) -> list[EditPair]:
    """Every pair listed in `root/pairs.jsonl`, in its order."""
    pairs: list[EditPair] = []
    for line in (root / "pairs.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        folder = root / entry["pair"]
        pairs.append(
            EditPair(
                entry["pair"],
                entry["kind"],
                (folder / "before.md").read_text(encoding="utf-8"),
                (folder / "after.md").read_text(encoding="utf-8"),
            )
        )
    return pairs


def new_texts(before: Iterable[str], after: Sequence[str]) -> int:
    """How many of `after` (chunk by chunk) are not among `before`: what must be embedded."""
    known = set(before)
    return sum(text not in known for text in after)


def changed_positions(before: str, after: str) -> list[tuple[int, int]]:
    """Ranges of `after` that differ from `before`, line by line: each inserted or
    replaced run of lines, and an empty range where lines were deleted."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    starts = [0]
    for line in new:
        starts.append(starts[-1] + len(line))
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [
        (starts[j1], starts[j2])
        for tag, _i1, _i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def floor_chunks(
    old: ChunkedDocument, new: ChunkedDocument, changes: Sequence[tuple[int, int]]
) -> int:
    """Chunks of `new` that change whatever the cuts: those holding a changed range (a
    deletion: holding the place it was made), or under a title or heading path `old`
    did not have."""
    old_paths = {chunk.headings for chunk in old.chunks}
    lows = [low for low, _ in changes]
    count = 0
    for chunk in new.chunks:
        renamed = chunk.title != old.title or chunk.headings not in old_paths
        # Changes that start before the chunk ends; the last of them that reaches into it.
        index = bisect.bisect_left(lows, chunk.end)
        holds = any(_overlaps(low, high, chunk.start, chunk.end) for low, high in changes[:index])
        count += renamed or holds
    return count


def _overlaps(low: int, high: int, start: int, end: int) -> bool:
    if low == high:  # a deletion: the chunk holds the place it was made
        return start < low < end
    return low < end and start < high


Chunker = Callable[[str], list[str]]


def _ours(limits: Limits) -> Callable[[str], ChunkedDocument]:
    options = ChunkOptions(limits=limits)
    return lambda text: chunk_document(text, options=options, format="markdown")


def _split(limits: Limits) -> Chunker:
    sizer = make_sizer(limits.unit, DEFAULT_ENCODER)
    return lambda text: [text[p.start : p.end] for p in split_pages(text, sizer, limits)]


def _langchain(limits: Limits) -> Chunker | None:
    try:
        splitter = langchain_recursive(limits, DEFAULT_ENCODER)
    except ImportError:
        return None
    return lambda text: list(splitter.split_text(text))


def measure(pairs: Sequence[EditPair], limits: Limits) -> dict[str, dict[str, Tally]]:
    """Per chunker, per kind (and "all"): the new chunks of every pair."""
    ours = _ours(limits)
    peers: dict[str, Chunker] = {SPLIT: _split(limits)}
    langchain = _langchain(limits)
    if langchain is not None:
        peers[LANGCHAIN] = langchain
    names = [OURS, *peers, FLOOR]
    tallies = {name: {kind: Tally() for kind in (*KINDS, "all")} for name in names}
    for pair in pairs:
        old, new = ours(pair.before), ours(pair.after)
        counts = {
            OURS: (
                new_texts((c.text for c in old.chunks), [c.text for c in new.chunks]),
                len(new.chunks),
            ),
            FLOOR: (
                floor_chunks(old, new, changed_positions(old.source, new.source)),
                len(new.chunks),
            ),
        }
        for name, chunker in peers.items():
            after = chunker(pair.after)
            counts[name] = (new_texts(chunker(pair.before), after), len(after))
        for name, (fresh, total) in counts.items():
            tallies[name][pair.kind].add(fresh, total)
            tallies[name]["all"].add(fresh, total)
    return tallies


def report(label: str, tallies: dict[str, dict[str, Tally]]) -> list[str]:
    """A markdown table of one setting."""
    lines = [
        f"### {label}",
        "",
        "| chunker | new chunks / chunks | % new | median per pair | commit % | quarter % |",
        "|---|---|---|---|---|---|",
    ]
    for name, by_kind in tallies.items():
        every = by_kind["all"]
        lines.append(
            f"| {name} | {every.new} / {every.total} | {every.percent:.1f} | "
            f"{every.median:.0f} | {by_kind['commit'].percent:.1f} | "
            f"{by_kind['quarter'].percent:.1f} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.edits",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("edits", nargs="?", type=Path, default=DEFAULT_EDITS)
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if not (args.edits / "pairs.jsonl").is_file():
        print(f"python -m bench.edits: no pairs.jsonl in {args.edits}", file=sys.stderr)
        return MISSING
    pairs = load_pairs(args.edits)
    print(f"{len(pairs)} pairs from {args.edits}\n")
    if _langchain(SETTINGS["512/51 tokens"]) is None:
        print(
            "langchain recursive: left out (langchain-text-splitters is not installed; "
            "pip install -r requirements-bench.txt)\n"
        )
    figures: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    for label, limits in SETTINGS.items():
        tallies = measure(pairs, limits)
        print("\n".join(report(label, tallies)) + "\n", flush=True)
        figures[label] = {
            name: {
                kind: {"new": t.new, "total": t.total, "percent": t.percent, "median": t.median}
                for kind, t in by_kind.items()
            }
            for name, by_kind in tallies.items()
        }
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
