"""Chunk options on a command line: `python -m chunking` and `python -m chunking.report`."""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
import textwrap
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
    SectionPacking,
    SplitMode,
    Unit,
)
from chunking.parse.decode import BinaryFile, DecodedFile, decode_file
from chunking.parse.detect import TEXT_SUFFIXES
from chunking.plan.scoring import Scoring
from chunking.plan.strategies import (
    BY_NAME as STRATEGY_DECLARATIONS,
)
from chunking.plan.strategies import (
    SCORED_STRATEGIES,
    strategy_conflicts,
)
from skills.parameters import FLAG_PARAMETERS, given_parameters, read_strategy_parameters
from skills.skill.settings import Settings, SettingsError, load_settings

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from skills.parameters import Parameter

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
OPTION_NAMES = ParameterNames("option", lambda name: OPTION_FLAGS.get(name, name))
"""Parameters in the command line's refusals: option --word-overlap."""


class Parser(OneLineParser):
    """argparse that exits with status 2 and one line, and shows defaults in its help."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]


def add_chunk_arguments(parser: argparse.ArgumentParser) -> None:
    """The chunk options (--format, --unit, --max, --overlap, ...) on `parser`: one for
    each parameter of `skills.parameters` that has a flag, in the table's order."""
    for row in FLAG_PARAMETERS:
        flag = row.flag
        if flag is None:
            continue
        if flag.switch:
            parser.add_argument(flag.name, action="store_true", help=flag.help)
        elif row.kind == "choice":
            parser.add_argument(
                flag.name, choices=list(row.choices), default=flag.default, help=flag.help
            )
        else:
            kind = {"integer": int, "number": float}.get(row.kind, str)
            parser.add_argument(flag.name, type=kind, default=flag.default, help=flag.help)


def skill_settings() -> Settings:
    """The app settings of this environment, read as the local skill (./run.sh, uvicorn)
    reads them; OptionError when the skill would refuse them."""
    try:
        return load_settings(os.environ)
    except SettingsError as error:
        raise OptionError(f"app settings: {error}") from None


def defaults_reason(args: argparse.Namespace) -> str | None:
    """Why the lengths are what they are when neither --max nor --overlap was given."""
    if args.max is not None or args.overlap is not None:
        return None
    return f"the local skill's defaults: {skill_settings().length_defaults_reason(Unit(args.unit))}"


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


def chunk_options(args: argparse.Namespace) -> ChunkOptions:
    """The options `add_chunk_arguments` parsed; `OptionError` names a bad one."""
    check_strategy(args)
    unit = Unit(args.unit)
    # What the local skill would cut with these app settings, so a preview is what it gives.
    default_max, default_overlap = skill_settings().length_defaults(unit)
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
        section_fill=SectionPacking(args.sections).fill,
        strip_markup=not args.keep_markup,
        strategy=args.strategy,
        parameters=strategy_parameters(args),
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


def strategy_parameters(args: argparse.Namespace) -> Any:
    """The chosen strategy's own parameters (`ChunkOptions.parameters`) from its flags,
    the rest its defaults; None: it has none. Checked by `check_strategy`, validated by
    their own dataclass (`OptionError`)."""

    def read(row: Parameter, default: Any) -> Any:
        value = getattr(args, row.flag.attribute if row.flag else row.name, None)
        if value is None:
            return default
        return row.choices[value] if row.kind == "choice" else value

    parameters = STRATEGY_DECLARATIONS[args.strategy].parameters
    return (
        None if parameters is None else read_strategy_parameters(args.strategy, parameters(), read)
    )


def check_strategy(args: argparse.Namespace) -> None:
    """The options given that do not go with --strategy: an `OptionError` in the skill's
    words (`strategy_conflicts`), the options spelled as flags; the same parameters count
    as given as in a record (`given_parameters`: --overlap 0 asks for nothing)."""
    values = {name: getattr(args, _attribute(flag), None) for name, flag in OPTION_FLAGS.items()}
    problems = strategy_conflicts(args.strategy, given_parameters(values), OPTION_NAMES)
    if problems:
        raise OptionError("; ".join(problems))


def _attribute(flag: str) -> str:
    return flag.removeprefix("--").replace("-", "_")


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
