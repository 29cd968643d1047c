"""The evaluation's sweep flags, each derived from the table of parameters.

A sweep flag takes comma-separated values of one chunk parameter (`--max 256,512`), or
of a strategy's pair of them (`--words 200/40,100/20`). Its name, help and reading come
from the parameter's row in `skills.parameters`: a flag that takes values is spelled as
the chunk command line spells it (`--max`), a switch is the parameter's name in kebab
case taking `on,off` (`--title-prefix`), a strategy's pair is `--<strategy>`, and the
sections' fill is the option it sets (`--section-fill`). What does not sweep a chunk
parameter (`--rules`, `--baselines`, `--embedding`, ...) stays in `evaluation.__main__`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar, cast

from chunking.options import OptionError, SectionPacking
from chunking.plan.semantic_params import SemanticBreaks
from chunking.plan.words_params import WordWindows
from evaluation.settings import parse_overlap
from skills.parameters import BY_NAME, UNITS

if TYPE_CHECKING:
    from collections.abc import Mapping

    from skills.parameters import Parameter

T = TypeVar("T")
How = Literal["values", "switch", "pair", "fill"]
"""How a sweep flag reads its row(s): values of the parameter (integers, or its choices),
`on,off` of a switch, `A/B` pairs of a strategy's two parameters, or the sections' fill."""

SWITCH_VALUES: Mapping[str, bool] = {"on": True, "true": True, "yes": True, "1": True}
SWITCH_VALUES_OFF: Mapping[str, bool] = {"off": False, "false": False, "no": False, "0": False}
EXTRA_CHOICES: Mapping[str, Mapping[str, object]] = {"unit": {"tokens": UNITS["azureOpenAITokens"]}}
"""Short names the evaluation accepts besides the row's choices (`--unit tokens`)."""
PACK = "pack"
"""The `--section-fill` item that packs sections (`sections packed`)."""


Name = TypeVar("Name", bound=str)
"""A flag's allowed item (a Literal of names)."""


def _kebab(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"-\1", name).lower()


def items(text: str) -> list[str]:
    """The comma-separated items of a flag's value, blanks left out."""
    return [item.strip() for item in text.split(",") if item.strip()]


def chosen_once(text: str, allowed: tuple[Name, ...], flag: str, *, empty: str) -> tuple[Name, ...]:
    """The distinct items of a flag's value among `allowed`, in the order given;
    OptionError names a bad item, or says `empty` when none is given."""
    chosen: list[Name] = []
    for item in items(text):
        if item not in allowed:
            raise OptionError(f"{flag} must be among {', '.join(allowed)} (got {item!r})")
        name = allowed[allowed.index(item)]
        if name not in chosen:
            chosen.append(name)
    if not chosen:
        raise OptionError(f"{flag} needs {empty}")
    return tuple(chosen)


@dataclass(frozen=True, slots=True)
class Sweep:
    """One sweep flag: the table rows it sweeps and how it reads them."""

    rows: tuple[str, ...]
    """The parameters (row names in `skills.parameters.PARAMETERS`) it sweeps."""
    how: How
    default: str | None
    """Its value when not given, as typed on the command line; None: not swept unless
    given (`--section-fill` stands in for `--sections` only when given)."""
    example: str = ""
    """For `pair`: an example value for the help line."""
    note: str = ""
    """Added to the help line: what the row's meaning does not say for a sweep."""

    @property
    def parameters(self) -> tuple[Parameter, ...]:
        """The rows it sweeps."""
        return tuple(BY_NAME[name] for name in self.rows)

    @property
    def flag(self) -> str:
        """Its name on the command line, derived from its row."""
        first = self.parameters[0]
        if self.how == "pair":
            return f"--{first.strategy}"
        if self.how == "fill":
            return "--" + (first.option or first.name).replace("_", "-")
        if self.how == "switch" or first.flag is None or first.flag.switch:
            return "--" + _kebab(first.name)
        return first.flag.name

    @property
    def dest(self) -> str:
        """Where argparse stores it: `--title-prefix` -> `title_prefix`."""
        return self.flag.removeprefix("--").replace("-", "_")

    @property
    def help(self) -> str:
        """Its help line: the row's names and choices, and the note."""
        first = self.parameters[0]
        if self.how == "pair":
            names = "/".join(row.name for row in self.parameters)
            text = f"strategy {first.strategy}: {names} pairs, e.g. {self.example}"
        elif self.how == "switch":
            text = f"on,off: {first.meaning}"
        elif self.how == "fill":
            text = (
                f"instead of --{first.name}: {PACK}, or shares 0..1 at which a heading ends a "
                "chunk (0: every heading begins one)"
            )
        elif first.choices:
            text = f"{first.name} values: {','.join(self.choices)}: {first.meaning}"
        else:
            text = f"{first.name} values"
        return f"{text} {self.note}".rstrip()

    @property
    def choices(self) -> Mapping[str, object]:
        """The names it accepts: its row's choices and the evaluation's short ones."""
        first = self.parameters[0]
        return {**first.choices, **EXTRA_CHOICES.get(first.name, {})}

    def read(self, text: str) -> tuple[object, ...]:
        """The values `text` (comma-separated items) asks for; OptionError names a bad one."""
        return tuple(self._item(item) for item in items(text))

    def read_as(self, text: str, kind: type[T] | tuple[type, ...]) -> tuple[T, ...]:
        """`read`, each value checked to be of `kind` (what the grid holds)."""
        values = self.read(text)
        if not all(isinstance(value, kind) for value in values):
            raise TypeError(f"{self.flag} reads {values!r}, not {kind!r}")
        return cast("tuple[T, ...]", values)

    def _item(self, item: str) -> object:
        first = self.parameters[0]
        if self.how == "switch":
            value = {**SWITCH_VALUES, **SWITCH_VALUES_OFF}.get(item.lower())
            if value is None:
                raise OptionError(f"on/off options take on or off (got {item!r})")
            return value
        if self.how == "fill":
            return _fill(item, self.flag)
        if self.how == "pair":
            return _pair(item, self)
        if first.name == "pageOverlapLength":
            return parse_overlap(item)
        if first.kind == "integer":
            try:
                return int(item)
            except ValueError:
                raise OptionError(
                    f"{self.flag} must be integers separated by commas (got {item!r})"
                ) from None
        allowed = self.choices
        if item not in allowed:
            raise OptionError(f"{self.flag} must be among {', '.join(allowed)} (got {item!r})")
        chosen = allowed[item]
        return chosen.fill if isinstance(chosen, SectionPacking) else chosen


def _fill(item: str, flag: str) -> float | None:
    if item == PACK:
        return None
    try:
        share = float(item)
    except ValueError:
        share = -1.0
    if not 0 <= share <= 1:
        raise OptionError(f"{flag} items must be {PACK} or a share from 0 to 1 (got {item!r})")
    return share


def _pair(item: str, sweep: Sweep) -> tuple[float | int, int]:
    first, second = sweep.parameters
    left, _, right = item.partition("/")
    default_right = "0" if first.strategy == "words" else str(SemanticBreaks().window)
    try:
        if first.kind == "integer":
            return int(left), int(right or default_right)
        return float(left), int(right or default_right)
    except ValueError:
        raise OptionError(
            f"{sweep.flag} items must be {first.name}/{second.name} such as "
            f"{sweep.example.partition(',')[0]} (got {item!r})"
        ) from None


_WORDS = WordWindows()
_BREAKS = SemanticBreaks()

SWEEPS: tuple[Sweep, ...] = (
    Sweep(("maximumPageLength",), "values", "256,512,1024"),
    Sweep(
        ("pageOverlapLength",),
        "values",
        "0,12%",
        note="or N%% of maximumPageLength",
    ),
    Sweep(("unit",), "values", "azureOpenAITokens"),
    Sweep(("textSplitMode",), "values", "pages"),
    Sweep(("titlePrefix",), "switch", "on"),
    Sweep(("stripMarkup",), "switch", "on"),
    Sweep(("sections",), "values", SectionPacking.APART.value),
    Sweep(("sections",), "fill", None),
    Sweep(
        ("strategy",),
        "values",
        "structure",
        note="(semantic and binary embed sentences with the evaluation's embedding model, "
        "cached like the chunks)",
    ),
    Sweep(
        ("wordsPerChunk", "wordOverlap"),
        "pair",
        f"{_WORDS.size}/{_WORDS.overlap}",
        example="200/40,100/20",
    ),
    Sweep(
        ("semanticPercentile", "semanticWindow"),
        "pair",
        f"{_BREAKS.percentile:g}/{_BREAKS.window}",
        example="95/1,90/2",
    ),
)
"""Every sweep flag, in the order `--help` lists them."""
BY_FLAG: Mapping[str, Sweep] = {sweep.flag: sweep for sweep in SWEEPS}
