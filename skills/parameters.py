"""The skill's parameters, declared once: one row per parameter, every surface derived.

A row names a parameter on each surface that has it (the record input, the app setting,
the `python -m chunking` flag), how every surface reads it (`kind`, `choices`, and bounds
for a parameter that sets no option: an option bounds itself), the option it sets and the
strategy it belongs to: a strategy's rows are declared beside its planner
(`chunking.plan.strategies` registers them). Each surface reads its values with
`read_rows` (`skills.values.read_value` for each row) and a strategy's with
`read_strategy`: one rule per kind, problems as values. From
`PARAMETERS` come the record inputs the skill knows (`skills.skill.record_inputs`), the app
settings it reads and `/api/health` lists (`skills.skill.settings`), the chunk command line's
flags (`skills.commands.cli`), the deploy script's literal inputs and their app settings
(`skills.search.definitions`, `infra.deploy`), the cross-checks (`skills.search.checks`) and the
settings reference in docs/guide/settings.md (`python -m skills.parameters --write`).

Adding a parameter is one row here plus its use (the option it sets in the chunking core);
adding a strategy's parameter is one row of its declaration.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, get_args

from chunking.options import (
    DEFAULT_CHARACTERS_OVERLAP_LENGTH,
    DEFAULT_CHARACTERS_PAGE_LENGTH,
    DEFAULT_ENCODER,
    DEFAULT_LANGUAGE,
    DEFAULT_MAXIMUM_PAGE_LENGTH,
    DEFAULT_PAGE_OVERLAP_LENGTH,
    PAGE_OVERLAP_LENGTH,
    OptionError,
    SectionPacking,
    SplitMode,
    Unit,
    default_lengths,
)
from chunking.pipeline import FormatName

# Re-exported (the alias says so to mypy): the skill's modules read the table's rows here.
from chunking.plan.declaration import Flag as Flag  # noqa: PLC0414
from chunking.plan.declaration import Parameter as Parameter  # noqa: PLC0414
from chunking.plan.strategies import (
    BY_NAME as STRATEGY_DECLARATIONS,
)
from chunking.plan.strategies import (
    DECLARATIONS,
    STRATEGY_NAMES,
    strategy_conflicts,
    strategy_parameter_rows,
)
from skills.values import Problem, Source, parse_integer, read_value

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

    from _typeshed import DataclassInstance

SPLIT_MODES: Mapping[str, SplitMode] = {mode.value: mode for mode in SplitMode}
UNITS: Mapping[str, Unit] = {unit.value: unit for unit in Unit}
FORMATS: tuple[FormatName, ...] = get_args(FormatName)
STRATEGIES: Mapping[str, str] = {name: name for name in STRATEGY_NAMES}
SECTION_PACKINGS: Mapping[str, SectionPacking] = {p.value: p for p in SectionPacking}
MARKDOWN_HEADER_DEPTHS: Mapping[str, int] = {f"h{level}": level for level in range(1, 7)}
"""The Layout skill's `markdownHeaderDepth` values: the keys `sections` has (h1 to the depth)."""

MAX_DEADLINE_SECONDS = 230.0
"""Nobody waits longer: the indexer gives up at 230 s at most."""
MAX_CHUNK_WORKERS = 64

TOKENS_OR_CHARACTERS = "{tokens} for tokens; {characters} for characters"

PARAMETERS: tuple[Parameter, ...] = (
    Parameter(
        "text",
        "string",
        "the document (required unless `file_data` is given)",
        "required",
    ),
    Parameter(
        "title",
        "string",
        "title when the document has none (front matter, `<title>` and a single leading H1 "
        "come first)",
        "none",
        flag=Flag("--title", "title when the document has none (default: none)"),
    ),
    Parameter(
        "format",
        "choice",
        "the document's format; `auto` detects it from `contentType`, `fileName` and the text",
        "`auto`",
        setting="CHUNK_FORMAT",
        attribute="format",
        choices={name: name for name in FORMATS},
        flag=Flag(
            "--format", "the input's format; auto: from the file name, then the text", "auto"
        ),
    ),
    Parameter("contentType", "string", "used by format `auto`", "none"),
    Parameter("fileName", "string", "used by format `auto`", "none"),
    Parameter(
        "url",
        "string",
        "base for deep links: each chunk's `url` gets `#anchor` of its heading",
        "none",
    ),
    Parameter("language", "string", "language for sentence boundaries", "`defaultLanguageCode`"),
    Parameter(
        "languageCode",
        "string",
        "language for sentence boundaries (the Split skill's name)",
        "`defaultLanguageCode`",
    ),
    Parameter(
        "textSplitMode",
        "choice",
        "`pages` fill up to the limit; `sentences` gives one sentence per chunk",
        "`pages`",
        setting="CHUNK_TEXT_SPLIT_MODE",
        attribute="text_split_mode",
        choices=SPLIT_MODES,
        option="mode",
        flag=Flag(
            "--mode",
            "textSplitMode: pages fill up to --max; sentences gives one sentence per chunk",
            SplitMode.PAGES.value,
        ),
        deployed=True,
    ),
    Parameter(
        "unit",
        "choice",
        "what the lengths count: `azureOpenAITokens` (tiktoken) or `characters` (UTF-16 code "
        "units, as the Split skill counts)",
        f"`{Unit.TOKENS.value}`",
        setting="CHUNK_UNIT",
        attribute="unit",
        choices=UNITS,
        option="limits.unit",
        flag=Flag(
            "--unit",
            "what --max and --overlap count: cl100k_base tokens (--encoder) or characters "
            "(UTF-16 code units, as the Split skill counts them)",
            Unit.TOKENS.value,
        ),
        deployed=True,
    ),
    Parameter(
        "maximumPageLength",
        "integer",
        "the limit of each chunk's embedded text, title and headings included",
        TOKENS_OR_CHARACTERS.format(
            tokens=DEFAULT_MAXIMUM_PAGE_LENGTH, characters=DEFAULT_CHARACTERS_PAGE_LENGTH
        )
        + " (the Split skill's default)",
        setting="CHUNK_MAXIMUM_PAGE_LENGTH",
        attribute="maximum_page_length",
        option="limits.maximum_page_length",
        flag=Flag(
            "--max",
            f"maximumPageLength (default: the skill's, {DEFAULT_MAXIMUM_PAGE_LENGTH} tokens / "
            f"{DEFAULT_CHARACTERS_PAGE_LENGTH} characters)",
        ),
        deployed=True,
    ),
    Parameter(
        PAGE_OVERLAP_LENGTH,
        "integer",
        "each continuation starts with at most this much of the previous chunk's end; "
        "less than half of `maximumPageLength`",
        TOKENS_OR_CHARACTERS.format(
            tokens=DEFAULT_PAGE_OVERLAP_LENGTH, characters=DEFAULT_CHARACTERS_OVERLAP_LENGTH
        ),
        setting="CHUNK_PAGE_OVERLAP_LENGTH",
        attribute="page_overlap_length",
        option="limits.page_overlap_length",
        flag=Flag(
            "--overlap",
            f"pageOverlapLength, less than half of --max (default: the skill's, "
            f"{DEFAULT_PAGE_OVERLAP_LENGTH} tokens / {DEFAULT_CHARACTERS_OVERLAP_LENGTH} "
            "characters)",
        ),
        deployed=True,
    ),
    Parameter(
        "maximumPagesToTake",
        "integer",
        "keep the first chunks only (0 = all)",
        "`0`",
        setting="CHUNK_MAXIMUM_PAGES_TO_TAKE",
        attribute="maximum_pages_to_take",
        option="limits.maximum_pages_to_take",
        flag=Flag("--pages", "maximumPagesToTake (0 = all)", 0),
    ),
    Parameter(
        "encoderModelName",
        "string",
        "the tiktoken encoding of unit `azureOpenAITokens`",
        f"`{DEFAULT_ENCODER}`",
        setting="CHUNK_ENCODER_MODEL_NAME",
        attribute="encoder_model_name",
        option="encoder_model_name",
        flag=Flag("--encoder", "encoderModelName", DEFAULT_ENCODER),
    ),
    Parameter(
        "defaultLanguageCode",
        "string",
        "language when a record gives neither `language` nor `languageCode`",
        f"`{DEFAULT_LANGUAGE}`",
        setting="CHUNK_DEFAULT_LANGUAGE_CODE",
        attribute="default_language_code",
        option="language",
        flag=Flag("--language", "defaultLanguageCode", DEFAULT_LANGUAGE),
    ),
    Parameter(
        "strategy",
        "choice",
        "; ".join(f"`{d.name}`: {d.summary}" for d in DECLARATIONS),
        f"`{STRATEGY_NAMES[0]}`",
        setting="CHUNK_STRATEGY",
        attribute="strategy",
        choices=STRATEGIES,
        option="strategy",
        flag=Flag(
            "--strategy",
            "; ".join(f"{d.name}: {d.flag_help or d.summary}" for d in DECLARATIONS),
            STRATEGY_NAMES[0],
        ),
    ),
    *strategy_parameter_rows(),
    Parameter(
        "markdownHeaderDepth",
        "choice",
        "the keys of each chunk's `sections` (it changes no cut)",
        "`h6`",
        setting="CHUNK_MARKDOWN_HEADER_DEPTH",
        attribute="markdown_header_depth",
        choices=MARKDOWN_HEADER_DEPTHS,
    ),
    Parameter(
        "file_data",
        "file",
        "instead of `text`: the raw file, as the indexer sends `/document/file_data`",
        "none",
    ),
    Parameter(
        "titlePrefix",
        "switch",
        "put the title and heading path in front of each chunk's embedded `text`",
        "`true`",
        record_input=False,
        setting="CHUNK_TITLE_PREFIX",
        attribute="title_prefix",
        option="title_prefix",
        flag=Flag(
            "--no-title-prefix",
            "embed the chunk alone, without the title and heading path in front",
            switch=True,
        ),
    ),
    Parameter(
        "sections",
        "choice",
        "`apart`: a heading ends a chunk once it holds three quarters of its room, and the "
        "rest of a document that fits in one chunk is one chunk; `packed`: small sections are "
        "packed up to the limit",
        f"`{SectionPacking.APART.value}`",
        record_input=False,
        setting="CHUNK_SECTIONS",
        attribute="section_packing",
        choices=SECTION_PACKINGS,
        option="section_fill",
        flag=Flag(
            "--sections",
            "apart: a heading ends a chunk once it holds three quarters of its room, and the "
            "rest of a document that fits in one chunk is one chunk; packed: small sections "
            "are packed up to the limit",
            SectionPacking.APART.value,
        ),
    ),
    Parameter(
        "stripMarkup",
        "switch",
        "embed markdown without link targets, image paths, HTML tags, comments, docfx "
        "include/directive lines, MDX component tag and `import`/`export` lines (`content` "
        "is unchanged)",
        "`true`",
        record_input=False,
        setting="CHUNK_STRIP_MARKUP",
        attribute="strip_markup",
        option="strip_markup",
        flag=Flag(
            "--keep-markup",
            "embed markdown as written (default: without link targets, tags, directives)",
            switch=True,
        ),
    ),
    Parameter(
        "maxRequestBytes",
        "integer",
        "larger bodies (decompressed, for gzip) get HTTP 413 before parsing",
        "`67108864` (64 MiB: fits the default 2,048 MB instance, see "
        "[bounded answers](../design/hardening.md#bounded-answers))",
        record_input=False,
        setting="MAX_REQUEST_BYTES",
        attribute="max_request_bytes",
        minimum=1,
    ),
    Parameter(
        "maxResponseBytes",
        "integer",
        "a record whose answer would take the response past this fails with an error saying "
        "which input to change (fewer, larger chunks, or a smaller `batchSize`)",
        "`100663296` (96 MiB)",
        record_input=False,
        setting="MAX_RESPONSE_BYTES",
        attribute="max_response_bytes",
        minimum=1,
    ),
    Parameter(
        "maxChunksPerRecord",
        "integer",
        "a record that would give more chunks fails with an error naming its strategy's inputs",
        "`20000`",
        record_input=False,
        setting="MAX_CHUNKS_PER_RECORD",
        attribute="max_chunks_per_record",
        minimum=1,
        option="max_chunks",
    ),
    Parameter(
        "memoryBudgetBytes",
        "integer",
        "bytes every request in flight may reserve together (body, decoded text, answer); "
        "a request that does not fit waits up to half its deadline, then gets a 503",
        "`671088640` (640 MiB)",
        record_input=False,
        setting="MEMORY_BUDGET_BYTES",
        attribute="memory_budget_bytes",
        minimum=1,
    ),
    Parameter(
        "deadlineSeconds",
        "seconds",
        "answer by then; unfinished records get an error, a body still arriving a 408 "
        "(0 < s ≤ 230)",
        "`200`",
        record_input=False,
        setting="SKILL_DEADLINE_SECONDS",
        attribute="deadline_seconds",
        maximum=MAX_DEADLINE_SECONDS,
    ),
    Parameter(
        "transferDeadlineSeconds",
        "seconds",
        "a request body must arrive, and an answer be read by the client, within this; a body "
        "still arriving gets a 408, an answer still unread has its connection closed; a "
        "request's memory is held meanwhile (0 < s ≤ 230)",
        "`30` (a 64 MiB body at 2.2 MB/s)",
        record_input=False,
        setting="TRANSFER_DEADLINE_SECONDS",
        attribute="transfer_deadline_seconds",
        maximum=MAX_DEADLINE_SECONDS,
    ),
    Parameter(
        "chunkWorkers",
        "integer",
        "worker processes that chunk records; a record still running at the deadline has its "
        "worker killed and replaced. `0` chunks in the app's own threads, where overrunning "
        "work cannot be stopped (only for hosts that forbid child processes)",
        "one per CPU",
        record_input=False,
        setting="CHUNK_WORKERS",
        attribute="chunk_workers",
        minimum=0,
        maximum=MAX_CHUNK_WORKERS,
    ),
)
"""Every parameter, in the order the skill lists its record inputs (and the deploy script
sends its literal inputs: a new order would look like new inputs and re-chunk the index)."""

DEPLOY_CHARACTERS_LENGTHS = (2000, 500)
"""(maximumPageLength, pageOverlapLength) the deploy script sends for unit `characters`
when CHUNK_MAXIMUM_PAGE_LENGTH / CHUNK_PAGE_OVERLAP_LENGTH are not set: the starting
values Microsoft's "Chunk large documents for vector search" article recommends for the
Text Split skill in characters (its Earth at Night example, and the
azure-search-vector-samples textsplit notebook; ../shared/azure-contract.md §2.4). The
skill's own default for a record that gives no lengths
is the Split skill's documented 5000/0 (`chunking.options.DEFAULT_CHARACTERS_*`, since
0e1f550), so the skill drops in where a skillset sent the Split skill nothing. The
evaluation has measured 2000/500 characters (docs/results/2026-12-03-rule-audit.md), not
5000/0 against it: neither changes without that measurement."""


def deploy_lengths(unit: Unit) -> tuple[int, int]:
    """(maximumPageLength, pageOverlapLength) `python -m infra.deploy` sends when the
    deployment's CHUNK_* settings do not give them: the skill's for tokens (512/64),
    `DEPLOY_CHARACTERS_LENGTHS` for characters."""
    return DEPLOY_CHARACTERS_LENGTHS if unit is Unit.CHARACTERS else default_lengths(unit)


BY_NAME: Mapping[str, Parameter] = {row.name: row for row in PARAMETERS}
RECORD_INPUTS: tuple[str, ...] = tuple(row.name for row in PARAMETERS if row.record_input)
"""The record inputs the skill reads, in the order its warnings list them."""
SETTING_PARAMETERS: tuple[Parameter, ...] = tuple(row for row in PARAMETERS if row.setting)
"""The parameters that have an app setting, in the order /api/health lists them."""
FLAG_PARAMETERS: tuple[Parameter, ...] = tuple(row for row in PARAMETERS if row.flag)
"""The parameters of the chunk command line."""
DEPLOYED_PARAMETERS: tuple[Parameter, ...] = tuple(row for row in PARAMETERS if row.deployed)
"""What the deploy script sends the skill as literal inputs, read from their app settings."""


def record_input(name: str) -> str:
    """`name`, checked to be a record input of the table (KeyError when it is not)."""
    if not BY_NAME[name].record_input:
        raise KeyError(f"parameter {name!r} is not a record input")
    return name


def setting_name(name: str) -> str:
    """The app setting of parameter `name` (KeyError when it has none)."""
    setting = BY_NAME[name].setting
    if setting is None:
        raise KeyError(f"parameter {name!r} has no app setting")
    return setting


STRATEGY_ROWS: Mapping[str, tuple[Parameter, ...]] = {
    name: tuple(row for row in PARAMETERS if row.strategy == name) for name in STRATEGY_NAMES
}
"""Each strategy's own parameters, in table order (read once per record)."""


def strategy_rows(strategy: str) -> tuple[Parameter, ...]:
    """The strategy's own parameters, in table order."""
    return STRATEGY_ROWS[strategy]


StrategyParameters = TypeVar("StrategyParameters", bound="DataclassInstance")
"""A strategy's own parameters: a dataclass its declaration names."""


def read_rows(
    rows: Iterable[Parameter], given: Mapping[str, object], source: Source
) -> tuple[dict[str, object], tuple[Problem, ...]]:
    """Each of `rows` read (`read_value`) from `given`, what `source` holds by record
    input name: the values given, by the same names, and a Problem for each that cannot
    be used."""
    values: dict[str, object] = {}
    problems: list[Problem] = []
    for row in rows:
        raw = given.get(row.name)
        if raw is None:  # nothing given: most rows of most records
            continue
        value = read_value(row, raw, source)
        if isinstance(value, Problem):
            problems.append(value)
        elif value is not None:
            values[row.name] = value
    return values, tuple(problems)


def strategy_parameters(
    strategy: str, defaults: StrategyParameters, values: Mapping[str, object], source: Source
) -> StrategyParameters | Problem:
    """`defaults` with each of `strategy`'s parameters that `values` gives (read, by record
    input name); a default the declaration derives from another parameter (`wordOverlap`
    from `wordsPerChunk`) is derived from the values before it. A Problem when the
    parameters' own validation refuses them: its name lists the numbers they bound, as
    `source` names them."""
    derived = STRATEGY_DECLARATIONS[strategy].derived_defaults
    fields: dict[str, Any] = {}
    for row in strategy_rows(strategy):
        default = getattr(defaults, row.field_name)
        if row.name in derived:
            default = derived[row.name](fields, default)
        fields[row.field_name] = values.get(row.name, default)
    try:
        return replace(defaults, **fields)
    except OptionError as error:
        bounded = [source.name(row.name) for row in strategy_rows(strategy) if row.kind != "choice"]
        return Problem(", ".join(bounded), str(error))


def read_strategy(
    strategy: str, defaults: Any, given: Mapping[str, object], source: Source
) -> tuple[Any, tuple[Problem, ...]]:
    """`strategy`'s own parameters read from `given` (what `source` holds, by record
    input name) over `defaults` (None: it has none), and the problems: a parameter of
    another strategy given, or one this strategy refuses (`strategy_conflicts`, named as
    `source` names them), each own parameter that cannot be read, and their own
    validation's refusal. One rule for a record's inputs and the command line's flags."""
    conflicts = strategy_conflicts(strategy, given_parameters(given), source.names)
    problems = tuple(Problem(source.name("strategy"), message) for message in conflicts)
    if defaults is None:
        return None, problems
    values, refused = read_rows(strategy_rows(strategy), given, source)
    read = strategy_parameters(strategy, defaults, values, source)
    if isinstance(read, Problem):
        return defaults, (*problems, *refused, read)
    return read, (*problems, *refused)


def given_parameters(values: Mapping[str, object]) -> list[str]:
    """The parameters (record input names) `values` gives, for `strategy_conflicts`: null
    and "" give nothing, and pageOverlapLength 0 asks for nothing a word window does not do
    (a skillset moved from the Split skill sends it): only a real overlap is a conflict.
    One rule for the skill's records and the command line's flags."""
    return [
        name
        for name, value in values.items()
        if value is not None
        and value != ""
        and not (name == PAGE_OVERLAP_LENGTH and parse_integer(value) == 0)
    ]


# --- the settings reference (docs/guide/settings.md) -----------------------------------------

REFERENCE_PAGE = Path(__file__).resolve().parent.parent / "docs" / "guide" / "settings.md"
REFERENCE_START = "<!-- parameters: generated by `python -m skills.parameters --write` -->"
REFERENCE_END = "<!-- parameters: end -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def reference_rows() -> Iterator[str]:
    """The settings reference's table, one line per parameter with an app setting or a
    record input: its names on every surface, its strategy, default and meaning."""
    yield "| App setting | Record input | `python -m chunking` | Strategy | Default | Meaning |"
    yield "|---|---|---|---|---|---|"
    for row in PARAMETERS:
        names = " \\| ".join(f"`{name}`" for name in row.choices)
        choices = f" ({names})" if row.choices else ""
        cells = (
            f"`{row.setting}`" if row.setting else "",
            f"`{row.name}`" if row.record_input else "",
            f"`{row.flag.name}`" if row.flag else "",
            f"`{row.strategy}`" if row.strategy else "",
            row.default,
            _cell(row.meaning) + choices,
        )
        yield "| " + " | ".join(cells) + " |"


def deploy_note() -> Iterator[str]:
    """The settings reference's paragraph on what the deploy script sends: its literal
    inputs and, where they differ from the skill's, its defaults."""
    tokens, characters = deploy_lengths(Unit.TOKENS), deploy_lengths(Unit.CHARACTERS)
    skill = default_lengths(Unit.CHARACTERS)
    names = ", ".join(f"`{row.name}`" for row in DEPLOYED_PARAMETERS)
    yield ""
    yield (
        f"`python -m infra.deploy` sends the skill {names} as literal inputs, from the same "
        "app settings in the deployment's environment (`azd env set`). Where those are not "
        f"set it sends {tokens[0]}/{tokens[1]} tokens, as the skill's default, and for unit "
        f"`characters` {characters[0]}/{characters[1]} (the starting values "
        "Microsoft's chunking guidance gives the Text Split skill), not the skill's "
        f"{skill[0]}/{skill[1]} (the Split skill's own defaults, for a record that gives no "
        "lengths). "
        "[Deploy](deploy.md#chunk-settings-the-deploy-sends) says why."
    )


def reference_table() -> str:
    """The generated part of the settings reference, markers included."""
    return "\n".join([REFERENCE_START, *reference_rows(), *deploy_note(), REFERENCE_END])


def rendered_reference(page: str) -> str:
    """`page` with its generated part replaced by today's table."""
    before, start, rest = page.partition(REFERENCE_START)
    _, end, after = rest.partition(REFERENCE_END)
    if not start or not end:
        raise ValueError(f"the page has no {REFERENCE_START!r} ... {REFERENCE_END!r} part")
    return before + reference_table() + after


def main(argv: list[str] | None = None) -> int:
    """`python -m skills.parameters [--write]`: check (or rewrite) the settings reference."""
    arguments = sys.argv[1:] if argv is None else argv
    page = REFERENCE_PAGE.read_text(encoding="utf-8")
    fresh = rendered_reference(page)
    if arguments == ["--write"]:
        REFERENCE_PAGE.write_text(fresh, encoding="utf-8")
        return 0
    if arguments:
        print("usage: python -m skills.parameters [--write]", file=sys.stderr)
        return 2
    if fresh != page:
        print(
            f"{REFERENCE_PAGE.name} is out of date: run python -m skills.parameters --write",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
