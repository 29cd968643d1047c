"""Chunk options on a command line: `python -m chunking` and `python -m chunking.report`."""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
from pathlib import PurePath
from typing import TYPE_CHECKING, get_args

from chunking.formats.decode import BinaryFile, DecodedFile, decode_file
from chunking.formats.detect import TEXT_SUFFIXES
from chunking.options import (
    BINARY_SCORERS,
    PAGE_OVERLAP_LENGTH,
    SCORED_STRATEGIES,
    STRATEGY_NAMES,
    WORD_OVERLAP,
    BinarySplit,
    ChunkOptions,
    Limits,
    OptionError,
    ParameterNames,
    Sections,
    SemanticBreaks,
    SplitMode,
    Unit,
    WordScope,
    WordWindows,
    default_lengths,
    default_word_overlap,
    strategy_conflicts,
)
from chunking.pipeline import FormatName
from chunking.scoring import Scoring

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

SKIPPED_SHOWN = 5
"""Files of a folder that are not chunked: this many are named in the warning."""


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Each option's help ends with its default (unless it has none, or says it already);
    the epilog's examples keep their lines."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        # `is`, not `in`: a default of 0 is worth showing, and 0 == False.
        unshown = action.default is None or action.default is False
        if "(default" in text or unshown or action.default == argparse.SUPPRESS:
            return text
        return super()._get_help_string(action)


OPTION_FLAGS = {
    PAGE_OVERLAP_LENGTH: "--overlap",
    "wordsPerChunk": "--words-per-chunk",
    WORD_OVERLAP: "--word-overlap",
    "wordScope": "--word-scope",
    "semanticPercentile": "--semantic-percentile",
    "semanticWindow": "--semantic-window",
    "semanticMinFill": "--semantic-min-fill",
    "binaryScorer": "--binary-scorer",
    "binaryCandidates": "--binary-candidates",
}
"""The flag of each parameter a strategy validation names (record input name: flag)."""
OPTION_NAMES = ParameterNames("option", lambda name: OPTION_FLAGS.get(name, name))
"""Parameters in the command line's refusals: option --word-overlap."""


class Parser(argparse.ArgumentParser):
    """argparse that exits with status 2 and one line, and shows defaults in its help."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: {message}\n")


def add_chunk_arguments(parser: argparse.ArgumentParser) -> None:
    """The chunk options (--format, --unit, --max, --overlap, ...) on `parser`."""
    tokens, characters = default_lengths(Unit.TOKENS), default_lengths(Unit.CHARACTERS)
    parser.add_argument(
        "--format",
        choices=get_args(FormatName),
        default="auto",
        help="the input's format; auto: from the file name, then the text",
    )
    parser.add_argument(
        "--unit",
        choices=[u.value for u in Unit],
        default=Unit.TOKENS.value,
        help="what --max and --overlap count: cl100k_base tokens (--encoder) or characters "
        "(UTF-16 code units, as the Split skill counts them)",
    )
    parser.add_argument(
        "--max",
        type=int,
        default=None,
        help=f"maximumPageLength (default: the skill's, {tokens[0]} tokens / "
        f"{characters[0]} characters)",
    )
    parser.add_argument(
        "--overlap",
        type=int,
        default=None,
        help=f"pageOverlapLength, less than half of --max (default: the skill's, {tokens[1]} "
        f"tokens / {characters[1]} characters)",
    )
    parser.add_argument("--pages", type=int, default=0, help="maximumPagesToTake (0 = all)")
    parser.add_argument(
        "--mode",
        choices=[m.value for m in SplitMode],
        default="pages",
        help="textSplitMode: pages fill up to --max; sentences gives one sentence per chunk",
    )
    parser.add_argument("--language", default="en", help="defaultLanguageCode")
    parser.add_argument("--encoder", default="cl100k_base", help="encoderModelName")
    parser.add_argument(
        "--title", default=None, help="title when the document has none (default: none)"
    )
    parser.add_argument(
        "--no-title-prefix",
        action="store_true",
        help="embed the chunk alone, without the title and heading path in front",
    )
    parser.add_argument(
        "--sections",
        choices=[s.value for s in Sections],
        default=Sections.APART.value,
        help="apart: a heading ends a chunk; packed: small sections share chunks",
    )
    parser.add_argument(
        "--strategy",
        choices=STRATEGY_NAMES,
        default="structure",
        help="structure: by sections, blocks, sentences; words: fixed word windows; "
        "semantic: where the meaning shifts (embeds sentences with the app's embedding "
        "provider: EMBEDDING_PROVIDER, local by default); "
        "binary: recursive least-similar split (scored with the app's embedding provider, "
        "cross-encoder or rerank endpoint)",
    )
    parser.add_argument(
        "--words-per-chunk",
        type=int,
        default=None,
        help="strategy words: words per window (default: 200)",
    )
    parser.add_argument(
        "--word-overlap",
        type=int,
        default=None,
        help="strategy words: words each window repeats from the previous one (default: 40)",
    )
    parser.add_argument(
        "--word-scope",
        choices=[s.value for s in WordScope],
        default=None,
        help="strategy words: windows stay in a section or run over the document "
        "(default: section)",
    )
    parser.add_argument(
        "--semantic-percentile",
        type=float,
        default=None,
        help="strategy semantic: a break where the distance is above this percentile (default: 95)",
    )
    parser.add_argument(
        "--semantic-window",
        type=int,
        default=None,
        help="strategy semantic: sentences embedded either side of a boundary (default: 2)",
    )
    parser.add_argument(
        "--semantic-min-fill",
        type=float,
        default=None,
        help="strategy semantic: share of the room a chunk holds before a break ends it "
        "(default: 0.25)",
    )
    parser.add_argument(
        "--binary-scorer",
        choices=BINARY_SCORERS,
        default=None,
        help="strategy binary: what scores a split (embeddings: the app's embedding provider; "
        "crossEncoder: CROSS_ENCODER_PATH; rerank: RERANK_ENDPOINT) (default: embeddings)",
    )
    parser.add_argument(
        "--binary-candidates",
        type=int,
        default=None,
        help="strategy binary: split positions scored per part, at most (default: 16)",
    )
    parser.add_argument(
        "--keep-markup",
        action="store_true",
        help="embed markdown as written (default: without link targets, tags, directives)",
    )


def chunk_options(args: argparse.Namespace) -> ChunkOptions:
    """The options `add_chunk_arguments` parsed; `OptionError` names a bad one."""
    check_strategy(args)
    unit = Unit(args.unit)
    # The skill's defaults (with Azure OpenAI), so a preview is what the indexer gets.
    default_max, default_overlap = default_lengths(unit)
    try:
        limits = Limits(
            unit=unit,
            maximum_page_length=default_max if args.max is None else args.max,
            page_overlap_length=default_overlap if args.overlap is None else args.overlap,
            maximum_pages_to_take=args.pages,
        )
    except OptionError as error:
        if args.overlap is None and "pageOverlapLength" in str(error):
            raise OptionError(f"{error}: the default overlap; give --overlap") from None
        raise
    return ChunkOptions(
        limits=limits,
        mode=SplitMode(args.mode),
        encoder_model_name=args.encoder,
        language=args.language,
        title_prefix=not args.no_title_prefix,
        section_fill=Sections(args.sections).fill,
        strip_markup=not args.keep_markup,
        strategy=args.strategy,
        words=word_windows(args),
        semantic=semantic_breaks(args),
        binary=binary_split(args),
    )


def needs_scoring(options: ChunkOptions) -> bool:
    """Whether the strategy calls `Scoring` (the CLI then builds the app's scorers)."""
    return options.strategy in SCORED_STRATEGIES


@contextlib.contextmanager
def command_line_scoring(
    parser: argparse.ArgumentParser, options: ChunkOptions
) -> Iterator[Callable[[], Scoring]]:
    """Each document's `Scoring`: the app's scorers (app settings from the environment, as
    the skill reads them: the embedding provider, local by default, a cross-encoder folder
    or a rerank endpoint) when the strategy scores, else none."""
    if not needs_scoring(options):
        yield Scoring
        return
    # A command line is an edge: the skill's clients, imported only for a scored strategy.
    from skills.embedding.scoring.threaded import threaded_scoring  # noqa: PLC0415
    from skills.skill.settings import SettingsError, load_settings  # noqa: PLC0415

    try:
        settings = load_settings(os.environ)
    except SettingsError as error:
        parser.exit(2, f"{parser.prog}: {error}\n")
    with threaded_scoring(settings) as scoring:
        yield scoring


def binary_split(args: argparse.Namespace) -> BinarySplit:
    """The `binary` strategy's options (`--binary-scorer`, `--binary-candidates`), checked
    by `check_strategy`."""
    defaults = BinarySplit()
    return BinarySplit(
        scorer=defaults.scorer if args.binary_scorer is None else args.binary_scorer,
        candidates=(
            defaults.candidates if args.binary_candidates is None else args.binary_candidates
        ),
    )


def word_windows(args: argparse.Namespace) -> WordWindows:
    """The `words` strategy's options (`--words-per-chunk`, `--word-overlap`,
    `--word-scope`), checked by `check_strategy`."""
    defaults = WordWindows()
    size = defaults.size if args.words_per_chunk is None else args.words_per_chunk
    return WordWindows(
        size=size,
        overlap=default_word_overlap(size) if args.word_overlap is None else args.word_overlap,
        scope=defaults.scope if args.word_scope is None else WordScope(args.word_scope),
    )


def semantic_breaks(args: argparse.Namespace) -> SemanticBreaks:
    """The `semantic` strategy's options (`--semantic-percentile`, `--semantic-window`,
    `--semantic-min-fill`), checked by `check_strategy`."""
    percentile, fill = args.semantic_percentile, args.semantic_min_fill
    window = args.semantic_window
    defaults = SemanticBreaks()
    return SemanticBreaks(
        percentile=defaults.percentile if percentile is None else percentile,
        window=defaults.window if window is None else window,
        min_fill=defaults.min_fill if fill is None else fill,
    )


def check_strategy(args: argparse.Namespace) -> None:
    """The options given that do not go with --strategy: an `OptionError` in the skill's
    words (`strategy_conflicts`), the options spelled as flags."""
    given = [
        name
        for name, flag in OPTION_FLAGS.items()
        if getattr(args, _attribute(flag), None) is not None
        # --overlap 0 asks for nothing a word window does not do, as in the skill
        and not (flag == "--overlap" and args.overlap == 0)
    ]
    problems = strategy_conflicts(args.strategy, given, OPTION_NAMES)
    if problems:
        raise OptionError("; ".join(problems))


def _attribute(flag: str) -> str:
    return flag.removeprefix("--").replace("-", "_")


class UnreadableFile(OSError):
    """A file in a binary format (PDF, Office, images): `strerror` says what to use."""


def read_file(name: str) -> DecodedFile:
    """A file's text (`-`: stdin), decoded as the skill decodes `file_data`: by its byte
    order mark, declared encoding (`<meta charset>`, XML declaration), UTF-8, or detection.

    Raises OSError, and UnreadableFile for a binary format.
    """
    if name == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(name, "rb") as handle:
            data = handle.read()
    decoded = decode_file(data, file_name=None if name == "-" else name)
    if isinstance(decoded, BinaryFile):
        raise UnreadableFile(errno.EINVAL, decoded.message)
    return decoded


def expand_folders(parser: argparse.ArgumentParser, names: Sequence[str]) -> list[str]:
    """`names` with each folder replaced by the markdown, HTML and text files in it (by
    their suffix, sorted, hidden ones left out); the other files it holds are named in
    one warning on stderr, and a folder with none of these files exits 2."""
    files: list[str] = []
    for name in names:
        if name == "-" or not os.path.isdir(name):
            files.append(name)
            continue
        found: list[str] = []
        skipped: list[str] = []
        for folder, folders, entries in os.walk(name):
            folders[:] = sorted(f for f in folders if not f.startswith("."))
            for entry in sorted(e for e in entries if not e.startswith(".")):
                path = os.path.join(folder, entry)
                (found if PurePath(entry).suffix.lower() in TEXT_SUFFIXES else skipped).append(path)
        if skipped:
            shown = ", ".join(skipped[:SKIPPED_SHOWN]) + (
                ", ..." if len(skipped) > SKIPPED_SHOWN else ""
            )
            print(
                f"{name}: warning: skipped {len(skipped)} file(s) not named as markdown, HTML "
                f"or text ({', '.join(sorted(TEXT_SUFFIXES))}): {shown}",
                file=sys.stderr,
            )
        if not found:
            parser.exit(
                2, f"{parser.prog}: {name}: the folder holds no markdown, HTML or text file\n"
            )
        files.extend(found)
    return files


def read_or_exit(parser: argparse.ArgumentParser, name: str) -> str:
    """A file's text (`read_file`), its decoding warnings on stderr; exit 2 if unreadable."""
    try:
        decoded = read_file(name)
    except OSError as error:
        parser.exit(2, f"{parser.prog}: cannot read {name}: {error.strerror}\n")
    for warning in decoded.warnings:
        print(f"{name}: warning: {warning}", file=sys.stderr)
    return decoded.text
