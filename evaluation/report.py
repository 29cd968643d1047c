"""The sweep's outputs: a terminal table, results.json and a self-contained HTML report."""

from __future__ import annotations

import html
import json
import math
import os
from typing import TYPE_CHECKING, Any

from evaluation.apply import configuration
from evaluation.maps import cuts, map_path, question_maps
from evaluation.metrics import K

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from chunking.plan.scoring import Scoring
    from evaluation.documents import EvalDocument
    from evaluation.metrics import Interval
    from evaluation.questions import Question
    from evaluation.run import SettingResult, Sweep

PERCENT = 100
BYTES_PER_MB = 1_000_000
PLOT_WIDTH, PLOT_HEIGHT, MARGIN = 560, 300, 48
Y_PADDING = 0.05
PLOT_FILES = ("complete-at-5.svg", "hit-at-5.svg", "cost-quality.svg")
MAX_X_TICKS = 4
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")
EXCERPT = 160
"""Characters of a chunk shown around the reference in the per-question table."""


def _cell(interval: Interval) -> str:
    return f"{interval.mean:.3f} [{interval.low:.2f},{interval.high:.2f}]"


def _delta(interval: Interval | None) -> str:
    if interval is None:
        return ""
    mark = "*" if interval.excludes_zero() else ""
    return f"{interval.mean:+.3f} [{interval.low:+.2f},{interval.high:+.2f}]{mark}"


def table_rows(sweep: Sweep) -> list[list[str]]:
    """Header and one row per setting, as strings (the terminal and README tables)."""
    compared = {c.setting: c for c in sweep.comparisons}
    header = [
        "setting",
        "complete@5",
        "hit@5",
        "MRR@10",
        "≤1k tokens",
        "≤2k tokens",
        "recall@5",
        "IoU@5",
        "chunks",
        "tokens",
        "scored",
        "truncated",
        "Δcomplete@5 vs split",
        "Δ≤2k tokens vs split",
        "Δhit@5 vs split",
    ]
    rows = [header]
    for result in sweep.results:
        m = result.means
        comparison = compared.get(result.label)
        rows.append(
            [
                result.label,
                _cell(m["complete@5"]),
                _cell(m["hit@5"]),
                f"{m['mrr@10'].mean:.3f}",
                _cell(m["complete@1000tok"]),
                _cell(m["complete@2000tok"]),
                f"{m['recall@5'].mean:.3f}",
                f"{m['iou@5'].mean:.3f}",
                str(result.cost.chunks),
                f"{result.cost.tokens:,}",
                f"{result.cost.scored_texts:,}",
                f"{result.truncated_share * PERCENT:.0f}%",
                _delta(comparison.differences["complete@5"] if comparison else None),
                _delta(comparison.differences["complete@2000tok"] if comparison else None),
                _delta(comparison.differences["hit@5"] if comparison else None),
            ]
        )
    return rows


def format_table(sweep: Sweep) -> str:
    """The results as an aligned text table."""
    rows = table_rows(sweep)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(line.rstrip() for line in lines)


def markdown_table(sweep: Sweep) -> str:
    """The results as a markdown table (for the README)."""
    rows = table_rows(sweep)
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(row) + " |" for row in rows[1:]]
    return "\n".join(lines)


def _interval_json(interval: Interval) -> dict[str, float]:
    return {"mean": interval.mean, "low": interval.low, "high": interval.high}


def breakdown(
    result: SettingResult,
    questions: Sequence[Question],
    documents: dict[str, EvalDocument],
    metric: str = "complete@5",
) -> dict[str, tuple[float, int]]:
    """Mean of `metric` and question count per question kind and per document format."""
    groups: dict[str, list[float]] = {}
    for question, value in zip(questions, result.per_question[metric], strict=True):
        for key in (f"kind:{question.kind or 'unlabelled'}", documents[question.document].format):
            groups.setdefault(key, []).append(float(value))
    return {key: (sum(values) / len(values), len(values)) for key, values in sorted(groups.items())}


def results_json(
    sweep: Sweep,
    questions: Sequence[Question],
    model: str,
    documents: dict[str, EvalDocument] | None = None,
) -> dict[str, Any]:
    """Everything in the table, plus per-question values, as plain JSON."""
    return {
        "embeddingModel": model,
        "questions": len(questions),
        "skipped": sweep.skipped,
        "recommendation": (
            {
                "setting": sweep.recommendation.label,
                "sentence": sweep.recommendation.sentence,
                **_configuration_json(sweep),
            }
            if sweep.recommendation
            else None
        ),
        "settings": [
            {
                "label": r.label,
                "chunker": r.setting.chunker,
                "retrieval": r.retrieval,
                **({"passages": r.passages} if r.passages != "chunks" else {}),
                "unit": r.setting.unit.value,
                "maximumPageLength": r.setting.maximum,
                "pageOverlapLength": r.setting.overlap,
                "overlap": r.setting.overlap_label,
                "textSplitMode": r.setting.mode.value,
                "titlePrefix": r.setting.title_prefix,
                "strategy": r.setting.strategy,
                **(
                    {
                        "wordsPerChunk": r.setting.words_per_chunk,
                        "wordOverlap": r.setting.word_overlap,
                    }
                    if r.setting.strategy == "words"
                    else {}
                ),
                "metrics": {name: _interval_json(value) for name, value in r.means.items()},
                "cost": {
                    "chunks": r.cost.chunks,
                    "embeddedTokens": r.cost.tokens,
                    "embeddingPrice": r.cost.price,
                    "vectorStorageBytes": r.cost.storage_bytes,
                    "scoredTexts": r.cost.scored_texts,
                    "scoredTokens": r.cost.scored_tokens,
                    "scoringCalls": r.cost.scoring_calls,
                },
                "truncatedShare": r.truncated_share,
                "completeAt5By": (
                    {
                        k: {"mean": m, "questions": n}
                        for k, (m, n) in breakdown(r, questions, documents).items()
                    }
                    if documents is not None
                    else {}
                ),
                "warnings": len(r.warnings),
                "perQuestion": {name: values.tolist() for name, values in r.per_question.items()},
            }
            for r in sweep.results
        ],
        "comparisons": [
            {
                "setting": c.setting,
                "baseline": c.baseline,
                "differences": {name: _interval_json(v) for name, v in c.differences.items()},
            }
            for c in sweep.comparisons
        ],
    }


def _configuration_json(sweep: Sweep) -> dict[str, Any]:
    """The recommended setting as app settings and skillset inputs."""
    recommended = _recommended(sweep)
    if recommended is None:
        return {}
    config = configuration(recommended.setting)
    return {
        "appSettings": dict(config.app_settings),
        "skillsetInputs": [{"name": name, "source": source} for name, source in config.inputs],
        "notes": list(config.notes),
    }


def write_outputs(
    sweep: Sweep,
    questions: Sequence[Question],
    documents: dict[str, EvalDocument],
    model: str,
    folder: Path,
    scoring: Scoring | None = None,
) -> tuple[Path, Path]:
    """results.json and report.html in `folder` (`scoring`: what a strategy that embeds
    sentences calls when the chunk maps chunk again)."""
    folder.mkdir(parents=True, exist_ok=True)
    shown = _shown(sweep)
    if shown is not None:
        # The per-question links of report.html point at these.
        for name, page in question_maps(shown, questions, documents, scoring).items():
            path = folder / name
            path.parent.mkdir(exist_ok=True)
            write_atomically(path, page)
    # The plots on their own too, for a README or a pull request.
    plots = _plots(sweep)
    for name, plot in zip(PLOT_FILES[: len(plots)], plots, strict=True):
        if plot:
            write_atomically(folder / name, plot + "\n")
    # The two files a reader opens last, each replaced whole or not at all.
    json_path = folder / "results.json"
    write_atomically(
        json_path,
        json.dumps(results_json(sweep, questions, model, documents), indent=1, ensure_ascii=False)
        + "\n",
    )
    html_path = folder / "report.html"
    write_atomically(html_path, render_html(sweep, questions, documents, model))
    return json_path, html_path


def write_atomically(path: Path, text: str) -> None:
    """Write `path` through a temporary file renamed over it: a reader (or a run stopped
    half-way) sees the old file or the new one, never a part."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def _series(sweep: Sweep) -> dict[str, list[SettingResult]]:
    """Plot lines: one per chunker, unit, overlap, mode and prefix, over the maximum."""
    lines: dict[str, list[SettingResult]] = {}
    for result in sweep.results:
        s = result.setting
        name = result.label.replace(f"{s.maximum}/{s.overlap_label}", f"·/{s.overlap_label}")
        lines.setdefault(name, []).append(result)
    for members in lines.values():
        members.sort(key=lambda r: r.setting.maximum)
    return lines


Point = tuple[float, float, float, float]
"""x, y, and the low and high ends of y's 95% interval."""
DASHES = ("", "7 3", "2 3", "9 3 2 3", "4 4", "12 4")
"""Line patterns, so lines that coincide still show which is which."""
MARKERS: dict[str, tuple[tuple[float, float], ...]] = {
    "circle": (),
    "square": ((-1, -1), (1, -1), (1, 1), (-1, 1)),
    "triangle": ((0, -1.3), (1.2, 1), (-1.2, 1)),
    "diamond": ((0, -1.3), (1.3, 0), (0, 1.3), (-1.3, 0)),
}
"""Marker shapes: polygon corners in units of MARKER_SIZE (a circle has none)."""
MARKER_SIZE = 3.5
LINE_WIDTHS = (5.0, 3.5, 2.0, 1.0)
"""Earlier lines are drawn wider, so a line that coincides with a later one shows as a
border around it."""
OFFSET_PIXELS = 3.0
"""Each line is shifted sideways by this much from the next: equal points and their
intervals stand side by side instead of on top of each other."""
CAP = 3.0
"""Half-width of an interval's end caps, in pixels."""


def _marker(shape: str, x: float, y: float, color: str) -> str:
    if shape == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{MARKER_SIZE}" fill="{color}"/>'
    points = " ".join(
        f"{x + dx * MARKER_SIZE:.1f},{y + dy * MARKER_SIZE:.1f}" for dx, dy in MARKERS[shape]
    )
    return f'<polygon points="{points}" fill="{color}"/>'


def _svg_plot(
    title: str,
    lines: dict[str, list[Point]],
    x_label: str,
    y_label: str,
    *,
    log_x: bool = False,
    connect: bool = True,
) -> str:
    points = [p for line in lines.values() for p in line]
    if not points:
        return ""

    def fx(value: float) -> float:
        return math.log(value) if log_x else value

    xs = [fx(x) for x, *_ in points]
    ys = [value for _, y, low, high in points for value in (y, low, high)]
    x0, x1 = min(xs), max(xs)
    if x1 <= x0:  # one maximum only: put it in the middle
        x0, x1 = x0 - 1, x1 + 1
    # Settings differ by a few points: zoom on the values, not on 0..1.
    y0 = max(0.0, min(ys) - Y_PADDING)
    y1 = min(1.0, max(ys) + Y_PADDING) if max(ys) <= 1 else max(ys) * (1 + Y_PADDING)
    y1 = y1 if y1 > y0 else y0 + Y_PADDING

    def sx(value: float) -> float:
        return MARGIN + (fx(value) - x0) / (x1 - x0) * (PLOT_WIDTH - 2 * MARGIN)

    def sy(value: float) -> float:
        return PLOT_HEIGHT - MARGIN - (value - y0) / (y1 - y0) * (PLOT_HEIGHT - 2 * MARGIN)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{PLOT_WIDTH + 260}" '
        f'height="{PLOT_HEIGHT}" role="img" aria-label="{html.escape(title)}">',
        f'<text x="{MARGIN}" y="18" font-weight="bold">{html.escape(title)}</text>',
        f'<text x="{PLOT_WIDTH - MARGIN}" y="18" text-anchor="end" font-size="10">'
        "bars: 95% intervals</text>",
        f'<line x1="{MARGIN}" y1="{PLOT_HEIGHT - MARGIN}" x2="{PLOT_WIDTH - MARGIN}" '
        f'y2="{PLOT_HEIGHT - MARGIN}" stroke="#333"/>',
        f'<line x1="{MARGIN}" y1="{MARGIN}" x2="{MARGIN}" y2="{PLOT_HEIGHT - MARGIN}" '
        'stroke="#333"/>',
        f'<text x="{PLOT_WIDTH / 2}" y="{PLOT_HEIGHT - 10}" text-anchor="middle">'
        f"{html.escape(x_label)}</text>",
        f'<text x="12" y="{PLOT_HEIGHT / 2}" transform="rotate(-90 12 {PLOT_HEIGHT / 2})" '
        f'text-anchor="middle">{html.escape(y_label)}</text>',
    ]
    for tick in range(5):
        value = y0 + (y1 - y0) * tick / 4
        parts.append(
            f'<text x="{MARGIN - 4}" y="{sy(value) + 4:.1f}" text-anchor="end" font-size="10">'
            f"{value:.2f}</text>"
        )
    ticks = sorted({x for x, *_ in points})
    if len(ticks) > MAX_X_TICKS:  # costs: label the range, not every point
        ticks = [ticks[round(i * (len(ticks) - 1) / (MAX_X_TICKS - 1))] for i in range(MAX_X_TICKS)]
    for x in ticks:
        parts.append(
            f'<text x="{sx(x):.1f}" y="{PLOT_HEIGHT - MARGIN + 14}" text-anchor="middle" '
            f'font-size="10">{x:g}</text>'
        )
    middle = (len(lines) - 1) / 2
    for index, (name, line) in enumerate(lines.items()):
        color = PALETTE[index % len(PALETTE)]
        dash = DASHES[index % len(DASHES)] if connect else ""
        shape = list(MARKERS)[index % len(MARKERS)]
        shift = (index - middle) * OFFSET_PIXELS
        coords = [(sx(x) + shift, sy(y), sy(low), sy(high)) for x, y, low, high in sorted(line)]
        pattern = f' stroke-dasharray="{dash}"' if dash else ""
        if connect and len(coords) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _, _ in coords)
            parts.append(
                f'<polyline points="{path}" fill="none" stroke="{color}" '
                f'stroke-width="{LINE_WIDTHS[index % len(LINE_WIDTHS)]}"{pattern}/>'
            )
        for x, y, low, high in coords:
            parts.append(
                f'<path d="M{x:.1f},{low:.1f}V{high:.1f}M{x - CAP:.1f},{low:.1f}H{x + CAP:.1f}'
                f'M{x - CAP:.1f},{high:.1f}H{x + CAP:.1f}" stroke="{color}" stroke-width="1" '
                'opacity="0.6" fill="none"/>'
            )
            parts.append(_marker(shape, x, y, color))
        legend_y = MARGIN + 14 * index
        sample = (
            f'<line x1="{PLOT_WIDTH + 2}" y1="{legend_y - 4}" x2="{PLOT_WIDTH + 22}" '
            f'y2="{legend_y - 4}" stroke="{color}" stroke-width="2"{pattern}/>'
            if connect
            else ""
        )
        parts.append(
            sample
            + _marker(shape, PLOT_WIDTH + 12, legend_y - 4, color)
            + f'<text x="{PLOT_WIDTH + 28}" y="{legend_y}" font-size="11">'
            f"{html.escape(name)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


COLUMNS = (
    ("complete@5", "a top-5 chunk holds the whole reference answer"),
    ("hit@5", "a top-5 chunk overlaps the reference"),
    ("MRR@10", "1 / rank of the first chunk that overlaps the reference, 0 past rank 10"),
    (
        "≤1k tokens, ≤2k tokens",
        "the top chunks in rank order while their texts fit 1,000 or 2,000 tokens (equal "
        "context for every chunk size): one of them holds the whole reference",
    ),
    ("recall@5", "the share of the reference's characters the top 5 chunks cover"),
    (
        "IoU@5",
        "characters the top 5 chunks share with the reference, over the characters either "
        "covers (intersection over union: 1 when the top 5 are exactly the answer)",
    ),
    ("chunks, tokens", "what the setting embeds: chunks and their cl100k tokens"),
    (
        "scored",
        "texts a strategy embedded to plan its chunks (a semantic strategy's sentence "
        "windows), billed like the chunks at every indexing run; 0 for the others",
    ),
    (
        "truncated",
        "the share of chunks longer than the embedding model's window, scored on text the "
        "model never read; a setting over 10% is not recommended",
    ),
    ("Δ … vs split", "paired difference against the Split-skill row at the same limits"),
)
"""The report page's legend for the table's columns."""


_NO_CHARTS = (
    "<p>No charts: each setting ran at one maximumPageLength, so every line would be a "
    "single dot; the table has the values.</p>"
)


def _legend() -> str:
    items = "".join(
        f"<dt><code>{html.escape(name)}</code></dt><dd>{html.escape(text)}</dd>"
        for name, text in COLUMNS
    )
    return f'<dl class="legend">{items}</dl>'


def _plots(sweep: Sweep) -> list[str]:
    """The charts, or none when every line would be a single dot (a one-setting grid:
    the table already says everything such a chart could)."""
    series = _series(sweep)
    if all(len(members) < 2 for members in series.values()):
        return []
    plots = []
    for metric, title in (("complete@5", "answer-complete@5"), ("hit@5", "hit@5")):
        lines = {
            name: [_point(float(r.setting.maximum), r.means[metric]) for r in members]
            for name, members in series.items()
        }
        plots.append(
            _svg_plot(f"{title} against maximumPageLength", lines, "maximumPageLength", title)
        )
    cost = {
        name: [_point(float(r.cost.tokens), r.means["complete@5"]) for r in members]
        for name, members in series.items()
    }
    plots.append(
        _svg_plot(
            "cost against quality",
            cost,
            "embedded tokens (log)",
            "answer-complete@5",
            log_x=True,
            connect=False,
        )
    )
    return plots


def _point(x: float, interval: Interval) -> Point:
    return (x, interval.mean, interval.low, interval.high)


def _question_rows(
    result: SettingResult, questions: Sequence[Question], documents: dict[str, EvalDocument]
) -> str:
    rows = []
    for question, trace in zip(questions, result.traces, strict=True):
        top = trace.top
        verdict = (
            "complete"
            if trace.complete_rank is not None
            else "hit, cut"
            if trace.first_hit is not None and trace.first_hit < K
            else "miss"
        )
        source = documents[question.document].source
        reference = source[question.start : question.end]
        cut = cuts(top, question)
        rank1 = f"{top.document} [{top.start}:{top.end}]" + (" cuts the answer" if cut else "")
        excerpt = documents[top.document].source[top.start : top.start + EXCERPT]
        rows.append(
            f'<tr id="q{question.line}" class="{verdict.split(",", maxsplit=1)[0]}">'
            f"<td>{question.line}</td>"
            f"<td>{html.escape(question.question)}<br>"
            f'<a href="{html.escape(map_path(question))}#mark">chunk map</a></td>'
            f"<td>{html.escape(question.document)} [{question.start}:{question.end}]<br>"
            f"<small>{html.escape(reference[:EXCERPT])}</small></td>"
            f"<td>{verdict}</td><td>{html.escape(rank1)}<br><small>{html.escape(excerpt)}</small></td></tr>"
        )
    return "".join(rows)


def _breakdown_table(
    sweep: Sweep, questions: Sequence[Question], documents: dict[str, EvalDocument]
) -> str:
    tables = [breakdown(r, questions, documents) for r in sweep.results]
    if not tables:
        return ""
    keys = list(tables[0])
    head = "".join(
        f"<th>{html.escape(k.removeprefix('kind:'))} ({tables[0][k][1]})</th>" for k in keys
    )
    rows = "".join(
        f"<tr><td>{html.escape(r.label)}</td>"
        + "".join(f"<td>{table[k][0]:.3f}</td>" for k in keys)
        + "</tr>"
        for r, table in zip(sweep.results, tables, strict=True)
    )
    return f"<table><thead><tr><th>setting</th>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _recommended(sweep: Sweep) -> SettingResult | None:
    return next(
        (
            r
            for r in sweep.results
            if sweep.recommendation and r.label == sweep.recommendation.label
        ),
        None,
    )


def _shown(sweep: Sweep) -> SettingResult | None:
    """The setting whose questions the page lists: the recommended one, else (no
    recommendation) our best on answer-complete@5, so every run shows where answers are."""
    recommended = _recommended(sweep)
    if recommended is not None:
        return recommended
    ours = [r for r in sweep.results if r.setting.chunker == "ours" and r.passages == "chunks"]
    return max(ours, key=lambda r: r.means["complete@5"].mean, default=None)


def render_html(
    sweep: Sweep, questions: Sequence[Question], documents: dict[str, EvalDocument], model: str
) -> str:
    """A self-contained page: recommendation, table, plots, and per-question results."""
    rows = table_rows(sweep)
    table = "<table><thead><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
    table += "</tr></thead><tbody>"
    for row in rows[1:]:
        table += "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
    table += "</tbody></table>"
    recommended = _recommended(sweep)
    shown = _shown(sweep)
    per_question = ""
    if shown is not None:
        why = "" if shown is recommended else " (our best complete@5; not a recommendation)"
        per_question = (
            f"<h2>Questions at {html.escape(shown.label)}{why}</h2>"
            "<p>Each question links to the chunk map of its document at this setting: the "
            "reference marked, the top chunks labelled with their ranks.</p>"
            "<table><thead><tr><th>line</th><th>question</th><th>reference</th><th>top 5</th>"
            "<th>rank 1</th></tr></thead><tbody>"
            + _question_rows(shown, questions, documents)
            + "</tbody></table>"
        )
    skipped = "".join(f"<li>{html.escape(s)}</li>" for s in sweep.skipped)
    plots = _plots(sweep)
    by_kind = _breakdown_table(sweep, questions, documents)
    sentence = sweep.recommendation.sentence if sweep.recommendation else "No setting of ours ran."
    apply = (
        "<p>To index with it:</p><pre>"
        + html.escape("\n".join(configuration(recommended.setting).lines()))
        + "</pre>"
        if recommended is not None
        else ""
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Chunk settings evaluation</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; font-size: 13px; margin: 1em 0; }}
td, th {{ border: 1px solid #ccc; padding: 3px 6px; vertical-align: top; text-align: left; }}
tr.complete td:nth-child(4) {{ background: #d8f0d8; }}
tr.hit td:nth-child(4) {{ background: #fdf1cf; }}
tr.miss td:nth-child(4) {{ background: #f6d5d5; }}
tr:target {{ outline: 3px solid #d00; }}
.recommendation {{ font-size: 1.1em; background: #eef4fb; padding: .8em; border-radius: 6px; }}
.legend {{ font-size: 13px; display: grid; grid-template-columns: max-content auto; gap: 2px 1em; }}
.legend dd {{ margin: 0; }}
/* The settings to apply: one az command is a 300-character line; wrapped, not cut off. */
pre {{ white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f6f6; padding: .6em; }}
</style></head><body>
<h1>Chunk settings evaluation</h1>
<p>{len(questions)} questions over {len(documents)} documents; embeddings: {html.escape(model)}.
Intervals are 95% bootstrap intervals over questions; Δ columns are paired differences
against the Split-skill emulation at the same limits (* where the interval excludes 0).</p>
<p class="recommendation">{html.escape(sentence)}</p>
{apply}
{table}
{_legend()}
{"".join(f"<div>{plot}</div>" for plot in plots) or _NO_CHARTS}
<h2>answer-complete@5 by kind of question and format of document</h2>
{by_kind}
{"<h2>Skipped</h2><ul>" + skipped + "</ul>" if skipped else ""}
{per_question}
</body></html>
"""
