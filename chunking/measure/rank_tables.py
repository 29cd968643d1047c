"""`python -m chunking.measure.rank_tables [--check]`: write (or check) the rank table
beside each shipped .tiktoken file.

A table is derived data (`encodings.rank_table`): rewrite the tables whenever a
.tiktoken file changes. The loader refuses a table derived from another file, and
`tests/chunking/measure/test_rank_tables.py` fails while any table is out of date.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from chunking.measure.encodings import TABLE_FILES, rank_table, table_path, tiktoken_file

if TYPE_CHECKING:
    from collections.abc import Sequence


def stale_tables() -> list[str]:
    """The shipped files whose rank table is missing or not the one their contents give."""
    stale = []
    for file in TABLE_FILES:
        path = table_path(file)
        if not path.is_file() or path.read_bytes() != rank_table(file, tiktoken_file(file)):
            stale.append(file)
    return stale


def main(argv: Sequence[str] | None = None) -> int:
    """Write the stale tables (or, with --check, name them); returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m chunking.measure.rank_tables")
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a table is out of date"
    )
    args = parser.parse_args(argv)
    stale = stale_tables()
    if args.check:
        if stale:
            print(
                f"{parser.prog}: out of date: {', '.join(stale)} (run it without --check)",
                file=sys.stderr,
            )
            return 1
        return 0
    for file in stale:
        table_path(file).write_bytes(rank_table(file, tiktoken_file(file)))
        print(f"wrote {table_path(file)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
