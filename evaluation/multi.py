"""`python -m evaluation` over several question sets and embedding models at once."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from chunking.options import OptionError
from evaluation.embedding import PROVIDERS
from evaluation.report import write_outputs
from evaluation.report_sets import ModelRun, write_runs
from evaluation.retrieval import RETRIEVAL_MODES
from evaluation.run import run_sweep
from evaluation.sets import pool
from evaluation.sweeps import chosen_once
from skills.embedding.scoring.cross_encoder import load_cross_encoder

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from evaluation.chunkers import ChunkRun
    from evaluation.embedding import Embeddings, ProviderName
    from evaluation.passages import PassageMode
    from evaluation.retrieval import RetrievalMode
    from evaluation.sets import QuestionSet
    from evaluation.settings import Setting

ENV_CROSS_ENCODER = "CROSS_ENCODER_PATH"


def parse_retrievals(text: str) -> tuple[RetrievalMode, ...]:
    """`--retrieval vector,keyword,hybrid[,semantic]`; OptionError names a bad item."""
    return chosen_once(text, RETRIEVAL_MODES, "--retrieval", empty="at least one mode")


def parse_providers(text: str | None) -> list[ProviderName | None]:
    """`--embedding e5,minilm`; None (the default provider) when not given."""
    if text is None:
        return [None]
    chosen: list[ProviderName | None] = []
    for item in (part.strip() for part in text.split(",")):
        if item not in PROVIDERS:
            raise OptionError(f"--embedding must be among {', '.join(PROVIDERS)} (got {item!r})")
        chosen.append(item)
    return chosen


def pair_scorer(
    folder: str | None,
) -> Callable[[Sequence[tuple[str, str]]], list[float]] | None:
    """The local cross-encoder's scorer when a folder is configured (loaded on first use)."""
    if not folder:
        return None
    loaded: list[Callable[[Sequence[tuple[str, str]]], list[float]]] = []

    def score(pairs: Sequence[tuple[str, str]]) -> list[float]:
        if not loaded:
            loaded.append(load_cross_encoder(Path(folder)).predict)
        return loaded[0](pairs)

    return score


def _folder_name(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]+", "-", model).strip("-")


def run_sets(
    sets: Sequence[QuestionSet],
    models: Sequence[Embeddings],
    settings: Sequence[Setting],
    out: Path,
    *,
    price: float,
    skipped: Sequence[str],
    retrievals: Sequence[RetrievalMode],
    cross_encoder: str | None,
    progress: Callable[[str, int, int], None] | None,
    passages: Sequence[PassageMode] = ("chunks",),
    chunked: Mapping[str, Mapping[Setting, ChunkRun | str]] | None = None,
) -> tuple[list[ModelRun], Path, Path]:
    """A sweep per set and model, each set's own outputs in `out/<set>/<model>/`, and the
    whole run's results.json and report.html in `out`; `chunked` (by set name) holds the
    settings chunk_ahead cut already. The caller closes the embeddings. Raises
    EmbeddingError."""
    scorer = pair_scorer(cross_encoder or os.environ.get(ENV_CROSS_ENCODER))
    runs: list[ModelRun] = []
    for embeddings in models:
        sweeps = {}
        for item in sets:
            sweep = run_sweep(
                item.documents,
                item.questions,
                settings,
                embeddings,
                price=price,
                skipped=skipped,
                progress=progress,
                retrievals=retrievals,
                pair_scorer=scorer,
                passages=passages,
                chunked=(chunked or {}).get(item.name),
            )
            sweeps[item.name] = sweep
            write_outputs(
                sweep,
                item.questions,
                item.documents,
                embeddings.model,
                out / item.name / _folder_name(embeddings.model),
                scoring=embeddings.scoring(),
            )
        runs.append(
            ModelRun(embeddings.model, embeddings.window, sweeps, pool(list(sweeps.values())))
        )
    json_path, html_path = write_runs(runs, sets, out)
    return runs, json_path, html_path
