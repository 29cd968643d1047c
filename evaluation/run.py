"""Run a sweep: chunk at every setting, embed, retrieve, score, compare, recommend."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from chunking.measure.encodings import load_encoding
from chunking.measure.sizing import TokenSizer
from chunking.plan.scoring import Scoring
from chunking.plan.strategies import SCORED_STRATEGIES
from evaluation.budget import BUDGET_METRICS, RECOMMENDED_ON, budget_scores
from evaluation.chunkers import BaselineUnavailableError, ChunkRun, EvalChunk, chunk_all
from evaluation.metrics import (
    METRICS,
    MRR_DEPTH,
    Interval,
    K,
    bootstrap_mean,
    paired_difference,
    score_question,
)
from evaluation.passages import passage_scores
from evaluation.retrieval import RANK_DEPTH, rank_modes

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    import numpy.typing as npt

    from chunking.plan.scoring import Vector
    from evaluation.documents import EvalDocument
    from evaluation.embedding import Embeddings
    from evaluation.passages import PassageMode
    from evaluation.questions import Question
    from evaluation.retrieval import RetrievalMode
    from evaluation.settings import Setting

BYTES_PER_FLOAT = 4
TOKENS_PER_MILLION = 1_000_000
READ_WHOLE_SHARE = 0.9
"""A setting is recommended only if the model reads at least this share of its chunks whole
(a truncated chunk is scored on text the model never saw)."""
COMPARED = ("complete@5", "hit@5", "mrr@10", *BUDGET_METRICS)
"""Metrics whose differences against the baseline get intervals."""
ALL_METRICS = (*METRICS, *BUDGET_METRICS)
"""Every per-question metric: the @k ones and the context-budget ones."""


@dataclass(frozen=True, slots=True)
class Cost:
    """What a setting costs to index."""

    chunks: int
    tokens: int
    """cl100k tokens of every embedded text (what Azure OpenAI bills)."""
    storage_bytes: int
    """Vector storage: chunks × dimensions × 4 bytes (float32)."""
    price: float
    """Embedding cost at the given price per million tokens."""
    scored_texts: int = 0
    """Texts the strategy itself embedded to plan the chunks (semantic: sentence windows)."""
    scoring_calls: int = 0
    """Embedder calls those took."""
    scored_tokens: int = 0
    """cl100k tokens of those texts: billed like the chunks', at every indexing run."""

    @property
    def total_tokens(self) -> int:
        """Everything embedded to index the documents: the chunks and the planning."""
        return self.tokens + self.scored_tokens


@dataclass(frozen=True, slots=True)
class QuestionTrace:
    """Where one question's answer is and what rank 1 returned (for the report)."""

    top: EvalChunk
    first_hit: int | None
    complete_rank: int | None
    ranked: tuple[EvalChunk, ...] = ()
    """The top K chunks, best first (the chunk map labels them with their ranks)."""


@dataclass(frozen=True, slots=True)
class SettingResult:
    """Scores and cost of one setting."""

    setting: Setting
    per_question: dict[str, npt.NDArray[np.float64]]
    means: dict[str, Interval]
    cost: Cost
    truncated_share: float
    """Share of chunks longer than the embedding model's window."""
    warnings: tuple[str, ...]
    traces: tuple[QuestionTrace, ...]
    chunks: tuple[EvalChunk, ...]
    retrieval: RetrievalMode = "vector"
    """How the chunks were ranked (evaluation.retrieval)."""
    passages: PassageMode = "chunks"
    """What the reader was handed for the ranked chunks (evaluation.passages)."""

    @property
    def label(self) -> str:
        """The setting's label and, past plain vector search and chunks, the retrieval
        mode and the passages."""
        label = self.setting.label
        if self.retrieval != "vector":
            label = f"{label} {self.retrieval}"
        return label if self.passages == "chunks" else f"{label} {self.passages}"


@dataclass(frozen=True, slots=True)
class Comparison:
    """A setting of ours against the Split-skill baseline at the same limits."""

    setting: str
    baseline: str
    differences: dict[str, Interval]


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The setting to use, and why, in one sentence; or, without a label, why none is."""

    label: str | None
    sentence: str


@dataclass(slots=True)
class Sweep:
    """Everything a sweep found."""

    results: list[SettingResult] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    recommendation: Recommendation | None = None


def needs_model(setting: Setting) -> bool:
    """Whether chunking at `setting` embeds sentences (a scored strategy of ours): its
    chunks depend on the model, so they are cut once per model, not ahead."""
    return setting.chunker == "ours" and setting.strategy in SCORED_STRATEGIES


def chunk_ahead(
    documents: dict[str, EvalDocument],
    settings: Sequence[Setting],
    progress: Callable[[str, int, int], None] | None = None,
    stage: str = "chunking",
) -> dict[Setting, ChunkRun | str]:
    """Every setting whose chunks do not depend on the model, chunked once for every
    model (what the whole run's estimate counts): its chunks, or why it has none."""
    ahead = [setting for setting in settings if not needs_model(setting)]
    chunked: dict[Setting, ChunkRun | str] = {}
    ordered = list(documents.values())
    for number, setting in enumerate(ahead):
        if progress is not None:
            progress(stage, number, len(ahead))
        try:
            run = chunk_all(setting, ordered)
        except BaselineUnavailableError as error:
            chunked[setting] = f"{setting.label}: {error}"
            continue
        chunked[setting] = run if run.chunks else f"{setting.label}: no chunks"
    if progress is not None:
        progress(stage, len(ahead), len(ahead))
    return chunked


def run_sweep(
    documents: dict[str, EvalDocument],
    questions: Sequence[Question],
    settings: Sequence[Setting],
    embeddings: Embeddings,
    *,
    price: float,
    skipped: Sequence[str] = (),
    progress: Callable[[str, int, int], None] | None = None,
    retrievals: Sequence[RetrievalMode] = ("vector",),
    pair_scorer: Callable[[Sequence[tuple[str, str]]], list[float]] | None = None,
    passages: Sequence[PassageMode] = ("chunks",),
    chunked: Mapping[Setting, ChunkRun | str] | None = None,
) -> Sweep:
    """Score every setting on the questions in every retrieval mode asked for (`semantic`
    only with a `pair_scorer`), the ranked chunks handed over as each of `passages`;
    baselines that cannot run are skipped. `chunked` (chunk_ahead) holds settings already
    chunked; the others are chunked here."""
    chunked = chunked or {}
    sweep = Sweep(skipped=list(skipped))
    if "semantic" in retrievals and pair_scorer is None:
        sweep.skipped.append("semantic: no cross-encoder configured (CROSS_ENCODER_PATH)")
    query_vectors, _ = embeddings.embed([q.question for q in questions], "query")
    counter = TokenSizer(load_encoding("cl100k_base"))
    ordered = list(documents.values())
    sentences = embeddings.scoring()
    sources = {name: document.source for name, document in documents.items()}
    passage_sizes: dict[str, int] = {}

    def passage_size(text: str) -> int:
        if text not in passage_sizes:
            passage_sizes[text] = counter.size(text)
        return passage_sizes[text]

    # Chunk every setting first, then embed every distinct text in one pass: the estimate
    # before it and the time left during it are about the whole run, not one setting.
    runs: list[tuple[Setting, ChunkRun, int]] = []
    for number, setting in enumerate(settings, 1):
        if setting in chunked:
            made = chunked[setting]
            if isinstance(made, str):
                sweep.skipped.append(made)
            else:
                runs.append((setting, made, 0))
            continue
        if progress is not None:
            progress("chunking", number - 1, len(settings))
        scored_tokens = [0]

        def embed(texts: Sequence[str], /, tally: list[int] = scored_tokens) -> Sequence[Vector]:
            tally[0] += sum(counter.size(text) for text in texts)
            return sentences.embed(texts)

        try:
            run = chunk_all(setting, ordered, Scoring(embed=embed))
        except BaselineUnavailableError as error:
            sweep.skipped.append(f"{setting.label}: {error}")
            continue
        if not run.chunks:
            sweep.skipped.append(f"{setting.label}: no chunks")
            continue
        runs.append((setting, run, scored_tokens[0]))
    if progress is not None and len(chunked) < len(settings):
        progress("chunking", len(settings), len(settings))
    distinct = list(dict.fromkeys(chunk.text for _, run, _ in runs for chunk in run.chunks))
    every_vector, every_truncated = embeddings.embed(distinct, "passage")
    row_of = {text: row for row, text in enumerate(distinct)}
    for setting, run, scored in runs:
        scored_tokens = [scored]
        texts = [chunk.text for chunk in run.chunks]
        rows = [row_of[text] for text in texts]
        vectors, truncated = every_vector[rows], every_truncated[rows]
        sizes = [counter.size(text) for text in texts]
        tokens = sum(sizes)
        rankings = rank_modes(
            retrievals,
            run.chunks,
            [q.question for q in questions],
            query_vectors,
            vectors,
            pair_scorer,
            max(RANK_DEPTH, MRR_DEPTH),
        )
        cost = Cost(
            chunks=len(texts),
            tokens=tokens,
            storage_bytes=len(texts) * vectors.shape[1] * BYTES_PER_FLOAT,
            price=(tokens + scored_tokens[0]) * price / TOKENS_PER_MILLION,
            scored_texts=run.scored_texts,
            scoring_calls=run.scoring_calls,
            scored_tokens=scored_tokens[0],
        )
        for (retrieval, top), handed in itertools.product(rankings.items(), passages):
            per_question: dict[str, list[float]] = {name: [] for name in ALL_METRICS}
            traces: list[QuestionTrace] = []
            for question, row in zip(questions, top, strict=True):
                if handed == "chunks":
                    ranked = [run.chunks[index] for index in row]
                    scores = score_question(question, ranked)
                    budgets = budget_scores(question, ranked, [sizes[i] for i in row])
                    shown = tuple(ranked[:K])
                else:
                    indices = [int(index) for index in row]
                    scores, budgets, shown = passage_scores(
                        question, indices, run.chunks, sources, handed, passage_size
                    )
                values = scores.values | budgets
                for name in ALL_METRICS:
                    per_question[name].append(values[name])
                traces.append(
                    QuestionTrace(shown[0], scores.first_hit, scores.complete_rank, shown)
                )
            arrays = {name: np.array(values) for name, values in per_question.items()}
            sweep.results.append(
                SettingResult(
                    setting=setting,
                    per_question=arrays,
                    means={name: bootstrap_mean(values) for name, values in arrays.items()},
                    cost=cost,
                    truncated_share=float(truncated.mean()),
                    warnings=run.warnings,
                    traces=tuple(traces),
                    chunks=run.chunks,
                    retrieval=retrieval,
                    passages=handed,
                )
            )
    sweep.comparisons = compare_with_baseline(sweep.results)
    sweep.recommendation = recommend(sweep.results)
    return sweep


def compare_with_baseline(results: Sequence[SettingResult]) -> list[Comparison]:
    """Each of our settings against the Split-skill row with the same unit, limits, split
    mode, retrieval mode and passages."""
    baselines = {
        (
            r.setting.unit,
            r.setting.maximum,
            r.setting.overlap,
            r.setting.mode,
            r.retrieval,
            r.passages,
        ): r
        for r in results
        if r.setting.chunker == "split-skill"
    }
    comparisons: list[Comparison] = []
    for result in results:
        if result.setting.chunker == "split-skill":
            continue
        s = result.setting
        baseline = baselines.get(
            (s.unit, s.maximum, s.overlap, s.mode, result.retrieval, result.passages)
        )
        if baseline is None:
            continue
        differences = {
            name: paired_difference(result.per_question[name], baseline.per_question[name])
            for name in COMPARED
        }
        comparisons.append(Comparison(result.label, baseline.label, differences))
    return comparisons


def recommend(results: Sequence[SettingResult]) -> Recommendation | None:
    """The setting to use, or why there is none.

    Among our settings the model reads whole (docs/guide/evaluation.md: at least
    READ_WHOLE_SHARE of their chunks), the best answer-complete within the largest context
    budget (equal context: chunk size alone cannot win it), then complete@5; among those
    not worse than it by the paired interval, the cheapest to embed (a scored strategy's
    sentence embeddings included: they are billed at every indexing run too). It is
    recommended only when it beats every other row (the Split-skill rows, and our readable
    settings outside that tie) by a paired 95% interval that excludes 0."""
    # Passages are how a query hands chunks over, not a chunk setting to recommend.
    rows = [r for r in results if r.passages == "chunks"]
    ours = [r for r in rows if r.setting.chunker == "ours"]
    if not ours:
        return None
    # Results built without the budget metrics (older callers) are ranked on @5.
    metric = RECOMMENDED_ON if all(RECOMMENDED_ON in r.means for r in rows) else "complete@5"
    readable = [r for r in ours if 1 - r.truncated_share >= READ_WHOLE_SHARE]
    if not readable:
        least = min(ours, key=lambda r: r.truncated_share)
        return Recommendation(
            None,
            f"No recommendation: the model truncates more than {1 - READ_WHOLE_SHARE:.0%} of "
            f"the chunks of every setting of ours ({least.label}: "
            f"{least.truncated_share:.0%}), so their scores are on text it never read; "
            "try smaller chunks.",
        )
    best = max(readable, key=lambda r: (r.means[metric].mean, r.means["complete@5"].mean))
    tied = [
        r
        for r in readable
        if paired_difference(r.per_question[metric], best.per_question[metric]).high >= 0
    ]
    chosen = min(tied, key=lambda r: (r.cost.total_tokens, r.cost.chunks, r.label))
    # By identity: results hold arrays, which `==` does not reduce to one truth value.
    contenders = {id(r) for r in readable} - {id(r) for r in tied}
    rivals = [r for r in rows if r.setting.chunker != "ours" or id(r) in contenders]
    if not rivals:
        return Recommendation(
            None,
            "No recommendation: no difference measurable on these questions ("
            + (
                "one setting ran: nothing to compare it with"
                if len(rows) == 1
                else f"the {len(tied)} settings that ran do not differ by the paired 95% interval"
            )
            + ").",
        )
    margins = {
        r.label: paired_difference(chosen.per_question[metric], r.per_question[metric])
        for r in rivals
    }
    for rival, difference in margins.items():
        if difference.high < 0:
            return Recommendation(
                None,
                f"No recommendation of ours: {rival} is better than our best readable "
                f"setting, {chosen.label}, on {_name(metric)} "
                f"by {_signed(Interval(-difference.mean, -difference.high, -difference.low))}.",
            )
        if difference.low <= 0:
            return Recommendation(
                None,
                "No recommendation: no difference measurable on these questions "
                f"({chosen.label} against {rival}: {_name(metric)} "
                f"{_signed(difference)}, an interval that includes 0).",
            )
    m = chosen.means
    within = f"{_name(metric)} {_interval(m[metric])}, " if metric != "complete@5" else ""
    sentence = (
        f"Use {chosen.label}: {within}answer-complete@5 {_interval(m['complete@5'])}, "
        f"hit@5 {_interval(m['hit@5'])}, MRR@10 {m['mrr@10'].mean:.3f}, "
        f"{chosen.cost.chunks} chunks, {_tokens(chosen.cost)} to embed; better than "
        + ", ".join(f"{label} by {_signed(margin)}" for label, margin in margins.items())
    )
    if chosen is not best:
        sentence += (
            f"; the best, {best.label} "
            f"({best.means[metric].mean:.3f}), is not better by the paired 95% interval "
            f"and costs {_tokens(best.cost)}"
        )
    return Recommendation(chosen.label, sentence + ".")


def _name(metric: str) -> str:
    """`answer-complete within 2,000 tokens` for a budget metric (`complete@2000tok`),
    else the metric's name."""
    budget = metric.removeprefix("complete@").removesuffix("tok")
    if metric.endswith("tok") and budget.isdigit():
        return f"answer-complete within {int(budget):,} tokens"
    return metric


def _signed(interval: Interval) -> str:
    return f"{interval.mean:+.3f} [{interval.low:+.3f}, {interval.high:+.3f}]"


def _tokens(cost: Cost) -> str:
    """`114,078 tokens`, or `110,486 + 9,870 tokens` when planning embedded some too."""
    if cost.scored_tokens:
        return f"{cost.tokens:,} + {cost.scored_tokens:,} tokens (chunks + planning)"
    return f"{cost.tokens:,} tokens"


def _interval(interval: Interval) -> str:
    return f"{interval.mean:.3f} [{interval.low:.3f}, {interval.high:.3f}]"
