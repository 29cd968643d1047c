"""Outputs of a run over several sets and models: tables per set and pooled, the
paired-bootstrap intervals against the Split-skill rows, and breakdowns by kind of
question, language and format, in the terminal, results.json and report.html."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evaluation.report import _cell, _delta, format_table, results_json, table_rows
from evaluation.sets import breakdowns

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from evaluation.metrics import Interval
    from evaluation.run import Sweep
    from evaluation.sets import PooledRow, QuestionSet

PERCENT = 100


@dataclass(frozen=True, slots=True)
class ModelRun:
    """Everything one embedding model gave: a sweep per set, and the sets pooled."""

    model: str
    window: int | None
    """Word pieces the model reads of each text (None: unknown, a service model)."""
    sweeps: dict[str, Sweep]
    """By set name, in the order the sets were given."""
    pooled: list[PooledRow]


POOLED_HEADER = [
    "setting",
    "complete@5",
    "≤1k tokens",
    "≤2k tokens",
    "hit@5",
    "MRR@10",
    "truncated",
    "Δcomplete@5 vs split",
    "Δ≤1k tokens vs split",
    "Δ≤2k tokens vs split",
    "ΔMRR@10 vs split",
]


def pooled_rows(rows: Sequence[PooledRow]) -> list[list[str]]:
    """Header and one row per pooled setting, as strings."""
    table = [POOLED_HEADER]
    for row in rows:
        m, d = row.means, row.differences
        table.append(
            [
                row.label,
                _cell(m["complete@5"]),
                _cell(m["complete@1000tok"]),
                _cell(m["complete@2000tok"]),
                _cell(m["hit@5"]),
                f"{m['mrr@10'].mean:.3f}",
                f"{row.truncated_share * PERCENT:.1f}%",
                _delta(d["complete@5"] if d else None),
                _delta(d["complete@1000tok"] if d else None),
                _delta(d["complete@2000tok"] if d else None),
                _delta(d["mrr@10"] if d else None),
            ]
        )
    return table


def _aligned(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)


def markdown(rows: list[list[str]]) -> str:
    """A markdown table (docs/results)."""
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows[1:]])


def format_runs(runs: Sequence[ModelRun]) -> str:
    """Every table, per model: each set's, then the pooled one."""
    parts: list[str] = []
    for run in runs:
        for name, sweep in run.sweeps.items():
            parts.append(f"== {name} · {run.model}\n{format_table(sweep)}")
        if len(run.sweeps) > 1:
            parts.append(
                f"== pooled ({', '.join(run.sweeps)}) · {run.model}\n"
                f"{_aligned(pooled_rows(run.pooled))}"
            )
    return "\n\n".join(parts)


def _interval_json(interval: Interval) -> dict[str, float]:
    return {"mean": interval.mean, "low": interval.low, "high": interval.high}


def runs_json(runs: Sequence[ModelRun], sets: Sequence[QuestionSet]) -> dict[str, Any]:
    """Per model: each set's results (as one set's results.json), breakdowns, the pool."""
    by_name = {s.name: s for s in sets}
    models: list[dict[str, Any]] = []
    for run in runs:
        per_set: dict[str, Any] = {}
        for name, sweep in run.sweeps.items():
            item = by_name[name]
            body = results_json(sweep, item.questions, run.model, item.documents)
            body["breakdowns"] = {
                r.label: breakdowns(r, item.questions, item.documents) for r in sweep.results
            }
            per_set[name] = body
        models.append(
            {
                "embeddingModel": run.model,
                "window": run.window,
                "sets": per_set,
                "pooled": [
                    {
                        "label": row.label,
                        "chunker": row.chunker,
                        "retrieval": row.retrieval,
                        "questions": row.questions,
                        "truncatedShare": row.truncated_share,
                        "metrics": {k: _interval_json(v) for k, v in row.means.items()},
                        "againstSplitSkill": (
                            {k: _interval_json(v) for k, v in row.differences.items()}
                            if row.differences
                            else None
                        ),
                    }
                    for row in run.pooled
                ],
            }
        )
    return {
        "sets": [
            {"name": s.name, "questions": len(s.questions), "documents": len(s.documents)}
            for s in sets
        ],
        "models": models,
    }


def _html_table(rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows[1:]
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _breakdown_html(sweep: Sweep, item: QuestionSet) -> str:
    parts: list[str] = []
    tables = [(r.label, breakdowns(r, item.questions, item.documents)) for r in sweep.results]
    if not tables:
        return ""
    for metric in tables[0][1]:
        keys = list(tables[0][1][metric])
        rows = [["setting", *(f"{k} ({tables[0][1][metric][k][1]})" for k in keys)]]
        rows += [[label, *(f"{t[metric][k][0]:.3f}" for k in keys)] for label, t in tables]
        parts.append(f"<h4>{html.escape(metric)}</h4>{_html_table(rows)}")
    return "".join(parts)


def render_runs_html(runs: Sequence[ModelRun], sets: Sequence[QuestionSet]) -> str:
    """One page: per model, the pooled table, then each set's table and breakdowns."""
    by_name = {s.name: s for s in sets}
    sections: list[str] = []
    for run in runs:
        window = f"{run.window} word pieces" if run.window else "unknown"
        sections.append(f"<h2>{html.escape(run.model)} (window: {window})</h2>")
        if len(run.sweeps) > 1:
            sections.append(
                f"<h3>Pooled: {html.escape(', '.join(run.sweeps))}</h3>"
                + _html_table(pooled_rows(run.pooled))
            )
        for name, sweep in run.sweeps.items():
            item = by_name[name]
            sentence = sweep.recommendation.sentence if sweep.recommendation else ""
            sections.append(
                f"<h3>{html.escape(name)}: {len(item.questions)} questions, "
                f"{len(item.documents)} documents</h3><p>{html.escape(sentence)}</p>"
                + _html_table(table_rows(sweep))
                + "<p>Breakdowns by kind of question, language and format:</p>"
                + _breakdown_html(sweep, item)
            )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Chunk settings evaluation, several sets</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; font-size: 13px; margin: 1em 0; }}
td, th {{ border: 1px solid #ccc; padding: 3px 6px; vertical-align: top; text-align: left; }}
</style></head><body>
<h1>Chunk settings evaluation: {len(sets)} question sets, {len(runs)} embedding model(s)</h1>
<p>Intervals are 95% bootstrap intervals over questions; Δ columns are paired differences
against the Split-skill emulation at the same limits and retrieval mode (* where the
interval excludes 0). "≤2k tokens" is answer-complete within a context of 2,000 cl100k
tokens of the top chunks in rank order: equal context, so chunk size alone cannot win it.
The <code>semantic</code> mode, where present, reranks the hybrid top 50 with a local
cross-encoder: it approximates Azure's semantic ranker, it is not it.</p>
{"".join(sections)}
</body></html>
"""


def write_runs(
    runs: Sequence[ModelRun], sets: Sequence[QuestionSet], folder: Path
) -> tuple[Path, Path]:
    """results.json and report.html for the whole run in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    json_path = folder / "results.json"
    json_path.write_text(
        json.dumps(runs_json(runs, sets), indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    html_path = folder / "report.html"
    html_path.write_text(render_runs_html(runs, sets), encoding="utf-8")
    return json_path, html_path
