"""The chunking pipeline: detect format -> parse -> outline -> split -> contextualize."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Literal

from chunking.contextualize.continuations import Continuations
from chunking.contextualize.prefix import Contextualizer
from chunking.measure.sizing import make_sizer
from chunking.model import Chunk, ChunkedDocument, Outline
from chunking.options import ChunkOptions, OptionError, TooManyChunks
from chunking.options.chunk_ids import chunk_id, document_digest
from chunking.outline.plain_outline import PlainOutline, plain_outline
from chunking.outline.sections import SectionTree
from chunking.parse.detect import detect_format
from chunking.parse.titles import resolve_title
from chunking.plan.core import PlanInputs
from chunking.plan.scoring import Scoring
from chunking.plan.strategies import STRATEGIES, parameters_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from chunking.model import Format, Span
    from chunking.options import Unit
    from chunking.plan.core import Strategy

FormatName = Literal["auto", "markdown", "html", "text"]


def _parser(format: Format, file_name: str | None) -> Callable[[str], Outline]:
    # Imported on use: a markdown-only Function never pays for loading lxml.
    if format == "markdown":
        from chunking.parse.markdown.outline import parse_markdown  # noqa: PLC0415

        # The name tells an MDX page (`.mdx`) whose text may not.
        return partial(parse_markdown, file_name=file_name)
    if format == "html":
        from chunking.parse.html.render import parse_html  # noqa: PLC0415

        return parse_html
    from chunking.parse.text import parse_text  # noqa: PLC0415

    return parse_text


def parse(
    text: str,
    format: FormatName = "auto",
    *,
    file_name: str | None = None,
    content_type: str | None = None,
) -> Outline:
    """Parse a document into an outline, detecting the format when asked to."""
    chosen: Format = (
        detect_format(text, content_type=content_type, file_name=file_name)
        if format == "auto"
        else format
    )
    return _parser(chosen, file_name)(text)


def chunk_document(
    text: str,
    *,
    options: ChunkOptions | None = None,
    format: FormatName = "auto",
    title: str | None = None,
    file_name: str | None = None,
    content_type: str | None = None,
    scoring: Scoring | None = None,
) -> ChunkedDocument:
    """Chunk one document.

    `scoring` gives the scored strategies (`semantic`, `binary`) their embedder and pair
    scorer; they raise `ScoringError` (from `chunking.plan.scoring`) when it fails or is missing.

    Raises `OptionError` for settings that cannot be honoured (e.g. an encoder
    that is not available); everything else about the input becomes a warning.
    """
    given = options = options or ChunkOptions()
    strategy = _strategy_of(options)
    sizer = make_sizer(options.limits.unit, options.encoder_model_name)
    outline = parse(text, format, file_name=file_name, content_type=content_type)
    title_text, title_heading = resolve_title(outline, given=title)
    planned, plain = outline, None
    if options.strip_markup and outline.format == "markdown":
        # The limit is on the embedded text, so the cuts are planned on it.
        plain = plain_outline(outline)
        planned = plain.outline
        options = replace(options, strip_markup=False)
    tree = SectionTree.build(planned, title_heading)
    context = Contextualizer.for_options(sizer, title_text, options)
    plan = strategy(PlanInputs(planned, tree, sizer, context, options, scoring or Scoring()))
    if options.max_chunks and len(plan.spans) > options.max_chunks:
        # Strategies stop planning past the cap; this holds it for any other.
        raise TooManyChunks(options.max_chunks)
    chunking = _Chunks(
        outline,
        plain,
        tree,
        context,
        title_text,
        document_digest(outline.source, given),
        # The source's own regions: a reader gets `content`'s markup, not the embedded text's.
        Continuations.of(outline.source, outline.regions),
    )
    chunks = [chunking.chunk(ordinal, span) for ordinal, span in enumerate(plan.spans)]
    warnings = [
        *outline.warnings,
        *_prefix_warnings(context, options.limits.unit),
        *plan.warnings,
    ]
    return ChunkedDocument(
        source=outline.source,
        format=outline.format,
        title=title_text,
        chunks=tuple(chunks),
        warnings=tuple(warnings),
    )


@dataclass(frozen=True, slots=True)
class _Chunks:
    """What turns one document's planned spans into its chunks."""

    outline: Outline
    plain: PlainOutline | None
    """The plain outline the plan ran on (markup left out), or None: the outline's own."""
    tree: SectionTree
    context: Contextualizer
    title: str
    digest: bytes
    continuations: Continuations

    def chunk(self, ordinal: int, span: Span) -> Chunk:
        """The chunk of a planned span: its source span (mapped back from the plain
        outline), its id, prefix, page range and continuations."""
        outline, plain = self.outline, self.plain
        planned = outline if plain is None else plain.outline
        start, end = (
            (span.start, span.end) if plain is None else plain.source_span(span.start, span.end)
        )
        return Chunk(
            ordinal=ordinal,
            start=start,
            end=end,
            content=outline.source[start:end],
            text=span.text,
            title=self.title,
            headings=span.headings,
            outline_path=self.tree.levels(list(span.chain)),
            anchor=planned.anchor_at(span.start),
            size=span.size,
            id=chunk_id(self.digest, start, end),
            **_page_fields(outline, start, end),
            prefix=self.context.prefix(span.headings)[0],
            opening=self.continuations.opening(start),
            closing=self.continuations.closing(end),
        )


def _strategy_of(options: ChunkOptions) -> Strategy:
    """The plan function of the options' strategy; OptionError for a name no strategy
    declares, or parameters of another strategy (before anything is parsed)."""
    strategy = STRATEGIES.get(options.strategy)
    if strategy is None:
        raise OptionError(
            f"strategy must be one of {', '.join(sorted(STRATEGIES))} (got {options.strategy!r})"
        )
    parameters_of(options)
    return strategy


def _page_fields(outline: Outline, start: int, end: int) -> dict[str, int]:
    """`page_from` and `page_to` of a chunk of a paged document; nothing otherwise."""
    if outline.pages is None:
        return {}
    page_from, page_to = outline.pages.range_of(outline.source, start, end)
    return {"page_from": page_from, "page_to": page_to}


def _prefix_warnings(context: Contextualizer, unit: Unit) -> list[str]:
    """Why prefixes were shortened: the title alone (said once), or each heading path."""
    if not context.shortened:
        return []
    limit = (
        f"the prefix limit of {context.prefix_limit} {unit.value} (a quarter of maximumPageLength)"
    )
    if context.title_too_long():
        return [
            f"the title ({len(context.title)} characters) is over {limit}; "
            "every chunk's embedded text carries it shortened"
        ]
    return [
        f"heading path shortened to fit {limit}: {' › '.join(path)[:200]}"
        for path in sorted(context.shortened)
    ]
