"""What a strategy declares once, beside its planner, and every surface derives from.

A `StrategyDeclaration` names the strategy, its plan function, the dataclass of its own
parameters (defaults and bounds are that dataclass's; `ChunkOptions.parameters` holds
one), its rows of the parameter table (`Parameter`: record input, app setting, flag) and
whether it calls `chunking.plan.scoring.Scoring`. `chunking.plan.strategies` registers the
declarations; the options' strategy names, chunk ids, record inputs, app settings, the
command line's flags and the settings reference are read from there.

`Parameter` and `Flag` are plain data over the chunking core: the skill's table
(`skills.parameters`) is made of them, a strategy's rows among them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from chunking.plan.core import Strategy

Kind = Literal["string", "integer", "number", "choice", "switch", "seconds", "file"]
"""How a surface reads a value: a string; an integer or a number (a JSON number or a
numeric string); one of `choices`, ignoring case; true or false; seconds (a number above
0 and at most `maximum`); a file (`file_data`, read by `skills.skill.file_data`)."""


@dataclass(frozen=True, slots=True)
class Flag:
    """A parameter's option on the chunk command line (`python -m chunking`)."""

    name: str
    """The flag, e.g. `--max`."""
    help: str
    """Its line in `--help` (which adds the default unless the line says it)."""
    default: object = None
    """Its value when not given; None: the skill's default (the help line names it)."""
    switch: bool = False
    """A flag that takes no value: giving it turns the setting to the opposite of its default."""

    @property
    def attribute(self) -> str:
        """The attribute argparse stores it in: `--word-overlap` -> `word_overlap`."""
        return self.name.removeprefix("--").replace("-", "_")


@dataclass(frozen=True, slots=True)
class Parameter:
    """One parameter, as every surface that has it names and reads it."""

    name: str
    """Its record input name; for a parameter records cannot give, its /api/health name."""
    kind: Kind
    """How the record input and the app setting are read."""
    meaning: str
    """What it does, for the settings reference."""
    default: str
    """Its default, as the settings reference shows it."""
    record_input: bool = True
    """Whether a record may give it (as input `name`)."""
    setting: str | None = None
    """The app setting that gives its default for every record (or sets it, when records
    cannot); None: no app setting."""
    attribute: str | None = None
    """Where `skills.skill.settings.Settings` holds the app setting's value; a strategy's
    row names its strategy and the field of its parameters (`words.size`)."""
    choices: Mapping[str, object] = field(default_factory=lambda: _NO_CHOICES)
    """Kind `choice`: accepted names (matched ignoring case) and the value each stands for."""
    minimum: int | None = None
    """Kind `integer`: the smallest value it takes, for a parameter that sets no option
    (an option's bounds are its own: `Limits`, a strategy's parameters)."""
    maximum: float | None = None
    """Kinds `integer` and `seconds`: the largest value it takes (as `minimum`)."""
    option: str | None = None
    """The `chunking.ChunkOptions` field it sets (`limits.maximum_page_length`; a
    strategy's row: its strategy and the field of `ChunkOptions.parameters`, `words.size`);
    None: it sets none (it says what the text is, or how the service runs)."""
    flag: Flag | None = None
    """Its option on the chunk command line; None: it has none."""
    deployed: bool = False
    """The deploy script sends it to the skill as a literal input, from the app setting."""

    strategy: str | None = None
    """The strategy it belongs to (given with another, it is an error); None: all. Set
    by the registry (`chunking.plan.strategies`) from the declaration that lists it."""

    @property
    def field_name(self) -> str:
        """The last part of `attribute`: the strategy parameters' field (`size`)."""
        return (self.attribute or self.name).rpartition(".")[2]


_NO_CHOICES: Mapping[str, object] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class StrategyDeclaration:
    """One strategy, declared once: what every surface needs to know of it."""

    name: str
    """What `strategy` / `CHUNK_STRATEGY` / `--strategy` call it."""
    plan: Strategy
    """Its plan function."""
    summary: str
    """What it does, in a few words, for the settings reference (`words`: fixed word
    windows)."""
    flag_help: str | None = None
    """What `--strategy`'s help says of it, when more than `summary`."""
    parameters: type[Any] | None = None
    """The frozen dataclass of its own parameters (defaults and bounds are its own;
    `ChunkOptions.parameters` holds one); None: it has none."""
    rows: tuple[Parameter, ...] = ()
    """Its rows of the parameter table, in table order (`attribute` and `option` name
    the strategy and its parameters' field, `words.size`)."""
    scored: bool = False
    """Whether it calls `chunking.plan.scoring.Scoring` (embeddings or pair scores)."""
    refused: Mapping[str, Callable[[Callable[[str], str]], str]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    """Parameters of every strategy it does not take, by record input name: why, given
    how the surface spells a parameter."""
    derived_defaults: Mapping[str, Callable[[Mapping[str, object], object], object]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    """Defaults that follow another of its parameters, by record input name: the
    default from the fields read so far and the preferred one (`wordOverlap` from
    `wordsPerChunk`)."""

    @property
    def inputs(self) -> tuple[str, ...]:
        """Its own parameters' record input names, in table order."""
        return tuple(row.name for row in self.rows)
