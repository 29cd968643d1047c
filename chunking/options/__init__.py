"""Chunking parameters with the Text Split skill's names, meaning and validation."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

# Re-exported (the alias says so to mypy): the skill and the command lines import them here.
from chunking.options.errors import OptionError as OptionError
from chunking.options.errors import TooManyChunks as TooManyChunks
from chunking.options.errors import clipped_repr as clipped_repr
from chunking.options.errors import shown_integer

if TYPE_CHECKING:
    from collections.abc import Callable


class Unit(Enum):
    """What `maximumPageLength` and `pageOverlapLength` count."""

    CHARACTERS = "characters"
    """UTF-16 code units, like .NET `String.Length` (the Split skill's measure)."""
    TOKENS = "azureOpenAITokens"
    """Tokens of `encoderModelName` (tiktoken)."""


class SplitMode(Enum):
    """The Split skill's `textSplitMode`."""

    PAGES = "pages"
    SENTENCES = "sentences"


MIN_CHARACTERS = 300
"""The Split skill's lower bound for `maximumPageLength` in characters."""
MAX_CHARACTERS = 50_000
"""The Split skill's upper bound for `maximumPageLength` in characters."""
MIN_TOKENS = 64
"""Below this, the title and heading prefix leaves too little room for content."""
MAX_TOKENS = 8191
"""The input limit of every Azure OpenAI embedding model (ada-002, 3-small, 3-large)."""

DEFAULT_UNIT = Unit.TOKENS
DEFAULT_MAXIMUM_PAGE_LENGTH = 512
DEFAULT_PAGE_OVERLAP_LENGTH = 64
DEFAULT_CHARACTERS_PAGE_LENGTH = 5000
"""`maximumPageLength` for `unit` characters: the Split skill's own default."""
DEFAULT_CHARACTERS_OVERLAP_LENGTH = 0
"""`pageOverlapLength` for `unit` characters: the Split skill's own default (no overlap)."""
DEFAULT_ENCODER = "cl100k_base"
DEFAULT_LANGUAGE = "en"
DEFAULT_HEADING_SEPARATOR = " › "
"""Joins the title and headings in the prefix of each embedded text."""
DEFAULT_PREFIX_SEPARATOR = "\n\n"
"""Separates the title/heading prefix from the chunk content."""
SECTIONS_APART_FILL = 0.75
"""With sections apart (the default), a heading ends a chunk once it holds three quarters
of its room (and the rest of a document that fits in one chunk is one chunk, whatever
headings it holds): a chunk is a run of whole sections, and a section that
starts late in a chunk begins the next one instead of being cut across two. A quarter
(the default until the evaluation read question sets written by others) made chunks
half the size of the Split skill's, so five of them held too little: worse at equal k on
pages of many small sections, in keyword and hybrid search above all; packing with no
fill cuts sections across chunks. docs/results has the per-set tables."""


class SectionPacking(Enum):
    """Whether small neighbouring sections share a chunk: the `sections` parameter
    (`CHUNK_SECTIONS`, `--sections`), which keeps its name on those surfaces."""

    APART = "apart"
    """A heading ends a chunk once it is `SECTIONS_APART_FILL` full (the default)."""
    PACKED = "packed"
    """Whole small sections are packed up to the limit."""

    @property
    def fill(self) -> float | None:
        """The `ChunkOptions.section_fill` this stands for."""
        return SECTIONS_APART_FILL if self is SectionPacking.APART else None


@dataclass(frozen=True, slots=True)
class Limits:
    """Size limits; validated on creation like the Split skill validates them."""

    unit: Unit = DEFAULT_UNIT
    maximum_page_length: int = DEFAULT_MAXIMUM_PAGE_LENGTH
    """Upper bound for the whole embedded text of a chunk, prefix included."""
    page_overlap_length: int = DEFAULT_PAGE_OVERLAP_LENGTH
    """Each continuation starts with at most this much of the previous chunk's end."""
    maximum_pages_to_take: int = 0
    """Stop after this many chunks; 0 takes all."""

    def __post_init__(self) -> None:
        low, high = (
            (MIN_CHARACTERS, MAX_CHARACTERS)
            if self.unit is Unit.CHARACTERS
            else (MIN_TOKENS, MAX_TOKENS)
        )
        if not low <= self.maximum_page_length <= high:
            raise OptionError(
                f"maximumPageLength must be between {low} and {high} {self.unit.value} "
                f"(got {shown_integer(self.maximum_page_length)})"
            )
        if self.page_overlap_length < 0 or 2 * self.page_overlap_length >= self.maximum_page_length:
            raise OptionError(
                "pageOverlapLength must be at least 0 and less than half of maximumPageLength "
                f"(< {(self.maximum_page_length + 1) // 2}; "
                f"got {shown_integer(self.page_overlap_length)})"
            )
        if self.maximum_pages_to_take < 0:
            raise OptionError(
                "maximumPagesToTake must be 0 (all) or more "
                f"(got {shown_integer(self.maximum_pages_to_take)})"
            )


PAGE_OVERLAP_LENGTH = "pageOverlapLength"
WORD_OVERLAP = "wordOverlap"


@dataclass(frozen=True, slots=True)
class ParameterNames:
    """How a surface spells parameters in its messages: the skill says input
    'wordOverlap', the command line says option --word-overlap."""

    noun: str
    """What the surface calls a parameter ("input", "option")."""
    spell: Callable[[str], str]
    """A parameter's record input name, as the surface writes it."""


PREFIX_PATHS = ("path", "leaf", "title")
"""What `ChunkOptions.prefix_path` may name."""


@dataclass(frozen=True, slots=True)
class ChunkOptions:
    """Everything that decides how a document is cut and contextualized."""

    limits: Limits = Limits()
    mode: SplitMode = SplitMode.PAGES
    encoder_model_name: str = DEFAULT_ENCODER
    """tiktoken encoding used when the unit is tokens."""
    language: str = DEFAULT_LANGUAGE
    """Language code for sentence boundaries (the Split skill's defaultLanguageCode)."""
    title_prefix: bool = True
    """Put `title › heading › subheading` in front of each embedded text."""
    section_fill: float | None = SECTIONS_APART_FILL
    """A share of the room (0..1): a chunk ends at the first heading past that fill, so
    sections stay apart. None: small neighbouring sections are packed into one chunk."""
    strip_markup: bool = True
    """Embed markdown without link targets, image paths, HTML tags, comments, docfx
    include/directive lines and MDX markup lines (`content` stays the exact source span)."""
    heading_separator: str = DEFAULT_HEADING_SEPARATOR
    prefix_separator: str = DEFAULT_PREFIX_SEPARATOR
    strategy: str = "structure"
    """Name of the splitting strategy (`chunking.plan.strategies.DECLARATIONS` declares
    each; `chunking.pipeline` refuses a name none declares)."""
    parameters: object | None = None
    """The strategy's own parameters: an instance of the dataclass its declaration names
    (`WordWindows` for `words`, `SemanticBreaks`, `BinarySplit`); None: its defaults.
    `chunking.pipeline` refuses another type; in chunk ids (`chunking.options.chunk_ids`)."""
    prefix_path: str = "path"
    """What the prefix names: the title and the whole heading path (`path`), the title
    and the innermost heading (`leaf`), or the title alone (`title`). `path` is what the
    skill does; the others exist so the evaluation can measure the rule."""
    max_chunks: int = field(default=0, compare=False)
    """A strategy that can make many chunks per word (`words`) stops planning past this
    many and raises TooManyChunks; 0: no cap. Not in chunk ids: it changes no chunk."""

    def __post_init__(self) -> None:
        if self.prefix_path not in PREFIX_PATHS:
            raise OptionError(
                f"prefix path must be one of {', '.join(PREFIX_PATHS)} (got {self.prefix_path!r})"
            )
        if self.strategy != "structure" and self.mode is SplitMode.SENTENCES:
            raise OptionError(
                f"textSplitMode sentences does not apply to strategy {self.strategy!r} "
                "(it plans its own chunks; use pages)"
            )


def default_lengths(unit: Unit) -> tuple[int, int]:
    """(maximumPageLength, pageOverlapLength) when none is given: 512/64 tokens (the usual
    embedding-model advice), 5000/0 characters (the Split skill's), as the skill has them."""
    if unit is Unit.CHARACTERS:
        return DEFAULT_CHARACTERS_PAGE_LENGTH, DEFAULT_CHARACTERS_OVERLAP_LENGTH
    return DEFAULT_MAXIMUM_PAGE_LENGTH, DEFAULT_PAGE_OVERLAP_LENGTH
