"""Hash every chunk of every corpus document, per setting and strategy: a refactoring
that must not change behaviour shows the same hashes before and after.

    python -m bench.identical [CORPUS_DIR] [--save FILE | --check FILE]

Settings: 512 / 64 tokens, 2000 / 500 characters, 256 tokens packed; strategies
structure, words, semantic and binary (the last two scored offline by hashed vectors,
`bench.offline_scoring`, so no model decides the figure). What is hashed is every field
of every chunk, the document's format, title and warnings, file by file.
Exits 1 when `--check` finds a difference, 2 when the corpus is missing.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
from dataclasses import replace
from pathlib import Path

from bench.corpus_audit import DEFAULT_CORPUS, corpus_files
from bench.offline_scoring import offline_scoring
from chunking.options import ChunkOptions, Limits, Unit
from chunking.pipeline import chunk_document

SETTINGS: dict[str, ChunkOptions] = {
    "512/64 tokens": ChunkOptions(limits=Limits(Unit.TOKENS, 512, 64)),
    "2000/500 characters": ChunkOptions(limits=Limits(Unit.CHARACTERS, 2000, 500)),
    "256 tokens packed": ChunkOptions(limits=Limits(Unit.TOKENS, 256, 0), section_fill=None),
}
STRATEGIES = ("structure", "words", "semantic", "binary")


def _options(base: ChunkOptions, strategy: str) -> ChunkOptions:
    if strategy == "structure":
        return base
    # The other strategies take no page overlap (words overlaps in words).
    limits = replace(base.limits, page_overlap_length=0)
    return replace(base, limits=limits, strategy=strategy)


def corpus_hashes(root: Path) -> dict[str, str]:
    """sha256 per "setting · strategy" over every file under `root`."""
    files = corpus_files(root)
    scoring, _ = offline_scoring()
    hashes: dict[str, str] = {}
    for label, base in SETTINGS.items():
        for strategy in STRATEGIES:
            options = _options(base, strategy)
            digest = hashlib.sha256()
            for path in files:
                text = path.read_text(encoding="utf-8")
                document = chunk_document(
                    text, options=options, file_name=path.name, scoring=scoring
                )
                record = {
                    "file": str(path.relative_to(root)),
                    "format": str(document.format),
                    "title": document.title,
                    "warnings": list(document.warnings),
                    "chunks": [dataclasses.asdict(chunk) for chunk in document.chunks],
                }
                digest.update(json.dumps(record, ensure_ascii=True).encode() + b"\n")
            hashes[f"{label} · {strategy}"] = digest.hexdigest()
            print(f"{label} · {strategy}: {hashes[f'{label} · {strategy}']}", flush=True)
    return hashes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.identical", description=__doc__)
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--save", type=Path, help="write the hashes to this JSON file")
    group.add_argument("--check", type=Path, help="compare with hashes saved earlier")
    args = parser.parse_args(argv)
    if not corpus_files(args.corpus):
        print(f"no markdown or HTML documents under {args.corpus}", file=sys.stderr)
        return 2
    hashes = corpus_hashes(args.corpus)
    if args.save:
        args.save.write_text(json.dumps(hashes, indent=1, ensure_ascii=False) + "\n")
    if args.check:
        before = json.loads(args.check.read_text())
        differ = [key for key in hashes if before.get(key) != hashes[key]]
        for key in differ:
            print(f"DIFFERENT: {key}", file=sys.stderr)
        print(f"{len(hashes) - len(differ)} of {len(hashes)} identical")
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
