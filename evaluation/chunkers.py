"""Chunk every document at one setting: our chunker, or a baseline, as spans of the source."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from chunking.measure.sizing import make_sizer
from chunking.options import ChunkOptions, SplitMode
from chunking.pipeline import chunk_document
from chunking.plan.pages import split_pages, split_sentences
from chunking.plan.scoring import Scoring
from evaluation.baseline import langchain_markdown
from evaluation.settings import RULE_VARIANTS

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from chunking.plan.scoring import TextEmbedder, Vector
    from evaluation.documents import EvalDocument
    from evaluation.settings import Setting


@dataclass(frozen=True, slots=True)
class EvalChunk:
    """One chunk of one setting: a span of a document's source and the text embedded."""

    document: str
    start: int
    end: int
    text: str
    title: str = ""
    """The index's searchable `title`: ours the document's title, a baseline's the file
    name (as the portal's import wizard fills it from `metadata_storage_name`)."""
    headings: tuple[str, ...] = ()
    """The index's searchable `headings` (ours only: a structure-blind split has none)."""


@dataclass(frozen=True, slots=True)
class ChunkRun:
    """All chunks of one setting, and what a user should know about them."""

    chunks: tuple[EvalChunk, ...]
    warnings: tuple[str, ...]
    scored_texts: int = 0
    """Texts the strategy sent to its embedder (the semantic strategy: its sentence
    windows, each distinct one once per document): what it would cost to index."""
    scoring_calls: int = 0
    """Embedder calls those texts took."""


@dataclass(slots=True)
class CountingEmbedder:
    """An embedder that counts the texts and calls it is given."""

    embed: TextEmbedder
    texts: int = field(default=0)
    calls: int = field(default=0)

    def __call__(self, texts: Sequence[str], /) -> Sequence[Vector]:
        self.calls += 1
        self.texts += len(texts)
        return self.embed(texts)


class BaselineUnavailableError(RuntimeError):
    """A baseline's package is not installed (requirements-bench.txt)."""


def chunk_all(
    setting: Setting, documents: Iterable[EvalDocument], scoring: Scoring | None = None
) -> ChunkRun:
    """The chunks of every document at `setting`, in document order; `scoring` is what a
    strategy that embeds sentences calls (counted)."""
    chunker = _CHUNKERS[setting.chunker]
    given = scoring or Scoring()
    counter = CountingEmbedder(given.embed)
    counted = Scoring(embed=counter, pairs=given.pairs, pair_source=given.pair_source)
    chunks: list[EvalChunk] = []
    warnings: list[str] = []
    for document in documents:
        found, notes = chunker(setting, document, counted)
        chunks.extend(found)
        warnings.extend(f"{document.name}: {note}" for note in notes)
    return ChunkRun(tuple(chunks), tuple(warnings), counter.texts, counter.calls)


def chunk_options(setting: Setting) -> ChunkOptions:
    """Our chunker's options at `setting` (the chunk map of a question uses them too)."""
    switches: dict[str, Any] = dict(RULE_VARIANTS[setting.rules])
    return ChunkOptions(
        limits=setting.limits,
        mode=setting.mode,
        title_prefix=setting.title_prefix,
        strategy=setting.strategy,
        parameters={"words": setting.words, "semantic": setting.semantic}.get(setting.strategy),
        strip_markup=setting.strip_markup,
        section_fill=setting.section_fill,
        **switches,
    )


def _ours(
    setting: Setting, document: EvalDocument, scoring: Scoring
) -> tuple[list[EvalChunk], list[str]]:
    options = chunk_options(setting)
    # The file name goes in as the skill gets it from metadata_storage_name.
    result = chunk_document(
        document.text,
        options=options,
        format=document.format,
        file_name=document.name,
        scoring=scoring,
    )
    chunks = [
        EvalChunk(document.name, c.start, c.end, c.text, c.title, c.headings) for c in result.chunks
    ]
    return chunks, list(result.warnings)


def _split_skill(
    setting: Setting, document: EvalDocument, scoring: Scoring
) -> tuple[list[EvalChunk], list[str]]:
    source = document.source
    if setting.mode is SplitMode.SENTENCES:
        pages = split_sentences(source)
    else:
        sizer = make_sizer(setting.unit, "cl100k_base")
        pages = split_pages(source, sizer, setting.limits)
    chunks = [
        EvalChunk(document.name, p.start, p.end, source[p.start : p.end], document.name)
        for p in pages
    ]
    return chunks, []


def _langchain(
    setting: Setting, document: EvalDocument, scoring: Scoring
) -> tuple[list[EvalChunk], list[str]]:
    """LangChain's header splitter, then its recursive splitter, headings left out of the text.

    LangChain returns texts, not offsets (and strips lines), so each chunk is located
    in the source from its first and last line; a chunk that cannot be found is
    reported and left out.
    """
    splitter = _langchain_splitter(setting)
    source = document.source
    chunks: list[EvalChunk] = []
    lost = 0
    cursor = 0
    for text in splitter(source):
        span = _locate(source, text, cursor)
        if span is None:
            lost += 1
            continue
        chunks.append(EvalChunk(document.name, span[0], span[1], text, document.name))
        cursor = span[0]
    notes = [f"{lost} LangChain chunk(s) could not be located in the source"] if lost else []
    return chunks, notes


def _langchain_splitter(setting: Setting) -> Callable[[str], list[str]]:
    """The benchmark's LangChain peer, at the setting's limits."""
    try:
        return langchain_markdown(setting.limits)
    except ImportError as error:
        raise BaselineUnavailableError(
            "the langchain baseline needs langchain-text-splitters "
            "(pip install -r requirements-bench.txt)"
        ) from error


def _locate(source: str, text: str, cursor: int) -> tuple[int, int] | None:
    """The span of a LangChain chunk (which strips lines): anchored on its longest line,
    found at or after `cursor`; the lines before it are found backwards from there, the
    lines after it forwards, each after the one before."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    pivot = max(range(len(lines)), key=lambda i: len(lines[i]))
    middle = source.find(lines[pivot], cursor)
    if middle < 0:
        middle = source.find(lines[pivot])
    if middle < 0:
        return None
    start = middle
    for line in reversed(lines[:pivot]):
        found = source.rfind(line, 0, start)
        if found < 0:
            break
        start = found
    end = middle + len(lines[pivot])
    for line in lines[pivot + 1 :]:
        found = source.find(line, end)
        if found < 0:
            break
        end = found + len(line)
    return start, end


_CHUNKERS: dict[
    str, Callable[[Setting, EvalDocument, Scoring], tuple[list[EvalChunk], list[str]]]
] = {
    "ours": _ours,
    "split-skill": _split_skill,
    "langchain": _langchain,
}
