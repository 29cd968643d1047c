"""Chunk options on a command line: `python -m chunking` and `python -m chunking.report`."""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
import textwrap
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from chunking.cli.files import read_limited
from chunking.cli.pipes import OneLineParser
from chunking.options import (
    PAGE_OVERLAP_LENGTH,
    ChunkOptions,
    Limits,
    OptionError,
    ParameterNames,
    Unit,
    clipped_repr,
)
from chunking.parse.decode import BinaryFile, DecodedFile, decode_file
from chunking.parse.detect import TEXT_SUFFIXES
from chunking.plan.scoring import Scoring
from chunking.plan.strategies import (
    BY_NAME as STRATEGY_DECLARATIONS,
)
from chunking.plan.strategies import (
    SCORED_STRATEGIES,
    STRATEGY_NAMES,
)
from skills.parameters import FLAG_PARAMETERS, read_rows, read_strategy
from skills.skill.settings import Settings, SettingsError, load_settings
from skills.values import Problem, Source

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from chunking.pipeline import FormatName

HELP_WIDTH = 78
"""Columns of the help's own paragraphs (argparse wraps the options to the terminal)."""

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
    row.name: row.flag.name
    for row in FLAG_PARAMETERS
    if row.flag is not None and (row.strategy is not None or row.name == PAGE_OVERLAP_LENGTH)
}
"""The flag of each parameter a strategy validation names (record input name: flag)."""
FLAG_NAMES = {row.name: row.flag.name for row in FLAG_PARAMETERS if row.flag is not None}
"""Each parameter's flag, by record input name."""
OPTION_NAMES = ParameterNames("option", lambda name: FLAG_NAMES.get(name, name))
"""Parameters in the command line's refusals: option --word-overlap."""
FLAGS = Source(OPTION_NAMES, clipped_repr, {})
"""Flags in messages: option --unit must be one of ... (got 'chars')."""
VALUE_ROWS = tuple(
    row for row in FLAG_PARAMETERS if row.flag and not row.flag.switch and row.strategy is None
)
"""The flags that take a value, read by their kind (`read_value`), a strategy's own
flags apart (`read_strategy`)."""
FLAG_DEFAULTS = {row.name: row.flag.default for row in VALUE_ROWS if row.flag is not None}
"""Each value flag's default, by record input name."""


class Parser(OneLineParser):
    """argparse that exits with status 2 and one line, and shows defaults in its help."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]


def add_chunk_arguments(parser: argparse.ArgumentParser) -> None:
    """The chunk options (--format, --unit, --max, --overlap, ...) on `parser`: one for
    each parameter of `skills.parameters` that has a flag, in the table's order. Values
    stay strings here: `read_chunk_arguments` reads them as records' inputs are read."""
    for row in FLAG_PARAMETERS:
        flag = row.flag
        if flag is None:
            continue
        if flag.switch:
            parser.add_argument(flag.name, action="store_true", help=flag.help)
        else:
            # A choice's names in the usage line, as argparse shows its own choices.
            shown = "{" + ",".join(row.choices) + "}" if row.kind == "choice" else None
            parser.add_argument(flag.name, default=flag.default, metavar=shown, help=flag.help)


@dataclass(frozen=True, slots=True)
class ChunkArguments:
    """What the chunk options on a command line ask for."""

    options: ChunkOptions
    format: FormatName
    """--format."""
    title: str | None
    """--title."""


def flag_values(args: argparse.Namespace) -> dict[str, object]:
    """What `args` holds for each parameter with a flag, by record input name: the flag's
    value, else (a parser without the flag) its default."""
    return {
        row.name: getattr(args, row.flag.attribute, row.flag.default)
        for row in FLAG_PARAMETERS
        if row.flag is not None
    }


def skill_settings() -> Settings:
    """The app settings of this environment, read as the local skill (./run.sh, uvicorn)
    reads them; OptionError when the skill would refuse them."""
    try:
        return load_settings(os.environ)
    except SettingsError as error:
        raise OptionError(f"app settings: {error}") from None


def defaults_reason(args: argparse.Namespace, options: ChunkOptions) -> str | None:
    """Why the lengths are what they are when neither --max nor --overlap was given."""
    if args.max is not None or args.overlap is not None:
        return None
    reason = skill_settings().length_defaults_reason(options.limits.unit)
    return f"the local skill's defaults: {reason}"


def defaults_epilog() -> str:
    """The help's line on the default lengths, as this environment's app settings make them."""
    try:
        settings = skill_settings()
    except OptionError as error:
        return textwrap.fill(f"Default lengths: none, {error}", width=HELP_WIDTH)
    tokens, characters = (settings.length_defaults(unit) for unit in (Unit.TOKENS, Unit.CHARACTERS))
    return textwrap.fill(
        f"Without --max and --overlap: what the local skill cuts with this environment's app "
        f"settings, {tokens[0]}/{tokens[1]} tokens, {characters[0]}/{characters[1]} characters "
        f"({settings.length_defaults_reason(Unit.TOKENS)}).",
        width=HELP_WIDTH,
    )


def read_chunk_arguments(args: argparse.Namespace) -> ChunkArguments | tuple[Problem, ...]:
    """The options `add_chunk_arguments` parsed, each flag read as the skill reads the
    same record input (`read_value`, `read_strategy`); else every problem found."""
    given = flag_values(args)
    # A flag given as "" gives nothing, as a record's "" does: its default then.
    defaults, _ = read_rows(VALUE_ROWS, FLAG_DEFAULTS, FLAGS)
    read, problems = read_rows(VALUE_ROWS, given, FLAGS)
    values = {**defaults, **read}
    strategy = str(values.get("strategy", STRATEGY_NAMES[0]))
    kind = STRATEGY_DECLARATIONS[strategy].parameters
    parameters, refused = read_strategy(strategy, None if kind is None else kind(), given, FLAGS)
    problems += refused
    if problems:
        return problems
    options = _options(args, values, strategy, parameters)
    if isinstance(options, Problem):
        return (options,)
    return ChunkArguments(options, values.get("format", "auto"), values.get("title"))  # type: ignore[arg-type]


def _options(
    args: argparse.Namespace, values: dict[str, Any], strategy: str, parameters: Any
) -> ChunkOptions | Problem:
    """The options of the flags read; a Problem when the options' own validation refuses
    them. Lengths not given are what the local skill would cut with these app settings,
    so a preview is what it gives."""
    unit = values["unit"]
    try:
        settings = skill_settings()
    except OptionError as error:
        return Problem("app settings", str(error))
    default_max, default_overlap = settings.length_defaults(unit)
    try:
        limits = Limits(
            unit=unit,
            maximum_page_length=values.get("maximumPageLength", default_max),
            page_overlap_length=values.get(PAGE_OVERLAP_LENGTH, default_overlap),
            maximum_pages_to_take=values["maximumPagesToTake"],
        )
        return ChunkOptions(
            limits=limits,
            mode=values["textSplitMode"],
            encoder_model_name=values["encoderModelName"],
            language=values["defaultLanguageCode"],
            title_prefix=not args.no_title_prefix,
            section_fill=values["sections"].fill,
            strip_markup=not args.keep_markup,
            strategy=strategy,
            parameters=parameters,
        )
    except OptionError as error:
        message = str(error)
        if PAGE_OVERLAP_LENGTH not in values and PAGE_OVERLAP_LENGTH in message:
            message = f"{message}: the default overlap; give --overlap"
        return Problem(", ".join(FLAGS.name(row.name) for row in VALUE_ROWS if row.option), message)


def chunk_options(args: argparse.Namespace) -> ChunkOptions:
    """The options `add_chunk_arguments` parsed; `OptionError` names every bad one."""
    read = read_chunk_arguments(args)
    if isinstance(read, tuple):
        raise OptionError("; ".join(problem.message for problem in read))
    return read.options


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


class UnreadableFile(OSError):
    """A file in a binary format (PDF, Office, images): `strerror` says what to use."""


def read_file(name: str) -> DecodedFile:
    """A file's text (`-`: stdin), decoded as the skill decodes `file_data`: by its byte
    order mark, declared encoding (`<meta charset>`, XML declaration), UTF-8, or detection.

    Raises OSError (FileRefused for what is not a regular file, or is larger than the skill
    takes), and UnreadableFile for a binary format.
    """
    data = read_limited(name)  # a FIFO, a device or a huge file: a one-line refusal
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
