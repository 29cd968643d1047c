"""Paired differences between two rows of one evaluation's results.json, per set and pooled.

`python -m evaluation` pairs each of our rows with the Split-skill row at the same limits.
This pairs any two rows of the same run over the same questions: by default each row
handed over as passages (` merged`, ` neighbours`) against the same row as chunks, or the
pairs given with `--pair "A=B"` (A minus B, e.g. small chunks with their neighbours
against larger chunks). Prints a markdown table with the 95% paired-bootstrap intervals.

    python -m evaluation.paired OUT/results.json [--pair "A=B"] [--metrics m1,m2]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from chunking.cli.files import read_limited
from evaluation.metrics import paired_difference
from evaluation.passages import PASSAGE_MODES

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt

    from evaluation.metrics import Interval

DEFAULT_METRICS = ("complete@5", "complete@1000tok", "complete@2000tok", "mrr@10")
POOLED = "pooled"
USAGE_ERROR = 2


@dataclass(frozen=True, slots=True)
class PairedRow:
    """One pair of rows on one set (or pooled over every set) of one model."""

    model: str
    questions_of: str
    """The set's name, or POOLED."""
    label: str
    base: str
    differences: dict[str, Interval]


def passage_pairs(labels: Sequence[str]) -> list[tuple[str, str]]:
    """Each label with a passage suffix paired with the same label as chunks, if present."""
    present = set(labels)
    pairs: list[tuple[str, str]] = []
    for label in labels:
        for mode in PASSAGE_MODES[1:]:
            base = label.removesuffix(f" {mode}")
            if base != label and base in present:
                pairs.append((label, base))
    return pairs


def paired_rows(
    results: dict[str, Any], pairs: Sequence[tuple[str, str]] | None, metrics: Sequence[str]
) -> list[PairedRow]:
    """The paired differences of every pair, per model: each set, then pooled."""
    rows: list[PairedRow] = []
    for model in results["models"]:
        per_set: dict[str, dict[str, dict[str, list[float]]]] = {
            name: {row["label"]: row["perQuestion"] for row in body["settings"]}
            for name, body in model["sets"].items()
        }
        labels = [row["label"] for row in next(iter(model["sets"].values()))["settings"]]
        chosen = pairs if pairs is not None else passage_pairs(labels)
        for label, base in chosen:
            pooled_a: list[npt.NDArray[np.float64]] = []
            pooled_b: list[npt.NDArray[np.float64]] = []
            for name, table in per_set.items():
                if label not in table or base not in table:
                    continue
                a = {m: np.array(table[label][m], dtype=np.float64) for m in metrics}
                b = {m: np.array(table[base][m], dtype=np.float64) for m in metrics}
                pooled_a.append(np.stack([a[m] for m in metrics]))
                pooled_b.append(np.stack([b[m] for m in metrics]))
                differences = {m: paired_difference(a[m], b[m]) for m in metrics}
                rows.append(PairedRow(model["embeddingModel"], name, label, base, differences))
            if len(pooled_a) > 1:
                a_all, b_all = np.concatenate(pooled_a, axis=1), np.concatenate(pooled_b, axis=1)
                differences = {
                    m: paired_difference(a_all[i], b_all[i]) for i, m in enumerate(metrics)
                }
                rows.append(PairedRow(model["embeddingModel"], POOLED, label, base, differences))
    return rows


def format_rows(rows: Sequence[PairedRow], metrics: Sequence[str]) -> str:
    """A markdown table; * marks an interval that excludes 0."""
    head = ["model", "set", "row", "minus", *(f"Δ{m}" for m in metrics)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [row.model, row.questions_of, row.label, row.base]
        for metric in metrics:
            d = row.differences[metric]
            mark = "*" if d.excludes_zero() else ""
            cells.append(f"{d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}]{mark}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _pair(text: str) -> tuple[str, str]:
    label, separator, base = text.partition("=")
    if not separator or not label.strip() or not base.strip():
        raise ValueError(f"--pair takes A=B, two row labels (got {text!r})")
    return label.strip(), base.strip()


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m evaluation.paired`: print the table; 2 on a bad file or an unknown row."""
    parser = argparse.ArgumentParser(prog="python -m evaluation.paired", description=__doc__)
    parser.add_argument("results", type=Path, help="results.json of python -m evaluation")
    parser.add_argument(
        "--pair", action="append", default=None, metavar="A=B", help="A minus B (repeatable)"
    )
    parser.add_argument("--metrics", default=",".join(DEFAULT_METRICS))
    arguments = parser.parse_args(argv)
    metrics = [m.strip() for m in arguments.metrics.split(",") if m.strip()]
    try:
        results = json.loads(read_limited(arguments.results).decode("utf-8"))
        pairs = [_pair(item) for item in arguments.pair] if arguments.pair else None
        rows = paired_rows(results, pairs, metrics)
    except (OSError, ValueError, KeyError) as error:
        print(f"python -m evaluation.paired: {error}", file=sys.stderr)
        return USAGE_ERROR
    if not rows:
        print("python -m evaluation.paired: no pair of rows found", file=sys.stderr)
        return USAGE_ERROR
    print(format_rows(rows, metrics))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
