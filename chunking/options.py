"""Chunking parameters with the Text Split skill's names, meaning and validation."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping


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
"""With sections apart (the default), a chunk ends at the first heading once it holds
three quarters of its room: a chunk is a run of whole sections, and a section that
starts late in a chunk begins the next one instead of being cut across two. A quarter
(the default until the evaluation read question sets written by others) made chunks
half the size of the Split skill's, so five of them held too little: worse at equal k on
pages of many small sections, in keyword and hybrid search above all; packing with no
fill cuts sections across chunks. docs/results has the per-set tables."""


class Sections(Enum):
    """Whether small neighbouring sections share a chunk."""

    APART = "apart"
    """A heading ends a chunk once it is `SECTIONS_APART_FILL` full (the default)."""
    PACKED = "packed"
    """Whole small sections are packed up to the limit."""

    @property
    def fill(self) -> float | None:
        """The `ChunkOptions.section_fill` this stands for."""
        return SECTIONS_APART_FILL if self is Sections.APART else None


SHOWN_DIGITS = 20
"""Integers in messages are shown whole up to this many digits, beyond in scientific
notation: a record may send 1e308, and its 309 digits would help nobody."""
SHOWN_CHARACTERS = 40
"""Other values in messages are shown as a repr of at most this many characters."""


def shown_integer(number: int) -> str:
    """`number` for a message a person reads: whole, or as `1.23e+45` when it is long."""
    if abs(number) < 10**SHOWN_DIGITS:
        return str(number)
    try:
        return f"{float(number):.3g}"
    except OverflowError:  # beyond the largest float
        return "under -1e+308" if number < 0 else "over 1e+308"


def clipped_repr(value: object) -> str:
    """`repr(value)`, clipped to SHOWN_CHARACTERS with "..." when longer."""
    text = repr(value)
    if len(text) > SHOWN_CHARACTERS:
        text = text[: SHOWN_CHARACTERS - 3] + "..."
    return text


class OptionError(ValueError):
    """A parameter is out of range; the message names it and the allowed range."""


class TooManyChunks(OptionError):
    """The text makes more chunks than `ChunkOptions.max_chunks`; planning stopped there."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the text makes more than {limit} chunks")
        self.limit = limit


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


class WordScope(Enum):
    """Where the `words` strategy's windows may reach."""

    SECTION = "section"
    """Windows stay inside a section: no window spans a heading (the default)."""
    DOCUMENT = "document"
    """Windows run over the whole document, headings included, as the lesson cuts."""


DEFAULT_WORDS_PER_CHUNK = 200
"""Words per window: about 260 cl100k tokens of English, so a window and its prefix
fit the default 512 tokens with room to spare."""
DEFAULT_WORD_OVERLAP = 40
"""Words each window repeats from the previous one: a fifth, the usual advice."""


def default_word_overlap(size: int, preferred: int = DEFAULT_WORD_OVERLAP) -> int:
    """`wordOverlap` when only `wordsPerChunk` is given: `preferred` (the app setting's
    or the default) if it is under half of `size`, else a fifth of `size`."""
    return preferred if 2 * preferred < size else size // 5


@dataclass(frozen=True, slots=True)
class WordWindows:
    """The `words` strategy's own parameters, in words (whitespace-separated tokens)."""

    size: int = DEFAULT_WORDS_PER_CHUNK
    """`wordsPerChunk`: words in each window."""
    overlap: int = DEFAULT_WORD_OVERLAP
    """`wordOverlap`: each window starts `size - overlap` words after the previous one;
    less than half of `size`."""
    scope: WordScope = WordScope.SECTION
    """`wordScope`: whether windows stay inside a section or run over the document."""

    def __post_init__(self) -> None:
        if self.size < 1:
            raise OptionError(f"wordsPerChunk must be at least 1 (got {shown_integer(self.size)})")
        # Below half, as the Split skill bounds pageOverlapLength: each window then moves
        # on by more than half its words, so the windows repeat each word twice at most.
        # Up to size - 1 there was a window per word, a request ~9,000 times its size.
        if self.overlap < 0 or 2 * self.overlap >= self.size:
            raise OptionError(
                "wordOverlap must be at least 0 and less than half of wordsPerChunk "
                f"(< {(self.size + 1) // 2}; got {shown_integer(self.overlap)})"
            )


DEFAULT_SEMANTIC_PERCENTILE = 95.0
"""A breakpoint where the distance between neighbouring sentence groups is above this
percentile of the document's distances (LangChain's and LlamaIndex's default)."""
DEFAULT_SEMANTIC_WINDOW = 2
"""Sentences either side of a boundary embedded with it, each side on its own (the
"buffer" of the literature): at least 1, a side holds one sentence or more. On
samples/eval (180 questions, e5-small, 12% overlap) a window of 2 against 1 held the
whole answer in the top 5 as often or more at every limit: 0.911 / 0.939 / 0.928 against
0.894 / 0.917 / 0.917 at 256 / 512 / 1024 tokens (each within the paired interval), for
11% more sentence embeddings (3,839 against 3,450)."""
DEFAULT_SEMANTIC_MIN_FILL = 0.25
"""A chunk ends at a breakpoint only once it holds this share of the room: no one-line
chunks, the known failure of peers' semantic splitters."""


@dataclass(frozen=True, slots=True)
class SemanticBreaks:
    """The `semantic` strategy's own parameters."""

    percentile: float = DEFAULT_SEMANTIC_PERCENTILE
    """`semanticPercentile`: distances above this percentile of the document's are breaks."""
    window: int = DEFAULT_SEMANTIC_WINDOW
    """`semanticWindow`: sentences either side of a boundary that are embedded with it."""
    min_fill: float = DEFAULT_SEMANTIC_MIN_FILL
    """`semanticMinFill`: share of the room (0..1) a chunk holds before a break may end it."""

    def __post_init__(self) -> None:
        if not 0 <= self.percentile <= 100:  # also refuses NaN
            raise OptionError(f"semanticPercentile must be from 0 to 100 (got {self.percentile!r})")
        if not 1 <= self.window <= MAX_SEMANTIC_WINDOW:
            raise OptionError(
                f"semanticWindow must be from 1 to {MAX_SEMANTIC_WINDOW} "
                f"(got {shown_integer(self.window)})"
            )
        if not 0 <= self.min_fill <= 1:
            raise OptionError(f"semanticMinFill must be from 0 to 1 (got {self.min_fill!r})")


MAX_SEMANTIC_WINDOW = 5
"""Sentences either side; more blurs every boundary into its neighbours."""

BINARY_SCORERS = ("embeddings", "crossEncoder", "rerank")
"""What scores a split of the `binary` strategy: cosine between the two halves'
embeddings (the default), a local cross-encoder, or a rerank endpoint."""
DEFAULT_BINARY_CANDIDATES = 16
"""Split positions scored per level of the recursion, at most."""
MAX_BINARY_CANDIDATES = 256


@dataclass(frozen=True, slots=True)
class BinarySplit:
    """The `binary` strategy's own parameters."""

    scorer: str = "embeddings"
    """`binaryScorer`: one of `BINARY_SCORERS`."""
    candidates: int = DEFAULT_BINARY_CANDIDATES
    """`binaryCandidates`: split positions scored per part, evenly spread over its sentence
    boundaries, so a part of n sentences costs min(n - 1, candidates) scores."""

    def __post_init__(self) -> None:
        if self.scorer not in BINARY_SCORERS:
            raise OptionError(
                f"binaryScorer must be one of {', '.join(BINARY_SCORERS)} (got {self.scorer!r})"
            )
        if not 1 <= self.candidates <= MAX_BINARY_CANDIDATES:
            raise OptionError(
                f"binaryCandidates must be from 1 to {MAX_BINARY_CANDIDATES} "
                f"(got {shown_integer(self.candidates)})"
            )


STRATEGY_NAMES = ("structure", "words", "semantic", "binary")
"""The strategies `strategy` may name (`chunking.plan.STRATEGIES` implements them)."""
PAGE_OVERLAP_LENGTH = "pageOverlapLength"
WORD_OVERLAP = "wordOverlap"
STRATEGY_PARAMETERS: Mapping[str, tuple[str, ...]] = {
    "words": ("wordsPerChunk", WORD_OVERLAP, "wordScope"),
    "semantic": ("semanticPercentile", "semanticWindow", "semanticMinFill"),
    "binary": ("binaryScorer", "binaryCandidates"),
}
"""Each strategy's own parameters, by their record input names: given with another
strategy, they are an error (`strategy_conflicts`)."""


@dataclass(frozen=True, slots=True)
class ParameterNames:
    """How a surface spells parameters in its messages: the skill says input
    'wordOverlap', the command line says option --word-overlap."""

    noun: str
    """What the surface calls a parameter ("input", "option")."""
    spell: Callable[[str], str]
    """A parameter's record input name, as the surface writes it."""


def strategy_conflicts(strategy: str, given: Collection[str], names: ParameterNames) -> list[str]:
    """Why the parameters `given` (record input names) do not go with `strategy`: one
    validation, which the skill and the command line word alike."""
    problems: list[str] = []
    for owner, parameters in STRATEGY_PARAMETERS.items():
        named = [names.spell(name) for name in parameters if name in given]
        if owner != strategy and named:
            problems.append(
                f"{names.noun}(s) {', '.join(named)} only apply to strategy {owner!r} "
                f"(strategy is {strategy!r}; strategies are {', '.join(STRATEGY_NAMES)})"
            )
    if strategy == "words" and PAGE_OVERLAP_LENGTH in given:
        problems.append(
            f"{names.noun} {names.spell(PAGE_OVERLAP_LENGTH)} does not apply to strategy "
            f"'words': its windows overlap by {names.spell(WORD_OVERLAP)}, in words"
        )
    return problems


PREFIX_PATHS = ("path", "leaf", "title")
"""What `ChunkOptions.prefix_path` may name."""

SCORED_STRATEGIES = ("semantic", "binary")
"""The strategies that call `chunking.scoring.Scoring` (embeddings or pair scores)."""


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
    """Name of the splitting strategy (see `chunking.plan.STRATEGIES`)."""
    words: WordWindows = WordWindows()
    """The `words` strategy's windows (in chunk ids for that strategy only,
    `chunking.chunk_ids`)."""
    semantic: SemanticBreaks = SemanticBreaks()
    """The `semantic` strategy's parameters (in chunk ids for that strategy only)."""
    binary: BinarySplit = BinarySplit()
    """The `binary` strategy's parameters (in chunk ids for that strategy only)."""
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
