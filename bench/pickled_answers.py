"""Bytes the worker processes pickle back to the app: one chunked record's answer per
sample file, at the record-input settings of `bench.sample_answers`.

    python -m bench.pickled_answers

A worker sends `chunk_record`'s answer through a pipe (multiprocessing pickles it); what
is measured is `len(ForkingPickler.dumps(answer))`, summed over the samples, per setting.
"""

from __future__ import annotations

import argparse
from multiprocessing.reduction import ForkingPickler

from bench.sample_answers import INPUTS, SAMPLES, sample_files
from skills.skill.chunk_records import chunk_record
from skills.skill.contract import InputRecord
from skills.skill.settings import Settings


def pickled_bytes() -> dict[str, int]:
    """Pickled bytes of every sample's answer, summed per setting."""
    settings = Settings(chunk_workers=0)
    totals: dict[str, int] = {}
    for label, inputs in INPUTS.items():
        total = 0
        for path in sample_files():
            data = {"text": path.read_text(encoding="utf-8"), "fileName": path.name, **inputs}
            answer = chunk_record(InputRecord(path.relative_to(SAMPLES).as_posix(), data), settings)
            total += len(ForkingPickler.dumps(answer))
        totals[label] = total
    return totals


def main(argv: list[str] | None = None) -> int:
    """Print the pickled bytes per setting and their sum."""
    argparse.ArgumentParser(prog="python -m bench.pickled_answers").parse_args(argv)
    totals = pickled_bytes()
    for label, total in totals.items():
        print(f"{label:>16}  {total:>10,} bytes")
    print(f"{'total':>16}  {sum(totals.values()):>10,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
