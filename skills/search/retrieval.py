"""Query-time merging: the top-k chunks of a search, neighbours joined into passages.

Chunks of one document that overlap or touch (by their code-point offsets) become one
passage, each character once and in document order, so a prompt built from the passages
repeats no text. The passage text is rebuilt from the chunks' own contents (the union of
spans that overlap or touch is contiguous), so no source document is needed.

`merge_neighbours` is pure; `search_and_merge` runs one query through an
azure-search-documents `SearchClient` on the chunk index `infra/` defines and merges.
An index made before it stored `offset` and `length` is merged by ordinal adjacency and
the text the neighbours share instead (see `merge_neighbours`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urldefrag

from skills.chunk_schema import KEY_FIELD, PARENT_KEY_FIELD, index_field_for
from skills.skill.chunk_records import FRAGMENT_SAFE

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

SEMANTIC_CONFIGURATION = "chunks"
"""The semantic configuration `skills.search.definitions` gives the chunk index."""
MIN_SHARED_TEXT = 16
"""Characters two ordinal neighbours must share (end of one = start of the next) to be
merged without offsets. A shorter match is as likely chance (a word, a newline) as
overlap, and merging on chance would drop real text; not merging only repeats a little."""

RETRIEVED_MEMBERS = ("content", "title", "headings", "url", "anchor", "ordinal")
"""The chunk members a `RetrievedChunk` is built from, besides its key and document."""
SPAN_MEMBERS = ("offset/codePoint", "length/codePoint")
"""The chunk's span in code points, which merging by offsets needs."""
CONTENT, TITLE, HEADINGS, URL, ANCHOR, ORDINAL = (
    index_field_for(member).name for member in RETRIEVED_MEMBERS
)
OFFSET, LENGTH = (index_field_for(member).name for member in SPAN_MEMBERS)

INDEX_FIELDS = (KEY_FIELD, PARENT_KEY_FIELD, CONTENT, TITLE, HEADINGS, URL, ANCHOR, ORDINAL)
"""Index fields a search selects to build `RetrievedChunk`s: the ones
`skills.chunk_schema.INDEX_FIELDS` fills from `RETRIEVED_MEMBERS`, and the keys."""
OFFSET_FIELDS = (OFFSET, LENGTH)
"""The span fields, selected only from an index that has them."""


@dataclass(frozen=True, slots=True)
class RetrievedChunk:
    """One search result: a span of a document, with what a citation needs."""

    document: str
    """The document the chunk belongs to (the index's `parent_id`)."""
    start: int | None
    """Code-point offset of the chunk in its document's source; None when unknown."""
    end: int | None
    """Half-open end, `start + len(content)`; None when unknown."""
    content: str
    """The source slice `source[start:end]`."""
    score: float
    """The search score (`@search.score`)."""
    url: str | None
    """The chunk's URL, usually with its `#anchor` already."""
    anchor: str | None
    """Fragment id of the nearest heading at or before the chunk's start."""
    headings: tuple[str, ...]
    """Heading path at the chunk's start."""
    ordinal: int
    """Position of the chunk in its document (0-based)."""
    chunk_id: str
    """The index key (or the skill's chunk id)."""

    def __post_init__(self) -> None:
        if (self.start is None) != (self.end is None):
            raise ValueError("a retrieved chunk has both start and end, or neither")
        if self.start is not None and self.end != self.start + len(self.content):
            raise ValueError(
                f"chunk {self.chunk_id!r}: the span {self.start}..{self.end} does not hold "
                f"its {len(self.content)} characters of content"
            )

    @property
    def has_span(self) -> bool:
        return self.start is not None


@dataclass(frozen=True, slots=True)
class Citation:
    """Where a passage comes from."""

    document: str
    url: str | None
    """The URL with the `#anchor` of the passage's first chunk."""
    headings: tuple[str, ...]
    """Heading path at the passage's start."""
    chunk_ids: tuple[str, ...]
    """The merged chunks, in document order, each once."""


@dataclass(frozen=True, slots=True)
class Passage:
    """Retrieved chunks of one document merged into one span, each character once."""

    document: str
    start: int | None
    """Code-point offset of the passage in its document; None when merged without offsets."""
    end: int | None
    text: str
    """The characters of the merged span, in document order."""
    score: float
    """The best score among its chunks."""
    rank: int
    """The best (lowest, 0-based) rank among its chunks; passages are ordered by it."""
    chunks: tuple[RetrievedChunk, ...]
    """The chunks it merges, in document order."""

    @property
    def citation(self) -> Citation:
        first = self.chunks[0]
        return Citation(
            document=self.document,
            url=_anchored_url(first.url, first.anchor),
            headings=first.headings,
            # A result list can hold one chunk twice (two queries of a hybrid search
            # agree, or the caller joined result lists): it is cited once.
            chunk_ids=tuple(dict.fromkeys(chunk.chunk_id for chunk in self.chunks)),
        )


def merge_neighbours(results: Sequence[RetrievedChunk]) -> list[Passage]:
    """Passages from `results` (best first): per document, chunks whose spans overlap or
    touch become one passage; passages come out in the order of their best chunk.

    A document whose chunks all have offsets is merged by them. Otherwise (an index
    without the `offset` and `length` fields) chunks with consecutive ordinals are merged
    when the later one starts with at least MIN_SHARED_TEXT characters the earlier one
    ends with (the chunker's overlap); neighbours that only touch stay apart there, as
    nothing tells them from neighbours with a gap between them.
    """
    ranked: dict[str, list[tuple[int, RetrievedChunk]]] = {}
    for rank, chunk in enumerate(results):
        ranked.setdefault(chunk.document, []).append((rank, chunk))
    passages: list[Passage] = []
    for document, chunks in ranked.items():
        if all(chunk.has_span for _, chunk in chunks):
            passages += _merge_by_offsets(document, chunks)
        else:
            passages += _merge_by_ordinals(document, chunks)
    return sorted(passages, key=lambda passage: passage.rank)


def _merge_by_offsets(document: str, chunks: list[tuple[int, RetrievedChunk]]) -> list[Passage]:
    ordered = sorted(chunks, key=lambda item: (_start(item[1]), _end(item[1]), item[0]))
    groups: list[_Group] = []
    for rank, chunk in ordered:
        last = groups[-1] if groups else None
        start, end = _start(chunk), _end(chunk)
        if last is not None and start <= last.end and _agrees(last, chunk):
            if end > last.end:
                last.parts.append(chunk.content[last.end - start :])
                last.end = end
            last.add(rank, chunk)
        else:
            groups.append(_Group(start, end, [chunk.content], rank, [chunk]))
    return [group.passage(document, spans=True) for group in groups]


def _agrees(group: _Group, chunk: RetrievedChunk) -> bool:
    """Whether the chunk's text is the group's where they overlap: chunks of two versions
    of a document (an index mid-update) are not joined into text neither version has."""
    start, shared_end = _start(chunk), min(group.end, _end(chunk))
    if shared_end <= start:
        return True
    text = "".join(group.parts)
    return (
        text[start - group.start : shared_end - group.start] == chunk.content[: shared_end - start]
    )


def _merge_by_ordinals(document: str, chunks: list[tuple[int, RetrievedChunk]]) -> list[Passage]:
    ordered = sorted(chunks, key=lambda item: (item[1].ordinal, item[0]))
    groups: list[_Group] = []
    for rank, chunk in ordered:
        last = groups[-1] if groups else None
        if last is not None and chunk.ordinal == last.chunks[-1].ordinal:
            last.add(rank, chunk)  # the same chunk twice: its text is in already
            continue
        shared = (
            _shared_text(last.chunks[-1].content, chunk.content)
            if last is not None and chunk.ordinal == last.chunks[-1].ordinal + 1
            else 0
        )
        if last is not None and shared:
            last.parts.append(chunk.content[shared:])
            last.add(rank, chunk)
        else:
            groups.append(_Group(0, 0, [chunk.content], rank, [chunk]))
    return [group.passage(document, spans=False) for group in groups]


def _shared_text(earlier: str, later: str) -> int:
    """The longest prefix of `later` that `earlier` ends with, if MIN_SHARED_TEXT or more."""
    for length in range(min(len(earlier), len(later)), MIN_SHARED_TEXT - 1, -1):
        if earlier.endswith(later[:length]):
            return length
    return 0


@dataclass(slots=True)
class _Group:
    """A passage being built (mutable while merging, frozen into a Passage)."""

    start: int
    end: int
    parts: list[str]
    rank: int
    chunks: list[RetrievedChunk]

    def add(self, rank: int, chunk: RetrievedChunk) -> None:
        self.rank = min(self.rank, rank)
        self.chunks.append(chunk)

    def passage(self, document: str, *, spans: bool) -> Passage:
        return Passage(
            document=document,
            start=self.start if spans else None,
            end=self.end if spans else None,
            text="".join(self.parts),
            score=max(chunk.score for chunk in self.chunks),
            rank=self.rank,
            chunks=tuple(self.chunks),
        )


def _start(chunk: RetrievedChunk) -> int:
    if chunk.start is None:
        raise ValueError(f"chunk {chunk.chunk_id!r} has no offsets")
    return chunk.start


def _end(chunk: RetrievedChunk) -> int:
    return _start(chunk) + len(chunk.content)


def _anchored_url(url: str | None, anchor: str | None) -> str | None:
    if url is None or anchor is None or urldefrag(url).fragment:
        return url
    return f"{url}#{quote(anchor, safe=FRAGMENT_SAFE)}"


def chunk_from_record(
    record: Mapping[str, Any], *, document: str, score: float = 0.0
) -> RetrievedChunk:
    """A `RetrievedChunk` from one of the skill's chunk objects (`data.chunks[i]`)."""
    content = str(record["content"])
    offset = record.get("offset")
    start = offset.get("codePoint") if isinstance(offset, dict) else None
    return RetrievedChunk(
        document=document,
        start=start if isinstance(start, int) else None,
        end=start + len(content) if isinstance(start, int) else None,
        content=content,
        score=score,
        url=record.get("url"),
        anchor=record.get("anchor"),
        headings=tuple(record.get("headings") or ()),
        ordinal=int(record["ordinal"]),
        chunk_id=str(record["id"]),
    )


def chunk_from_index(result: Mapping[str, Any]) -> RetrievedChunk:
    """A `RetrievedChunk` from one search result on the chunk index.

    Offsets are used only when they agree with the content's length; a result without
    them (an older index) is merged by ordinal.
    """
    content = str(result.get(CONTENT) or "")
    start, length = result.get(OFFSET), result.get(LENGTH)
    spanned = isinstance(start, int) and length == len(content)
    return RetrievedChunk(
        document=str(result[PARENT_KEY_FIELD]),
        start=start if spanned and isinstance(start, int) else None,
        end=start + len(content) if spanned and isinstance(start, int) else None,
        content=content,
        # The semantic ranker's score where it ranked the results, else the search score.
        score=float(_first_present(result, ("@search.reranker_score", "@search.score")) or 0.0),
        url=result.get(URL),
        anchor=result.get(ANCHOR),
        headings=tuple(result.get(HEADINGS) or ()),
        ordinal=int(result.get(ORDINAL) or 0),
        chunk_id=str(result[KEY_FIELD]),
    )


def _first_present(result: Mapping[str, Any], keys: Sequence[str]) -> Any:
    return next((result[key] for key in keys if result.get(key) is not None), None)


def search_and_merge(
    search_client: Any,
    query: str,
    k: int,
    *,
    vector_field: str | None = "embedding",
    embedder: Callable[[str], Sequence[float]] | None = None,
    hybrid: bool = True,
    offsets: bool = True,
    semantic: bool = False,
) -> list[Passage]:
    """The top `k` chunks for `query`, merged into passages (best first).

    `search_client` is an azure-search-documents `SearchClient` on the chunk index. The
    query is a vector query on `vector_field`: the service embeds the text with the
    index's vectorizer, or `embedder` turns it into the vector here. `hybrid` adds the
    keyword query (the service fuses both rankings); `vector_field=None` is keyword only.
    `offsets=False` is for an index made before the `offset` and `length` fields.
    `semantic` reranks the top 50 with the service's semantic ranker (`queryType=semantic`,
    the index's SEMANTIC_CONFIGURATION: title, chunk, headings); it needs the keyword
    query, a service tier with the semantic ranker on, and scores passages by the
    ranker's `@search.rerankerScore` (0 to 4).
    """
    from azure.search.documents.models import (  # noqa: PLC0415  (no SDK at import)
        VectorizableTextQuery,
        VectorizedQuery,
        VectorQuery,
    )

    if k < 1:
        raise ValueError(f"k must be at least 1 (got {k})")
    if vector_field is None and not hybrid:
        raise ValueError("a search needs the keyword query (hybrid) or a vector_field")
    if semantic and not hybrid:
        raise ValueError("the semantic ranker reranks a keyword or hybrid query: keep hybrid on")
    vectors: list[VectorQuery] = []
    if vector_field is not None:
        vectors.append(
            VectorizableTextQuery(text=query, k_nearest_neighbors=k, fields=vector_field)
            if embedder is None
            else VectorizedQuery(
                vector=[float(x) for x in embedder(query)],
                k_nearest_neighbors=k,
                fields=vector_field,
            )
        )
    ranking: dict[str, Any] = (
        {"query_type": "semantic", "semantic_configuration_name": SEMANTIC_CONFIGURATION}
        if semantic
        else {}
    )
    results: Iterable[Mapping[str, Any]] = search_client.search(
        search_text=query if hybrid else None,
        vector_queries=vectors or None,
        select=[*INDEX_FIELDS, *(OFFSET_FIELDS if offsets else ())],
        top=k,
        **ranking,
    )
    return merge_neighbours([chunk_from_index(result) for result in results][:k])
