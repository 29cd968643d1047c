"""Count MDX tag soup in embedded text, and the reader's text lost, on react.dev pages.

    python -m bench.mdx_markup [--save before.json | --against before.json] [PAGE.md ...]

Tag soup is what a reader of the rendered page never sees, left in `Chunk.text`
outside code: lines of component tags (`<Sandpack>`, `</Note>`, `<InlineToc />`),
`import`/`export` lines, `{/* ... */}` comments (at a heading's end too).  It also
counts chunks with no text but markup, and chunks that start with a closing tag.
The words of the other lines are the reader's text: saved from one tree (main's)
and compared with another's, the share of them missing must be 0.  Chunks are made
without overlap, so their texts tile the page and words add up.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import cast

from chunking import ChunkOptions, Limits, Unit, chunk_document

PAGES = (
    "ja-Component",
    "ja-updating-arrays-in-state",
    "zh-hans-responding-to-events",
    "zh-hans-synchronizing-with-effects",
    "ko-useState",
    "ko-importing-and-exporting-components",
    "fr-reusing-logic-with-custom-hooks",
    "en-react-compiler-directives",
)
REALWORLD = Path(__file__).resolve().parents[2] / "shared" / "realworld" / "markdown"
_TAG_LINE = re.compile(r"(?:</?(?:[A-Z][\w.]*)?(?:\s[^<>]*)?/?>\s*)+")
_TAG_START = re.compile(r"</?[A-Z][\w.]*(?:\s|$)")
"""A component tag whose attributes run on over the next lines."""
_ESM = re.compile(
    r"(?:import\s.*\bfrom\s*[\"']|import\s*[\"']|export\s+(?:const|default|function)\b)"
)
_COMMENT = re.compile(r"\{/\*.*?\*/\}")
PREFIX_SEPARATOR = "\n\n"
_FENCE = re.compile(r"\s*(?:```|~~~)")


def soup(text: str) -> tuple[int, list[str]]:
    """Tag-soup lines (and heading-end comments) in an embedded text, and its other words."""
    count = 0
    words: list[str] = []
    in_code = False
    for line in text.split("\n"):
        stripped = line.strip()
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            continue
        if (
            _TAG_LINE.fullmatch(stripped)
            or _TAG_START.match(stripped)
            or _ESM.match(stripped)
            or (stripped.startswith("{/*") and stripped.endswith("*/}"))
        ):
            count += 1
            continue
        comments = _COMMENT.findall(stripped)
        count += len(comments)
        words.extend(_COMMENT.sub(" ", stripped).split())
    return count, words


def measure(paths: list[Path]) -> dict[str, dict[str, object]]:
    """Per page: tag-soup lines, markup-only chunks, chunks starting with a closing tag,
    and the word counts of the reader's text."""
    options = ChunkOptions(
        limits=Limits(unit=Unit.CHARACTERS, maximum_page_length=2000, page_overlap_length=0)
    )
    result: dict[str, dict[str, object]] = {}
    for path in paths:
        document = chunk_document(
            path.read_text(encoding="utf-8"), options=options, file_name=path.name
        )
        lines = 0
        empty = 0
        closing_first = 0
        words: Counter[str] = Counter()
        for chunk in document.chunks:
            # The prefix (title and heading path) is the embedded text's first paragraph.
            has_prefix = bool(chunk.title or chunk.headings)
            body = chunk.text.split(PREFIX_SEPARATOR, 1)[-1] if has_prefix else chunk.text
            count, chunk_words = soup(body)
            lines += count
            if not chunk_words and not _FENCE.search(body):
                empty += 1
            if re.match(r"\s*</", chunk.content):
                closing_first += 1
            words.update(chunk_words)
        result[path.stem] = {
            "chunks": len(document.chunks),
            "soup_lines": lines,
            "markup_only_chunks": empty,
            "closing_tag_first": closing_first,
            "words": dict(words),
        }
    return result


def main(argv: list[str] | None = None) -> int:
    """Print the counts; save them, or compare the words with saved ones."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("pages", nargs="*", type=Path)
    parser.add_argument("--save", type=Path)
    parser.add_argument("--against", type=Path)
    args = parser.parse_args(argv)
    paths = args.pages or [REALWORLD / f"{page}.md" for page in PAGES]
    result = measure(paths)
    before = json.loads(args.against.read_text()) if args.against else None
    total_soup = total_words = total_lost = 0
    for name, row in result.items():
        words: Counter[str] = Counter(cast("dict[str, int]", row["words"]))
        line = (
            f"{name:40} chunks {row['chunks']:4}  soup lines {row['soup_lines']:4}  "
            f"markup-only chunks {row['markup_only_chunks']:3}  "
            f"closing tag first {row['closing_tag_first']:3}"
        )
        total_soup += row["soup_lines"]  # type: ignore[operator]
        if before is not None and name in before:
            earlier = Counter(before[name]["words"])
            lost = earlier - words
            total_words += sum(earlier.values())
            total_lost += sum(lost.values())
            line += f"  words lost {sum(lost.values())}/{sum(earlier.values())}"
            if lost:
                line += f" {sorted(lost)[:5]}"
        print(line)
    print(f"total soup lines {total_soup}")
    if before is not None:
        share = total_lost / total_words if total_words else 0.0
        print(f"reader's words lost {total_lost}/{total_words} ({share:.4%})")
    if args.save:
        args.save.write_text(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
