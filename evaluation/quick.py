"""`--quick`: a fixed sample of the questions, over as few documents as that takes, and a
grid of one setting against the Split skill, so a first run takes minutes on a laptop."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from evaluation.documents import EvalDocument
    from evaluation.questions import Question

QUICK_SEED = 30
"""The sample is the same on every run, so a re-run is served from the cache."""
QUICK_QUESTIONS = 30
"""At most this many questions."""
QUICK_SOURCE_CHARACTERS = 50_000
"""The sampled questions' documents stop growing past this many characters: the
embedding time is about the documents' text times the settings, not the questions."""
QUICK_GRID = {"max": "512", "overlap": "64", "baselines": "split-skill"}
"""Grid options `--quick` sets unless given: the skill's token defaults (512/64) against
the Split-skill emulation at the same limits; where a local model embeds, the lengths are
what it reads whole instead (evaluation.__main__.quick_lengths: the skill's one rule)."""


def quick_sample(
    questions: Sequence[Question],
    documents: dict[str, EvalDocument],
    *,
    seed: int = QUICK_SEED,
    most: int = QUICK_QUESTIONS,
    characters: int = QUICK_SOURCE_CHARACTERS,
) -> tuple[list[Question], dict[str, EvalDocument]]:
    """Questions drawn in a seeded order, each kept when its document is already in or
    still fits `characters`; and those documents (the only ones chunked and searched)."""
    order = list(questions)
    random.Random(seed).shuffle(order)
    chosen: dict[str, EvalDocument] = {}
    size = 0
    kept: list[Question] = []
    for question in order:
        if len(kept) >= most:
            break
        if question.document not in chosen:
            document = documents[question.document]
            if chosen and size + len(document.source) > characters:
                continue
            chosen[question.document] = document
            size += len(document.source)
        kept.append(question)
    kept.sort(key=lambda q: q.line)
    return kept, {name: chosen[name] for name in documents if name in chosen}
